package runner

import (
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"syscall"
	"time"
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
// Ctrl-C reaches only every, which then decides what the child gets. What
// leaves the group (setsid, a double fork) is re-parented to every, a child
// subreaper, and gets the same signals as the group: Exec returns once the
// command's whole tree is dead and reaped, as far as every can reach it.
func Exec(ctx context.Context, a Attempt) Result {
	procs.enable()
	cmd := exec.Command(a.Argv[0], a.Argv[1:]...)
	cmd.Env = a.Env
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr // *os.File: passed straight through, no copying
	if a.Stdin {
		cmd.Stdin = os.Stdin
	}
	cmd.SysProcAttr = sysProcAttr()
	esc, err := procs.start(cmd)
	if err != nil {
		return Result{Outcome: Failure, ExitCode: StartErrorCode(err), Err: err}
	}
	pgid := cmd.Process.Pid
	esc.pgid = pgid
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
		waited <- err
	}()

	var (
		outcome   = Success
		level     syscall.Signal // what escapees get: the stop signal, then SIGKILL
		grace     *time.Timer
		graceDone <-chan time.Time
		tick      *time.Ticker
		ticks     <-chan time.Time
		ctxDone   = ctx.Done()
		kill      = a.Kill
	)
	send := func(sig syscall.Signal) {
		_ = syscall.Kill(-pgid, sig)
		if level != syscall.SIGKILL {
			level = sig
		}
		esc.signal(level)
		if tick == nil {
			tick = time.NewTicker(escapeeTick)
			ticks = tick.C
		}
	}
	stop := func(sig syscall.Signal) {
		send(sig)
		// --kill-after 0 is no SIGKILL at all, as timeout -k 0.
		if grace == nil && a.KillAfter > 0 {
			grace = time.NewTimer(a.KillAfter)
			graceDone = grace.C
		}
	}
	for {
		select {
		case err := <-waited:
			if grace != nil {
				grace.Stop()
			}
			if tick != nil {
				tick.Stop()
			}
			// Whatever left the group dies with it, as in a systemd service's
			// control group once its main process has exited.
			if n, survive := esc.kill(); survive > 0 {
				a.Logger.Error("processes the command left behind survive SIGKILL", "event", "kill", "count", survive, "after_ms", sweepBound.Milliseconds())
			} else if n > 0 && level == 0 {
				a.Logger.Warn("killed processes the command left behind", "event", "kill", "count", n, "reason", "left behind")
			}
			return classify(cmd, err, outcome)
		case <-ctxDone:
			ctxDone = nil
			if outcome != Interrupted {
				outcome = Timeout
				if errors.Is(context.Cause(ctx), ErrLostLock) {
					outcome = LostLock
				}
				event := "timeout"
				if outcome == LostLock {
					event = "lock_error" // not a timeout: the loop has logged the loss
				}
				a.Logger.Warn("attempt stopped", "event", event, "reason", string(outcome), "signal", SignalName(a.Signal), "pgid", pgid)
			}
			stop(a.Signal)
		case sig := <-a.Signals:
			s, _ := sig.(syscall.Signal)
			if !isStop(s) {
				_ = syscall.Kill(-pgid, s)
				continue
			}
			if outcome == Interrupted {
				a.Logger.Warn("killing the process group", "event", "kill", "pgid", pgid, "reason", "second signal")
				send(syscall.SIGKILL)
				continue
			}
			outcome = Interrupted
			stop(s)
		case <-kill:
			kill = nil
			if outcome == Success {
				// The lease expires before its loss reached ctx: same cause.
				outcome = LostLock
			}
			a.Logger.Warn("killing the process group", "event", "kill", "pgid", pgid, "reason", "lease expiring")
			send(syscall.SIGKILL)
		case <-graceDone:
			graceDone = nil
			a.Logger.Warn("killing the process group", "event", "kill", "pgid", pgid, "after_ms", a.KillAfter.Milliseconds())
			send(syscall.SIGKILL)
		case <-ticks:
			esc.signal(level)
		}
	}
}

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
