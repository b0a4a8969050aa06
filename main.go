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
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

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
	tuneRuntime(os.Getenv)
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

// Runtime defaults for a process that mostly sleeps: every's own work per run
// is a few system calls on one goroutine at a time, and its heap is well under
// a megabyte live. One P keeps the Go scheduler from handing work to a second
// thread (and waking it) around each blocking call such as an fsync, about
// half of every's context switches per run; a GC target of 25% keeps the heap
// that a run's garbage grows to near the live heap instead of doubling it. The
// user's GOMAXPROCS and GOGC, when set, win.
const (
	defaultMaxProcs  = 1
	defaultGCPercent = 25
)

// tuneRuntime applies the runtime defaults above, except those the
// environment (getenv) sets.
func tuneRuntime(getenv func(string) string) {
	if getenv("GOMAXPROCS") == "" {
		runtime.GOMAXPROCS(defaultMaxProcs)
	}
	if getenv("GOGC") == "" {
		debug.SetGCPercent(defaultGCPercent)
	}
}

// releaseAfter is the shortest wait before which a loop gives its memory
// back (releaseMemory): the forced collection and the code pages faulted
// back in after it cost a fraction of a millisecond, once per wait, which
// waits of this length or more make up for in memory not held.
const releaseAfter = 5 * time.Second

// releaseMemory gives back, before a long wait, the heap that is free
// (a forced collection, the free pages returned at once rather than by the
// background scavenger over minutes) and the code pages the last run
// touched: the resident memory of a job that sleeps is then mostly what
// the next run will touch again.
func releaseMemory() {
	debug.FreeOSMemory()
	dropStartupPages()
}

// dropStartupPages lets the kernel take back the pages of every's own
// program (its code and read-only data, as mapped from the executable) that
// start-up touched: parsing the command line, help, the checks of the job's
// files. A loop then keeps only what its runs touch again, a few MiB less of
// resident memory for a process that mostly sleeps. Only mappings that are
// never written are dropped, so nothing is lost: a page that is needed again
// comes back from the page cache on its next use.
func dropStartupPages() {
	exe, err := os.Readlink("/proc/self/exe")
	if err != nil {
		return
	}
	smaps, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		return
	}
	for _, m := range cleanMappings(string(smaps), exe) {
		_, _, _ = syscall.Syscall(syscall.SYS_MADVISE, uintptr(m[0]), uintptr(m[1]-m[0]), unix.MADV_DONTNEED)
	}
}

// cleanMappings returns the [start, end) of exe's mappings, in the text of
// /proc/self/smaps, that are never written and hold no page of their own:
// every page of them is the file's, and comes back from it as it was. A
// mapping that is read-only now but was written once (the relocated
// pointers of a position-independent build, made read-only after the
// loader wrote them) holds private pages: dropping those would bring back
// the file's unrelocated bytes, so it is left alone.
func cleanMappings(smaps, exe string) [][2]uint64 {
	var out [][2]uint64
	var cur [2]uint64
	clean := false // cur is exe's, read-only, and no private page seen yet
	flush := func() {
		if clean {
			out = append(out, cur)
		}
		clean = false
	}
	for line := range strings.Lines(smaps) {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		if key, ok := strings.CutSuffix(f[0], ":"); ok {
			// "Anonymous: 4 kB": pages copied on write, the mapping's own.
			// (Private_Dirty is no sign: it also counts file pages not yet
			// written back, as those of a binary just built.)
			if clean && key == "Anonymous" && (len(f) < 2 || f[1] != "0") {
				clean = false
			}
			continue
		}
		// A mapping's header: start-end perms offset dev inode path.
		flush()
		if len(f) < 6 || f[5] != exe || len(f) > 6 || strings.Contains(f[1], "w") {
			continue
		}
		from, to, ok := strings.Cut(f[0], "-")
		start, err1 := strconv.ParseUint(from, 16, 64)
		end, err2 := strconv.ParseUint(to, 16, 64)
		if ok && err1 == nil && err2 == nil && end > start {
			cur, clean = [2]uint64{start, end}, true
		}
	}
	flush()
	return out
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
	req, err := parse(args, os.Stdout, stderr)
	switch {
	case err != nil:
		report(stderr, err)
		if req.status != nil && req.status.nagios {
			return int(unknown), nil // a monitoring plugin's usage error is UNKNOWN
		}
		return exitUsage, nil
	case req.status != nil:
		return status(*req.status, os.Stdout, stderr), nil
	case req.next != nil:
		printNext(*req.next, os.Stdout)
		return 0, nil
	case req.run != nil:
		return start(*req.run, stderr)
	}
	return 0, nil // --help or --version, printed
}

// start checks the command and the job's files, and runs the loop.
func start(st settings, stderr io.Writer) (int, os.Signal) {
	cfg := &st.cfg
	if _, err := exec.LookPath(cfg.Command[0]); err != nil {
		report(stderr, fmt.Errorf("cannot run %q: %w", cfg.Command[0], errors.Unwrap(err)))
		return runner.StartErrorCode(err), nil
	}
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

	flush, err := observers(st, cfg)
	if err != nil {
		report(stderr, err)
		return exitCantCreate, nil
	}
	defer flush()

	signals := make(chan os.Signal, 8)
	signal.Notify(signals, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGUSR1, syscall.SIGUSR2)
	cfg.Signals = signals
	if cfg.MaxRuns != 1 {
		dropStartupPages()
		cfg.Release, cfg.ReleaseAfter = releaseMemory, releaseAfter
	}
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
	}
	report(stderr, fmt.Errorf("internal error: loop ended for no known reason %d", end.Reason))
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
		sf := state.File{Path: statePath, Period: period(cfg)}
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
		cfg.Lock = &lock.File{Path: lockPath}
	}
	if statePath != "" {
		// Held until every exits, however it exits: every status's ACTIVE
		// (active.go). Last, once nothing here can fail. A marker that cannot
		// be held costs the job nothing but that column: said, not fatal.
		if err := holdActive(markerPath(statePath)); err != nil {
			cfg.Logger.Warn("cannot mark the job active: every status will show it inactive", "event", "state_error", "error", err)
		}
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
	if !st.noLock {
		// The command must be dead before the lease can expire: a grace that
		// cannot fit inside the TTL is shortened. (A lost lease kills at
		// TTL minus the margin whatever the grace; this keeps the two apart.)
		cfg.KillAfter = min(cfg.KillAfter, st.lockTTL-lock.Margin(st.lockTTL))
	}
	// With both in Redis, one session is the lock and the store: the record
	// comes with the lock, and the run's end goes with its release.
	cfg.Lock, cfg.Store = f.job(cfg.Name, cfg.Host, st.lockTTL, period(cfg), !st.noLock, !st.noState)
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

// period is the job's period, for the sanity check of its record: the
// interval, or, for a calendar schedule, the span to the slot after next.
func period(cfg *runner.Config) time.Duration {
	if cfg.Calendar != nil {
		return periodOf(cfg.Calendar, time.Now())
	}
	return cfg.Interval
}
