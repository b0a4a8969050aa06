package runner

import (
	"bytes"
	"context"
	"os"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"testing/synctest"
	"time"
)

// hookExec runs hooks (sh -c CMD) apart from the job's attempts: it records
// each with its environment, and plays hookTook/hookResult.
type hookExec struct {
	job        *fakeExec
	mu         sync.Mutex
	hooks      []call
	hookTook   time.Duration
	hookResult Result
}

func (h *hookExec) exec(ctx context.Context, a Attempt) Result {
	if len(a.Argv) != 3 || a.Argv[0] != "sh" {
		return h.job.exec(ctx, a)
	}
	env := map[string]string{}
	for _, kv := range a.Env {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	if path := env["EVERY_OUTPUT"]; path != "" {
		b, _ := os.ReadFile(path)
		env["output"] = string(b)
	}
	h.mu.Lock()
	h.hooks = append(h.hooks, call{at: time.Now(), attempt: a, env: env})
	h.mu.Unlock()
	timer := time.NewTimer(h.hookTook)
	defer timer.Stop()
	for {
		select {
		case <-timer.C:
			res := h.hookResult
			if res.Outcome == "" {
				res.Outcome = Success
			}
			return res
		case <-ctx.Done():
			return Result{Outcome: Timeout, ExitCode: 124}
		case sig := <-a.Signals:
			if isStop(sig) {
				return Result{Outcome: Interrupted, ExitCode: 128 + int(sig.(syscall.Signal)), Signal: sig.(syscall.Signal)}
			}
		}
	}
}

// hooksRun returns the hooks run, by the command each ran.
func (h *hookExec) hooksRun() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for _, c := range h.hooks {
		out = append(out, c.attempt.Argv[2])
	}
	return out
}

func hookConfig(t *testing.T, h *hookExec, buf *bytes.Buffer, signals chan os.Signal) Config {
	t.Helper()
	cfg := testConfig(h.job, buf, signals)
	cfg.Exec = h.exec
	cfg.Hooks = Hooks{OnFailure: "fail", OnSuccess: "ok", OnRecover: "back", Timeout: 30 * time.Second}
	cfg.OutputTail = 100
	return cfg
}

func TestLoopHooksByResult(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// Runs: success, failure (after its retry), failure, success, success.
		f := &fakeExec{results: []Result{
			{Outcome: Success},
			{Outcome: Failure, ExitCode: 3}, {Outcome: Failure, ExitCode: 3},
			{Outcome: Failure, ExitCode: 4}, {Outcome: Failure, ExitCode: 4},
			{Outcome: Success}, {Outcome: Success},
		}}
		h := &hookExec{job: f}
		var buf bytes.Buffer
		cfg := hookConfig(t, h, &buf, make(chan os.Signal))
		cfg.MaxRuns, cfg.Retries = 5, 1
		Loop(context.Background(), cfg)
		want := []string{"ok", "fail", "fail", "back", "ok", "ok"}
		if got := h.hooksRun(); !slices.Equal(got, want) {
			t.Fatalf("hooks %v, want %v (one call per run, after its retries; on-recover once)", got, want)
		}
		first := h.hooks[1].env
		for k, v := range map[string]string{"EVERY_RESULT": "failure", "EVERY_EXIT_CODE": "3", "EVERY_SIGNAL": "",
			"EVERY_ATTEMPTS": "2", "EVERY_CONSECUTIVE_FAILURES": "1", "EVERY_RUN": "2", "EVERY_NAME": "job", "EVERY_DURATION_MS": "1000"} {
			if first[k] != v {
				t.Errorf("on-failure %s=%q, want %q", k, first[k], v)
			}
		}
		if h.hooks[2].env["EVERY_CONSECUTIVE_FAILURES"] != "2" || h.hooks[3].env["EVERY_CONSECUTIVE_FAILURES"] != "0" {
			t.Errorf("consecutive failures %q then %q, want 2 then 0", h.hooks[2].env["EVERY_CONSECUTIVE_FAILURES"], h.hooks[3].env["EVERY_CONSECUTIVE_FAILURES"])
		}
		if _, ok := h.hooks[0].env["EVERY_OUTPUT"]; !ok {
			t.Error("EVERY_OUTPUT not set")
		}
		for _, c := range h.hooks {
			if path := c.env["EVERY_OUTPUT"]; path != "" {
				if _, err := os.Stat(path); !os.IsNotExist(err) {
					t.Errorf("EVERY_OUTPUT %s left behind: %v", path, err)
				}
			}
		}
	})
}

func TestLoopHookFailureChangesNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fakeExec{}
		h := &hookExec{job: f, hookResult: Result{Outcome: Failure, ExitCode: 9}}
		var buf bytes.Buffer
		cfg := hookConfig(t, h, &buf, make(chan os.Signal))
		cfg.MaxRuns = 2
		origin := time.Now()
		end := Loop(context.Background(), cfg)
		if end.Reason != MaxRuns || end.Last.Outcome != Success {
			t.Fatalf("end %+v, want MaxRuns with success", end)
		}
		if got := offsets(f.starts(), origin); !slices.Equal(got, []time.Duration{0, 10 * time.Second}) {
			t.Errorf("runs at %v, want on the grid", got)
		}
		hooks := eventsNamed(logEvents(t, &buf), "hook")
		if len(hooks) != 2 || hooks[0]["result"] != "failure" || hooks[0]["exit_code"] != 9.0 || hooks[0]["level"] != "WARN" {
			t.Errorf("hook events %v, want two failures at warn", hooks)
		}
	})
}

func TestLoopHookTimeoutAndStop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// A hook that would take an hour is stopped by --hook-timeout.
		f := &fakeExec{}
		h := &hookExec{job: f, hookTook: time.Hour}
		var buf bytes.Buffer
		cfg := hookConfig(t, h, &buf, make(chan os.Signal))
		cfg.MaxRuns, cfg.Hooks.Timeout = 1, 5*time.Second
		start := time.Now()
		Loop(context.Background(), cfg)
		if d := time.Since(start); d != 5*time.Second {
			t.Errorf("loop ended after %v, want the hook stopped at 5s", d)
		}
		if hooks := eventsNamed(logEvents(t, &buf), "hook"); len(hooks) != 1 || hooks[0]["result"] != "timeout" {
			t.Errorf("hook events %v, want one timeout", hooks)
		}
	})
	synctest.Test(t, func(t *testing.T) {
		// A stop signal while a hook runs stops the hook, then every.
		f := &fakeExec{}
		h := &hookExec{job: f, hookTook: time.Hour}
		var buf bytes.Buffer
		signals := make(chan os.Signal, 1)
		cfg := hookConfig(t, h, &buf, signals)
		done := make(chan Exit)
		go func() { done <- Loop(context.Background(), cfg) }()
		time.Sleep(2 * time.Second)
		synctest.Wait()
		if n := len(h.hooksRun()); n != 1 {
			t.Fatalf("%d hooks running, want 1", n)
		}
		signals <- syscall.SIGTERM
		end := <-done
		if end.Reason != Stopped || end.Signal != syscall.SIGTERM {
			t.Errorf("end %+v, want stopped by SIGTERM", end)
		}
		if hooks := eventsNamed(logEvents(t, &buf), "hook"); len(hooks) != 1 || hooks[0]["result"] != "interrupted" {
			t.Errorf("hook events %v, want the hook interrupted", hooks)
		}
	})
}
