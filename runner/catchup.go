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
	ClockMovedBack                     // the record's last slot lies ahead: the grid goes on from now
)

var startReasons = []string{"fresh", "schedule changed", "resumed", "clock moved back"}

func (r StartReason) String() string { return startReasons[r] }

// StartInput is what PlanStart decides from.
type StartInput struct {
	Record      *state.Record // found at start; nil: none
	Schedule    string        // as the user wrote it
	Interval    time.Duration
	Now         time.Time
	Delay       time.Duration // before the first slot of a fresh start
	Policy      CatchUp
	Max         int  // the most slots CatchUpAll runs
	Interrupted bool // the record's last run was cut short: its slot counts as missed
}

// Start is where a loop starts on its grid, decided from the state it finds.
type Start struct {
	Anchor time.Time   // the grid's anchor
	Runs   []time.Time // slots to run at once, oldest first: the catch-up
	Due    time.Time   // the first slot to wait for after them
	Missed int64       // slots missed while no every ran
	Why    StartReason
}

// PlanStart decides the grid, the catch-up and the first slot to wait for.
func PlanStart(in StartInput) Start {
	rec, now, interval := in.Record, in.Now, in.Interval
	if rec == nil || rec.Schedule != in.Schedule {
		why := Fresh
		if rec != nil {
			why = ScheduleChanged
		}
		anchor := now.Add(in.Delay)
		return Start{Anchor: anchor, Due: anchor, Why: why}
	}
	g := schedule.Grid{Anchor: rec.Anchor, Interval: interval}
	done := rec.LastSlot
	if done.IsZero() {
		done = g.Slot(-1)
	}
	if in.Interrupted {
		done = done.Add(-interval)
	}
	s := Start{Anchor: rec.Anchor, Due: g.Next(now), Why: Resumed}
	if !done.Before(now.Add(interval)) {
		// The last slot lies a period or more ahead: the clock was set back.
		// Waiting for that slot would stall, running the gap would storm: go
		// on from now.
		s.Why = ClockMovedBack
		return s
	}
	cur := g.Prev(now)
	s.Missed = g.Index(cur) - g.Index(done)
	if s.Missed <= 0 {
		s.Missed = 0
		return s
	}
	n := int64(0)
	switch in.Policy {
	case CatchUpOnce:
		n = 1
	case CatchUpAll:
		n = min(s.Missed, int64(in.Max))
	}
	for k := n - 1; k >= 0; k-- {
		s.Runs = append(s.Runs, cur.Add(-time.Duration(k)*interval))
	}
	return s
}

// Done reports whether the record shows slot as run already, by this instance
// or another. The slot of a run that was cut short (interrupted) is not done.
// A last slot a period or more in the future of now means the clock was set
// back, and shows nothing done.
func Done(rec *state.Record, interrupted bool, slot, now time.Time, interval time.Duration) bool {
	last := rec.LastSlot
	if interrupted {
		last = last.Add(-interval)
	}
	return !last.Before(slot) && last.Before(now.Add(interval))
}
