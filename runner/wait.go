package runner

// This file owns the wait for a slot: the wake-up armed on the clock the
// schedule follows, and what a wake-up finds (the slot due, slots passed
// in a suspend or a step of the wall clock, a wake-up come late, a signal).

import (
	"context"
	"log/slog"
	"os"
	"syscall"
	"time"

	"github.com/everycli/every/schedule"
)

// waitIdle waits for slot due (plus jitter) or for SIGUSR1, and returns the slots
// to run: due; or, when a suspend or a step of a calendar's wall clock passed
// more slots than due, those --catch-up picks of them (none: it waits on);
// or, after a wake-up that came late past them, the latest (see skipLate); or
// now, asked for by hand. A stop signal ends the wait at once.
func (l *loop) waitIdle(ctx context.Context, due time.Time) (slots []time.Time, manual bool, stop os.Signal) {
	if l.runAsked {
		l.runAsked = false
		return []time.Time{l.now()}, true, nil
	}
	var jitter time.Duration
	if l.cfg.Jitter > 0 {
		jitter = time.Duration(l.cfg.Rand() * float64(l.cfg.Jitter))
	}
	early := l.earlyWake()
	base := due
	if !l.first.IsZero() {
		// A one-shot's run at once for a slot passed: its --delay and
		// --jitter count from now, not from the slot.
		base, l.first = l.first, time.Time{}
	}
	for {
		wake := base.Add(jitter)
		l.syncIfDue()
		if wait := wake.Sub(l.now()); l.cfg.Release != nil && wait >= l.cfg.ReleaseAfter {
			l.cfg.Release(time.Now().Add(wait))
		}
		// When the wake-up is due: at wake, or at once if that has passed
		// when the wait begins. Slots passed before it are none of the
		// wait's: every spent that time on calls of its own (a store's
		// answer, a lock's release, hooks, a sync), or meant it (a
		// one-shot's --delay).
		armed := later(l.now(), wake)
		fired, disarm := l.arm(l.syncWake(wake.Add(-early)))
		select {
		case set := <-fired:
			disarm()
			now := l.now()
			if cur := l.time.slots.Prev(now.Add(-jitter)); cur.After(due) {
				// More than the slot due passed while the wait could not see
				// it (see sortPassed).
				if slots, due = l.sortPassed(due, cur, now.Add(-jitter), armed.Add(-jitter), set); len(slots) > 0 {
					return slots, false, nil
				}
				// None of them runs (--catch-up none): wait for the next
				// slot, at its time, not for the one passed.
				base = due
				continue
			}
			if set && now.Before(wake.Add(-early)) {
				continue // the wall clock was set, but not past the slot: wait on
			}
			if wake.Sub(now) > early+time.Millisecond {
				// Woken well before the slot (a clock that moved under the
				// wait): wait again, listening for signals, rather than sleep
				// deaf to them until the slot.
				continue
			}
			l.cfg.SleepUntil(l.time.onClock(wake))
			return []time.Time{due}, false, nil
		case <-ctx.Done():
			disarm()
			return []time.Time{due}, false, nil
		case <-l.cfg.Retire:
			disarm()
			return []time.Time{due}, false, nil // the loop sees it retired
		case sig := <-l.cfg.Signals:
			disarm()
			switch {
			case isStop(sig):
				l.logStop(sig, false)
				return nil, false, sig
			case sig == syscall.SIGUSR1:
				return []time.Time{l.now()}, true, nil
			}
			// SIGHUP and SIGUSR2 have no child to go to while idle.
		}
	}
}

// sortPassed sorts out a wake-up that finds slots after due passed: a
// suspend (a wall-clock wait hears of a resume as of a clock set), the wall
// clock set forward past a calendar's slots, slots passed before the wait
// began (every was busy with a call of its own), or a wake-up late (every
// was stopped, SIGSTOP, or starved of the processor): CLOCK_BOOTTIME less
// CLOCK_MONOTONIC grows only in a suspend. now and armed (when the wake-up
// was due: its time, or the start of the wait if later) are less the
// wait's jitter. It returns the slots to run (none: wait on) and the slot
// due after them.
func (l *loop) sortPassed(due, cur, now, armed time.Time, set bool) ([]time.Time, time.Time) {
	since := l.time.since()
	l.time.markSlot()
	switch {
	case since.suspends > 0:
		return l.catchUpPassed(due, cur, now, ReasonSuspend)
	case set || since.steps > 0:
		return l.catchUpPassed(due, cur, now, ReasonClock)
	case l.time.slots.Prev(armed).After(due):
		return nil, l.skipBusy(due, now)
	}
	return l.skipLate(due, cur, armed), due
}

// skipBusy returns the slot to wait for when slots after due passed before the
// wait for due began: every was waiting on a call of its own (a store that
// answered slowly, a lock slow to release, hooks), which is no late
// wake-up. As a run's overrun, it skips them, due included, and waits for
// the first slot after now.
func (l *loop) skipBusy(due, now time.Time) time.Time {
	after := l.time.slots.Next(now)
	skipped := schedule.Count(l.time.slots, due, after, maxCount)
	l.rec.lateSkips += int(skipped)
	l.report(&l.outages.overrun, "busy", int(skipped), slog.LevelWarn, "slots passed while every waited on its store, lock or hooks, skipping them",
		"event", EventSkip, "reason", ReasonOverrun, "next", l.time.label(after).UTC())
	l.tellSkipped(ReasonOverrun, int(skipped), after)
	return after
}

// skipLate returns the slot to run after a wake-up that came late, past the
// slot due and more (every was stopped by SIGSTOP, or starved): the latest
// slot, cur, at once, as a wake-up late for one slot runs it; the ones from
// due to cur are skipped, as a run's overrun skips them. Not a suspend: no
// time passed that every could not count. from is when the wake-up was
// due (the time before it is not lateness).
func (l *loop) skipLate(due, cur, from time.Time) []time.Time {
	skipped := schedule.Count(l.time.slots, due, cur, maxCount)
	l.rec.lateSkips += int(skipped)
	l.report(&l.outages.overrun, "late", int(skipped), slog.LevelWarn, "woke up late (stopped or starved), skipping the slots that passed",
		"event", EventSkip, "reason", ReasonOverrun, "late_ms", l.now().Sub(from).Milliseconds(), "next", l.time.label(cur).UTC())
	l.tellSkipped(ReasonOverrun, int(skipped), cur)
	return []time.Time{cur}
}

// earlyWake is how long before a slot the loop's wake-up is armed, for
// SleepUntil to take it from there: earlyWake for Go's timers, which wake up
// to a millisecond late; nothing for a clock whose wake-ups come on time
// (timerfds: the kernel's high-resolution timers wake the poller at once),
// which spares a precise sleep, and the scheduler's hand-off of the
// thread that sleeps it, at each slot.
func (l *loop) earlyWake() time.Duration {
	if p, ok := l.cfg.Clock.(interface{ Precise() bool }); ok && p.Precise() {
		return 0
	}
	return earlyWake
}

// arm arms the wake-up for at: on the wall clock for a calendar schedule,
// on a clock that counts suspends for a grid.
func (l *loop) arm(at time.Time) (<-chan bool, func()) {
	if l.cfg.Schedule.WallClock() {
		return l.cfg.Clock.Wall(at)
	}
	return l.cfg.Clock.Boot(at.Sub(l.now()))
}

// catchUpPassed returns the slots to run when slots from due up to cur passed while
// every could not run them (why: a suspend, the clock set forward): those
// --catch-up picks, as at start, and the slot to wait for after them.
func (l *loop) catchUpPassed(due, cur, now time.Time, why string) (runs []time.Time, next time.Time) {
	missed := schedule.Count(l.time.slots, due, cur, maxCount) + 1
	runs = catchUp(l.time.slots, cur, missed, l.cfg.CatchUp, l.cfg.CatchUpMax)
	l.log.Info("slots passed while waiting", "event", EventCatchUp, "missed", missed, "policy", l.cfg.CatchUp.String(),
		"runs", len(runs), "reason", why)
	return runs, l.time.slots.Next(now)
}
