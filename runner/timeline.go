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

// timeline is the loop's own time base. For a grid, its times are the wall
// clock less shift, the steps of the wall clock seen since the start, so
// that a step moves no slot, and a suspend passes slots; for a calendar,
// the wall clock itself (shift stays 0). The times the loop records and
// passes on (labels) are the wall clock's: its times plus shift.
type timeline struct {
	clock    Clock
	schedule schedule.Schedule // the job's, on no anchor
	// slots is the schedule on anchor: the calendar, or the grid.
	slots  schedule.Schedule
	anchor time.Time
	shift  time.Duration
	// offset and suspended are Clock.Offset and Clock.Suspended as last
	// taken into account.
	offset, suspended time.Duration
	// seen counts the suspends and the steps of the wall clock seen, and
	// mark their counts when the slot at hand began: what passed since.
	seen, mark clockEvents
}

// newTimeline starts a timeline on c, for s; its grid is set later
// (setGrid).
func newTimeline(c Clock, s schedule.Schedule) timeline {
	return timeline{clock: c, schedule: s, offset: c.Offset(), suspended: c.Suspended()}
}

// setGrid puts the schedule on the anchor, a time on the timeline. A
// calendar schedule has no anchor of its own: it is recorded, only.
func (t *timeline) setGrid(anchor time.Time) {
	t.anchor = anchor
	t.slots = t.schedule.Anchored(anchor)
}

// now reads the clock, onto the timeline: for a grid, the wall clock less
// the steps seen since the start. It looks for a step or a suspend first
// (see observe), and reads again after a step, which the reading may
// straddle. step is the step of the wall clock seen, if one was.
func (t *timeline) now() (now time.Time, step time.Duration) {
	c := t.clock.Now()
	if step = t.observe(); step != 0 {
		c = t.clock.Now()
	}
	return c.Round(0).Add(-t.shift), step
}

// label returns the wall-clock time of a time on the timeline: as it is
// recorded, logged and passed on (EVERY_SLOT).
func (t *timeline) label(at time.Time) time.Time { return at.Add(t.shift) }

// unlabel returns a wall-clock time of a record on the timeline.
func (t *timeline) unlabel(at time.Time) time.Time { return at.Add(-t.shift) }

// labelled returns the schedule as the records see it: on wall-clock times.
func (t *timeline) labelled() schedule.Schedule {
	return t.schedule.Anchored(t.label(t.anchor))
}

// onClock returns at, a time on the timeline, as a time of the Clock, for
// SleepUntil: the Clock's reading now plus the time until at (which keeps
// the monotonic reading of the system's clock).
func (t *timeline) onClock(at time.Time) time.Time {
	now, _ := t.now()
	return t.clock.Now().Add(at.Sub(now))
}

// markSlot marks the start of the slot at hand: since tells what passed
// after it.
func (t *timeline) markSlot() { t.mark = t.seen }

// since returns the suspends and steps seen since the slot at hand began.
func (t *timeline) since() clockEvents { return t.seen.since(t.mark) }

// clockEvents counts the suspends and the steps of the wall clock the loop
// has seen.
type clockEvents struct{ suspends, steps int }

// since returns the events seen since mark.
func (e clockEvents) since(mark clockEvents) clockEvents {
	return clockEvents{e.suspends - mark.suspends, e.steps - mark.steps}
}

// observe looks at the Clock for a suspend (Suspended grew) or a step of the
// wall clock (Offset moved by more than a suspend explains), and returns the
// step, 0 for none. A step keeps a grid where it was on the monotonic
// clock: the timeline moves with it (shift). A calendar schedule follows the
// wall clock instead (its wait hears of the step).
func (t *timeline) observe() (step time.Duration) {
	off, s := t.clock.Offset(), t.clock.Suspended()
	if slept := s - t.suspended; slept >= clockStepMin {
		t.suspended, t.offset = s, t.offset+slept
		t.seen.suspends++
	}
	step = off - t.offset
	if step < clockStepMin && step > -clockStepMin {
		return 0
	}
	t.offset = off
	t.seen.steps++
	if !t.schedule.WallClock() {
		t.shift += step
	}
	return step
}

// now reads the clock onto the loop's timeline, and takes a step of the
// wall clock into account (see takeStep).
func (l *loop) now() time.Time {
	now, step := l.time.now()
	if step != 0 {
		l.takeStep(step)
	}
	return now
}

// takeStep takes a step of the wall clock into account: a grid's records,
// its own history included, move with the timeline, so that none looks
// from the future, or stale, for the step. It is logged, and summarised
// when it repeats.
func (l *loop) takeStep(step time.Duration) {
	msg, detail := "wall clock set forward", "slots follow it; the ones it skipped follow --catch-up"
	if step < 0 {
		msg, detail = "wall clock set back", "slots follow it; none that ran runs again"
	}
	if !l.cfg.Schedule.WallClock() {
		l.rec.Record = restamp(l.rec.Record, step)
		l.rec.stale += step
		detail = "the grid keeps its pace on the monotonic clock; the slot times recorded and passed on follow the wall clock"
	}
	l.report(&l.outages.clock, "step", 1, slog.LevelWarn, msg, "event", EventCatchUp, "reason", ReasonClock, "missed", 0,
		"step", step.String(), "detail", detail)
}
