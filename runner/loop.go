// Package runner owns the loop of every: the wait for each slot of the
// schedule (package schedule says when they are), the lock and the record
// around a run, catch-up, retries, skips, hooks, and the execution of one
// attempt of the command.
package runner

import (
	"context"
	"log/slog"
	"math/rand/v2"
	"os"
	"syscall"
	"time"

	"github.com/everycli/every/lock"
	"github.com/everycli/every/schedule"
	"github.com/everycli/every/state"
)

// Config is everything the loop needs, validated and typed. Zero values mean
// "none" (no timeout, no jitter, no limit), except where a field says otherwise.
type Config struct {
	Name    string
	Command []string // argv; Command[0] is looked up in PATH when it has no slash
	// Schedule is when the slots are: on the wall clock (a cron expression,
	// an aligned duration), or a grid started at once and kept on the
	// monotonic clock. Its Recorded text is the record's.
	Schedule schedule.Schedule

	Jitter time.Duration // each start is delayed by a uniform random part of it
	Delay  time.Duration // wait before the first slot of a fresh start

	Retries     int
	RetryOn     RetryPolicy // which failed attempts are retried
	Backoff     time.Duration
	BackoffMax  time.Duration
	MaxFailures int // consecutive failed runs before the loop ends; 0: never
	MaxRuns     int // runs before the loop ends; 0: never

	Timeout   time.Duration  // per attempt
	Signal    syscall.Signal // sent to the process group on timeout
	KillAfter time.Duration  // from that signal to SIGKILL

	Stdin bool     // pass every's stdin on instead of /dev/null
	Env   []string // the environment the child inherits

	// OutputTail is how many bytes of the command's output a run keeps when
	// a feature needs them (QuietSuccess, Hooks, an Observer that asks for
	// them); then stdout and stderr go through pipes. Otherwise the command
	// writes to every's own descriptors.
	OutputTail   int
	QuietSuccess bool     // hold a run's output; print it only if the run failed
	Hooks        Hooks    // commands run after a run, by its result
	Observer     Observer // told of each run's start and end (pings, metrics); nil: none

	CatchUp    CatchUp // what to do at start with slots missed while nothing ran
	CatchUpMax int     // the most slots CatchUpAll runs

	Lock     lock.Locker   // taken for each run with its retries; nil: none
	LockWait time.Duration // how long to wait for a busy lock before skipping
	Store    state.Store   // the job's record; nil: none kept
	Host     string        // this host's name, for the record
	PID      int           // this process's pid, for the record

	Logger *slog.Logger
	// Signals are every's own signals, as main receives them.
	Signals <-chan os.Signal
	// Exec runs one attempt; nil means Exec (a real process).
	Exec ExecFunc
	// Rand returns a number in [0, 1) for jitter; nil means math/rand/v2.
	Rand func() float64
	// SleepUntil sleeps the last moments before a slot, precisely; nil means
	// clock_nanosleep on the monotonic clock. (Tests on a fake clock give
	// time.Sleep.)
	SleepUntil func(time.Time)
	// Clock arms the waits for slots and tells of suspends; nil means the
	// system's. (Tests on a fake clock give one of Go timers.)
	Clock Clock
	// Release, when set, is called before each wait for a slot at least
	// ReleaseAfter away: the process gives back what it can of its memory
	// (freed heap, code pages) while it sleeps for long, and pays for it once
	// per long wait only (a page needed again comes back at its next use).
	Release      func()
	ReleaseAfter time.Duration
}

// Reason says why the loop ended.
type Reason int

// Why a loop ends.
const (
	Stopped     Reason = iota + 1 // a stop signal, or the context ended
	MaxRuns                       // --max-runs reached
	MaxFailures                   // --max-failures consecutive failures
	LockBusy                      // a one-shot run found the lock busy, or its store or state out of reach
	SlotDone                      // a one-shot found its slot run already: nothing to do
)

// Exit is how the loop ended. main turns it into an exit status.
type Exit struct {
	Reason Reason
	Signal os.Signal // the stop signal, when Reason is Stopped by one
	Last   Result    // the last run's result, when there was one
}

type loop struct {
	cfg Config
	log *slog.Logger
	// slots is the schedule: the calendar, or the grid on anchor.
	slots  schedule.Schedule
	anchor time.Time
	// The loop's times are on a timeline of its own (see now): for a grid,
	// the wall clock less shift, the steps of the wall clock seen since the
	// start (so that a step moves no slot, and a suspend passes slots); for
	// a calendar, the wall clock itself (shift stays 0). The times it
	// records and passes on (labels) are the wall clock's: its times plus
	// shift. offset and suspended are Clock.Offset and Clock.Suspended as
	// last taken into account.
	shift, offset, suspended time.Duration
	// seen counts the suspends and the steps of the wall clock seen, and
	// mark their counts when the slot at hand began: what passed since.
	seen, mark clockEvents
	// stale is how far rec's times were moved with the wall clock (a step,
	// for a grid) since rec was what the store holds: a store that still
	// holds it before the move holds this process's own record.
	stale time.Duration
	// left is the anchor of the grid of a record from the future, which
	// the start left for a grid of its own: not another instance's to join.
	left time.Time
	// lateSkips counts the slots a late wake-up skipped, booked in the
	// record with the next run's start.
	lateSkips int
	// rec is the job's record: as loaded from the store under the lock, or,
	// without a store, this process's own.
	rec state.Record
	// unsaved says the last write of rec failed: the store holds an older
	// record, and rec is preferred to it until a write succeeds.
	unsaved  bool
	failures int // consecutive failed runs in this process
	ran      int // runs in this process
	outages  outages
	// runAsked says a SIGUSR1 came while the loop was busy with the store
	// and no run followed: the idle wait runs one at once.
	runAsked bool
	// tail keeps the running run's output, when a feature needs it.
	tail *Tail
	// first, when set, is when the first wait ends, before its slot: a
	// one-shot's run at once for a slot that has passed.
	first time.Time
}

// startLoadBound is how long the start-up read of the record may take.
const startLoadBound = 200 * time.Millisecond

// Loop runs the command on its schedule until a stop signal, the context's
// end, --max-runs or --max-failures.
func Loop(ctx context.Context, cfg Config) Exit {
	if cfg.Exec == nil {
		cfg.Exec = Exec
	}
	if cfg.Rand == nil {
		cfg.Rand = rand.Float64
	}
	if cfg.SleepUntil == nil {
		cfg.SleepUntil = sleepUntil
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Clock == nil {
		cfg.Clock = systemClock{}
	}
	l := &loop{cfg: cfg, log: cfg.Logger, offset: cfg.Clock.Offset(), suspended: cfg.Clock.Suspended()}
	queue, due, done, stop := l.begin(ctx)
	switch {
	case stop != nil:
		return Exit{Reason: Stopped, Signal: stop}
	case done:
		return Exit{Reason: SlotDone}
	}
	for {
		var (
			manual bool
			stop   os.Signal
		)
		if len(queue) > 0 {
			stop = l.pending()
		} else {
			queue, manual, stop = l.idle(ctx, due)
		}
		if stop != nil || ctx.Err() != nil {
			return Exit{Reason: Stopped, Signal: stop}
		}
		slot := queue[0]
		queue = queue[1:]
		out := l.runSlot(ctx, slot, due, manual, len(queue) > 0)
		due = out.next
		if out.hooks != nil && out.stop == nil && ctx.Err() == nil {
			// After the lock is released: a hook is no part of the run.
			out.stop = l.hooks(ctx, *out.hooks)
		}
		switch {
		case out.stop != nil || ctx.Err() != nil:
			return Exit{Reason: Stopped, Signal: out.stop, Last: out.res}
		case out.unavailable && cfg.MaxRuns == 1:
			// A one-shot that cannot run now (busy lock, store or state out
			// of reach) says so at once, as flock -n does.
			return Exit{Reason: LockBusy}
		case out.done && cfg.MaxRuns == 1:
			return Exit{Reason: SlotDone} // another instance ran it meanwhile
		case !out.ran:
		case cfg.MaxFailures > 0 && l.failures >= cfg.MaxFailures:
			return Exit{Reason: MaxFailures, Last: out.res}
		case cfg.MaxRuns > 0 && l.ran >= cfg.MaxRuns:
			return Exit{Reason: MaxRuns, Last: out.res}
		}
	}
}

// begin reads the record and plans the start: the slots to catch up at once,
// and the first slot to wait for, on the loop's timeline; or, for a one-shot
// whose slot has run already, done: nothing to run. It logs the plan
// (ready).
func (l *loop) begin(ctx context.Context) (queue []time.Time, due time.Time, done bool, stop os.Signal) {
	var rec *state.Record
	if l.cfg.Store != nil {
		// Bounded: a store that does not answer must not delay the first
		// slot by a whole call's timeout. Unread, the record is read again
		// under the lock at the first slot.
		lctx, cancel := context.WithTimeout(ctx, startLoadBound)
		rec, stop, _ = l.load(lctx)
		cancel()
		if stop != nil {
			return nil, due, false, stop
		}
	}
	interrupted := rec != nil && rec.Running && !l.holderAlive(rec, false)
	now := l.now()
	plan := PlanStart(StartInput{Record: rec, Schedule: l.cfg.Schedule,
		Now: now, Delay: l.cfg.Delay, Policy: l.cfg.CatchUp, Max: l.cfg.CatchUpMax, Interrupted: interrupted,
		OneShot: l.cfg.MaxRuns == 1})
	if rec != nil {
		l.rec = *rec
	}
	l.setGrid(plan.Anchor)
	l.first = plan.At
	if o := l.cfg.Observer; o != nil {
		next := plan.Due
		if !plan.At.IsZero() {
			next = plan.At
		}
		o.Began(l.rec, next)
	}
	policy := l.cfg.CatchUp.String()
	switch {
	case plan.Missed > 0:
		runs := len(plan.Runs)
		if !plan.At.IsZero() {
			runs++ // a one-shot's run at once
		}
		l.log.Info("slots missed while not running", "event", EventCatchUp, "missed", plan.Missed, "policy", policy, "runs", runs, "interrupted", interrupted)
	case plan.Why == ClockMovedBack:
		// SPEC 9: a clock set back is not corruption. The record is kept,
		// its slot counts as run, and the grid starts again from now.
		l.left = rec.Anchor
		l.log.Warn("clock moved back: the state's times lie ahead of the wall clock, starting on a new grid", "event", EventCatchUp,
			"missed", 0, "policy", policy, "reason", plan.Why.String(), "step", (-plan.Ahead).String(),
			"state_time", rec.Latest().UTC(), "next", plan.Due.UTC())
	case plan.Why == ScheduleChanged:
		l.log.Info("schedule changed, starting on a new grid", "event", EventCatchUp, "missed", 0, "policy", policy, "reason", plan.Why.String())
	}
	l.ready(plan, now)
	l.mark = l.seen
	if plan.Done {
		l.log.Info("slot already run, nothing to do", "event", EventSkip, "reason", ReasonDone, "count", 1,
			"slot", l.label(plan.Ran).UTC(), "next", l.label(plan.Due).UTC())
		l.skipped(ReasonDone, 1, plan.Due)
		return nil, plan.Due, true, nil
	}
	return plan.Runs, plan.Due, false, nil
}

// ready logs the start's plan: the schedule, the first slot to run and how
// far off its run is (0s: at once, for a slot missed), so that a job that
// waits hours for its first slot is not silent. For a one-shot with nothing
// to run, the slot after the one run already.
func (l *loop) ready(plan Start, now time.Time) {
	first, at := plan.Due, plan.Due
	switch {
	case len(plan.Runs) > 0:
		first, at = plan.Runs[0], now
	case !plan.At.IsZero():
		at = plan.At
	}
	l.log.Info("ready", "event", EventReady, "schedule", l.cfg.Schedule.Recorded(), "first", l.label(first).UTC(), "in", roughly(at.Sub(now)))
}

// roughly is schedule.Distance.
func roughly(d time.Duration) string { return schedule.Distance(d) }

// idle waits for slot due (plus jitter) or for SIGUSR1, and returns the slots
// to run: due; or, when a suspend or a step of a calendar's wall clock passed
// more slots than due, those --catch-up picks of them (none: it waits on);
// or, after a wake-up that came late past them, the latest (see late); or
// now, asked for by hand. A stop signal ends the wait at once.
func (l *loop) idle(ctx context.Context, due time.Time) (slots []time.Time, manual bool, stop os.Signal) {
	if l.runAsked {
		l.runAsked = false
		return []time.Time{l.now()}, true, nil
	}
	var jitter time.Duration
	if l.cfg.Jitter > 0 {
		jitter = time.Duration(l.cfg.Rand() * float64(l.cfg.Jitter))
	}
	early := l.earlyWake()
	base := due
	if !l.first.IsZero() {
		// A one-shot's run at once for a slot passed: its --delay and
		// --jitter count from now, not from the slot.
		base, l.first = l.first, time.Time{}
	}
	for {
		wake := base.Add(jitter)
		if l.cfg.Release != nil && wake.Sub(l.now()) >= l.cfg.ReleaseAfter {
			l.cfg.Release()
		}
		fired, disarm := l.arm(wake.Add(-early))
		select {
		case set := <-fired:
			disarm()
			now := l.now()
			if cur := l.slots.Prev(now.Add(-jitter)); cur.After(due) {
				// More than the slot due passed while the wait could not see
				// it: a suspend (a wall-clock wait hears of a resume as of a
				// clock set), the wall clock set forward past a calendar's
				// slots, or a wake-up late (every was stopped, SIGSTOP, or
				// starved of the processor): CLOCK_BOOTTIME less
				// CLOCK_MONOTONIC grows only in a suspend.
				since := l.seen.since(l.mark)
				l.mark = l.seen
				switch {
				case since.suspends > 0:
					slots, due = l.passed(due, cur, now, ReasonSuspend)
				case set || since.steps > 0:
					slots, due = l.passed(due, cur, now, ReasonClock)
				default:
					return l.late(due, cur), false, nil
				}
				if len(slots) > 0 {
					return slots, false, nil
				}
				continue
			}
			if set && now.Before(wake.Add(-early)) {
				continue // the wall clock was set, but not past the slot: wait on
			}
			if wake.Sub(now) > early+time.Millisecond {
				// Woken well before the slot (a clock that moved under the
				// wait): wait again, listening for signals, rather than sleep
				// deaf to them until the slot.
				continue
			}
			l.cfg.SleepUntil(l.onClock(wake))
			return []time.Time{due}, false, nil
		case <-ctx.Done():
			disarm()
			return []time.Time{due}, false, nil
		case sig := <-l.cfg.Signals:
			disarm()
			switch {
			case isStop(sig):
				l.logStop(sig, false)
				return nil, false, sig
			case sig == syscall.SIGUSR1:
				return []time.Time{l.now()}, true, nil
			}
			// SIGHUP and SIGUSR2 have no child to go to while idle.
		}
	}
}

// late returns the slot to run after a wake-up that came late, past the
// slot due and more (every was stopped by SIGSTOP, or starved): the latest
// slot, cur, at once, as a wake-up late for one slot runs it; the ones from
// due to cur are skipped, as a run's overrun skips them. Not a suspend: no
// time passed that every could not count.
func (l *loop) late(due, cur time.Time) []time.Time {
	skipped := schedule.Count(l.slots, due, cur, maxCount)
	l.lateSkips += int(skipped)
	l.repeated(&l.outages.overrun, "late", int(skipped), slog.LevelWarn, "woke up late (stopped or starved), skipping the slots that passed",
		"event", EventSkip, "reason", ReasonOverrun, "late_ms", l.now().Sub(due).Milliseconds(), "next", l.label(cur).UTC())
	l.skipped(ReasonOverrun, int(skipped), cur)
	return []time.Time{cur}
}

// earlyWake is how long before a slot the loop's wake-up is armed, for
// SleepUntil to take it from there: earlyWake for Go's timers, which wake up
// to a millisecond late; nothing for a clock whose wake-ups come on time
// (timerfds: the kernel's high-resolution timers wake the poller at once),
// which spares a precise sleep, and the scheduler's hand-off of the
// thread that sleeps it, at each slot.
func (l *loop) earlyWake() time.Duration {
	if p, ok := l.cfg.Clock.(interface{ Precise() bool }); ok && p.Precise() {
		return 0
	}
	return earlyWake
}

// arm arms the wake-up for at: on the wall clock for a calendar schedule,
// on a clock that counts suspends for a grid.
func (l *loop) arm(at time.Time) (<-chan bool, func()) {
	if l.cfg.Schedule.WallClock() {
		return l.cfg.Clock.Wall(at)
	}
	return l.cfg.Clock.Boot(at.Sub(l.now()))
}

// passed returns the slots to run when slots from due up to cur passed while
// every could not run them (why: a suspend, the clock set forward): those
// --catch-up picks, as at start, and the slot to wait for after them.
func (l *loop) passed(due, cur, now time.Time, why string) (runs []time.Time, next time.Time) {
	missed := schedule.Count(l.slots, due, cur, maxCount) + 1
	runs = catchUp(l.slots, cur, missed, l.cfg.CatchUp, l.cfg.CatchUpMax)
	l.log.Info("slots passed while waiting", "event", EventCatchUp, "missed", missed, "policy", l.cfg.CatchUp.String(),
		"runs", len(runs), "reason", why)
	return runs, l.slots.Next(now)
}

// setGrid puts the schedule on the anchor, a time on the loop's timeline. A
// calendar schedule has no anchor of its own: it is recorded, only.
func (l *loop) setGrid(anchor time.Time) {
	l.anchor = anchor
	l.slots = l.cfg.Schedule.Anchored(anchor)
}

// now reads the clock, onto the loop's timeline: for a grid, the wall clock
// less the steps seen since the start. It looks for a step or a suspend
// first (see observe), and reads again after a step, which the reading may
// straddle.
func (l *loop) now() time.Time {
	t := l.cfg.Clock.Now()
	if l.observe() {
		t = l.cfg.Clock.Now()
	}
	return t.Round(0).Add(-l.shift)
}

// label returns the wall-clock time of t, a time on the loop's timeline: as
// it is recorded, logged and passed on (EVERY_SLOT).
func (l *loop) label(t time.Time) time.Time { return t.Add(l.shift) }

// unlabel returns a wall-clock time of a record on the loop's timeline.
func (l *loop) unlabel(t time.Time) time.Time { return t.Add(-l.shift) }

// labelled returns the schedule as the records see it: on wall-clock times.
func (l *loop) labelled() schedule.Schedule {
	return l.cfg.Schedule.Anchored(l.label(l.anchor))
}

// onClock returns t, a time on the loop's timeline, as a time of the Clock,
// for SleepUntil: the Clock's reading now plus the time until t (which keeps
// the monotonic reading of the system's clock).
func (l *loop) onClock(t time.Time) time.Time {
	return l.cfg.Clock.Now().Add(t.Sub(l.now()))
}

// clockEvents counts the suspends and the steps of the wall clock the loop
// has seen.
type clockEvents struct{ suspends, steps int }

// since returns the events seen since mark.
func (e clockEvents) since(mark clockEvents) clockEvents {
	return clockEvents{e.suspends - mark.suspends, e.steps - mark.steps}
}

// observe looks at the Clock for a suspend (Suspended grew) or a step of the
// wall clock (Offset moved by more than a suspend explains), and reports a
// step. A step keeps a grid where it was on the monotonic clock: the loop's
// timeline moves with it (shift), and so do its records, its own history
// included, so that none looks from the future, or stale, for the step. It
// is logged, and summarised when it repeats. A calendar schedule follows
// the wall clock instead (its wait hears of the step).
func (l *loop) observe() (stepped bool) {
	off, s := l.cfg.Clock.Offset(), l.cfg.Clock.Suspended()
	slept := s - l.suspended
	if slept >= clockStepMin {
		l.suspended, l.offset = s, l.offset+slept
		l.seen.suspends++
	}
	step := off - l.offset
	if step < clockStepMin && step > -clockStepMin {
		return false
	}
	l.offset = off
	l.seen.steps++
	msg, detail := "wall clock set forward", "slots follow it; the ones it skipped follow --catch-up"
	if step < 0 {
		msg, detail = "wall clock set back", "slots follow it; none that ran runs again"
	}
	if !l.cfg.Schedule.WallClock() {
		l.shift += step
		l.rec = restamp(l.rec, step)
		l.stale += step
		detail = "the grid keeps its pace on the monotonic clock; the slot times recorded and passed on follow the wall clock"
	}
	l.repeated(&l.outages.clock, "step", 1, slog.LevelWarn, msg, "event", EventCatchUp, "reason", ReasonClock, "missed", 0,
		"step", step.String(), "detail", detail)
	return true
}

// pending takes a stop signal that came between two catch-up runs.
func (l *loop) pending() os.Signal {
	for {
		select {
		case sig := <-l.cfg.Signals:
			if isStop(sig) {
				l.logStop(sig, false)
				return sig
			}
		default:
			return nil
		}
	}
}

// isStop reports whether sig asks every to stop: SIGINT or SIGTERM.
func isStop(sig os.Signal) bool {
	return sig == syscall.SIGINT || sig == syscall.SIGTERM
}

// logStop logs the stop signal, once per stop.
func (l *loop) logStop(sig os.Signal, running bool) {
	l.log.Info("stopping", "event", EventStop, "signal", SignalName(sig.(syscall.Signal)), "running", running)
}
