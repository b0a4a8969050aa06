package runner

// This file keeps EVERY_RUN from going back when a fleet store loses its
// data (SPEC 9 [crash]): a FLUSHALL, a restart without persistence, a
// failover to a replica that missed the last writes, an etcd restored from
// an older snapshot, a record deleted by hand.

import (
	"fmt"
	"log/slog"

	"github.com/everycli/every/lock"
	"github.com/everycli/every/state"
)

// floorer is the lease of a store that can lose its data (lock's Redis and
// etcd leases): RunFloor is a number above every run number handed out
// under the job's earlier leases, whatever the store has forgotten since.
type floorer interface {
	RunFloor() int
}

// afterLoss checks the record read under lease (nil: none) against what
// this instance saw last (the loop's record): a record gone, or counting
// fewer runs, says the store lost its data, and the runs another instance
// handed out since this one last looked are lost with it. So does a record
// gone after another instance was seen holding the lock, even by an
// instance that never saw a record (it started before the job's first,
// and lost every race for the lock since). The count then goes on from the
// lease's floor, or from what this instance saw if that is more: the
// numbers jump, never go back. It returns the record to go on from; for
// none, the loop's own, whose count it floors.
func (l *loop) afterLoss(rec *state.Record, lease lock.Lease) *state.Record {
	f, ok := lease.(floorer)
	seen := l.rec.Runs
	if !ok || seen == 0 && (rec != nil || !l.sawHolder) || rec != nil && rec.Runs >= seen {
		return rec
	}
	runs := max(seen, f.RunFloor()-1)
	found := "no record"
	if rec != nil {
		found = fmt.Sprintf("runs %d on record", rec.Runs)
	}
	l.repeated(&l.outages.corrupt, "lost", 1, slog.LevelWarn, "the store lost the job's record: EVERY_RUN jumps ahead, never back",
		"event", EventStateError, "state", l.cfg.Store.Where(), "next_run", state.AddCount(runs, 1),
		"error", fmt.Sprintf("%s, %d seen here before", found, seen))
	if rec == nil {
		l.rec.Runs = runs
		return nil
	}
	r := *rec
	r.Runs = runs
	return &r
}
