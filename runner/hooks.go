package runner

import (
	"context"
	"os"
	"strconv"
	"syscall"
	"time"
)

// hookRun is what the hooks of one run are told: the run's variables and
// its result.
type hookRun struct {
	env        []string // the run's EVERY_* variables, as its last attempt had them
	res        Result
	attempts   int
	duration   time.Duration
	failures   int  // consecutive failed runs, this one included
	recovered  bool // a success after failures
	output     []byte
	outputKept bool
}

// runHooks runs the hooks that the run's result calls for, one after another,
// after the lock is released. A stop signal kills a running hook and is
// returned; a hook's failure is logged and changes nothing else.
func (l *loop) runHooks(ctx context.Context, h hookRun) os.Signal {
	var cmds []struct{ name, cmd string }
	add := func(name, cmd string) {
		if cmd != "" {
			cmds = append(cmds, struct{ name, cmd string }{name, cmd})
		}
	}
	if h.res.Outcome == Success {
		if h.recovered {
			add("on-recover", l.cfg.Hooks.OnRecover)
		}
		add("on-success", l.cfg.Hooks.OnSuccess)
	} else {
		// The streak's hook first, as on-recover comes before on-success.
		if l.cfg.Hooks.failureDue(h.failures) {
			add("on-failure", l.cfg.Hooks.OnFailure)
		}
		add("on-each-failure", l.cfg.Hooks.OnEachFailure)
	}
	for _, c := range cmds {
		if stop := l.runHook(ctx, c.name, c.cmd, h); stop != nil {
			return stop
		}
	}
	return nil
}

// runHook runs one hook through sh -c, in a process group of its own, bounded
// by --hook-timeout, with the run's variables and EVERY_OUTPUT, a 0600 file
// of the output tail that is removed after it.
func (l *loop) runHook(ctx context.Context, name, cmd string, h hookRun) os.Signal {
	env := append(h.env[:len(h.env):len(h.env)],
		"EVERY_RESULT="+string(h.res.Outcome),
		"EVERY_EXIT_CODE="+strconv.Itoa(h.res.ExitCode),
		"EVERY_SIGNAL="+signalText(h.res.Signal),
		"EVERY_DURATION_MS="+strconv.FormatInt(h.duration.Milliseconds(), 10),
		"EVERY_ATTEMPTS="+strconv.Itoa(h.attempts),
		"EVERY_CONSECUTIVE_FAILURES="+strconv.Itoa(h.failures),
	)
	output := ""
	if h.outputKept {
		f, err := os.CreateTemp("", "every-output-*")
		if err == nil {
			_, err = f.Write(h.output)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			output = f.Name()
			defer os.Remove(output)
		}
		if err != nil {
			l.log.Warn("cannot keep the output for the hook", "event", EventHook, "hook", name, "error", err.Error())
		}
	}
	env = append(env, "EVERY_OUTPUT="+output)

	hctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), l.cfg.Hooks.Timeout)
	defer cancel()
	forward := make(chan os.Signal, 8)
	a := Attempt{Argv: []string{"sh", "-c", cmd}, Env: env, Signal: syscall.SIGTERM, KillAfter: l.cfg.KillAfter,
		Signals: forward, Logger: l.log}
	start := l.cfg.Clock.Now()
	done := make(chan Result, 1)
	go func() { done <- l.cfg.Exec(hctx, a) }()
	var stop os.Signal
	for {
		select {
		case r := <-done:
			l.logHook(name, r, l.cfg.Clock.Now().Sub(start))
			return stop
		case <-ctx.Done():
			if stop == nil {
				stop = syscall.SIGTERM
				forward <- syscall.SIGTERM
			}
		case sig := <-l.cfg.Signals:
			if isStop(sig) {
				if stop == nil {
					stop = sig
					l.logStop(sig, true)
				}
				select {
				case forward <- sig:
				default:
				}
			}
		}
	}
}

// logHook logs a hook's end: at info when it succeeded, warn when not.
func (l *loop) logHook(name string, r Result, d time.Duration) {
	attrs := []any{"event", EventHook, "hook", name, "result", string(r.Outcome), "exit_code", r.ExitCode, "duration_ms", d.Milliseconds()}
	if r.Err != nil {
		attrs = append(attrs, "error", r.Err.Error())
	}
	if r.Outcome != Success {
		l.log.Warn("hook failed", attrs...)
		return
	}
	l.log.Info("hook finished", attrs...)
}

// signalText names a signal, or is empty for none.
func signalText(sig syscall.Signal) string {
	if sig == 0 {
		return ""
	}
	return SignalName(sig)
}
