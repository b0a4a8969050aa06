package runner

// This file reads the record again under the lock, before a run: the grid
// another instance left, a slot it already ran, a start of its own.

import (
	"context"
	"log/slog"
	"time"

	"github.com/everycli/every/lock"
	"github.com/everycli/every/state"
)

// peeker is a store that can be read without the lock and without side
// effects (a corrupt record is not set aside): state.File.
type peeker interface {
	Read(now time.Time) (*state.Record, error)
}

// reconcile reads the record again, under the lock, and joins what it says:
// the grid of another instance, a slot already run, a run cut short. It
// returns the slot to run, or skip when this slot is not to be run: already
// run, or the record cannot be read (it is then never replaced by a fresh one).
//
// A record gone, or behind what this instance saw, under a fleet lease, is
// a store that lost its data: the run count goes on above the lease's
// floor (see afterLoss).
func (l *loop) reconcile(ctx context.Context, slot time.Time, manual bool, now time.Time, lease lock.Lease, out *outcome) (time.Time, bool) {
	rec, stop, err := l.load(ctx)
	switch {
	case stop != nil:
		out.stop = stop
		return slot, true
	case err != nil:
		out.unavailable = true
		out.next = l.notPast(out.next)
		l.repeated(&l.outages.stateRead, "read", 1, slog.LevelError, "cannot read state, skipping the slot", "event", EventSkip, "reason", ReasonState,
			"state", l.cfg.Store.Where(), "error", err.Error())
		l.skipped(ReasonState, 1, out.next)
		return slot, true
	}
	l.ended(&l.outages.stateRead, true, "state readable again", "event", EventSkip, "reason", ReasonState)
	if rec == nil {
		l.afterLoss(nil, lease)
		return slot, false
	}
	own := l.unsaved && (rec.Runs < l.rec.Runs || l.ownStart(rec)) || l.ownStale(rec)
	if !own {
		rec = l.afterLoss(rec, lease)
	}
	if own {
		// This instance's own record is newer: the write that would have
		// stored it failed, or it was moved with a step of the wall clock
		// since. It goes on counting from its own.
		// A reservation the store's record holds beyond its own is kept.
		mine := l.rec
		mine.Reserved = max(mine.Reserved, rec.Reserved)
		rec = &mine
	}
	interrupted := rec.Running && !l.holderAlive(rec, l.cfg.Lock != nil)
	if rec.Schedule == l.cfg.Schedule.Recorded() {
		if l.otherGrid(rec) && !rec.Latest().After(l.time.label(now)) && !rec.Anchor.Equal(l.left) {
			// Another instance runs this job on its own grid: join it. (Not
			// the grid of a record from the future, the clock set back
			// since, which this loop left for its own.)
			l.time.setGrid(l.time.unlabel(rec.Anchor))
			if !manual {
				slot = l.time.slots.Prev(now)
				out.next = l.time.slots.Next(slot)
			}
		}
		if !manual && ranAlready(rec, interrupted, l.time.label(slot), l.time.label(now), l.time.labelled()) {
			l.rec = *rec
			out.next, out.done = l.notPast(out.next), true
			if l.cfg.MaxRuns == 1 {
				// A one-shot ends with it: it says so, as its ready line
				// would have if the run had been over then.
				l.log.Info("slot already run, nothing to do", "event", EventSkip, "reason", ReasonDone, "count", 1,
					"slot", l.time.label(slot).UTC(), "next", l.time.label(out.next).UTC())
			} else {
				l.log.Debug("slot already run", "event", EventSkip, "reason", ReasonDone, "count", 1, "slot", l.time.label(slot).UTC())
			}
			l.skipped(ReasonDone, 1, out.next)
			return slot, true
		}
	}
	if !own {
		l.rec, l.stale = *rec, 0
	}
	if interrupted {
		// Its end was never written: it counts as interrupted.
		l.rec = markInterrupted(l.rec)
	}
	return slot, false
}

// ownStart reports whether rec is the start of this instance's last run,
// whose end it holds but could not write: the same run (count, slot), still
// running on record, by this host and pid. Its end is not lost: the run
// is not taken for one cut short.
func (l *loop) ownStart(rec *state.Record) bool {
	return rec.Running && !l.rec.Running && rec.Runs == l.rec.Runs && rec.LastSlot.Equal(l.rec.LastSlot.Add(-l.stale)) &&
		rec.Host == l.cfg.Host && rec.PID == l.cfg.PID
}

// ownStale reports whether rec is this instance's record as it was before
// a step of the wall clock moved it (stale): the store holds what this
// instance wrote or read last, on the clock before the step.
func (l *loop) ownStale(rec *state.Record) bool {
	if l.stale == 0 {
		return false
	}
	was := restamp(l.rec, -l.stale)
	return rec.Runs == was.Runs && rec.Running == was.Running && rec.Anchor.Equal(was.Anchor) && rec.LastSlot.Equal(was.LastSlot) &&
		rec.LastEnd.Equal(was.LastEnd)
}
