package runner

// This file owns the bookkeeping of a run in the job's record: pure
// functions from a record and a fact to the next record.

import (
	"time"

	"github.com/everycli/every/state"
)

// runStart is the start of a run, as the record keeps it.
type runStart struct {
	Name     string
	Command  []string
	Schedule string
	Anchor   time.Time // of the grid
	Slot     time.Time // the slot run
	At       time.Time // when the run started
	Host     string
	PID      int
}

// markStart returns the record with the start of a run booked: running, one
// more run, the slot and the grid. A crash from its write on leaves
// running: true, which the next start reads as a run cut short.
func markStart(r state.Record, s runStart) state.Record {
	r.Version, r.Name, r.Command, r.Schedule = state.Version, s.Name, s.Command, s.Schedule
	r.Anchor, r.LastSlot, r.LastRun = s.Anchor.Round(0), s.Slot.Round(0), s.At.Round(0)
	r.Running, r.Host, r.PID = true, s.Host, s.PID
	r.Runs = state.AddCount(r.Runs, 1)
	return r
}

// markEnd returns the record with the end of the run booked: its result, and
// the failure counts or the last success.
func markEnd(r state.Record, res Result, attempts int, end time.Time) state.Record {
	r.Running, r.LastEnd = false, end.Round(0)
	r.LastResult, r.LastExitCode, r.LastAttempts = string(res.Outcome), res.ExitCode, attempts
	if res.Outcome == Success {
		r.ConsecutiveFailures = 0
		r.LastSuccess = r.LastRun
	} else {
		r.ConsecutiveFailures = state.AddCount(r.ConsecutiveFailures, 1)
		r.Failures = state.AddCount(r.Failures, 1)
	}
	return r
}

// markInterrupted returns the record with its last run, found cut short,
// booked as interrupted.
func markInterrupted(r state.Record) state.Record {
	r.LastResult = string(Interrupted)
	r.ConsecutiveFailures = state.AddCount(r.ConsecutiveFailures, 1)
	r.Failures = state.AddCount(r.Failures, 1)
	return r
}

// restamp returns the record with its times moved by d: its history, told on
// the wall clock after a step of d, as the loop's own times are.
func restamp(r state.Record, d time.Duration) state.Record {
	for _, t := range []*time.Time{&r.Anchor, &r.LastSlot, &r.LastRun, &r.LastEnd, &r.LastSuccess} {
		if !t.IsZero() {
			*t = t.Add(d)
		}
	}
	return r
}
