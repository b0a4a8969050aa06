package runner

// This file watches one attempt's process group to its end: its signals,
// its timeout and grace, and the sweep of what it leaves behind.

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// supervisor watches one running attempt: it passes signals on, stops the
// command on timeout, on a stop signal or when the lock is lost, and kills
// what is left after the grace.
type supervisor struct {
	a       Attempt
	cmd     *exec.Cmd
	pgid    int
	esc     *escapees
	outcome Outcome
	level   syscall.Signal // what escapees get: the stop signal, then SIGKILL
	grace   *time.Timer    // from the stop signal to SIGKILL
	graceC  <-chan time.Time
	tick    *time.Ticker // escapees that appear while stopping get the signal too
	warn    *execWarnings
	killed  bool // the grace ran out: SIGKILL went to what was left
}

// supervise runs until the command's leader has ended, then sweeps what it
// left behind and returns the attempt's result.
func (s *supervisor) supervise(ctx context.Context, waited <-chan error) Result {
	defer s.stopTimers()
	ctxDone, kill := ctx.Done(), s.a.Kill
	for {
		select {
		case err := <-waited:
			s.stopTimers()
			s.sweep()
			s.endWarnings()
			return classify(s.cmd, err, s.outcome)
		case <-ctxDone:
			ctxDone = nil
			s.stopAtEnd(ctx)
		case sig := <-s.a.Signals:
			s.passOn(sig)
		case <-kill:
			kill = nil
			if s.outcome == Success {
				// The lease expires before its loss reached ctx: same cause.
				s.outcome = LostLock
			}
			s.a.Logger.Warn("killing the process group", "event", EventKill, "pgid", s.pgid, "reason", ReasonLeaseExpiring)
			s.send(syscall.SIGKILL)
		case <-s.graceC:
			s.graceC = nil
			s.killed = true
			logRepeated(s.a.Logger, &s.warn.graceKill, "grace", 1, slog.LevelWarn, "killing the process group",
				"event", EventKill, "pgid", s.pgid, "reason", ReasonKillAfter, "after_ms", s.a.KillAfter.Milliseconds())
			s.send(syscall.SIGKILL)
		case <-s.ticks():
			s.esc.signal(s.level)
		}
	}
}

// stopAtEnd stops the command when the attempt's context ends: its timeout, or
// the lock lost.
func (s *supervisor) stopAtEnd(ctx context.Context) {
	switch {
	case s.outcome == Interrupted:
	case errors.Is(context.Cause(ctx), ErrLostLock):
		// Not a timeout: the loop has logged the loss, a safety event
		// logged each time.
		s.outcome = LostLock
		s.a.Logger.Warn("attempt stopped", "event", EventLockError, "reason", string(s.outcome), "signal", SignalName(s.a.Signal), "pgid", s.pgid)
	default:
		s.outcome = Timeout
		logRepeated(s.a.Logger, &s.warn.timedOut, "timeout", 1, slog.LevelWarn, "attempt stopped",
			"event", EventTimeout, "reason", string(s.outcome), "signal", SignalName(s.a.Signal), "pgid", s.pgid)
	}
	s.stop(s.a.Signal)
}

// passOn passes a signal every got on: a stop signal stops the command
// (a second kills it), any other goes to its group.
func (s *supervisor) passOn(sig os.Signal) {
	sg, _ := sig.(syscall.Signal)
	switch {
	case !isStop(sg):
		_ = syscall.Kill(-s.pgid, sg)
	case s.outcome == Interrupted:
		s.a.Logger.Warn("killing the process group", "event", EventKill, "pgid", s.pgid, "reason", ReasonSecondSignal)
		s.send(syscall.SIGKILL)
	default:
		s.outcome = Interrupted
		s.stop(sg)
	}
}

// send signals the group and the escapees.
func (s *supervisor) send(sig syscall.Signal) {
	_ = syscall.Kill(-s.pgid, sig)
	if s.level != syscall.SIGKILL {
		s.level = sig
	}
	s.esc.signal(s.level)
	if s.tick == nil {
		s.tick = time.NewTicker(escapeeTick)
	}
}

// stop sends the stop signal and starts the grace before SIGKILL.
// --kill-after 0 is no SIGKILL at all, as timeout -k 0.
func (s *supervisor) stop(sig syscall.Signal) {
	s.send(sig)
	if s.grace == nil && s.a.KillAfter > 0 {
		s.grace = time.NewTimer(s.a.KillAfter)
		s.graceC = s.grace.C
	}
}

// sweep kills whatever left the group, as in a systemd service's control
// group once its main process has exited.
// Processes left behind at every run are summarised: count is how many
// were killed since the last line.
func (s *supervisor) sweep() {
	n, survive := s.esc.kill()
	switch {
	case survive > 0:
		s.a.Logger.Error("processes the command left behind survive SIGKILL", "event", EventKill, "count", survive, "after_ms", sweepBound.Milliseconds())
	case n > 0 && s.level == 0:
		logRepeated(s.a.Logger, &s.warn.leftBehind, "left_behind", n, slog.LevelWarn, "killed processes the command left behind",
			"event", EventKill, "reason", ReasonLeftBehind)
	case n == 0:
		logEnded(s.a.Logger, &s.warn.leftBehind, false, "the command leaves no processes behind again", "event", EventKill, "reason", ReasonLeftBehind)
	}
}

// endWarnings ends the summaries of the warnings this attempt did not give:
// it ended within its timeout, or without needing SIGKILL after the grace.
func (s *supervisor) endWarnings() {
	if s.outcome != Timeout {
		logEnded(s.a.Logger, &s.warn.timedOut, false, "attempts end within their timeout again", "event", EventTimeout, "reason", ReasonTimeout)
	}
	if !s.killed {
		logEnded(s.a.Logger, &s.warn.graceKill, false, "stopped attempts end within --kill-after again", "event", EventKill, "reason", ReasonKillAfter)
	}
}

func (s *supervisor) stopTimers() {
	if s.grace != nil {
		s.grace.Stop()
	}
	if s.tick != nil {
		s.tick.Stop()
	}
}

// ticks is the escapee ticker's channel, or nil without one.
func (s *supervisor) ticks() <-chan time.Time {
	if s.tick == nil {
		return nil
	}
	return s.tick.C
}
