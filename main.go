// Command every runs a command on a schedule, safely: cron's job plus flock's
// and timeout's, in one process, down to sub-second intervals.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

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

// run is every from argv to an exit status, or to the signal to exit by:
// argv becomes a request (cli.go), the request a run or a listing.
func run(args []string, stderr io.Writer) (code int, stopSig os.Signal) {
	// What every prints itself stops at the first write error (output.go).
	out := &output{w: os.Stdout}
	req, err := parse(args, out, stderr)
	switch {
	case out.err != nil:
		return outputEnd(out, 0, stderr), nil
	case err != nil:
		report(stderr, err)
		if nagiosAsked(args, os.Getenv) {
			// A monitoring plugin's usage error is UNKNOWN, in its one line.
			nagiosUnknown(out, err)
			return outputEnd(out, int(unknown), stderr), nil
		}
		return exitUsage, nil
	case req.status != nil:
		return outputEnd(out, status(*req.status, out, stderr), stderr), nil
	case req.next != nil:
		_ = printNext(*req.next, out) // out keeps the first write error
		return outputEnd(out, 0, stderr), nil
	case req.run != nil:
		return start(*req.run, stderr)
	}
	return outputEnd(out, 0, stderr), nil // --help, --version or a completion script, printed
}

// start checks the command and the job's files, and runs the loop.
func start(st settings, stderr io.Writer) (int, os.Signal) {
	cfg := &st.cfg
	path, err := runner.LookPath(cfg.Command[0])
	if err != nil {
		report(stderr, fmt.Errorf("cannot run %q: %w", cfg.Command[0], errors.Unwrap(err)))
		return runner.StartErrorCode(err), nil
	}
	st.commandPath = path
	cfg.Env = childEnv(os.Environ())
	cfg.Host, _ = os.Hostname()
	cfg.PID = os.Getpid()
	if err := jobFiles(st, cfg); err != nil {
		report(stderr, err)
		if errors.As(err, new(usageError)) {
			return exitUsage, nil
		}
		return exitCantCreate, nil
	}

	mark := cfg.Observer // the active marker's (jobFiles), told with the others
	cfg.Observer = nil
	flush, err := observers(st, cfg)
	if err != nil {
		report(stderr, err)
		return exitCantCreate, nil
	}
	defer flush()
	if cfg.Observer == nil {
		cfg.Observer = mark
	} else if mark != nil {
		cfg.Observer = runner.Observers{cfg.Observer, mark}
	}

	signals := make(chan os.Signal, 8)
	signal.Notify(signals, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGUSR1, syscall.SIGUSR2)
	cfg.Signals = signals
	sleeper(cfg, os.Getenv)
	return exitStatus(runner.Loop(context.Background(), *cfg), stderr)
}

// exitStatus turns the end of the loop into every's exit status (SPEC
// section 7), or the signal to exit by.
func exitStatus(end runner.Exit, stderr io.Writer) (int, os.Signal) {
	switch end.Reason {
	case runner.Stopped:
		return 0, end.Signal
	case runner.MaxRuns:
		return end.Last.ExitCode, nil
	case runner.MaxFailures:
		return exitMaxFailures, nil
	case runner.LockBusy:
		return exitLockBusy, nil
	case runner.SlotDone:
		return 0, nil // a one-shot whose slot another run took care of
	}
	report(stderr, fmt.Errorf("internal error: loop ended for no known reason %d", end.Reason))
	return exitInternal, nil
}

// jobFiles sets up the job's state and lock, creating the state directory
// 0700 if need be, and checks that they can be written: a failure here is
// exit 73, before anything runs.
func jobFiles(st settings, cfg *runner.Config) error {
	statePath, lockPath, err := jobPaths(st, cfg.Name)
	if err != nil {
		return err
	}
	if err := ownFiles(st, statePath, lockPath); err != nil {
		return err
	}
	if st.store != "" {
		return fleetStore(st, cfg)
	}
	if statePath != "" {
		sf := state.File{Path: statePath, Period: cfg.Schedule.Period(time.Now())}
		if err := sf.CheckWritable(); errors.Is(err, state.ErrNotRecord) {
			return fmt.Errorf("cannot write state file %q: it holds something other than a state record, which every would replace; choose another --state, or --no-state", statePath)
		} else if errors.Is(err, state.ErrNotRegular) {
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
		cfg.Lock = &lock.File{Path: lockPath}
	}
	if statePath != "" {
		// Held until every exits, however it exits: every status's ACTIVE
		// (active.go). Last, once nothing else here can fail. A marker that
		// cannot be held costs the job nothing but that column: said, not
		// fatal; but one of another user's is never trusted (SPEC section 8).
		path := markerPath(statePath)
		m, err := holdActive(path, markerInfo{Name: cfg.Name, Schedule: cfg.Schedule.Recorded(), PID: cfg.PID, Host: cfg.Host})
		switch {
		case errors.Is(err, errForeignMarker):
			return fmt.Errorf("cannot mark the job active in %q: %w; remove it, or choose --state-dir or --state", path, unwrapPath(err))
		case err != nil:
			cfg.Logger.Warn("cannot mark the job active: every status will show it inactive", "event", "state_error", "error", err)
		default:
			cfg.Observer = m // told of the first slot; observers adds its own
		}
	}
	return nil
}

// sameFile reports whether two paths name one file: the same path once
// made absolute and its directory's links followed (the files may not
// exist yet), or, where both exist, the same inode.
func sameFile(a, b string) bool {
	if ra, rb := resolved(a), resolved(b); ra != "" && ra == rb {
		return true
	}
	fa, errA := os.Stat(a)
	fb, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(fa, fb)
}

// resolved is path made absolute, with the links in its directory
// followed; "" if it cannot be made absolute.
func resolved(path string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		return ""
	}
	if dir, err := filepath.EvalSymlinks(filepath.Dir(abs)); err == nil {
		return filepath.Join(dir, filepath.Base(abs))
	}
	return abs
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
	if !st.noLock {
		// The command must be dead before the lease can expire: a grace that
		// cannot fit inside the TTL is shortened. (A lost lease kills at
		// TTL minus the margin whatever the grace; this keeps the two apart.)
		cfg.KillAfter = min(cfg.KillAfter, st.lockTTL-lock.Margin(st.lockTTL))
	}
	// With both in Redis, one session is the lock and the store: the record
	// comes with the lock, and the run's end goes with its release.
	cfg.Lock, cfg.Store = f.job(cfg.Name, cfg.Host, st.lockTTL, cfg.Schedule.Period(time.Now()), !st.noLock, !st.noState)
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
