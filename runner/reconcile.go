package runner

// This file squares the loop's own record with the one the store holds,
// read again under the lock before a run: the grid another instance left,
// a slot it already ran, a start of its own, a record the store lost.
// rereadRecord decides, from values only; the loop's reconcile (slot.go)
// reads, logs and takes the decision.

import (
	"time"

	"github.com/everycli/every/schedule"
	"github.com/everycli/every/state"
)

// held is the job's record as the loop holds it: as loaded from the store
// under the lock, or, without a store, the loop's own; with what the loop
// knows of it that the store's copy does not say.
type held struct {
	state.Record
	// unsaved says the last write of the record failed: the store holds an
	// older record, and this one is preferred to it until a write succeeds.
	unsaved bool
	// stale is how far the record's times were moved with the wall clock
	// (a step, for a grid) since it was what the store holds: a store that
	// still holds it before the move holds this process's own record.
	stale time.Duration
	// left is the anchor of the grid of a record from the future, which
	// the start left for a grid of its own: not another instance's to join.
	left time.Time
	// lateSkips counts the slots a late wake-up skipped, booked in the
	// record with the next run's start.
	lateSkips int
	// sawHolder says the lock was once found busy: another instance ran
	// the job, and wrote its record, so that a record found gone later
	// was lost (see reread).
	sawHolder bool
}

// peeker is a store that can be read without the lock and without side
// effects (a corrupt record is not set aside): state.File.
type peeker interface {
	Read(now time.Time) (*state.Record, error)
}

// floorer is the lease of a store that can lose its data (lock's Redis and
// etcd leases): RunFloor is a number above every run number handed out
// under the job's earlier leases, whatever the store has forgotten since.
type floorer interface {
	RunFloor() int
}

// rereadInput is what reread decides from. Times are labels: the wall
// clock's.
type rereadInput struct {
	found *state.Record // the record read under the lock; nil: none
	mine  held          // the loop's
	// floor is the lease's run floor, if it has one (see floorer).
	floor    int
	hasFloor bool
	// alive says whether the run a record shows as running may still go on.
	alive     func(*state.Record) bool
	sched     schedule.Schedule // the job's, on no anchor
	anchor    time.Time         // the loop's grid's
	slot, now time.Time
	manual    bool // a run asked for (SIGUSR1): it joins a grid, but runs whatever ran
	host      string
	pid       int
}

// reread is what the loop does with the record it read again.
type reread struct {
	rec state.Record // the record to go on from
	// own says rec is the loop's own, newer than the store's: the write
	// that would have stored it failed, or it was moved with a step of the
	// wall clock since.
	own bool
	// lost, when set, says the store lost the job's record (see lostRecord).
	lost *lostRecord
	// join is the anchor of another instance's grid, to join; zero: none.
	join time.Time
	slot time.Time // the slot to run: on the grid joined, but for a manual run
	done bool      // the slot ran already: skip it
	// interrupted says the record's last run was cut short: rec books it.
	interrupted bool
}

// lostRecord is a record found gone, or behind what this instance saw
// (runs), under a lease whose floor says more runs were handed out.
type lostRecord struct {
	found, seen, runs int // found -1: no record
}

// rereadRecord decides what a record read under the lock says: the record
// to go on from (the store's, or the loop's own where the store's is an
// older copy of it; a record lost by the store floored by the lease), the
// grid to join, and whether the slot ran already.
func rereadRecord(in rereadInput) reread {
	out := reread{slot: in.slot}
	rec := in.found
	if rec != nil && in.mine.owns(rec, in.host, in.pid) {
		// Counting goes on from the loop's own, keeping a reservation the
		// store's record holds beyond it.
		mine := in.mine.Record
		mine.Reserved = max(mine.Reserved, rec.Reserved)
		out.rec, out.own = mine, true
	} else {
		rec, out.lost = floored(rec, in)
		if rec == nil {
			out.rec = in.mine.Record
			if out.lost != nil {
				out.rec.Runs = out.lost.runs
			}
			return out
		}
		out.rec = *rec
	}
	out.interrupted = out.rec.Running && !in.alive(&out.rec)
	grid := in.sched.Anchored(in.anchor)
	if out.rec.Schedule == in.sched.Recorded() {
		if !in.sched.WallClock() && !out.rec.Anchor.Equal(in.anchor) && !out.rec.Latest().After(in.now) && !out.rec.Anchor.Equal(in.mine.left) {
			// Another instance runs this job on its own grid: join it. (Not
			// the grid of a record from the future, the clock set back
			// since, which this loop left for its own.)
			out.join = out.rec.Anchor
			grid = in.sched.Anchored(out.join)
			if !in.manual {
				out.slot = grid.Prev(in.now)
			}
		}
		if !in.manual && ranAlready(&out.rec, out.interrupted, out.slot, in.now, grid) {
			out.done = true
			return out
		}
	}
	if out.interrupted {
		// Its end was never written: it counts as interrupted.
		out.rec = markInterrupted(out.rec)
	}
	return out
}

// owns reports whether rec, read from the store, is an older copy of the
// loop's own record: the start of its last run, whose end the loop holds
// but could not write; a record of fewer runs, its writes failing; or its
// own record as it was before a step of the wall clock moved it (stale).
func (h *held) owns(rec *state.Record, host string, pid int) bool {
	if h.unsaved {
		if rec.Runs < h.Runs {
			return true
		}
		if rec.Running && !h.Running && rec.Runs == h.Runs && rec.LastSlot.Equal(h.LastSlot.Add(-h.stale)) &&
			rec.Host == host && rec.PID == pid {
			return true // its end is not lost: the run is not taken for one cut short
		}
	}
	if h.stale == 0 {
		return false
	}
	was := restamp(h.Record, -h.stale)
	return rec.Runs == was.Runs && rec.Running == was.Running && rec.Anchor.Equal(was.Anchor) && rec.LastSlot.Equal(was.LastSlot) &&
		rec.LastEnd.Equal(was.LastEnd)
}

// floored checks a record read under a lease with a floor (nil: none)
// against what the loop saw last: a record gone, or counting fewer runs,
// says the store lost its data, and the runs another instance handed out
// since this one last looked are lost with it. So does a record gone
// after another instance was seen holding the lock, even by an instance
// that never saw a record (it started before the job's first, and lost
// every race for the lock since). The count then goes on from the lease's
// floor, or from what this instance saw if that is more: the numbers jump,
// never go back. It returns the record to go on from (nil: none) and the
// loss, if there was one.
func floored(rec *state.Record, in rereadInput) (*state.Record, *lostRecord) {
	seen := in.mine.Runs
	if !in.hasFloor || seen == 0 && (rec != nil || !in.mine.sawHolder) || rec != nil && rec.Runs >= seen {
		return rec, nil
	}
	lost := &lostRecord{found: -1, seen: seen, runs: max(seen, in.floor-1)}
	if rec == nil {
		return nil, lost
	}
	lost.found = rec.Runs
	r := *rec
	r.Runs = lost.runs
	return &r, lost
}
