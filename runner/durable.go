package runner

// This file owns the durability of the job's record (docs/DESIGN.md,
// Durability) with a store whose writes are atomic but not durable
// (state.Syncer, a file): when its records are synced, and the reservation of
// the run numbers.
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

	"github.com/everycli/every/schedule"
	"github.com/everycli/every/state"
)

// syncEvery is the least time between two syncs of the record.
const syncEvery = time.Second

// durability is what the loop knows of its records on disk, with a store
// whose writes need a sync to be durable (syncer); with any other, or none,
// it does nothing. Its methods decide; the loop's logs what they find.
type durability struct {
	syncer state.Syncer // nil: none needed
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

// newDurability returns the durability of store's records.
func newDurability(store state.Store) durability {
	s, _ := store.(state.Syncer)
	return durability{syncer: s}
}

// blockFor is how many run numbers a reservation reaches ahead of the run
// that makes it, for schedule s: the runs of a few seconds, so that the one
// sync a second renews it well before they are used up.
func blockFor(s schedule.Schedule, now time.Time) int {
	n := 4
	if s == nil {
		return n
	}
	if iv := s.MinGap(now); iv > 0 {
		n = max(n, min(int(4*time.Second/iv), 1<<20)+2)
	}
	return n
}

// reserve sets the reservation of rec, the start of a run on boot: the
// next block, when what is reserved on disk runs short. It returns sync
// when the run's own number is not reserved on disk yet: the start must
// then be synced before the command starts.
func (d *durability) reserve(rec *state.Record, block int, boot string) (sync bool) {
	if d.syncer == nil {
		return false
	}
	n := rec.Runs
	rec.Boot = boot
	ahead := state.AddCount(n, block)
	if n > d.reserved {
		rec.Reserved = max(rec.Reserved, ahead)
		return true
	}
	if state.AddCount(n, block/2) > d.reserved {
		rec.Reserved = max(rec.Reserved, ahead)
	}
	return false
}

// skippedNumbers is a record read whose runs go on after its reservation:
// the numbers up to it may have been handed out without being on record.
type skippedNumbers struct {
	behind         bool // its writer went on without it (its writes failed); else a reboot
	runs, reserved int  // as on record
}

// noteLoaded takes note of rec, read from the store on boot: what it says is
// reserved on disk, and, for a record behind its writer or written before
// a reboot, the numbers it may have handed out since, which are skipped
// (rec's runs go on after them). own says rec is this process's own record.
// It returns what was skipped, to be warned of.
func (d *durability) noteLoaded(rec *state.Record, own bool, boot string) (skipped []skippedNumbers) {
	if d.syncer == nil {
		return nil
	}
	if rec.Behind && rec.Reserved > rec.Runs {
		skipped = append(skipped, skippedNumbers{behind: true, runs: rec.Runs, reserved: rec.Reserved})
		rec.Runs = rec.Reserved
	}
	switch {
	case rec.Durable:
		if rec.Boot != "" && rec.Boot != boot && rec.Reserved > rec.Runs {
			// A power loss (or a crash of the kernel) may have lost the
			// starts of runs after this record: their numbers are not given
			// again. They are counted as run (runs is an upper bound).
			if seen := rec.Boot + " " + strconv.Itoa(rec.Reserved); seen != d.rebooted {
				d.rebooted = seen
				skipped = append(skipped, skippedNumbers{runs: rec.Runs, reserved: rec.Reserved})
			}
			rec.Runs = rec.Reserved
		}
		d.reserved = rec.Reserved
	case own && rec.Boot == boot:
		// This process's own record: what it synced still holds.
	default:
		// Another writer's, not synced yet: its reservation may not be on
		// disk.
		d.reserved = 0
	}
	return skipped
}

// noteWritten takes note of a record written at now, to be synced.
func (d *durability) noteWritten(now time.Time) {
	if d.syncer == nil || d.pending {
		return
	}
	d.pending, d.written = true, now
}

// due returns when the record written must be synced (a second after the
// last sync at the latest, as soon as written if that was longer ago), and
// ok false when nothing is to be synced.
func (d *durability) due() (due time.Time, ok bool) {
	if !d.pending {
		return time.Time{}, false
	}
	due = d.written
	if !d.last.IsZero() {
		due = later(due, d.last.Add(syncEvery))
	}
	return due, true
}

// sync syncs the record at now: what it holds is durable, its reservation
// included. A failure is pending again, for the next write's sync.
// state.ErrReplaced (another instance wrote the record meanwhile) is no
// failure, and nothing new is on disk.
func (d *durability) sync(now time.Time) error {
	if d.syncer == nil {
		return nil
	}
	d.pending, d.last = false, now
	d.syncs++
	rec, err := d.syncer.Sync()
	switch {
	case errors.Is(err, state.ErrReplaced):
	case err != nil:
		d.pending = true // due again a second after this try (last)
	default:
		d.reserved = rec.Reserved
	}
	return err
}

// later returns the later of a and b.
func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// The loop's side: when it syncs, and what it logs.

// reserve sets the reservation of the run the loop's record books (see
// durability.reserve).
func (l *loop) reserve() (sync bool) {
	return l.dur.reserve(&l.rec.Record, blockFor(l.cfg.Schedule, time.Now()), state.BootID())
}

// noteLoaded takes note of a record read from the store (see
// durability.loaded), and warns of the run numbers it skips.
func (l *loop) noteLoaded(rec *state.Record) {
	own := rec.PID == l.cfg.PID && rec.Host == l.cfg.Host
	for _, s := range l.dur.noteLoaded(rec, own, state.BootID()) {
		detail := fmt.Sprintf("runs %d on record, numbers reserved up to %d", s.runs, s.reserved)
		if s.behind {
			l.report(&l.outages.jumped, "behind", 1, slog.LevelWarn,
				"state behind its writer, whose writes failed: EVERY_RUN goes on after the numbers it reserved, some of which may have run",
				"event", EventStateError, "state", l.cfg.Store.Where(), "error", detail)
			continue
		}
		l.log.Warn("state written before a reboot: EVERY_RUN goes on after the numbers reserved then, some of which may have run",
			"event", EventStateError, "state", l.cfg.Store.Where(), "error", detail)
	}
}

// syncIfDue syncs the record written if it is due, and readies the next
// write.
func (l *loop) syncIfDue() {
	l.prepare()
	if due, ok := l.dur.due(); ok && !time.Now().Before(due) {
		_ = l.syncNow() // logged
	}
}

// syncWake returns the wake-up for a wait until at (on the loop's
// timeline): at, or earlier, when the record written is due to be synced
// before it.
func (l *loop) syncWake(at time.Time) time.Time {
	due, ok := l.dur.due()
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
	due, ok := l.dur.due()
	if !ok {
		return nil, func() {}
	}
	t := time.NewTimer(time.Until(due))
	return t.C, func() { t.Stop() }
}

// syncNow syncs the record (see durability.sync). A failure is logged,
// summarised, tried again at the next write's sync, and returned.
func (l *loop) syncNow() error {
	err := l.dur.sync(time.Now())
	switch {
	case errors.Is(err, state.ErrReplaced):
		// Another instance writes the record (under the lock, which a sync
		// needs not): what this one wrote is in its records, which its own
		// syncs make durable.
		l.log.Debug("state replaced by another instance while being synced", "event", EventStateError,
			"state", l.cfg.Store.Where(), "error", err.Error())
	case err != nil:
		// A write that failed, as far as a power loss is concerned: one
		// outage with the writes'.
		l.report(&l.outages.stateWrite, "write", 1, slog.LevelError, "cannot write state, will try again at the next run",
			"event", EventStateError, "state", l.cfg.Store.Where(), "error", err.Error())
	}
	return err
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
