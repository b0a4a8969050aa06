package runner

// This file owns the loop's timeline: the clock read onto it, a grid
// kept on the monotonic clock through steps of the wall clock, the labels
// (wall-clock times) its times are recorded and passed on as, and the
// suspends and steps it sees.

import (
	"log/slog"
	"time"

	"github.com/everycli/every/schedule"
)

// setGrid puts the schedule on the anchor, a time on the loop's timeline. A
// calendar schedule has no anchor of its own: it is recorded, only.
func (l *loop) setGrid(anchor time.Time) {
	l.anchor = anchor
	l.slots = l.cfg.Schedule.Anchored(anchor)
}

// now reads the clock, onto the loop's timeline: for a grid, the wall clock
// less the steps seen since the start. It looks for a step or a suspend
// first (see observe), and reads again after a step, which the reading may
// straddle.
func (l *loop) now() time.Time {
	t := l.cfg.Clock.Now()
	if l.observe() {
		t = l.cfg.Clock.Now()
	}
	return t.Round(0).Add(-l.shift)
}

// label returns the wall-clock time of t, a time on the loop's timeline: as
// it is recorded, logged and passed on (EVERY_SLOT).
func (l *loop) label(t time.Time) time.Time { return t.Add(l.shift) }

// unlabel returns a wall-clock time of a record on the loop's timeline.
func (l *loop) unlabel(t time.Time) time.Time { return t.Add(-l.shift) }

// labelled returns the schedule as the records see it: on wall-clock times.
func (l *loop) labelled() schedule.Schedule {
	return l.cfg.Schedule.Anchored(l.label(l.anchor))
}

// onClock returns t, a time on the loop's timeline, as a time of the Clock,
// for SleepUntil: the Clock's reading now plus the time until t (which keeps
// the monotonic reading of the system's clock).
func (l *loop) onClock(t time.Time) time.Time {
	return l.cfg.Clock.Now().Add(t.Sub(l.now()))
}

// clockEvents counts the suspends and the steps of the wall clock the loop
// has seen.
type clockEvents struct{ suspends, steps int }

// since returns the events seen since mark.
func (e clockEvents) since(mark clockEvents) clockEvents {
	return clockEvents{e.suspends - mark.suspends, e.steps - mark.steps}
}

// observe looks at the Clock for a suspend (Suspended grew) or a step of the
// wall clock (Offset moved by more than a suspend explains), and reports a
// step. A step keeps a grid where it was on the monotonic clock: the loop's
// timeline moves with it (shift), and so do its records, its own history
// included, so that none looks from the future, or stale, for the step. It
// is logged, and summarised when it repeats. A calendar schedule follows
// the wall clock instead (its wait hears of the step).
func (l *loop) observe() (stepped bool) {
	off, s := l.cfg.Clock.Offset(), l.cfg.Clock.Suspended()
	slept := s - l.suspended
	if slept >= clockStepMin {
		l.suspended, l.offset = s, l.offset+slept
		l.seen.suspends++
	}
	step := off - l.offset
	if step < clockStepMin && step > -clockStepMin {
		return false
	}
	l.offset = off
	l.seen.steps++
	msg, detail := "wall clock set forward", "slots follow it; the ones it skipped follow --catch-up"
	if step < 0 {
		msg, detail = "wall clock set back", "slots follow it; none that ran runs again"
	}
	if !l.cfg.Schedule.WallClock() {
		l.shift += step
		l.rec = restamp(l.rec, step)
		l.stale += step
		detail = "the grid keeps its pace on the monotonic clock; the slot times recorded and passed on follow the wall clock"
	}
	l.repeated(&l.outages.clock, "step", 1, slog.LevelWarn, msg, "event", EventCatchUp, "reason", ReasonClock, "missed", 0,
		"step", step.String(), "detail", detail)
	return true
}
