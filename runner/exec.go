package runner

import (
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Attempt is one execution of the command, as the loop hands it to an ExecFunc.
type Attempt struct {
	Argv  []string
	Env   []string
	Stdin bool
	// Signal goes to the process group when the attempt's context ends (timeout,
	// lost lock); KillAfter later whatever is left gets SIGKILL.
	Signal    syscall.Signal
	KillAfter time.Duration
	// Signals carries the signals the loop passes on: SIGINT and SIGTERM stop the
	// attempt (a second one kills at once), any other is only forwarded.
	Signals <-chan os.Signal
	// Kill, once closed, has whatever is left of the attempt killed at once
	// with SIGKILL, whatever KillAfter says: the run's lease is about to
	// expire, and the command must be dead before another holder can start.
	Kill   <-chan struct{}
	Logger *slog.Logger
	// Output, when set, takes the command's stdout and stderr through pipes:
	// each read is kept in it and, unless Hold, written on at once to
	// every's own stdout or stderr. Without it the command writes to every's
	// descriptors themselves.
	Output *Tail
	Hold   bool
	// Lines, when set, takes the command's output line by line instead of
	// every's own stdout and stderr (see LineSink), through pipes; Output,
	// if set too, still keeps the bytes.
	Lines LineSink
	// Lock, when set, is the open file of the run's file lock: the command
	// inherits it, as flock(1)'s command does, so that the lock is held
	// for as long as a process of the run lives, should every die.
	Lock *os.File
	// warnings, the loop's, summarise the warnings Exec logs across its
	// runs; nil: each is logged as if it were the first.
	warnings *execWarnings
	// started, if set, is closed once the command is started (or failed
	// to): the loop's path from slot to exec is over.
	started chan<- struct{}
	// guard, the loop's, ties the command's group to every's life
	// (guard_*.go); nil: Exec makes one for this attempt alone.
	guard *guard
}

// ExecFunc runs one attempt to its end. When ctx ends, the attempt is stopped as
// on timeout; context.Cause(ctx) says why.
type ExecFunc func(ctx context.Context, a Attempt) Result

// escapeeTick is how often a stopping attempt looks for escapees newly
// re-parented to every (the children of one that just died), to pass the
// stop signal on to them too.
const escapeeTick = 20 * time.Millisecond

// Exec runs an attempt as a real process. The child gets a process group of its
// own, so that a timeout or a stop reaches everything it started, and a terminal's
// Ctrl-C reaches only every, which then decides what the child gets. A guard
// (guard_linux.go) has the kernel kill that group should every die, and the
// command holds the lock's file (a.Lock) for as long as it lives: no
// process of the run outlives every, and no other instance runs while one
// could. What
// leaves the group (setsid, a double fork) is re-parented to every, a child
// subreaper, and gets the same signals as the group: Exec returns once the
// command's whole tree is dead and reaped, as far as every can reach it.
// With a.Output, the command's stdout and stderr are pipes that every drains
// to their end before Exec returns (output.go); without it, the command
// writes to every's own descriptors: a terminal stays a terminal.
func Exec(ctx context.Context, a Attempt) Result {
	procs.enable()
	cmd := command(a.Argv, a.Env)
	cmd.Env = a.Env
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr // *os.File: passed straight through, no copying
	var out *output
	if a.Output != nil || a.Lines != nil {
		var err error
		if out, err = pipeOutput(cmd, a.Output, a.Hold, a.Lines, a.Logger); err != nil {
			return Result{Outcome: Failure, ExitCode: StartErrorCode(err), Err: err}
		}
	}
	if a.Stdin {
		cmd.Stdin = os.Stdin
	} else if null, err := devNull(); err == nil {
		cmd.Stdin = null // else exec.Cmd opens /dev/null itself
	}
	cmd.SysProcAttr = sysProcAttr()
	warn := a.warnings
	if warn == nil {
		warn = &execWarnings{}
	}
	var esc *escapees
	g, err := a.guard, error(nil)
	if g == nil {
		// A one-off: its own guard, closed once its group is swept.
		if g, err = newGuard(); err == nil {
			defer g.close()
		}
	}
	if err == nil {
		cmd.ExtraFiles = inherited(g.file(), a.Lock)
		esc, err = procs.start(cmd)
		if errors.Is(err, syscall.ENOEXEC) && !binary(cmd.Path) {
			cmd = viaShell(cmd)
			esc, err = procs.start(cmd)
		}
	}
	if a.started != nil {
		close(a.started)
	}
	if out != nil {
		out.start(err == nil)
	}
	if err != nil {
		return Result{Outcome: Failure, ExitCode: StartErrorCode(err), Err: err}
	}
	pgid := esc.pgid
	// Before anything can reap the leader: the group must exist to be armed.
	if err := g.arm(pgid); err != nil {
		logRepeated(a.Logger, &warn.guard, "guard", 1, slog.LevelWarn, "the command would outlive every", "event", EventKill, "error", err)
	}
	waited := make(chan error, 1)
	go func() {
		exited := awaitExit(pgid)
		// The leader is gone; sweep whatever it left behind in its group,
		// while its pid, the group's id, cannot be reused: it is not reaped yet.
		if exited {
			_ = syscall.Kill(-pgid, syscall.SIGKILL)
		}
		err := cmd.Wait()
		if !exited {
			_ = syscall.Kill(-pgid, syscall.SIGKILL)
		}
		procs.forget(pgid)
		g.disarm()
		waited <- err
	}()

	sv := &supervisor{a: a, cmd: cmd, pgid: pgid, esc: esc, outcome: Success, warn: warn}
	res := sv.supervise(ctx, waited)
	esc.done()
	if out != nil {
		// The tree is dead and swept: the pipes' ends come at once, but for
		// what is still in them.
		out.wait()
	}
	return res
}

// inherited is what the command inherits beyond stdin, stdout and stderr:
// the guard's file and the lock's, those that there are, from descriptor 3
// on.
func inherited(files ...*os.File) []*os.File {
	var out []*os.File
	for _, f := range files {
		if f != nil {
			out = append(out, f)
		}
	}
	return out
}

// devNull is /dev/null for reading, opened once: the stdin of every command
// run without --stdin (exec.Cmd would open and close it for each run).
// It is opened with open(2) directly: os.Open would try to register the
// device with the poller, and fail.
var devNull = sync.OnceValues(func() (*os.File, error) {
	fd, err := unix.Open(os.DevNull, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: os.DevNull, Err: err}
	}
	return os.NewFile(uintptr(fd), os.DevNull), nil
})

// classify turns the end of a process into a Result. An attempt stopped by
// every keeps that outcome whatever the child then did.
func classify(cmd *exec.Cmd, err error, outcome Outcome) Result {
	r := Result{Outcome: outcome}
	ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus)
	switch {
	case !ok:
		r.ExitCode, r.Err = 70, err
	case ws.Signaled():
		r.Signal = ws.Signal()
		r.ExitCode = 128 + int(ws.Signal())
	default:
		r.ExitCode = ws.ExitStatus()
	}
	switch {
	case outcome == Timeout:
		r.ExitCode = 124 // as timeout(1) reports it
	case outcome != Success:
	case r.ExitCode != 0 || r.Signal != 0:
		r.Outcome = Failure
	}
	return r
}

// StartErrorCode maps a failure to find or start a command to the shell's code:
// 127 when it does not exist, 126 when it cannot be executed.
func StartErrorCode(err error) int {
	if errors.Is(err, exec.ErrNotFound) || errors.Is(err, fs.ErrNotExist) {
		return 127
	}
	return 126
}

// sweepBound is how long every keeps killing escapees after its command
// ended: a process stuck in the kernel (state D) may take a while to die.
const sweepBound = 3 * time.Second
