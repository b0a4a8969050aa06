package runner

// This file owns one run of the command: its attempts, the retries and
// backoff waits between them, and what every passes on to a running attempt
// (signals, the lease's loss).

import (
	"context"
	"log/slog"
	"os"
	"strconv"
	"syscall"
	"time"

	"github.com/everycli/every/lock"
)

// runAttempts runs the attempts of run p, with their retries and backoff
// waits.
func (l *loop) runAttempts(ctx context.Context, p runPlan) (res Result, attempts int, stop os.Signal) {
	for attempts = 1; ; attempts++ {
		res, stop = l.attempt(ctx, p, attempts)
		// Without the lock there is no retry: another holder may run now.
		if res.Outcome == Success || res.Outcome == LostLock || stop != nil || attempts > l.cfg.Retries || !l.cfg.RetryOn.Retries(res) {
			return res, attempts, stop
		}
		wait := WithJitter(Backoff(l.cfg.Backoff, l.cfg.BackoffMax, attempts), l.cfg.Rand())
		level := slog.LevelWarn
		if l.cfg.QuietSuccess {
			// A run that succeeds on its retry must print nothing at all;
			// one that fails has its finish line at warn.
			level = slog.LevelInfo
		}
		l.log.Log(ctx, level, "attempt failed, retrying", "event", EventRetry, "attempt", attempts, "wait_ms", wait.Milliseconds(), "error", describe(res))
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

// attempt runs attempt k of run p and passes every's signals on to it while
// it runs. A stop signal is returned once the attempt has ended.
func (l *loop) attempt(ctx context.Context, p runPlan, k int) (Result, os.Signal) {
	slot, lease := p.slot, p.lease
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
	execd := make(chan struct{})
	a := Attempt{
		started:   execd,
		Argv:      l.cfg.Command,
		Env:       l.env(slot, k, lease.Token()),
		Stdin:     l.cfg.Stdin,
		Signal:    l.cfg.Signal,
		KillAfter: l.cfg.KillAfter,
		Signals:   forward,
		Kill:      lease.Expiring(),
		Logger:    l.log,
		Output:    p.tail,
		Lines:     l.cfg.Lines,
		Hold:      l.cfg.QuietSuccess,
		Lock:      lock.Inherited(lease),
		guard:     l.runGuard(),
		warnings:  &l.outages.exec,
	}
	late := l.now().Sub(slot)
	l.log.Info("run started", "event", EventStart, "slot", l.time.label(slot).UTC(), "attempt", k, "late_ms", float64(late.Microseconds())/1000)

	done := make(chan Result, 1)
	go func() { done <- l.cfg.Exec(actx, a) }()
	return l.watch(ctx, lease, watched{done: done, execd: execd, forward: forward, cancel: cancel})
}

// watched is an attempt under way, as watch sees it.
type watched struct {
	done    <-chan Result
	execd   <-chan struct{} // closed once the command is started
	forward chan<- os.Signal
	cancel  context.CancelCauseFunc // ends the attempt, with its cause
}

// watch waits for an attempt's end, passing signals on to it, ending it
// when the lock is lost, and syncing the record written before it once its
// command has started. It returns the result, and the stop signal if one
// came.
func (l *loop) watch(ctx context.Context, lease lock.Lease, w watched) (Result, os.Signal) {
	var stop os.Signal
	pass := func(sig os.Signal) {
		select {
		case w.forward <- sig:
		default: // the attempt is not keeping up; it has enough to act on
		}
	}
	ctxDone, lost, execd := ctx.Done(), lease.Lost(), w.execd
	// Once the command has started, the record written before (the last
	// run's end) is synced when due: a run that lasts does not hold it up.
	var syncAt <-chan time.Time
	stopSync := func() {}
	defer func() { stopSync() }()
	for {
		select {
		case r := <-w.done:
			return r, stop
		case <-execd:
			execd = nil
			l.prepare() // for the run's end
			syncAt, stopSync = l.syncTimer()
		case <-syncAt:
			syncAt = nil
			l.syncNow()
		case <-lost:
			lost = nil
			l.log.Error("lock lost during the run", "event", EventLockError)
			w.cancel(ErrLostLock)
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

// runGuard is the guard the loop's runs share (guard_*.go), made at the
// first run; nil if it cannot be made (each run then tries its own).
func (l *loop) runGuard() *guard {
	if l.guard == nil {
		l.guard, _ = newGuard()
	}
	return l.guard
}

// closeGuard closes the runs' guard, once the loop runs no more.
func (l *loop) closeGuard() {
	if l.guard != nil {
		l.guard.close()
	}
}

// env is the child's environment: every's own plus the EVERY_* variables.
// slot is on the loop's timeline; EVERY_SLOT is its wall-clock time.
func (l *loop) env(slot time.Time, attempt int, token int64) []string {
	last := ""
	if !l.rec.LastSuccess.IsZero() {
		last = l.rec.LastSuccess.UTC().Format(time.RFC3339Nano)
	}
	env := append(l.cfg.Env[:len(l.cfg.Env):len(l.cfg.Env)],
		"EVERY_NAME="+l.cfg.Name,
		"EVERY_RUN="+strconv.Itoa(l.rec.Runs),
		"EVERY_ATTEMPT="+strconv.Itoa(attempt),
		"EVERY_SLOT="+l.time.label(slot).UTC().Format(time.RFC3339Nano),
		"EVERY_LAST_SUCCESS="+last,
	)
	if token != 0 {
		env = append(env, "EVERY_FENCING_TOKEN="+strconv.FormatInt(token, 10))
	}
	return env
}
