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

	"github.com/everycli/every/schedule"
	"github.com/everycli/every/state"
)

// Reason says why the loop ended.
type Reason int

// Why a loop ends.
const (
	Stopped     Reason = iota + 1 // a stop signal, or the context ended
	MaxRuns                       // --max-runs reached
	MaxFailures                   // --max-failures consecutive failures
	LockBusy                      // a one-shot run found the lock busy, or its store or state out of reach
	SlotDone                      // a one-shot found its slot run already: nothing to do
	Retired                       // Config.Retire was closed: no slot more
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
	// guard ties each run's process group to every's life (guard_*.go).
	guard *guard
	// time is the loop's own time base, and the grid on it (timeline.go).
	time timeline
	// rec is the job's record as the loop holds it (reconcile.go).
	rec      held
	failures int // consecutive failed runs in this process
	ran      int // runs in this process
	outages  outages
	// runAsked says a SIGUSR1 came while the loop was busy with the store
	// and no run followed: the idle wait runs one at once.
	runAsked bool
	// first, when set, is when the first wait ends, before its slot: a
	// one-shot's run at once for a slot that has passed.
	first time.Time
	dur   durability
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
	l := &loop{cfg: cfg, log: cfg.Logger, time: newTimeline(cfg.Clock, cfg.Schedule), dur: newDurability(cfg.Store)}
	defer l.syncAtExit()
	defer l.closeGuard()
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
			stop = l.takeStop()
		} else {
			queue, manual, stop = l.waitIdle(ctx, due)
		}
		if stop != nil || ctx.Err() != nil {
			return Exit{Reason: Stopped, Signal: stop}
		}
		if l.retired() {
			return Exit{Reason: Retired}
		}
		slot := queue[0]
		queue = queue[1:]
		out := l.runSlot(ctx, slot, due, manual, len(queue) > 0)
		due = out.next
		if out.hooks != nil && out.stop == nil && ctx.Err() == nil {
			// After the lock is released: a hook is no part of the run.
			out.stop = l.runHooks(ctx, *out.hooks)
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
		OneShot: l.cfg.MaxRuns == 1, Anew: l.cfg.StartAnew})
	if rec != nil {
		l.rec.Record = *rec
	}
	l.time.setGrid(plan.Anchor)
	l.first = plan.At
	if o := l.cfg.Observer; o != nil {
		next := plan.Due
		if !plan.At.IsZero() {
			next = plan.At
		}
		o.Began(l.rec.Record, next)
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
		// A clock set back is not corruption (docs/GUIDE.md, Clock
		// changes and suspend). The record is kept, its slot counts as
		// run, and the grid starts again from now.
		l.rec.left = rec.Anchor
		l.log.Warn("clock moved back: the state's times lie ahead of the wall clock, starting on a new grid", "event", EventCatchUp,
			"missed", 0, "policy", policy, "reason", plan.Why.String(), "step", (-plan.Ahead).String(),
			"state_time", rec.Latest().UTC(), "next", plan.Due.UTC())
	case plan.Why == ScheduleChanged:
		l.log.Info("schedule changed, starting on a new grid", "event", EventCatchUp, "missed", 0, "policy", policy, "reason", plan.Why.String())
	}
	l.logReady(plan, now)
	l.time.markSlot()
	if plan.Done {
		l.log.Info("slot already run, nothing to do", "event", EventSkip, "reason", ReasonDone, "count", 1,
			"slot", l.time.label(plan.Ran).UTC(), "next", l.time.label(plan.Due).UTC())
		l.tellSkipped(ReasonDone, 1, plan.Due)
		return nil, plan.Due, true, nil
	}
	return plan.Runs, plan.Due, false, nil
}

// logReady logs the start's plan: the schedule, the first slot to run and how
// far off its run is (0s: at once, for a slot missed), so that a job that
// waits hours for its first slot is not silent. For a one-shot with nothing
// to run, the slot after the one run already.
func (l *loop) logReady(plan Start, now time.Time) {
	first, at := plan.Due, plan.Due
	switch {
	case len(plan.Runs) > 0:
		first, at = plan.Runs[0], now
	case !plan.At.IsZero():
		at = plan.At
	}
	l.log.Info("ready", "event", EventReady, "schedule", l.cfg.Schedule.Recorded(), "first", l.time.label(first).UTC(), "in", roughly(at.Sub(now)))
}

// roughly is schedule.Distance.
func roughly(d time.Duration) string { return schedule.Distance(d) }

// takeStop takes a stop signal that came between two catch-up runs.
func (l *loop) takeStop() os.Signal {
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

// retired reports whether the loop is to run no slot more (Config.Retire).
func (l *loop) retired() bool {
	select {
	case <-l.cfg.Retire:
		return true
	default:
		return false
	}
}
