// Package runner owns the loop of every: the slot grid, catch-up, retries,
// skips, and the execution of one attempt of the command.
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
	Name     string
	Command  []string // argv; Command[0] is looked up in PATH when it has no slash
	Schedule string   // as the user wrote it (with --align and --tz), as recorded
	Interval time.Duration
	// Calendar is the schedule when it is on the wall clock (a cron
	// expression, an aligned duration); nil: a grid of Interval, started at
	// once and kept on the monotonic clock.
	Calendar *schedule.Calendar

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
	// base is one reading of both clocks, to carry wall-clock times from the
	// record onto the monotonic clock; suspended is Clock.Suspended then. A
	// suspend since puts the wall clock ahead of the monotonic one, and base
	// is read again.
	base      time.Time
	suspended time.Duration
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
	l := &loop{cfg: cfg, log: cfg.Logger, base: cfg.Clock.Now(), suspended: cfg.Clock.Suspended()}
	queue, due, stop := l.begin(ctx)
	if stop != nil {
		return Exit{Reason: Stopped, Signal: stop}
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
		case !out.ran:
		case cfg.MaxFailures > 0 && l.failures >= cfg.MaxFailures:
			return Exit{Reason: MaxFailures, Last: out.res}
		case cfg.MaxRuns > 0 && l.ran >= cfg.MaxRuns:
			return Exit{Reason: MaxRuns, Last: out.res}
		}
	}
}

// begin reads the record and plans the start: the slots to catch up at once,
// and the first slot to wait for, on the monotonic clock.
func (l *loop) begin(ctx context.Context) (queue []time.Time, due time.Time, stop os.Signal) {
	var rec *state.Record
	if l.cfg.Store != nil {
		// Bounded: a store that does not answer must not delay the first
		// slot by a whole call's timeout. Unread, the record is read again
		// under the lock at the first slot.
		lctx, cancel := context.WithTimeout(ctx, startLoadBound)
		rec, stop, _ = l.load(lctx)
		cancel()
		if stop != nil {
			return nil, due, stop
		}
	}
	interrupted := rec != nil && rec.Running && !l.holderAlive(rec, false)
	plan := PlanStart(StartInput{Record: rec, Schedule: l.cfg.Schedule, Interval: l.cfg.Interval, Calendar: l.cfg.Calendar,
		Now: l.base.Round(0), Delay: l.cfg.Delay, Policy: l.cfg.CatchUp, Max: l.cfg.CatchUpMax, Interrupted: interrupted})
	if rec != nil {
		l.rec = *rec
	}
	l.setGrid(plan.Anchor)
	if o := l.cfg.Observer; o != nil {
		o.Began(l.rec, plan.Due)
	}
	policy := l.cfg.CatchUp.String()
	switch {
	case plan.Missed > 0:
		l.log.Info("slots missed while not running", "event", "catch_up", "missed", plan.Missed, "policy", policy, "runs", len(plan.Runs), "interrupted", interrupted)
	case plan.Why == ScheduleChanged || plan.Why == ClockMovedBack:
		l.log.Info(plan.Why.String()+", starting on a new grid", "event", "catch_up", "missed", 0, "policy", policy, "reason", plan.Why.String())
	}
	for _, t := range plan.Runs {
		queue = append(queue, l.onClock(t))
	}
	return queue, l.onClock(plan.Due), nil
}

// idle waits for slot due (plus jitter) or for SIGUSR1, and returns the slots
// to run: due; or, when a step of the wall clock or a suspend passed more
// slots than due, those --catch-up picks of them (none: it waits on); or now,
// asked for by hand. A stop signal ends the wait at once.
func (l *loop) idle(ctx context.Context, due time.Time) (slots []time.Time, manual bool, stop os.Signal) {
	if l.runAsked {
		l.runAsked = false
		return []time.Time{l.cfg.Clock.Now()}, true, nil
	}
	var jitter time.Duration
	if l.cfg.Jitter > 0 {
		jitter = time.Duration(l.cfg.Rand() * float64(l.cfg.Jitter))
	}
	early := l.earlyWake()
	for {
		due, _ = l.resumed(due)
		wake := due.Add(jitter)
		if l.cfg.Release != nil && wake.Sub(l.cfg.Clock.Now()) >= l.cfg.ReleaseAfter {
			l.cfg.Release()
		}
		fired, disarm := l.arm(wake.Add(-early))
		select {
		case set := <-fired:
			disarm()
			var slept bool
			due, slept = l.resumed(due)
			now := l.cfg.Clock.Now()
			if cur := l.slots.Prev(now.Add(-jitter)); cur.After(due) {
				// More than the slot due passed while the wait could not see
				// it: a suspend (a wall-clock wait hears of a resume as of a
				// clock set), or the wall clock set forward.
				why := "clock"
				if slept || !set {
					why = "suspend"
				}
				if slots, due = l.passed(due, cur, now, why); len(slots) > 0 {
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
			l.cfg.SleepUntil(wake)
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
				return []time.Time{l.cfg.Clock.Now()}, true, nil
			}
			// SIGHUP and SIGUSR2 have no child to go to while idle.
		}
	}
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
	if l.cfg.Calendar != nil {
		return l.cfg.Clock.Wall(at)
	}
	return l.cfg.Clock.Boot(at.Sub(l.cfg.Clock.Now()))
}

// resumed reports whether the system was suspended since it last looked, and
// keeps a grid on the wall clock through it, returning slot due kept with it.
// The monotonic clock stands still in a suspend while the wall clock goes on:
// both are read afresh, and the grid's wall-clock times carried onto the
// monotonic clock again, so that its slots stay where they were on the wall
// clock (and EVERY_SLOT tells the truth), and the waits for them are shorter
// by the time slept. A calendar schedule is on the wall clock already.
func (l *loop) resumed(due time.Time) (time.Time, bool) {
	s := l.cfg.Clock.Suspended()
	if s == l.suspended {
		return due, false
	}
	l.suspended = s
	if l.cfg.Calendar != nil {
		return due, true
	}
	l.base = l.cfg.Clock.Now()
	l.setGrid(l.anchor.Round(0))
	return l.mono(due.Round(0)), true
}

// passed returns the slots to run when slots from due up to cur passed while
// every could not run them (why: a suspend, the clock set forward): those
// --catch-up picks, as at start, and the slot to wait for after them.
func (l *loop) passed(due, cur, now time.Time, why string) (runs []time.Time, next time.Time) {
	missed := schedule.Count(l.slots, due, cur, maxCount) + 1
	runs = catchUp(l.slots, cur, missed, l.cfg.CatchUp, l.cfg.CatchUpMax)
	l.log.Info("slots passed while waiting", "event", "catch_up", "missed", missed, "policy", l.cfg.CatchUp.String(),
		"runs", len(runs), "reason", why)
	return runs, l.slots.Next(now)
}

// setGrid puts the schedule on the anchor, carried onto the monotonic
// clock. A calendar schedule has no anchor of its own: it is recorded, only.
func (l *loop) setGrid(anchor time.Time) {
	l.anchor = l.mono(anchor)
	l.slots = l.cfg.Calendar
	if l.cfg.Calendar == nil {
		l.slots = schedule.Grid{Anchor: l.anchor, Interval: l.cfg.Interval}
	}
}

// onClock puts a slot on the clock its schedule is read on: a grid's slot on
// this process's monotonic clock, a calendar's on the wall clock alone, as
// Calendar.Next gives its later slots. (A first calendar slot that kept a
// monotonic reading would be compared on the monotonic clock after a wall
// clock step, and waited for by as much as the step.)
func (l *loop) onClock(t time.Time) time.Time {
	if l.cfg.Calendar != nil {
		return t.Round(0)
	}
	return l.mono(t)
}

// mono carries a wall-clock time onto this process's monotonic clock.
func (l *loop) mono(t time.Time) time.Time {
	return l.base.Add(t.Sub(l.base.Round(0)))
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
	l.log.Info("stopping", "event", "stop", "signal", SignalName(sig.(syscall.Signal)), "running", running)
}
