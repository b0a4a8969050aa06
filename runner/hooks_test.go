package runner

import (
	"bytes"
	"context"
	"fmt"
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
		// Runs: success, failure (after its retry), failure, success, success:
		// on-failure once for the streak of two.
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
		want := []string{"ok", "fail", "back", "ok", "ok"}
		if got := h.hooksRun(); !slices.Equal(got, want) {
			t.Fatalf("hooks %v, want %v (one call per run, after its retries; on-failure and on-recover once)", got, want)
		}
		first := h.hooks[1].env
		for k, v := range map[string]string{"EVERY_RESULT": "failure", "EVERY_EXIT_CODE": "3", "EVERY_SIGNAL": "",
			"EVERY_ATTEMPTS": "2", "EVERY_CONSECUTIVE_FAILURES": "1", "EVERY_RUN": "2", "EVERY_NAME": "job", "EVERY_DURATION_MS": "1000"} {
			if first[k] != v {
				t.Errorf("on-failure %s=%q, want %q", k, first[k], v)
			}
		}
		if got := h.hooks[2].env["EVERY_CONSECUTIVE_FAILURES"]; got != "0" {
			t.Errorf("on-recover told %q consecutive failures, want 0", got)
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

func TestFailureDue(t *testing.T) {
	for _, tc := range []struct {
		after, failures int
		want            bool
	}{
		{after: 0, failures: 1, want: true}, // the zero value is 1
		{after: 0, failures: 2},
		{after: 1, failures: 1, want: true},
		{after: 1, failures: 2},
		{after: 3, failures: 1},
		{after: 3, failures: 2},
		{after: 3, failures: 3, want: true},
		{after: 3, failures: 4},
	} {
		if got := (Hooks{FailureAfter: tc.after}).failureDue(tc.failures); got != tc.want {
			t.Errorf("FailureAfter %d, %d failures: due %v, want %v", tc.after, tc.failures, got, tc.want)
		}
	}
}

// failing plays outcomes, "F" a failed run and "S" a successful one.
func failing(runs string) []Result {
	var rs []Result
	for _, r := range runs {
		if r == 'F' {
			rs = append(rs, Result{Outcome: Failure, ExitCode: 1})
		} else {
			rs = append(rs, Result{Outcome: Success})
		}
	}
	return rs
}

// failuresTold returns EVERY_CONSECUTIVE_FAILURES of each hook named cmd.
func (h *hookExec) failuresTold(cmd string) []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for _, c := range h.hooks {
		if c.attempt.Argv[2] == cmd {
			out = append(out, c.env["EVERY_CONSECUTIVE_FAILURES"])
		}
	}
	return out
}

// Being told once: on-failure runs once a streak, at its first failed run
// by default, and not again until a success has ended the streak;
// on-each-failure runs after every failed run, after on-failure.
func TestLoopFailureHookOncePerStreak(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fakeExec{results: failing("FFFSFFS")}
		h := &hookExec{job: f}
		var buf bytes.Buffer
		cfg := hookConfig(t, h, &buf, make(chan os.Signal))
		cfg.MaxRuns, cfg.Hooks.OnEachFailure = 7, "each"
		Loop(context.Background(), cfg)
		want := []string{"fail", "each", "each", "each", "back", "ok", "fail", "each", "each", "back", "ok"}
		if got := h.hooksRun(); !slices.Equal(got, want) {
			t.Fatalf("hooks %v, want %v", got, want)
		}
		if got := h.failuresTold("each"); !slices.Equal(got, []string{"1", "2", "3", "1", "2"}) {
			t.Errorf("on-each-failure told %v consecutive failures, want 1 2 3 1 2", got)
		}
	})
}

// With --on-failure-after 3, on-failure runs at the third failed run in a
// row, once; a shorter streak runs none, but its end still runs on-recover.
func TestLoopFailureHookAtN(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fakeExec{results: failing("FFSFFFFFS")}
		h := &hookExec{job: f}
		var buf bytes.Buffer
		cfg := hookConfig(t, h, &buf, make(chan os.Signal))
		cfg.MaxRuns, cfg.Hooks.FailureAfter = 9, 3
		Loop(context.Background(), cfg)
		want := []string{"back", "ok", "fail", "back", "ok"}
		if got := h.hooksRun(); !slices.Equal(got, want) {
			t.Fatalf("hooks %v, want %v", got, want)
		}
		if got := h.failuresTold("fail"); !slices.Equal(got, []string{"3"}) {
			t.Errorf("on-failure told %v consecutive failures, want 3", got)
		}
	})
}

// The streak is the record's: a restart in the middle of an outage runs
// on-failure again only when the streak newly reaches --on-failure-after.
func TestLoopFailureHookAcrossRestart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := &memStore{}
		f := &fakeExec{results: failing("FFFFS")}
		h := &hookExec{job: f}
		var buf bytes.Buffer
		cfg := hookConfig(t, h, &buf, make(chan os.Signal))
		cfg.Store = store
		restart := func(runs, after int, want ...string) {
			t.Helper()
			h.mu.Lock()
			h.hooks = nil
			h.mu.Unlock()
			cfg.MaxRuns, cfg.Hooks.FailureAfter = runs, after
			// Started in the next slot: a one-shot in the slot it ran
			// would find it done.
			time.Sleep(cfg.Schedule.Period(time.Now()))
			Loop(context.Background(), cfg)
			if got := h.hooksRun(); !slices.Equal(got, want) {
				t.Fatalf("after %d more runs (--on-failure-after %d, %d consecutive failures on record): hooks %v, want %v",
					runs, after, store.get().ConsecutiveFailures, got, want)
			}
		}
		restart(2, 1, "fail") // failures 1 (told) and 2
		restart(1, 1)         // 3: the streak was told of
		restart(1, 4, "fail") // 4: reaches --on-failure-after 4
		restart(1, 4, "back", "ok")
		if rec := store.get(); rec.ConsecutiveFailures != 0 || rec.Runs != 5 {
			t.Errorf("record %+v, want 5 runs and the streak ended", rec)
		}
	})
}

// The end of a failure streak is logged at warn, as its failures were, so
// -q shows the end of what it showed.
func TestLoopStreakEndAtWarn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fakeExec{results: failing("FFSS")}
		var buf bytes.Buffer
		cfg := testConfig(f, &buf, make(chan os.Signal))
		cfg.MaxRuns = 4
		Loop(context.Background(), cfg)
		var got []string
		for _, e := range eventsNamed(logEvents(t, &buf), "finish") {
			got = append(got, fmt.Sprint(e["level"], " ", e["result"], " ", e["after_failures"]))
		}
		want := []string{"WARN failure <nil>", "DEBUG failure <nil>", "WARN success 2", "INFO success <nil>"}
		if !slices.Equal(got, want) {
			t.Errorf("finish lines %q, want %q", got, want)
		}
	})
}
