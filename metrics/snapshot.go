package metrics

// This file owns what the exposition says of a job (Snapshot) and how the
// loop's events change it: the one bookkeeping behind the metrics file and
// every --listen's /metrics.

import (
	"maps"
	"time"

	"github.com/everycli/every/runner"
	"github.com/everycli/every/state"
)

// Snapshot is what the exposition says of one job, kept up to date by the
// loop's events (its methods are those of a runner.Observer). It is a value:
// not safe for concurrent use, and Clone gives a copy that shares nothing.
type Snapshot struct {
	// Record is the job's record as last told: the counters, the last run
	// and the last success.
	Record state.Record
	// Overrun counts overrun skips told since Record was taken: the loop
	// books them in its record, and tells of them before it passes that
	// record on.
	Overrun int
	// Skips counts the skips for the other reasons, since the loop began.
	Skips    map[string]int
	Duration time.Duration // of the last finished run
	Late     time.Duration // of the last finished run, from its slot
	ExitCode int           // of the last finished run
	Next     time.Time     // the slot waited for next; zero: none
	Running  bool
}

// Began takes the record as found at the loop's start: its counters, the
// last run as it tells it, not running, and the first slot waited for.
func (s *Snapshot) Began(rec state.Record, next time.Time) {
	s.Record, s.Overrun, s.Next, s.Running = rec, 0, next, false
	s.ExitCode, s.Duration, s.Late = rec.LastExitCode, 0, 0
	if !rec.LastRun.IsZero() && !rec.LastEnd.Before(rec.LastRun) {
		s.Duration = rec.LastEnd.Sub(rec.LastRun)
	}
	if !rec.LastRun.IsZero() && !rec.LastSlot.IsZero() {
		s.Late = rec.LastRun.Sub(rec.LastSlot)
	}
}

// Started takes a run's start: running, and the counters of its record
// (this run counted). The last run's duration, exit code and lateness stay
// those of the last finished run.
func (s *Snapshot) Started(r runner.Run) {
	s.Record, s.Overrun, s.Running = r.Record, 0, true
	if !r.Next.IsZero() {
		s.Next = r.Next
	}
}

// Finished takes a run's end: everything from the run and its record, as
// written.
func (s *Snapshot) Finished(r runner.Run) {
	s.Record, s.Overrun, s.Running = r.Record, 0, false
	s.Duration, s.Late, s.ExitCode = r.End.Sub(r.Start), r.Late, r.Result.ExitCode
	s.Next = r.Next
}

// Skipped counts skipped slots by reason, and takes the slot waited for
// next.
func (s *Snapshot) Skipped(reason string, count int, next time.Time) {
	if count > 0 {
		if reason == "overrun" {
			s.Overrun += count
		} else {
			if s.Skips == nil {
				s.Skips = map[string]int{}
			}
			s.Skips[reason] += count
		}
	}
	if !next.IsZero() {
		s.Next = next
	}
}

// Clone returns a copy of s that shares nothing with it.
func (s *Snapshot) Clone() Snapshot {
	c := *s
	c.Record.Command = append([]string(nil), s.Record.Command...)
	c.Skips = maps.Clone(s.Skips)
	return c
}

// Job is a job's name and its Snapshot, as Render shows them.
type Job struct {
	Name     string
	Snapshot *Snapshot
}
