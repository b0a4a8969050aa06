package runner

import (
	"time"

	"github.com/everycli/every/state"
)

// Observer is told of each run, for pings and metrics. Its calls are made on
// the loop's goroutine, between the steps of a slot: they must not block
// (queue, write a small file, return).
type Observer interface {
	// Began is told of the loop's start: the record as found, and the
	// first slot it waits for.
	Began(rec state.Record, next time.Time)
	// Started is told of a run's start, before its first attempt.
	Started(r Run)
	// Finished is told of a run's end, after its retries, and the record
	// written.
	Finished(r Run)
	// Skipped is told of slots skipped (overrun, locked, done, store,
	// state), and the slot the loop waits for next.
	Skipped(reason string, count int, next time.Time)
	// WantsOutput says whether Finished needs the run's output tail.
	WantsOutput() bool
}

// Run is what an Observer is told of one run.
type Run struct {
	Slot     time.Time
	Start    time.Time
	Late     time.Duration // from the slot to the first attempt's start
	End      time.Time     // zero at the start
	Result   Result        // the last attempt's, at the end
	Attempts int
	Record   state.Record // the job's record, as written (the counters)
	Next     time.Time    // the slot the loop waits for next
	Output   []byte       // the output tail, when kept: the tail's own bytes, to read, not to change or keep
	Dropped  int64        // bytes of output dropped before the tail
}

// Hooks are shell commands run after a run, by its result: OnFailure once
// per failure streak, OnEachFailure after every failed run, OnSuccess after
// a successful one, OnRecover after the first success after failures. Each
// runs through sh -c, in a process group of its own, bounded by Timeout.
type Hooks struct {
	OnFailure, OnEachFailure, OnSuccess, OnRecover string
	// FailureAfter is the failed run of a streak at which OnFailure runs:
	// the run that makes the record's consecutive failures reach it. The
	// count is the record's, so a restart in the middle of a streak does not
	// run the hook again. 0 means 1.
	FailureAfter int
	Timeout      time.Duration
}

// any reports whether a hook is set.
func (h Hooks) any() bool {
	return h.OnFailure != "" || h.OnEachFailure != "" || h.OnSuccess != "" || h.OnRecover != ""
}

// failureDue reports whether OnFailure runs after a failed run that made a
// streak of failures: once a streak, when the streak reaches FailureAfter. A
// pager told at every failed run of a 30s job would be paged twice a minute
// for all of an outage.
func (h Hooks) failureDue(failures int) bool { return failures == max(h.FailureAfter, 1) }

// Observers tells each of its observers.
type Observers []Observer

func (obs Observers) Began(rec state.Record, next time.Time) {
	for _, o := range obs {
		o.Began(rec, next)
	}
}

func (obs Observers) Started(r Run) {
	for _, o := range obs {
		o.Started(r)
	}
}

func (obs Observers) Finished(r Run) {
	for _, o := range obs {
		o.Finished(r)
	}
}

func (obs Observers) Skipped(reason string, count int, next time.Time) {
	for _, o := range obs {
		o.Skipped(reason, count, next)
	}
}

func (obs Observers) WantsOutput() bool {
	for _, o := range obs {
		if o.WantsOutput() {
			return true
		}
	}
	return false
}
