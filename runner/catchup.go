package runner

import (
	"fmt"
	"time"

	"github.com/everycli/every/schedule"
	"github.com/everycli/every/state"
)

// CatchUp is the policy for slots missed while no every was running.
type CatchUp int

// The --catch-up policies.
const (
	CatchUpOnce CatchUp = iota // run once, for the latest missed slot
	CatchUpNone                // run nothing for them
	CatchUpAll                 // run each, oldest first, up to a maximum
)

var catchUpNames = []string{"once", "none", "all"}

func (c CatchUp) String() string { return catchUpNames[c] }

// ParseCatchUp parses "once", "none" or "all".
func ParseCatchUp(s string) (CatchUp, error) {
	for i, n := range catchUpNames {
		if s == n {
			return CatchUp(i), nil
		}
	}
	return 0, fmt.Errorf("%q is not a catch-up policy", s)
}

// StartReason says how a loop starts on its grid.
type StartReason int

// How a loop starts.
const (
	Fresh           StartReason = iota // no record: a new grid
	ScheduleChanged                    // the record's schedule is another: a new grid
	Resumed                            // the record's grid goes on
	ClockMovedBack                     // the record's times lie ahead of now: a new grid from now
)

// startReasons are the tokens of the reasons: the catch_up line's reason.
var startReasons = []string{"fresh", ReasonScheduleChanged, "resumed", ReasonClockMovedBack}

// String returns the reason's token.
func (r StartReason) String() string { return startReasons[r] }

// StartInput is what PlanStart decides from.
type StartInput struct {
	Record *state.Record // found at start; nil: none
	// Schedule is the job's: its grid goes on the record's anchor, or
	// starts anew; its Recorded text says whether the record is of it.
	Schedule    schedule.Schedule
	Now         time.Time
	Delay       time.Duration // before the first slot of a fresh start
	Policy      CatchUp
	Max         int  // the most slots CatchUpAll runs
	Interrupted bool // the record's last run was cut short: its slot counts as missed
	// OneShot says the loop runs once (--max-runs 1): it never waits long
	// for its slot (see oneShot).
	OneShot bool
	// Anew says the grid starts anew whatever the record says (every jobs'
	// @reboot: one run at each start of every jobs).
	Anew bool
}

// Start is where a loop starts on its grid, decided from the state it finds.
type Start struct {
	Anchor time.Time   // the grid's anchor
	Runs   []time.Time // slots to run at once, oldest first: the catch-up
	Due    time.Time   // the first slot to wait for after them
	Missed int64       // slots missed while no every ran
	Why    StartReason
	// Ahead is how far the record's latest time lies ahead of now, when it
	// does (ClockMovedBack): by how much, at least, the clock went back.
	Ahead time.Duration
	// At, when set, is when the wait for Due ends, Due being a slot that has
	// passed: a one-shot's run at once (after --delay) for the latest slot.
	At time.Time
	// Done says a one-shot found the latest slot, Ran, run already: it runs
	// nothing, and Due is the next slot, for the log.
	Done bool
	Ran  time.Time
}

// maxCount bounds the counting of missed calendar slots: a per-second
// schedule down for a month is not counted one by one.
const maxCount = 100_000

// PlanStart decides the grid, the catch-up and the first slot to wait for.
// A duration grid starts at once on a fresh start; a calendar schedule waits
// for its first slot, as cron does. A one-shot never waits long (oneShot).
func PlanStart(in StartInput) Start {
	s := planStart(in)
	if in.OneShot && in.Policy != CatchUpNone {
		// --catch-up none is the wish to run no slot that has passed: such a
		// one-shot waits for its next slot, as a loop does.
		s = oneShot(in, s)
	}
	return s
}

// nearSlot is how close a slot must be for a one-shot to wait for it: cron
// starts a little early or late, and a one-shot it starts just before a slot
// is meant for that slot.
func nearSlot(period time.Duration) time.Duration { return min(period/100, time.Second) }

// oneShot turns the plan s into a one-shot's (docs/GUIDE.md, One-shots, from
// scripts and cron): it waits for the next slot if that is near; otherwise it
// runs at once for the latest slot not after now (after --delay on a fresh
// start, calendar or not), unless the record shows that slot run, and then it
// runs nothing (Done). A run of that slot in progress on record is left for the
// lock to tell (busy, or done once it is over): the record is not final yet.
func oneShot(in StartInput, s Start) Start {
	fresh := s.Why == Fresh || s.Why == ScheduleChanged
	g := in.Schedule.Anchored(s.Anchor)
	from := in.Now
	if fresh {
		from = from.Add(in.Delay)
	}
	next, prev := g.Next(from), g.Prev(from)
	s.Runs = nil
	switch rec := in.Record; {
	case prev.IsZero() || next.Sub(from) <= nearSlot(next.Sub(prev)):
		// No slot yet (a cron expression whose years are to come): it
		// waits for its first, as a loop does.
		s.Due = next
	case !fresh && !(rec.Running && !in.Interrupted) && ranAlready(rec, in.Interrupted, prev, in.Now, g):
		s.Due, s.Done, s.Ran = next, true, prev
	default:
		s.Due, s.At = prev, from
	}
	return s
}

// planStart is PlanStart for a loop.
func planStart(in StartInput) Start {
	rec, now := in.Record, in.Now
	if rec == nil || rec.Schedule != in.Schedule.Recorded() || in.Anew {
		why := Fresh
		if rec != nil && !in.Anew {
			why = ScheduleChanged
		}
		anchor := now.Add(in.Delay)
		return Start{Anchor: anchor, Due: in.Schedule.First(anchor), Why: why}
	}
	if latest := rec.Latest(); latest.After(now) {
		// From the future of this clock: the clock was set back since it was
		// written, or its writer's clock runs ahead (docs/GUIDE.md, Clock
		// changes and suspend). Its slot counts as run: nothing is caught
		// up. Waiting for its grid to come round
		// again would stall (a record from the year 2900, forever), and the
		// grid may lie out of reach of a time.Duration: a new grid starts
		// from now, its first slot one period away, as if the recorded slot
		// had run now. A calendar waits for its next slot after now (one the
		// record shows run, within a period, is then skipped as done).
		return Start{Anchor: now, Due: in.Schedule.Anchored(now).Next(now), Why: ClockMovedBack, Ahead: latest.Sub(now)}
	}
	g := in.Schedule.Anchored(rec.Anchor)
	done := rec.LastSlot
	if done.IsZero() {
		done = before(g, rec.Anchor)
	}
	if in.Interrupted {
		done = before(g, done)
	}
	s := Start{Anchor: rec.Anchor, Due: g.Next(now), Why: Resumed}
	cur := g.Prev(now)
	s.Missed = schedule.Count(g, done, cur, maxCount)
	if s.Missed <= 0 {
		s.Missed = 0
		return s
	}
	s.Runs = catchUp(g, cur, s.Missed, in.Policy, in.Max)
	return s
}

// catchUp returns the slots that policy runs of missed ones up to cur,
// oldest first.
func catchUp(g schedule.Schedule, cur time.Time, missed int64, policy CatchUp, most int) []time.Time {
	n := int64(0)
	switch policy {
	case CatchUpOnce:
		n = 1
	case CatchUpAll:
		n = min(missed, int64(most))
	}
	runs := make([]time.Time, n)
	for k := n - 1; k >= 0; k-- {
		runs[k] = cur
		cur = before(g, cur)
	}
	return runs
}

// before returns the slot before slot t.
func before(g schedule.Schedule, t time.Time) time.Time {
	return g.Prev(t.Add(-1))
}

// ahead reports whether slot lies a period or more after now: a record's
// last slot that far ahead means the clock was set back.
func ahead(g schedule.Schedule, slot, now time.Time) bool {
	period := g.Next(now).Sub(g.Prev(now))
	return !slot.Before(now.Add(period))
}

// ranAlready reports whether the record shows slot as run already, by this instance
// or another. The slot of a run that was cut short (interrupted) is not done.
// A last slot a period or more in the future of now means the clock was set
// back, and shows nothing done.
func ranAlready(rec *state.Record, interrupted bool, slot, now time.Time, g schedule.Schedule) bool {
	last := rec.LastSlot
	if interrupted {
		last = before(g, last)
	}
	return !last.Before(slot) && !ahead(g, last, now)
}
