package runner

// This file bounds how many commands run at once across the loops of one
// process (every jobs --max-concurrent): a slot takes a place before its
// lock and gives it back once its run has ended; one that finds no place
// waits for one until its next slot, else is skipped (reason=concurrency).

import (
	"context"
	"log/slog"
	"os"
	"syscall"
	"time"
)

// Gate is the places for commands running at once, shared by the loops
// that it bounds.
type Gate chan struct{}

// NewGate returns a gate of n places.
func NewGate(n int) Gate { return make(Gate, n) }

// leave gives a place back.
func (g Gate) leave() { <-g }

// enterGate waits for a place in the gate until the slot after this one
// (next, on the loop's timeline), listening for stop signals and for the
// loop's retirement (a reload: its job removed or changed runs no slot
// more). It reports whether it got one; a stop signal that came is
// returned.
func (l *loop) enterGate(ctx context.Context, next time.Time) (entered bool, stop os.Signal) {
	select {
	case l.cfg.Gate <- struct{}{}:
		return true, nil
	default:
	}
	timer := time.NewTimer(next.Sub(l.now()))
	defer timer.Stop()
	for {
		select {
		case l.cfg.Gate <- struct{}{}:
			return true, nil
		case <-timer.C:
			return false, nil
		case <-ctx.Done():
			return false, nil
		case <-l.cfg.Retire:
			return false, nil
		case sig := <-l.cfg.Signals:
			switch {
			case isStop(sig):
				l.logStop(sig, false)
				return false, sig
			case sig == syscall.SIGUSR1:
				l.runAsked = true // after this slot's run, or at once if it is skipped
			}
		}
	}
}

// skipConcurrency logs a slot skipped for want of a place in the gate,
// summarised while it repeats.
func (l *loop) skipConcurrency(next time.Time) {
	l.report(&l.outages.concurrency, "concurrency", 1, slog.LevelWarn, "no place for the command among those running, skipping the slot",
		"event", EventSkip, "reason", ReasonConcurrency, "max_concurrent", cap(l.cfg.Gate), "next", l.time.label(next).UTC())
	l.tellSkipped(ReasonConcurrency, 1, next)
}
