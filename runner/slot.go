package runner

// This file owns one slot: the lock, the record read again under it (the
// grid of another instance, a slot it already ran, a run cut short), the
// record of the run's start and end, and the skips.

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/everycli/every/lock"
	"github.com/everycli/every/schedule"
	"github.com/everycli/every/state"
)

// outcome is what became of one slot.
type outcome struct {
	ran bool // the command ran
	// unavailable says the slot was skipped because the lock was busy, or the
	// store or the state could not be reached.
	unavailable bool
	done        bool      // the slot was skipped: another instance ran it already
	res         Result    // the run's result, if it ran
	next        time.Time // the slot to wait for next
	stop        os.Signal // a stop signal that came meanwhile
	hooks       *hookRun  // the hooks the run calls for, run after the lock is released
}

// stopBy records a stop signal that came, unless one came before.
func (o *outcome) stopBy(sig os.Signal) {
	if o.stop == nil {
		o.stop = sig
	}
}

// runSlot runs one slot, under the lock: it reads the record again, adopts the
// grid it finds there, skips a slot another instance already ran, and writes
// the record when the run starts and when it ends. due is the slot that was
// due next; manual runs (SIGUSR1) do not move it. catchingUp says more
// catch-up runs follow at once, so no slot is being overrun.
func (l *loop) runSlot(ctx context.Context, slot, due time.Time, manual, catchingUp bool) (out outcome) {
	out.next = due
	if !manual {
		out.next = l.time.slots.Next(slot)
	}
	l.time.markSlot()
	if l.cfg.Gate != nil {
		entered, stop := l.enterGate(ctx, out.next)
		if out.stop = stop; stop != nil {
			return out
		}
		if !entered && l.retired() {
			return out // no slot more: none skipped
		}
		if !entered {
			out.next = l.notPast(out.next)
			l.skipConcurrency(out.next)
			return out
		}
		defer l.cfg.Gate.leave()
		l.recover(&l.outages.concurrency, false, "places for the command again", "event", EventSkip, "reason", ReasonConcurrency)
	}
	first := l.startFirst(slot, manual)
	var start *state.Record
	if first != nil {
		start = &first.rec
	}
	lease, started, stop, err := l.lock(ctx, start)
	if stop == nil && err != nil {
		out.unavailable = true
		out.next = l.notPast(out.next)
		l.tellSkipped(l.logLockFailure(err), 1, out.next)
	}
	if out.stop = stop; stop != nil || err != nil {
		return out
	}
	l.recover(&l.outages.store, true, "store reachable again", "event", EventSkip, "reason", ReasonStore)
	l.recover(&l.outages.lockErr, true, "lock taken again", "event", EventLockError)
	l.recover(&l.outages.locked, false, "lock free again", "event", EventSkip, "reason", ReasonLocked)
	defer func() { out.stopBy(l.unlock(lease, out.stop != nil)) }()

	var now time.Time
	if started {
		// The start went with the lock: the record it was made from is the
		// store's, and reconcile would have found nothing to change.
		l.rec.Record, now = first.rec, first.at
	} else {
		now = l.now()
		if l.cfg.Store != nil {
			var skip bool
			if slot, skip = l.reconcile(ctx, slot, manual, now, lease, &out); skip {
				return out
			}
		}
	}
	l.run(ctx, runPlan{slot: slot, start: now, manual: manual, catchingUp: catchingUp, lease: lease, written: started}, &out)
	return out
}

// reconcile reads the record again, under the lock, and takes what
// rereadRecord makes of it. It returns the slot to run, or skip when this
// slot is not to be run: already run, or the record cannot be read (it is
// then never replaced by a fresh one).
func (l *loop) reconcile(ctx context.Context, slot time.Time, manual bool, now time.Time, lease lock.Lease, out *outcome) (time.Time, bool) {
	rec, stop, err := l.load(ctx)
	switch {
	case stop != nil:
		out.stop = stop
		return slot, true
	case err != nil:
		out.unavailable = true
		out.next = l.notPast(out.next)
		l.report(&l.outages.stateRead, "read", 1, slog.LevelError, "cannot read state, skipping the slot", "event", EventSkip, "reason", ReasonState,
			"state", l.cfg.Store.Where(), "error", err.Error())
		l.tellSkipped(ReasonState, 1, out.next)
		return slot, true
	}
	l.recover(&l.outages.stateRead, true, "state readable again", "event", EventSkip, "reason", ReasonState)
	var floor int
	f, hasFloor := lease.(floorer)
	if hasFloor {
		floor = f.RunFloor()
	}
	underLock := l.cfg.Lock != nil
	r := rereadRecord(rereadInput{found: rec, mine: l.rec, floor: floor, hasFloor: hasFloor,
		alive: func(rec *state.Record) bool { return l.holderAlive(rec, underLock) },
		sched: l.cfg.Schedule, anchor: l.time.label(l.time.anchor), slot: l.time.label(slot), now: l.time.label(now),
		manual: manual, host: l.cfg.Host, pid: l.cfg.PID})
	if r.lost != nil {
		l.logLost(r.lost)
	}
	if !r.join.IsZero() {
		l.time.setGrid(l.time.unlabel(r.join))
		if !manual {
			slot = l.time.unlabel(r.slot)
			out.next = l.time.slots.Next(slot)
		}
	}
	if r.done {
		l.rec.Record = r.rec
		out.next, out.done = l.notPast(out.next), true
		if l.cfg.MaxRuns == 1 {
			// A one-shot ends with it: it says so, as its ready line
			// would have if the run had been over then.
			l.log.Info("slot already run, nothing to do", "event", EventSkip, "reason", ReasonDone, "count", 1,
				"slot", l.time.label(slot).UTC(), "next", l.time.label(out.next).UTC())
		} else {
			l.log.Debug("slot already run", "event", EventSkip, "reason", ReasonDone, "count", 1, "slot", l.time.label(slot).UTC())
		}
		l.tellSkipped(ReasonDone, 1, out.next)
		return slot, true
	}
	l.rec.Record = r.rec
	if !r.own && rec != nil {
		l.rec.stale = 0
	}
	return slot, false
}

// logLost warns of a record the store lost (see floored).
func (l *loop) logLost(lost *lostRecord) {
	found := "no record"
	if lost.found >= 0 {
		found = fmt.Sprintf("runs %d on record", lost.found)
	}
	l.report(&l.outages.corrupt, "lost", 1, slog.LevelWarn, "the store lost the job's record: EVERY_RUN jumps ahead, never back",
		"event", EventStateError, "state", l.cfg.Store.Where(), "next_run", state.AddCount(lost.runs, 1),
		"error", fmt.Sprintf("%s, %d seen here before", found, lost.seen))
}

// runPlan is one run of a slot, as runSlot hands it on, under the lock.
type runPlan struct {
	slot  time.Time // the slot it runs for
	start time.Time // when it starts, on the loop's timeline
	// manual says it was asked for (SIGUSR1): it books the slot it runs in,
	// and moves no slot due.
	manual bool
	// catchingUp says more catch-up runs follow at once: this one overruns
	// no slot.
	catchingUp bool
	lease      lock.Lease // the lock it runs under
	written    bool       // its start was written with the lock already
	// tail keeps its output, when a feature needs it (set by run).
	tail *Tail
}

// runEnd is how a run ended, as run tells of it.
type runEnd struct {
	at       time.Time // on the loop's timeline
	res      Result
	attempts int
	// failedBefore is the record's count of consecutive failures before
	// the run: a success after some is a recovery.
	failedBefore int
}

// lockStart is the start of a run made before the lock, for the lock to
// write with itself (see startFirst).
type lockStart struct {
	rec state.Record // the loop's record with the run's start booked
	at  time.Time    // the run's start, on the loop's timeline
}

// startFirst returns the start of the run of slot, made from the loop's own
// record, for the lock to write with itself (startLocker), when the lock
// may: the lock is the store (lockWritesStart), this process's last write
// of the record stands (lastWriteStands), and reconcile, given the loop's
// record, would change nothing nor skip the slot (runsOnOwn). Otherwise
// nil: the record is read under the lock first. Manual runs always take
// that path.
//
// The start's time is read before the lock: on this path it is one round
// trip earlier than the lock (the log's late_ms is the exec's own). The
// lock writes the start only if the store holds exactly what this process
// wrote last; the loop's record is then that record (its last write, or
// the same read back since), and the start the one the run would make
// after reading it. Any other record, another instance's, a hand edit's,
// is read, never overwritten.
func (l *loop) startFirst(slot time.Time, manual bool) *lockStart {
	if manual || !l.lockWritesStart() || !l.lastWriteStands() {
		return nil
	}
	now := l.now()
	if !l.runsOnOwn(slot, now) {
		return nil
	}
	return &lockStart{rec: l.book(slot, now, false), at: now}
}

// lockWritesStart reports whether the lock can write a run's start with
// itself: it is the store, a startLocker (internal/fleet's Redis session).
func (l *loop) lockWritesStart() bool {
	_, ok := l.cfg.Lock.(startLocker)
	return ok && l.cfg.Store != nil && any(l.cfg.Store) == any(l.cfg.Lock)
}

// lastWriteStands reports whether the store holds the record this process
// wrote last, as far as it knows: it has run, its last write succeeded,
// and its reads are not failing (whose end reconcile logs).
func (l *loop) lastWriteStands() bool {
	return l.ran > 0 && !l.rec.unsaved && l.outages.stateRead.n == 0
}

// runsOnOwn reports whether the loop's record is the one reconcile would
// run the slot from unchanged: no run on record (cut short or going on),
// this schedule, this grid, and the slot not run yet.
func (l *loop) runsOnOwn(slot, now time.Time) bool {
	rec := &l.rec.Record
	return !rec.Running && rec.Schedule == l.cfg.Schedule.Recorded() && !l.otherGrid(rec) &&
		!ranAlready(rec, false, l.time.label(slot), l.time.label(now), l.time.labelled())
}

// otherGrid reports whether rec, of this schedule, is on another grid than
// the loop's: another instance's, for the loop to join.
func (l *loop) otherGrid(rec *state.Record) bool {
	return !l.cfg.Schedule.WallClock() && !rec.Anchor.Equal(l.time.label(l.time.anchor))
}

// book returns the loop's record with the start of the run of slot
// booked; a manual run books the slot it runs in.
func (l *loop) book(slot, now time.Time, manual bool) state.Record {
	if manual {
		// The slot it runs in; before the first (a cron expression whose
		// years are to come), the moment it was asked for.
		if slot = l.time.slots.Prev(now); slot.IsZero() {
			slot = now
		}
	}
	r := markStart(l.rec.Record, runStart{Name: l.cfg.Name, Command: l.cfg.Command, Schedule: l.cfg.Schedule.Recorded(),
		Anchor: l.time.label(l.time.anchor), Slot: l.time.label(slot), At: l.time.label(now), Host: l.cfg.Host, PID: l.cfg.PID})
	r.Skipped = state.AddCount(r.Skipped, l.rec.lateSkips)
	return r
}

// run runs the slot's command, under the lock, and books it in the record:
// its start while the command starts (unless written, with the lock
// already), its end once it is over.
func (l *loop) run(ctx context.Context, p runPlan, out *outcome) {
	l.runAsked = false // this run answers a SIGUSR1 that came while the slot began
	if !p.manual {
		l.logDST(p.slot)
	}
	if !p.written {
		before := l.rec.Record
		l.rec.Record = l.book(p.slot, p.start, p.manual)
		stop, ok := l.saveStart(ctx, before, p.lease.Token() != 0)
		if stop != nil {
			// Stopped while a store that does not answer held the start:
			// the command never started (a start that lands later reads as
			// a run cut short).
			out.stop = stop
			return
		}
		if !ok {
			// No number to give it (see saveStart): the slot is skipped,
			// as for a state that cannot be read.
			out.unavailable = true
			out.next = l.notPast(out.next)
			l.tellSkipped(ReasonState, 1, out.next)
			return
		}
	} else if l.cfg.Store != nil {
		l.noteWrite(nil)
	}
	l.rec.lateSkips = 0 // booked, with the start written by the lock or here
	if l.cfg.QuietSuccess || l.cfg.Hooks.any() || l.cfg.Observer != nil && l.cfg.Observer.WantsOutput() {
		p.tail = NewTail(l.cfg.OutputTail)
	}
	if o := l.cfg.Observer; o != nil {
		o.Started(Run{Slot: l.time.label(p.slot), Start: l.time.label(p.start), Late: p.start.Sub(p.slot), Record: l.rec.Record, Next: l.time.label(out.next)})
	}
	res, attempts, stop := l.runAttempts(ctx, p)
	e := runEnd{at: l.now(), res: res, attempts: attempts, failedBefore: l.rec.ConsecutiveFailures}
	l.ran++
	out.ran, out.res, out.stop = true, res, stop
	out.next = l.skipOverrun(out.next, e.at, p.catchingUp)
	l.rec.Record = markEnd(l.rec.Record, res, attempts, l.time.label(e.at))
	if res.Outcome == Success {
		l.failures = 0
	} else {
		l.failures++
	}
	out.stopBy(l.save(ctx, l.rec.Record, out.stop != nil))
	l.logFinish(e, e.at.Sub(p.start))
	l.tellEnd(p, e, out)
}

// tellEnd tells of a run's end: its held output printed if it failed
// (--quiet-success), the observer, and the hooks it calls for.
func (l *loop) tellEnd(p runPlan, e runEnd, out *outcome) {
	res, slot, start := e.res, p.slot, p.start
	var output []byte
	var dropped int64
	if p.tail != nil {
		output, dropped = p.tail.Bytes(), p.tail.Dropped()
	}
	if l.cfg.QuietSuccess && res.Outcome != Success && p.tail != nil {
		if dropped > 0 {
			// Through the log, as every's other lines: the reader of the
			// output that follows learns it is a tail.
			l.log.Warn("output cut: its earlier bytes were not kept", "event", EventOutput, "dropped_bytes", dropped,
				"output_tail", l.cfg.OutputTail)
		}
		if l.cfg.Lines != nil {
			replayLines(p.tail, l.cfg.Lines)
		} else {
			p.tail.Replay(os.Stdout, os.Stderr)
		}
	}
	if o := l.cfg.Observer; o != nil {
		o.Finished(Run{Slot: l.time.label(slot), Start: l.time.label(start), Late: start.Sub(slot), End: l.time.label(e.at), Result: res, Attempts: e.attempts,
			Record: l.rec.Record, Next: l.time.label(out.next), Output: output, Dropped: dropped})
	}
	if l.cfg.Hooks.any() {
		out.hooks = &hookRun{env: l.env(slot, e.attempts, p.lease.Token()), res: res, attempts: e.attempts, duration: e.at.Sub(start),
			failures: l.rec.ConsecutiveFailures, recovered: res.Outcome == Success && e.failedBefore > 0,
			output: output, outputKept: p.tail != nil}
	}
}

// saveStart writes the start of the run (l.rec, booked from before)
// before its command starts: its number (EVERY_RUN) is then on record
// whatever happens to every after it. The write is atomic, not durable
// (nothing is synced between a slot and its exec), but for a number not
// reserved on disk yet (see reserve). A local file is written at once; a
// server's write listens for a stop, which it returns (the run must not
// start). fleet says the record is a fleet store's, under a lease with a
// fencing token: the record is the reservation itself.
//
// ok is false when the run must not start, its number not given (l.rec is
// before again, its reservation kept): EVERY_RUN would pass MaxCount, or
// the number is not reserved on disk and cannot be (the write or the sync
// that would reserve it failed), or the start could not be written and
// its record not be marked behind it (see File.MarkBehind) for a restart
// to go on after it. So a number is handed out only where a reservation on
// disk covers it, and a restart never gives it again.
func (l *loop) saveStart(ctx context.Context, before state.Record, fleet bool) (stop os.Signal, ok bool) {
	if l.cfg.Store == nil {
		return nil, true
	}
	if before.Runs >= state.MaxCount {
		l.rec.Record = before
		l.skipUnreserved(errNumbersUsedUp)
		return nil, false
	}
	sync := l.reserve()
	rec := l.rec.Record
	var err error
	stop, done := l.recordCall(ctx, false, func(ctx context.Context) { err = l.cfg.Store.Save(context.WithoutCancel(ctx), &rec) })
	switch {
	case stop != nil:
		return stop, false
	case !done:
		err = errAbandoned
	}
	l.noteWrite(err)
	if l.dur.syncer == nil {
		// A server's record: as durable as its store keeps it. A fleet
		// store's (a lease with a fencing token) is the reservation itself:
		// a start it refused is no number on record, and another instance,
		// reading the record, would hand the same one out. The slot is
		// skipped, until a write succeeds.
		switch {
		case err != nil && fleet:
			l.rec.Record = before
			l.skipUnreserved(err)
			return nil, false
		case err == nil:
			l.recover(&l.outages.reserve, true, "run numbers reserved on disk again", "event", EventSkip, "reason", ReasonState,
				"state", l.cfg.Store.Where())
		}
		return nil, true
	}
	switch {
	case err == nil && sync:
		if err = l.syncNow(); err != nil {
			// On record, not on disk: taken back, so that the record
			// shows no run that never started.
			l.unbook(ctx, before)
		}
	case err != nil && !sync:
		// Reserved on disk already: the run goes on, its record marked
		// for a restart to go on after the reservation.
		err = l.markBehind()
	}
	if err != nil {
		l.rec.Record = withReservation(before, l.rec.Record)
		l.skipUnreserved(err)
		return nil, false
	}
	l.recover(&l.outages.reserve, true, "run numbers reserved on disk again", "event", EventSkip, "reason", ReasonState,
		"state", l.cfg.Store.Where())
	return nil, true
}

// errNumbersUsedUp is the error of a run whose number would pass MaxCount.
var errNumbersUsedUp = fmt.Errorf("runs reached %d, the most a record holds: EVERY_RUN would repeat", state.MaxCount)

// withReservation returns before with the reservation of booked, which
// a later sync may yet make durable.
func withReservation(before, booked state.Record) state.Record {
	before.Reserved, before.Boot = max(before.Reserved, booked.Reserved), booked.Boot
	return before
}

// unbook writes back the record as it was before a start that was
// written but could not be synced: the run does not start.
func (l *loop) unbook(ctx context.Context, before state.Record) {
	l.rec.Record = withReservation(before, l.rec.Record)
	l.save(ctx, l.rec.Record, false)
}

// skipUnreserved logs a slot skipped for want of a run number, summarised
// while it repeats.
func (l *loop) skipUnreserved(err error) {
	l.report(&l.outages.reserve, "reserve", 1, slog.LevelError, "cannot reserve a run number, skipping the slot",
		"event", EventSkip, "reason", ReasonState, "state", l.cfg.Store.Where(),
		"error", l.reserveError(err))
}

// reserveError says why no run number could be reserved, and what is on
// record.
func (l *loop) reserveError(err error) string {
	if l.dur.syncer == nil {
		return fmt.Sprintf("%v (runs %d on record: the store did not take the run's start)", err, l.rec.Runs)
	}
	return fmt.Sprintf("%v (runs %d, numbers reserved on disk up to %d)", err, l.rec.Runs, l.dur.reserved)
}

// logLockFailure logs why the lock could not be taken, and returns it as a skip
// reason. The holder of a busy file lock is looked up in the record.
func (l *loop) logLockFailure(err error) (reason string) {
	var busy *lock.BusyError
	switch {
	case errors.As(err, &busy):
		l.rec.sawHolder = true
		h := busy.Holder
		if p, ok := l.cfg.Store.(peeker); ok && h == (lock.Holder{}) {
			// A file lock names no holder; the holder's record does, when
			// it is running, and not a record a dead holder left running.
			if rec, err := p.Read(time.Now()); err == nil && rec != nil && rec.Running && l.holderAlive(rec, false) {
				h = lock.Holder{PID: rec.PID, Host: rec.Host}
			}
		}
		// What is known of the holder, never a pid 0 or an empty host for
		// what is not (flock(1), a job sharing the lock file, a record not
		// written yet).
		attrs := []any{"event", EventSkip, "reason", ReasonLocked}
		if h.PID != 0 {
			attrs = append(attrs, "holder_pid", h.PID)
		}
		if h.Host != "" {
			attrs = append(attrs, "holder_host", h.Host)
		}
		if h == (lock.Holder{}) {
			attrs = append(attrs, "holder", "unknown")
		}
		l.report(&l.outages.locked, "busy", 1, slog.LevelInfo, "lock busy, skipping the slot", attrs...)
		return ReasonLocked
	case errors.Is(err, lock.ErrStore):
		l.report(&l.outages.store, "store", 1, slog.LevelError, "store unreachable, skipping the slot", "event", EventSkip, "reason", ReasonStore, "error", err.Error())
		return ReasonStore
	default:
		l.report(&l.outages.lockErr, "lock", 1, slog.LevelError, "cannot take the lock, skipping the slot", "event", EventLockError, "error", err.Error())
		return ReasonLock
	}
}

// tellSkipped tells the observer of skipped slots.
func (l *loop) tellSkipped(reason string, count int, next time.Time) {
	if o := l.cfg.Observer; o != nil {
		o.Skipped(reason, count, l.time.label(next))
	}
}

// skipOverrun returns the slot to wait for after a run that ended at end: next,
// or, if the run went past it, the first slot after end, the ones between
// skipped and logged. Catch-up runs that follow one another overrun nothing.
func (l *loop) skipOverrun(next, end time.Time, catchingUp bool) time.Time {
	if since := l.time.since(); since.suspends > 0 || since.steps > 0 && l.cfg.Schedule.WallClock() {
		// Slots passed in a suspend, or the wall clock set past a calendar's
		// slots, during the run: missed, not overrun; the wait that follows
		// sees them passed, and --catch-up picks.
		return next
	}
	if catchingUp || !next.Before(end) {
		l.recover(&l.outages.overrun, false, "runs fit their slots again", "event", EventSkip, "reason", ReasonOverrun)
		return next
	}
	after := l.time.slots.Next(end)
	skipped := schedule.Count(l.time.slots, next, after, maxCount)
	l.rec.Skipped = state.AddCount(l.rec.Skipped, int(skipped))
	l.report(&l.outages.overrun, "overrun", int(skipped), slog.LevelWarn, "run overran its slots", "event", EventSkip, "reason", ReasonOverrun,
		"next", l.time.label(after).UTC())
	l.tellSkipped(ReasonOverrun, int(skipped), after)
	return after
}

// logFinish logs the end of a run. A failure like the one before is logged
// at debug, and summarised, so that a job failing at every 10ms slot does not
// flood the log; the success that ends a streak of failures (failedBefore,
// the record's, so a streak begun before a restart counts) says how many, at
// warn, as the failures were: -q shows the end of every failure it showed.
// d is the run's duration.
func (l *loop) logFinish(e runEnd, d time.Duration) {
	res := e.res
	attrs := []any{"event", EventFinish, "result", string(res.Outcome), "exit_code", res.ExitCode,
		"duration_ms", d.Milliseconds(), "attempts", e.attempts}
	if res.Signal != 0 {
		attrs = append(attrs, "signal", SignalName(res.Signal))
	}
	if res.Err != nil {
		attrs = append(attrs, "error", res.Err.Error())
	}
	if res.Outcome != Success {
		key := string(res.Outcome) + " " + describe(res)
		l.report(&l.outages.failing, key, 1, slog.LevelWarn, "run finished", attrs...)
		return
	}
	total, _, _, _ := l.outages.failing.end()
	if n := max(total, e.failedBefore); n > 0 {
		attrs = append(attrs, "after_failures", n)
		l.log.Warn("run finished", attrs...)
		return
	}
	l.log.Info("run finished", attrs...)
}

// notPast returns next, or the first slot after now if next has passed: a
// skipped slot never makes the loop run late.
func (l *loop) notPast(next time.Time) time.Time {
	if now := l.now(); next.Before(now) {
		return l.time.slots.Next(now)
	}
	return next
}

// logDST logs a slot of a fixed-time calendar schedule that a DST change moved
// (its time did not exist: the end of the gap) or chose (its time occurs
// twice: the first).
func (l *loop) logDST(slot time.Time) {
	var why string
	switch l.cfg.Schedule.Shift(slot) {
	case schedule.Gap:
		why = "its local time does not exist today; running at the end of the gap"
	case schedule.Repeat:
		why = "its local time occurs twice today; running at the first, only"
	default:
		return
	}
	l.log.Info("slot moved by a DST change", "event", EventCatchUp, "reason", ReasonDST, "missed", 0,
		"slot", slot.Round(0).In(l.cfg.Schedule.Location()).Format(time.RFC3339), "detail", why)
}
