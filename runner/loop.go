// Package runner owns the loop of every: the slot grid, catch-up, retries,
// skips, and the execution of one attempt of the command.
package runner

import (
	"context"
	"log/slog"
	"math/rand/v2"
	"os"
	"strconv"
	"syscall"
	"time"
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

	Logger *slog.Logger
	// Signals are every's own signals, as main receives them.
	Signals <-chan os.Signal
	// Exec runs one attempt; nil means Exec (a real process).
	Exec ExecFunc
	// Rand returns a number in [0, 1) for jitter; nil means math/rand/v2.
	Rand func() float64
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

	runs        int // runs so far, for EVERY_RUN
	failures    int // consecutive failed runs in this process
	lastSuccess time.Time
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
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	l := &loop{cfg: cfg, log: cfg.Logger}

	// The anchor carries this process's monotonic clock reading, and so does
	// every slot derived from it: waits are immune to wall-clock steps, and each
	// is computed from its slot, never from the previous wake-up, so no lateness
	// accumulates.
	l.grid = Grid{Anchor: time.Now().Add(cfg.Delay), Interval: cfg.Interval}
	due := l.grid.Anchor

	for {
		slot, manual, stop := l.idle(ctx, due)
		if stop != nil || ctx.Err() != nil {
			return Exit{Reason: Stopped, Signal: stop}
		}
		res, stop := l.run(ctx, slot)
		switch {
		case stop != nil || ctx.Err() != nil:
			return Exit{Reason: Stopped, Signal: stop, Last: res}
		case cfg.MaxFailures > 0 && l.failures >= cfg.MaxFailures:
			return Exit{Reason: MaxFailures, Last: res}
		case cfg.MaxRuns > 0 && l.runs >= cfg.MaxRuns:
			return Exit{Reason: MaxRuns, Last: res}
		}
		if !manual {
			due = slot.Add(cfg.Interval)
		}
		due = l.skipOverrun(due)
	}
}

// skipOverrun returns the slot to wait for next: due, or when the run went past
// it, the next slot in the future, logging the slots passed over.
func (l *loop) skipOverrun(due time.Time) time.Time {
	now := time.Now()
	if !due.Before(now) {
		return due
	}
	next := l.grid.After(now)
	l.log.Warn("run overran its slots", "event", "skip", "reason", "overrun", "count", l.grid.Between(due, next), "next", next.Round(0).UTC())
	return next
}

// idle waits for slot due (plus jitter) or for SIGUSR1, and returns the slot to
// run and whether it was asked for by hand. A stop signal ends the wait at once.
func (l *loop) idle(ctx context.Context, due time.Time) (slot time.Time, manual bool, stop os.Signal) {
	wake := due
	if l.cfg.Jitter > 0 {
		wake = wake.Add(time.Duration(l.cfg.Rand() * float64(l.cfg.Jitter)))
	}
	timer := time.NewTimer(time.Until(wake))
	defer timer.Stop()
	for {
		select {
		case <-timer.C:
			return due, false, nil
		case <-ctx.Done():
			return due, false, nil
		case sig := <-l.cfg.Signals:
			switch sig {
			case syscall.SIGINT, syscall.SIGTERM:
				l.log.Info("stopping", "event", "stop", "signal", SignalName(sig.(syscall.Signal)), "running", false)
				return due, false, sig
			case syscall.SIGUSR1:
				return time.Now(), true, nil
			}
			// SIGHUP and SIGUSR2 have no child to go to while idle.
		}
	}
}

// run runs one slot: the attempts with their retries and backoff waits.
func (l *loop) run(ctx context.Context, slot time.Time) (res Result, stop os.Signal) {
	l.runs++
	start := time.Now()
	attempts := 0
	for attempts = 1; ; attempts++ {
		res, stop = l.attempt(ctx, slot, attempts)
		if res.Outcome == Success || stop != nil || attempts > l.cfg.Retries {
			break
		}
		wait := WithJitter(Backoff(l.cfg.Backoff, l.cfg.BackoffMax, attempts), l.cfg.Rand())
		l.log.Warn("attempt failed, retrying", "event", "retry", "attempt", attempts, "wait_ms", wait.Milliseconds(), "error", describe(res))
		if stop = l.sleep(ctx, wait); stop != nil {
			break
		}
	}
	level := slog.LevelInfo
	if res.Outcome == Success {
		l.failures = 0
		l.lastSuccess = start
	} else {
		l.failures++
		level = slog.LevelWarn
	}
	attrs := []any{"event", "finish", "result", string(res.Outcome), "exit_code", res.ExitCode,
		"duration_ms", time.Since(start).Milliseconds(), "attempts", attempts}
	if res.Signal != 0 {
		attrs = append(attrs, "signal", SignalName(res.Signal))
	}
	if res.Err != nil {
		attrs = append(attrs, "error", res.Err.Error())
	}
	l.log.Log(ctx, level, "run finished", attrs...)
	return res, stop
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
			if sig == syscall.SIGINT || sig == syscall.SIGTERM {
				l.log.Info("stopping", "event", "stop", "signal", SignalName(sig.(syscall.Signal)), "running", false)
				return sig
			}
		}
	}
}

// attempt runs attempt k of slot and passes every's signals on to it while it
// runs. A stop signal is returned once the attempt has ended.
func (l *loop) attempt(ctx context.Context, slot time.Time, k int) (Result, os.Signal) {
	actx, cancel := context.WithoutCancel(ctx), context.CancelFunc(func() {})
	if l.cfg.Timeout > 0 {
		actx, cancel = context.WithTimeout(actx, l.cfg.Timeout)
	}
	defer cancel()
	forward := make(chan os.Signal, 8)
	a := Attempt{
		Argv:      l.cfg.Command,
		Env:       l.env(slot, k),
		Stdin:     l.cfg.Stdin,
		Signal:    l.cfg.Signal,
		KillAfter: l.cfg.KillAfter,
		Signals:   forward,
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
	ctxDone := ctx.Done()
	for {
		select {
		case r := <-done:
			return r, stop
		case <-ctxDone:
			ctxDone = nil
			stop = syscall.SIGTERM
			pass(syscall.SIGTERM)
		case sig := <-l.cfg.Signals:
			switch sig {
			case syscall.SIGINT, syscall.SIGTERM:
				if stop == nil {
					stop = sig
					l.log.Info("stopping", "event", "stop", "signal", SignalName(sig.(syscall.Signal)), "running", true)
				}
				pass(sig)
			case syscall.SIGHUP, syscall.SIGUSR2:
				pass(sig)
			}
			// SIGUSR1 asks for a run, and one is running.
		}
	}
}

// env is the child's environment: every's own plus the EVERY_* variables.
func (l *loop) env(slot time.Time, attempt int) []string {
	last := ""
	if !l.lastSuccess.IsZero() {
		last = l.lastSuccess.Round(0).UTC().Format(time.RFC3339Nano)
	}
	return append(l.cfg.Env[:len(l.cfg.Env):len(l.cfg.Env)],
		"EVERY_NAME="+l.cfg.Name,
		"EVERY_RUN="+strconv.Itoa(l.runs),
		"EVERY_ATTEMPT="+strconv.Itoa(attempt),
		"EVERY_SLOT="+slot.Round(0).UTC().Format(time.RFC3339Nano),
		"EVERY_LAST_SUCCESS="+last,
	)
}
