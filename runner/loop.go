// Package runner owns the loop of every: the slot grid, catch-up, retries,
// skips, and the execution of one attempt of the command.
package runner

import (
	"context"
	"errors"
	"log/slog"
	"math/rand/v2"
	"os"
	"strconv"
	"syscall"
	"time"

	"github.com/everycli/every/lock"
	"github.com/everycli/every/state"
)

// Config is everything the loop needs, validated and typed. Zero values mean
// "none" (no timeout, no jitter, no limit), except where a field says otherwise.
type Config struct {
	Name     string
	Command  []string // argv; Command[0] is looked up in PATH when it has no slash
	Schedule string   // as the user wrote it
	Interval time.Duration

	Jitter time.Duration // each start is delayed by a uniform random part of it
	Delay  time.Duration // wait before the first slot of a fresh start

	Retries     int
	Backoff     time.Duration
	BackoffMax  time.Duration
	MaxFailures int // consecutive failed runs before the loop ends; 0: never
	MaxRuns     int // runs before the loop ends; 0: never

	Timeout   time.Duration  // per attempt
	Signal    syscall.Signal // sent to the process group on timeout
	KillAfter time.Duration  // from that signal to SIGKILL

	Stdin bool     // pass every's stdin on instead of /dev/null
	Env   []string // the environment the child inherits

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
}

// Reason says why the loop ended.
type Reason int

// Why a loop ends.
const (
	Stopped     Reason = iota + 1 // a stop signal, or the context ended
	MaxRuns                       // --max-runs reached
	MaxFailures                   // --max-failures consecutive failures
	LockBusy                      // a one-shot run found the lock busy
)

// Exit is how the loop ended. main turns it into an exit status.
type Exit struct {
	Reason Reason
	Signal os.Signal // the stop signal, when Reason is Stopped by one
	Last   Result    // the last run's result, when there was one
}

type loop struct {
	cfg  Config
	log  *slog.Logger
	grid Grid
	// base is one reading of both clocks, to carry wall-clock times from the
	// record onto the monotonic clock.
	base time.Time
	// rec is the job's record: as loaded from the store under the lock, or,
	// without a store, this process's own.
	rec      state.Record
	failures int // consecutive failed runs in this process
	ran      int // runs in this process

	// While the store is unreachable: slots skipped, since when, and since
	// the last summary.
	storeSkips, storeSkipsLogged int
	storeDownSince, storeLogged  time.Time
}

// storeSummaryEvery is how often an unreachable store is logged again: once
// when it goes, then a summary at most this often, and once when it is back.
const storeSummaryEvery = time.Minute

// storeDown logs a slot skipped because the store is unreachable.
func (l *loop) storeDown(err error) {
	now := time.Now()
	l.storeSkips++
	switch {
	case l.storeSkips == 1:
		l.storeDownSince, l.storeLogged = now, now
		l.log.Error("store unreachable, skipping the slot", "event", "skip", "reason", "store", "count", 1, "error", err.Error())
		l.storeSkipsLogged = 1
	case now.Sub(l.storeLogged) >= storeSummaryEvery:
		l.log.Warn("store still unreachable, skipping slots", "event", "skip", "reason", "store",
			"count", l.storeSkips-l.storeSkipsLogged, "since", l.storeDownSince.Round(0).UTC(), "error", err.Error())
		l.storeLogged, l.storeSkipsLogged = now, l.storeSkips
	default:
		l.log.Debug("store unreachable, skipping the slot", "event", "skip", "reason", "store", "count", 1, "error", err.Error())
	}
}

// storeUp ends an outage of the store, with the count of slots it skipped.
func (l *loop) storeUp() {
	if l.storeSkips == 0 {
		return
	}
	l.log.Info("store reachable again", "event", "skip", "reason", "store", "count", l.storeSkips-l.storeSkipsLogged,
		"total", l.storeSkips, "since", l.storeDownSince.Round(0).UTC())
	l.storeSkips, l.storeSkipsLogged = 0, 0
}

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
	l := &loop{cfg: cfg, log: cfg.Logger, base: time.Now()}

	var rec *state.Record
	if cfg.Store != nil {
		rec = l.load(ctx)
	}
	interrupted := rec != nil && rec.Running && !l.holderAlive(rec, false)
	plan := PlanStart(rec, cfg.Schedule, cfg.Interval, l.base.Round(0), cfg.Delay, cfg.CatchUp, cfg.CatchUpMax, interrupted)
	if rec != nil {
		l.rec = *rec
	}
	l.setGrid(plan.Anchor)
	switch {
	case plan.Missed > 0:
		l.log.Info("slots missed while not running", "event", "catch_up", "missed", plan.Missed, "policy", cfg.CatchUp.String(), "runs", len(plan.Runs), "interrupted", interrupted)
	case plan.Why == "schedule changed" || plan.Why == "clock moved back":
		l.log.Info(plan.Why+", starting on a new grid", "event", "catch_up", "missed", 0, "policy", cfg.CatchUp.String(), "reason", plan.Why)
	}
	var queue []time.Time
	for _, t := range plan.Runs {
		queue = append(queue, l.mono(t))
	}
	due := l.mono(plan.Due)

	for {
		var (
			slot   time.Time
			manual bool
			stop   os.Signal
		)
		if len(queue) > 0 {
			slot, queue = queue[0], queue[1:]
			stop = l.pending()
		} else {
			slot, manual, stop = l.idle(ctx, due)
		}
		if stop != nil || ctx.Err() != nil {
			return Exit{Reason: Stopped, Signal: stop}
		}
		out := l.runSlot(ctx, slot, due, manual, len(queue) > 0)
		due = out.next
		switch {
		case out.stop != nil || ctx.Err() != nil:
			return Exit{Reason: Stopped, Signal: out.stop, Last: out.res}
		case out.busy && cfg.MaxRuns == 1:
			return Exit{Reason: LockBusy}
		case !out.ran:
		case cfg.MaxFailures > 0 && l.failures >= cfg.MaxFailures:
			return Exit{Reason: MaxFailures, Last: out.res}
		case cfg.MaxRuns > 0 && l.ran >= cfg.MaxRuns:
			return Exit{Reason: MaxRuns, Last: out.res}
		}
	}
}

// idle waits for slot due (plus jitter) or for SIGUSR1, and returns the slot to
// run and whether it was asked for by hand. A stop signal ends the wait at once.
func (l *loop) idle(ctx context.Context, due time.Time) (slot time.Time, manual bool, stop os.Signal) {
	wake := due
	if l.cfg.Jitter > 0 {
		wake = wake.Add(time.Duration(l.cfg.Rand() * float64(l.cfg.Jitter)))
	}
	timer := time.NewTimer(time.Until(wake) - earlyWake)
	defer timer.Stop()
	for {
		select {
		case <-timer.C:
			l.cfg.SleepUntil(wake)
			return due, false, nil
		case <-ctx.Done():
			return due, false, nil
		case sig := <-l.cfg.Signals:
			switch {
			case isStop(sig):
				l.logStop(sig, false)
				return due, false, sig
			case sig == syscall.SIGUSR1:
				return time.Now(), true, nil
			}
			// SIGHUP and SIGUSR2 have no child to go to while idle.
		}
	}
}

// attempts runs the attempts of one run, with their retries and backoff waits.
func (l *loop) attempts(ctx context.Context, slot time.Time, lease lock.Lease) (res Result, attempts int, stop os.Signal) {
	for attempts = 1; ; attempts++ {
		res, stop = l.attempt(ctx, slot, attempts, lease)
		// Without the lock there is no retry: another holder may run now.
		if res.Outcome == Success || res.Outcome == LostLock || stop != nil || attempts > l.cfg.Retries {
			return res, attempts, stop
		}
		wait := WithJitter(Backoff(l.cfg.Backoff, l.cfg.BackoffMax, attempts), l.cfg.Rand())
		l.log.Warn("attempt failed, retrying", "event", "retry", "attempt", attempts, "wait_ms", wait.Milliseconds(), "error", describe(res))
		if stop = l.sleep(ctx, wait); stop != nil {
			return res, attempts, stop
		}
	}
}

// describe says in a few words why an attempt failed.
func describe(r Result) string {
	switch {
	case r.Err != nil:
		return r.Err.Error()
	case r.Signal != 0:
		return string(r.Outcome) + ": killed by " + SignalName(r.Signal)
	default:
		return string(r.Outcome) + ": exit status " + strconv.Itoa(r.ExitCode)
	}
}

// sleep waits d, or less if a stop signal comes, which it returns.
func (l *loop) sleep(ctx context.Context, d time.Duration) os.Signal {
	timer := time.NewTimer(d)
	defer timer.Stop()
	for {
		select {
		case <-timer.C:
			return nil
		case <-ctx.Done():
			return nil
		case sig := <-l.cfg.Signals:
			if isStop(sig) {
				l.logStop(sig, false)
				return sig
			}
		}
	}
}

// attempt runs attempt k of slot and passes every's signals on to it while it
// runs. A stop signal is returned once the attempt has ended.
func (l *loop) attempt(ctx context.Context, slot time.Time, k int, lease lock.Lease) (Result, os.Signal) {
	// The attempt's context ends on its timeout or when the lock is lost, not
	// when ctx does: a stop is passed on as a signal.
	actx, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	defer cancel(nil)
	if l.cfg.Timeout > 0 {
		var cancelTimeout context.CancelFunc
		actx, cancelTimeout = context.WithTimeout(actx, l.cfg.Timeout)
		defer cancelTimeout()
	}
	forward := make(chan os.Signal, 8)
	a := Attempt{
		Argv:      l.cfg.Command,
		Env:       l.env(slot, k, lease.Token()),
		Stdin:     l.cfg.Stdin,
		Signal:    l.cfg.Signal,
		KillAfter: l.cfg.KillAfter,
		Signals:   forward,
		Kill:      lease.Expiring(),
		Logger:    l.log,
	}
	late := time.Since(slot)
	l.log.Info("run started", "event", "start", "slot", slot.Round(0).UTC(), "attempt", k, "late_ms", float64(late.Microseconds())/1000)

	done := make(chan Result, 1)
	go func() { done <- l.cfg.Exec(actx, a) }()
	var stop os.Signal
	pass := func(sig os.Signal) {
		select {
		case forward <- sig:
		default: // the attempt is not keeping up; it has enough to act on
		}
	}
	ctxDone, lost := ctx.Done(), lease.Lost()
	for {
		select {
		case r := <-done:
			return r, stop
		case <-lost:
			lost = nil
			l.log.Error("lock lost during the run", "event", "lock_error")
			cancel(ErrLostLock)
		case <-ctxDone:
			ctxDone = nil
			stop = syscall.SIGTERM
			pass(syscall.SIGTERM)
		case sig := <-l.cfg.Signals:
			switch {
			case isStop(sig):
				if stop == nil {
					stop = sig
					l.logStop(sig, true)
				}
				pass(sig)
			case sig == syscall.SIGHUP || sig == syscall.SIGUSR2:
				pass(sig)
			}
			// SIGUSR1 asks for a run, and one is running.
		}
	}
}

// env is the child's environment: every's own plus the EVERY_* variables.
func (l *loop) env(slot time.Time, attempt int, token int64) []string {
	last := ""
	if !l.rec.LastSuccess.IsZero() {
		last = l.rec.LastSuccess.UTC().Format(time.RFC3339Nano)
	}
	env := append(l.cfg.Env[:len(l.cfg.Env):len(l.cfg.Env)],
		"EVERY_NAME="+l.cfg.Name,
		"EVERY_RUN="+strconv.Itoa(l.rec.Runs),
		"EVERY_ATTEMPT="+strconv.Itoa(attempt),
		"EVERY_SLOT="+slot.Round(0).UTC().Format(time.RFC3339Nano),
		"EVERY_LAST_SUCCESS="+last,
	)
	if token != 0 {
		env = append(env, "EVERY_FENCING_TOKEN="+strconv.FormatInt(token, 10))
	}
	return env
}

// outcome is what became of one slot.
type outcome struct {
	ran  bool      // the command ran
	busy bool      // the lock was busy, so the slot was skipped
	res  Result    // the run's result, if it ran
	next time.Time // the slot to wait for next
	stop os.Signal // a stop signal that came meanwhile
}

// runSlot runs one slot, under the lock: it reads the record again, adopts the
// grid it finds there, skips a slot another instance already ran, and writes
// the record when the run starts and when it ends. due is the slot that was
// due next; manual runs (SIGUSR1) do not move it. catchingUp says more
// catch-up runs follow at once, so no slot is being overrun.
func (l *loop) runSlot(ctx context.Context, slot, due time.Time, manual, catchingUp bool) outcome {
	out := outcome{next: due}
	if !manual {
		out.next = slot.Add(l.cfg.Interval)
	}
	lease, stop, err := l.lock(ctx)
	if stop != nil {
		out.stop = stop
		return out
	}
	if err != nil {
		var busy *lock.BusyError
		switch {
		case errors.As(err, &busy):
			out.busy = true
			l.log.Info("lock busy, skipping the slot", "event", "skip", "reason", "locked", "count", 1,
				"holder_pid", busy.Holder.PID, "holder_host", busy.Holder.Host)
		case errors.Is(err, lock.ErrStore):
			l.storeDown(err)
		default:
			l.log.Error("cannot take the lock, skipping the slot", "event", "lock_error", "error", err.Error())
		}
		out.next = l.notPast(out.next)
		return out
	}
	l.storeUp()
	defer func() {
		if err := lease.Unlock(); err != nil {
			l.log.Error("cannot release the lock", "event", "lock_error", "error", err.Error())
		}
	}()

	now := time.Now()
	if l.cfg.Store != nil {
		if rec := l.load(ctx); rec != nil {
			interrupted := rec.Running && !l.holderAlive(rec, l.cfg.Lock != nil)
			if rec.Schedule == l.cfg.Schedule {
				if !rec.Anchor.Equal(l.grid.Anchor.Round(0)) {
					// Another instance runs this job on its own grid: join it.
					l.setGrid(rec.Anchor)
					if !manual {
						slot = l.grid.Floor(now)
						out.next = slot.Add(l.cfg.Interval)
					}
				}
				if !manual && Done(rec, interrupted, slot.Round(0), now.Round(0), l.cfg.Interval) {
					l.log.Debug("slot already run", "event", "skip", "reason", "done", "count", 1, "slot", slot.Round(0).UTC())
					l.rec = *rec
					out.next = l.notPast(out.next)
					return out
				}
			}
			l.rec = *rec
			if interrupted {
				// Its end was never written: it counts as interrupted.
				l.rec.LastResult = string(Interrupted)
				l.rec.ConsecutiveFailures++
				l.rec.Failures++
			}
		}
	}

	// The start, in the record: a crash from here on leaves running: true.
	r := &l.rec
	r.Version, r.Name, r.Command, r.Schedule = state.Version, l.cfg.Name, l.cfg.Command, l.cfg.Schedule
	r.Anchor = l.grid.Anchor.Round(0)
	r.LastSlot = slot.Round(0)
	if manual {
		r.LastSlot = l.grid.Floor(now).Round(0)
	}
	r.LastRun, r.Running, r.Host, r.PID = now.Round(0), true, l.cfg.Host, l.cfg.PID
	r.Runs++
	// The start is written while the command starts, off the path from slot
	// to exec. A crash before it lands leaves the record of the run before:
	// this slot then looks missed, as a cut-short run's does.
	startRec := *r
	started := make(chan struct{})
	go func() {
		defer close(started)
		l.save(ctx, &startRec)
	}()

	res, attempts, stop := l.attempts(ctx, slot, lease)
	end := time.Now()
	<-started // the end must replace the start, never the other way round
	l.ran++
	out.ran, out.res, out.stop = true, res, stop

	if !catchingUp && out.next.Before(end) {
		next := l.grid.After(end)
		skipped := l.grid.Between(out.next, next)
		l.log.Warn("run overran its slots", "event", "skip", "reason", "overrun", "count", skipped, "next", next.Round(0).UTC())
		r.Skipped += int(skipped)
		out.next = next
	}

	// The end, in the record.
	r.Running, r.LastEnd = false, end.Round(0)
	r.LastResult, r.LastExitCode, r.LastAttempts = string(res.Outcome), res.ExitCode, attempts
	level := slog.LevelInfo
	if res.Outcome == Success {
		l.failures = 0
		r.ConsecutiveFailures = 0
		r.LastSuccess = r.LastRun
	} else {
		l.failures++
		r.ConsecutiveFailures++
		r.Failures++
		level = slog.LevelWarn
	}
	l.save(ctx, r)

	attrs := []any{"event", "finish", "result", string(res.Outcome), "exit_code", res.ExitCode,
		"duration_ms", end.Sub(now).Milliseconds(), "attempts", attempts}
	if res.Signal != 0 {
		attrs = append(attrs, "signal", SignalName(res.Signal))
	}
	if res.Err != nil {
		attrs = append(attrs, "error", res.Err.Error())
	}
	l.log.Log(ctx, level, "run finished", attrs...)
	return out
}

// notPast returns next, or the first slot after now if next has passed: a
// skipped slot never makes the loop run late.
func (l *loop) notPast(next time.Time) time.Time {
	if now := time.Now(); next.Before(now) {
		return l.grid.After(now)
	}
	return next
}

// lock takes the job's lock. A stop signal while it waits, for a busy lock or
// a slow store, ends the wait.
func (l *loop) lock(ctx context.Context) (lock.Lease, os.Signal, error) {
	if l.cfg.Lock == nil {
		return noLease{}, nil, nil
	}
	lctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type taken struct {
		lease lock.Lease
		err   error
	}
	got := make(chan taken, 1)
	go func() {
		lease, err := l.cfg.Lock.Lock(lctx, l.cfg.LockWait)
		got <- taken{lease, err}
	}()
	var stop os.Signal
	for {
		select {
		case t := <-got:
			if stop != nil && t.lease != nil {
				_ = t.lease.Unlock()
				return nil, stop, nil
			}
			return t.lease, stop, t.err
		case sig := <-l.cfg.Signals:
			if isStop(sig) && stop == nil {
				stop = sig
				l.logStop(sig, false)
				cancel()
			}
		}
	}
}

// noLease is the lease of a job run without a lock.
type noLease struct{}

func (noLease) Unlock() error             { return nil }
func (noLease) Lost() <-chan struct{}     { return nil }
func (noLease) Token() int64              { return 0 }
func (noLease) Expiring() <-chan struct{} { return nil }

// load reads the record. One that cannot be parsed was set aside by the
// store: the job starts fresh.
func (l *loop) load(ctx context.Context) *state.Record {
	rec, err := l.cfg.Store.Load(ctx)
	var corrupt *state.CorruptError
	switch {
	case errors.As(err, &corrupt):
		l.log.Warn("state cannot be parsed, starting fresh", "event", "state_error", "file", corrupt.Where, "moved_to", corrupt.MovedTo, "error", corrupt.Err.Error())
	case err != nil:
		l.log.Error("cannot read state", "event", "state_error", "state", l.cfg.Store.Where(), "error", err.Error())
	}
	return rec
}

// save writes the record. A failure (a full disk) is logged; the next write
// tries again, and the job goes on.
func (l *loop) save(ctx context.Context, rec *state.Record) {
	if l.cfg.Store == nil {
		return
	}
	if err := l.cfg.Store.Save(ctx, rec); err != nil {
		l.log.Error("cannot write state, will try again at the next run", "event", "state_error", "state", l.cfg.Store.Where(), "error", err.Error())
	}
}

// holderAlive reports whether the run a record shows as running may still be
// going on. Under the lock nobody else can be running, so a record left
// running: true was cut short. Otherwise only a process of this host can be
// checked; another host's is taken to be alive.
func (l *loop) holderAlive(rec *state.Record, underLock bool) bool {
	switch {
	case underLock || rec.PID == l.cfg.PID && rec.Host == l.cfg.Host:
		return false
	case rec.Host != l.cfg.Host:
		return true
	}
	err := syscall.Kill(rec.PID, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// setGrid puts the grid on the anchor, carried onto the monotonic clock.
func (l *loop) setGrid(anchor time.Time) {
	l.grid = Grid{Anchor: l.mono(anchor), Interval: l.cfg.Interval}
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
