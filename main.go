// Command every runs a command on a schedule, safely: cron's job plus flock's
// and timeout's, in one process, down to sub-second intervals.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/everycli/every/lock"
	"github.com/everycli/every/runner"
	"github.com/everycli/every/state"
)

// Exit statuses of SPEC section 7 that are every's own.
const (
	exitMaxFailures = 1
	exitUsage       = 2
	exitInternal    = 70 // EX_SOFTWARE
	exitCantCreate  = 73 // EX_CANTCREAT: the state directory or file
	exitLockBusy    = 75 // EX_TEMPFAIL, as flock -n -E 75
)

const usageText = `every [OPTIONS] SCHEDULE [OPTIONS] [--] COMMAND [ARG...]
every status [--state-dir DIR | --store URL] [--json] [NAME...]

SCHEDULE is a duration: 500ms, 30s, 90s, 1m30s, 2h, 1d. Runs start on a grid,
anchor + k*SCHEDULE, that neither run time nor lateness moves. A run that lasts
past slots skips them; runs never overlap. Every option also reads EVERY_<NAME>
from the environment (--kill-after: EVERY_KILL_AFTER); the flag wins.

Examples:
   every 90s --retries 5 -- ./sync-ledger.sh --full
   every 500ms --timeout 2s -- curl -fsS http://localhost:8080/health
   every 1d --max-runs 1 --timeout 1h -- ./backup.sh    # one-shot, with a timeout
   every 10s -- sh -c 'date >> /tmp/ticks'`

func main() {
	// A write to a closed stderr (every ... 2>&1 | head) must not kill every
	// and, through the parent-death signal, its running command: with SIGPIPE
	// handled, the write fails with EPIPE instead and logging stops there.
	// Handled, not ignored: an ignored signal would stay ignored in the
	// command, which exec resets only for handled ones.
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
	// Whether the stop signals were ignored when every started (a script's
	// background job starts with SIGINT ignored), read before Notify changes it.
	for _, s := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		ignoredAtStart[s] = signal.Ignored(s)
	}
	code, sig := run(os.Args[1:], os.Stderr)
	exit(code, sig)
}

// ignoredAtStart records the stop signals every inherited as ignored.
var ignoredAtStart = map[syscall.Signal]bool{}

// exit ends the process with code, or, after a stop signal, the way a
// cooperative Unix program does: by that signal, so a shell sees 128+n and
// systemd a clean stop. Where the signal cannot kill every, it exits 128+n
// itself: as PID 1 (the kernel ignores signals to a namespace's init that it
// has no handler for) and when the signal was ignored at start (Reset would
// ignore it again).
func exit(code int, sig os.Signal) {
	if s, ok := sig.(syscall.Signal); ok {
		code = 128 + int(s)
		if os.Getpid() != 1 && !ignoredAtStart[s] {
			signal.Reset(s)
			_ = syscall.Kill(os.Getpid(), s)
			// The signal is on its way, with its default action; this is a
			// fallback that should never be reached.
			time.Sleep(100 * time.Millisecond)
		}
	}
	os.Exit(code)
}

// run is every from argv to an exit status, or to the signal to exit by.
func run(args []string, stderr io.Writer) (code int, stopSig os.Signal) {
	inv, err := split(args, flagArity(runFlags))
	if err != nil {
		fmt.Fprintf(stderr, "every: %v\n", err)
		return exitUsage, nil
	}
	cli.VersionFlag = &cli.BoolFlag{Name: "version", Usage: "print the version and exit"}
	if inv.status {
		return status(inv, os.Stdout, stderr), nil
	}
	app := &cli.App{
		Name:            "every",
		Usage:           "run a command on a schedule, safely: cron + flock + timeout in one process",
		UsageText:       usageText,
		Version:         version(),
		Flags:           runFlags,
		HideHelpCommand: true,
		Writer:          os.Stdout,
		ErrWriter:       stderr,
		// The default handler calls os.Exit inside Run; exit statuses are decided here.
		ExitErrHandler: func(*cli.Context, error) {},
		OnUsageError: func(_ *cli.Context, err error, _ bool) error {
			return usageError{err.Error()}
		},
		Action: func(c *cli.Context) error {
			code, stopSig = start(c, inv, stderr)
			return nil
		},
	}
	argv := append([]string{"every"}, inv.opts...)
	if !inv.help {
		argv = append(append(argv, "--", inv.schedule), inv.command...)
	}
	if err := app.Run(argv); err != nil {
		fmt.Fprintf(stderr, "every: %v\n", err)
		return exitUsage, nil
	}
	return code, stopSig
}

// start validates the configuration, checks the command, and runs the loop.
func start(c *cli.Context, inv invocation, stderr io.Writer) (int, os.Signal) {
	st, err := config(c, inv, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "every: %v\n", err)
		return exitUsage, nil
	}
	cfg := &st.cfg
	if _, err := exec.LookPath(cfg.Command[0]); err != nil {
		code := runner.StartErrorCode(err)
		fmt.Fprintf(stderr, "every: cannot run %q: %v\n", cfg.Command[0], errors.Unwrap(err))
		return code, nil
	}
	cfg.Env = childEnv(os.Environ())
	cfg.Host, _ = os.Hostname()
	cfg.PID = os.Getpid()
	if err := jobFiles(st, cfg); err != nil {
		fmt.Fprintf(stderr, "every: %v\n", err)
		if errors.As(err, new(usageError)) {
			return exitUsage, nil
		}
		return exitCantCreate, nil
	}

	signals := make(chan os.Signal, 8)
	signal.Notify(signals, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGUSR1, syscall.SIGUSR2)
	cfg.Signals = signals

	end := runner.Loop(context.Background(), *cfg)
	switch end.Reason {
	case runner.Stopped:
		return 0, end.Signal
	case runner.MaxRuns:
		return end.Last.ExitCode, nil
	case runner.MaxFailures:
		return exitMaxFailures, nil
	case runner.LockBusy:
		return exitLockBusy, nil
	}
	fmt.Fprintf(stderr, "every: internal error: loop ended for no known reason %d\n", end.Reason)
	return exitInternal, nil
}

// jobFiles sets up the job's state and lock, creating the state directory
// 0700 if need be, and checks that they can be written: a failure here is
// exit 73, before anything runs.
func jobFiles(st settings, cfg *runner.Config) error {
	if st.store != "" {
		return fleetStore(st, cfg)
	}
	statePath, lockPath := st.statePath, st.lockPath
	if (statePath == "" && !st.noState) || (lockPath == "" && !st.noLock) {
		dir, err := stateDir(st.stateDir)
		if err != nil {
			return err
		}
		if statePath == "" {
			statePath = filepath.Join(dir, cfg.Name+".json")
		}
		if lockPath == "" {
			lockPath = filepath.Join(dir, cfg.Name+".lock")
		}
	}
	if st.noState {
		statePath = ""
	}
	if st.noLock {
		lockPath = ""
	}
	if statePath != "" && lockPath != "" && sameFile(statePath, lockPath) {
		return usagef("bad --state %q and --lock %q: they name the same file; give each its own", statePath, lockPath)
	}
	if statePath != "" {
		sf := state.File{Path: statePath, Period: cfg.Interval}
		if err := sf.CheckWritable(); errors.Is(err, state.ErrNotRegular) {
			return fmt.Errorf("cannot write state file %q: %w; remove it, or choose --state or --no-state", statePath, unwrapPath(err))
		} else if err != nil {
			return fmt.Errorf("cannot write state file %q: %w; fix the directory's permissions, or choose --state-dir, --state or --no-state", statePath, unwrapPath(err))
		}
		cfg.Store = sf
	}
	if lockPath != "" {
		if err := lock.Check(lockPath); errors.Is(err, lock.ErrNotRegular) {
			return fmt.Errorf("cannot create lock file %q: %w; remove it, or choose --lock or --no-lock", lockPath, unwrapPath(err))
		} else if err != nil {
			return fmt.Errorf("cannot create lock file %q: %w; fix the directory's permissions, or choose --state-dir, --lock or --no-lock", lockPath, unwrapPath(err))
		}
		cfg.Lock = lock.File{Path: lockPath}
	}
	return nil
}

// sameFile reports whether two paths name one file: the same path once
// made absolute, or, where both exist, the same inode.
func sameFile(a, b string) bool {
	absA, errA := filepath.Abs(a)
	absB, errB := filepath.Abs(b)
	if errA == nil && errB == nil && absA == absB {
		return true
	}
	fa, errA := os.Stat(a)
	fb, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(fa, fb)
}

// fleetStore puts the job's lock and state in Redis. A malformed URL is a
// usage error; credentials or TLS that the server refuses are fatal at
// start-up (73); a server that does not answer yet is not: its slots are
// skipped until it does.
func fleetStore(st settings, cfg *runner.Config) error {
	raw := st.store
	f, err := openFleet(raw)
	if err != nil {
		return err
	}
	fatal, transient := f.check(context.Background())
	if fatal != nil {
		return errors.New(noPassword(fatal.Error(), raw))
	}
	if transient != nil {
		cfg.Logger.Warn("store unreachable at start; slots are skipped until it answers", "event", "state_error", "error", noPassword(transient.Error(), raw))
	}
	if !st.noState {
		cfg.Store = state.Redis{Client: f.client, Key: f.stateKey(cfg.Name), Period: cfg.Interval, Server: f.server}
	}
	if !st.noLock {
		// The command must be dead before the lease can expire: a grace that
		// cannot fit inside the TTL is shortened. (A lost lease kills at
		// TTL minus the margin whatever the grace; this keeps the two apart.)
		cfg.KillAfter = min(cfg.KillAfter, st.lockTTL-lock.Margin(st.lockTTL))
		cfg.Lock = lock.Redis{Client: f.client, Key: f.lockKey(cfg.Name), TTL: st.lockTTL, Host: cfg.Host, Where: f.server}
	}
	return nil
}

// unwrapPath drops the operation and path that *fs.PathError repeats.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// newLogger builds the one logger of the process: logfmt or JSON on stderr.
func newLogger(w io.Writer, format, level string, quiet bool) *slog.Logger {
	var lv slog.Level
	_ = lv.UnmarshalText([]byte(level)) // checked in config
	if quiet && lv < slog.LevelWarn {
		lv = slog.LevelWarn
	}
	opts := &slog.HandlerOptions{Level: lv}
	if format == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

// version is the module version go install recorded, or "devel".
func version() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "devel"
}
