package runner

// This file owns the durability of the job's record (SPEC 9 [durability])
// with a store whose writes are atomic but not durable (state.Syncer, a
// file): when its records are synced, and the reservation of the run
// numbers.
//
// Every write renames a whole record into place: a crash or a SIGKILL of
// every loses nothing. A run's end is made durable at most once a second,
// never between a slot and the exec of its command: a second after the
// last sync at the latest (in the idle wait, or while the next command
// runs), and at exit. A run's number (EVERY_RUN, the record's runs) is
// handed out only if it is reserved on disk already: the record's reserved
// field, synced, numbers ahead of the runs. Runs reserve the next block
// well before they need it, so that the sync that reserves it comes with an
// end's; only the first run of a job, or one after a reboot, or after a
// writer that died before its sync, syncs its start before its command.
// A record read after a reboot may have lost the starts written after it:
// its runs go on from its reserved number, skipping the numbers that may
// have been handed out, never repeating one.
//
// A write that fails (a full disk, a read-only remount) never lets a run
// number past what is reserved on disk: within the reservation the run
// goes on, its record marked behind it (File.MarkBehind: a bit of its
// mode, which a full disk still lets every change), so that a restart
// after a crash goes on after the reservation too; past it, the slot is
// skipped (reason=state) until a write and a sync succeed. A block is the
// runs of four seconds or more: an outage that short stops nothing.

import (
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"github.com/everycli/every/state"
)

// syncEvery is the least time between two syncs of the record.
const syncEvery = time.Second

// durability is what the loop knows of its records on disk.
type durability struct {
	// pending says a record was written since the last sync, at written.
	pending bool
	written time.Time
	// last is when the last sync was, on the monotonic clock; zero: none.
	last time.Time
	// reserved is the highest run number reserved on disk: numbers up to it
	// may be handed out without a sync.
	reserved int
	// syncs counts the syncs done (for tests and the debug log).
	syncs int
	// rebooted is the record from before a reboot warned of (its boot and
	// reservation): read again (under the lock, before the first run),
	// it is not warned of twice.
	rebooted string
}

// syncer returns the store if its writes need syncing to be durable.
func (l *loop) syncer() state.Syncer {
	s, _ := l.cfg.Store.(state.Syncer)
	return s
}

// block is how many run numbers a reservation reaches ahead of the run
// that makes it: the runs of a few seconds, so that the one sync a second
// renews it well before they are used up.
func (l *loop) block() int {
	n := 4
	if l.cfg.Schedule == nil {
		return n
	}
	if iv := l.cfg.Schedule.MinGap(time.Now()); iv > 0 {
		n = max(n, min(int(4*time.Second/iv), 1<<20)+2)
	}
	return n
}

// reserve sets the record's reservation for the run it books (l.rec, its
// start): the next block, when what is reserved on disk runs short. It
// returns sync when the run's own number is not reserved on disk yet: the
// start must then be synced before the command starts.
func (l *loop) reserve() (sync bool) {
	if l.syncer() == nil {
		return false
	}
	n := l.rec.Runs
	l.rec.Boot = state.BootID()
	ahead := state.AddCount(n, l.block())
	if n > l.dur.reserved {
		l.rec.Reserved = max(l.rec.Reserved, ahead)
		return true
	}
	if state.AddCount(n, l.block()/2) > l.dur.reserved {
		l.rec.Reserved = max(l.rec.Reserved, ahead)
	}
	return false
}

// loaded takes note of a record read from the store: what it says is
// reserved on disk, and, for a record written before a reboot, the numbers
// it may have handed out since, which are skipped.
func (l *loop) loaded(rec *state.Record) {
	if l.syncer() == nil {
		return
	}
	if rec.Behind && rec.Reserved > rec.Runs {
		// Its writer went on without it (its writes failed), handing out
		// numbers up to its reservation: they are not given again.
		l.repeated(&l.outages.jumped, "behind", 1, slog.LevelWarn,
			"state behind its writer, whose writes failed: EVERY_RUN goes on after the numbers it reserved, some of which may have run",
			"event", EventStateError, "state", l.cfg.Store.Where(),
			"error", fmt.Sprintf("runs %d on record, numbers reserved up to %d", rec.Runs, rec.Reserved))
		rec.Runs = rec.Reserved
	}
	switch {
	case rec.Durable:
		if boot := state.BootID(); rec.Boot != "" && rec.Boot != boot && rec.Reserved > rec.Runs {
			// A power loss (or a crash of the kernel) may have lost the
			// starts of runs after this record: their numbers are not given
			// again. They are counted as run (runs is an upper bound).
			if seen := rec.Boot + " " + strconv.Itoa(rec.Reserved); seen != l.dur.rebooted {
				l.dur.rebooted = seen
				l.log.Warn("state written before a reboot: EVERY_RUN goes on after the numbers reserved then, some of which may have run",
					"event", EventStateError, "state", l.cfg.Store.Where(),
					"error", fmt.Sprintf("runs %d on record, numbers reserved up to %d", rec.Runs, rec.Reserved))
			}
			rec.Runs = rec.Reserved
		}
		l.dur.reserved = rec.Reserved
	case rec.PID == l.cfg.PID && rec.Host == l.cfg.Host && rec.Boot == state.BootID():
		// This process's own record: what it synced still holds.
	default:
		// Another writer's, not synced yet: its reservation may not be on
		// disk.
		l.dur.reserved = 0
	}
}

// written takes note of a record written, to be synced.
func (l *loop) written() {
	if l.syncer() == nil || l.dur.pending {
		return
	}
	l.dur.pending, l.dur.written = true, time.Now()
}

// syncDue returns when the record written must be synced (a second after
// the last sync at the latest, as soon as written if that was longer ago),
// and ok false when nothing is to be synced.
func (l *loop) syncDue() (due time.Time, ok bool) {
	if !l.dur.pending {
		return time.Time{}, false
	}
	due = l.dur.written
	if !l.dur.last.IsZero() {
		due = later(due, l.dur.last.Add(syncEvery))
	}
	return due, true
}

// later returns the later of a and b.
func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// syncIfDue syncs the record written if it is due, and readies the next
// write.
func (l *loop) syncIfDue() {
	l.prepare()
	if due, ok := l.syncDue(); ok && !time.Now().Before(due) {
		_ = l.syncNow() // logged
	}
}

// syncWake returns the wake-up for a wait until at (on the loop's
// timeline): at, or earlier, when the record written is due to be synced
// before it.
func (l *loop) syncWake(at time.Time) time.Time {
	due, ok := l.syncDue()
	if !ok {
		return at
	}
	if d := l.now().Add(time.Until(due)); d.Before(at) {
		return d
	}
	return at
}

// syncTimer returns a channel that fires when the record written is due
// to be synced, nil if none is; stop releases it.
func (l *loop) syncTimer() (fire <-chan time.Time, stop func()) {
	due, ok := l.syncDue()
	if !ok {
		return nil, func() {}
	}
	t := time.NewTimer(time.Until(due))
	return t.C, func() { t.Stop() }
}

// syncNow syncs the record: what it holds is durable, its reservation
// included. A failure is logged, summarised, tried again at the next
// write's sync, and returned.
func (l *loop) syncNow() error {
	s := l.syncer()
	if s == nil {
		return nil
	}
	l.dur.pending = false
	l.dur.last = time.Now()
	l.dur.syncs++
	rec, err := s.Sync()
	switch {
	case errors.Is(err, state.ErrReplaced):
		// Another instance writes the record (under the lock, which a sync
		// needs not): what this one wrote is in its records, which its own
		// syncs make durable. Nothing failed; nothing new is on disk.
		l.log.Debug("state replaced by another instance while being synced", "event", EventStateError,
			"state", l.cfg.Store.Where(), "error", err.Error())
		return err
	case err != nil:
		l.dur.pending, l.dur.written = true, l.dur.last
		// A write that failed, as far as a power loss is concerned: one
		// outage with the writes'.
		l.repeated(&l.outages.stateWrite, "write", 1, slog.LevelError, "cannot write state, will try again at the next run",
			"event", EventStateError, "state", l.cfg.Store.Where(), "error", err.Error())
		return err
	}
	l.dur.reserved = rec.Reserved
	return nil
}

// behindMarker is a store that can mark its record behind its writer
// (state.File).
type behindMarker interface {
	MarkBehind() error
}

// markBehind marks the record behind this process, whose run goes on
// with a number its record does not show (see state.File.MarkBehind).
func (l *loop) markBehind() error {
	m, ok := l.cfg.Store.(behindMarker)
	if !ok {
		return errors.New("the store cannot mark its record behind: no number is given that it does not show")
	}
	return m.MarkBehind()
}

// syncAtExit syncs what was written since the last sync: every exits with
// its records on disk, and leaves no file of its own behind.
func (l *loop) syncAtExit() {
	if l.dur.pending {
		_ = l.syncNow() // logged
	}
	if p, ok := l.cfg.Store.(preparer); ok {
		_ = p.Close()
	}
}

// preparer is a store that can ready its next write ahead (state.File).
type preparer interface {
	Prepare()
	Close() error
}

// prepare readies the store's next write, off the path from a slot to its
// exec: in the idle wait, and once a command has started.
func (l *loop) prepare() {
	if p, ok := l.cfg.Store.(preparer); ok {
		p.Prepare()
	}
}
