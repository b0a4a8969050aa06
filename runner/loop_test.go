package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"slices"
	"sync"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/everycli/every/schedule"
)

// call is what the fake exec saw of one attempt.
type call struct {
	at      time.Time
	attempt Attempt
	env     map[string]string
}

// fakeExec records attempts and plays a script: each attempt takes the next
// duration and returns the next result (the last ones repeat).
type fakeExec struct {
	mu      sync.Mutex
	calls   []call
	took    []time.Duration
	results []Result
}

func (f *fakeExec) exec(ctx context.Context, a Attempt) Result {
	f.mu.Lock()
	n := len(f.calls)
	env := map[string]string{}
	for _, kv := range a.Env {
		for i := range kv {
			if kv[i] == '=' {
				env[kv[:i]] = kv[i+1:]
				break
			}
		}
	}
	f.calls = append(f.calls, call{at: time.Now(), attempt: a, env: env})
	took, res := pick(f.took, n), pick(f.results, n)
	if res.Outcome == "" {
		res.Outcome = Success
	}
	f.mu.Unlock()

	timer := time.NewTimer(took)
	defer timer.Stop()
	for {
		select {
		case <-timer.C:
			return res
		case <-ctx.Done():
			return Result{Outcome: Timeout, ExitCode: 124}
		case sig := <-a.Signals:
			if sig == syscall.SIGINT || sig == syscall.SIGTERM {
				return Result{Outcome: Interrupted, ExitCode: 128 + int(sig.(syscall.Signal)), Signal: sig.(syscall.Signal)}
			}
		}
	}
}

func pick[T any](s []T, i int) T {
	var zero T
	if len(s) == 0 {
		return zero
	}
	return s[min(i, len(s)-1)]
}

func (f *fakeExec) starts() []time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	var ts []time.Time
	for _, c := range f.calls {
		ts = append(ts, c.at)
	}
	return ts
}

// logEvents parses JSON log lines.
func logEvents(t *testing.T, buf *bytes.Buffer) []map[string]any {
	t.Helper()
	var events []map[string]any
	for _, line := range bytes.Split(bytes.TrimSpace(buf.Bytes()), []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal(line, &m); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		if m["job"] == nil || m["event"] == nil {
			t.Errorf("log line %q lacks a job or an event", line)
		}
		events = append(events, m)
	}
	return events
}

func eventsNamed(events []map[string]any, name string) []map[string]any {
	var out []map[string]any
	for _, e := range events {
		if e["event"] == name {
			out = append(out, e)
		}
	}
	return out
}

// testConfig returns a config with the fake exec and a JSON logger into buf.
// grid parses a duration schedule for a test's Config.
func grid(s string) schedule.Schedule {
	g, err := schedule.Parse(s, schedule.Options{})
	if err != nil {
		panic(err)
	}
	return g
}

func testConfig(f *fakeExec, buf *bytes.Buffer, signals chan os.Signal) Config {
	return Config{
		Name:       "job",
		Command:    []string{"job"},
		Schedule:   grid("10s"),
		Backoff:    time.Second,
		BackoffMax: time.Minute,
		Signal:     syscall.SIGTERM,
		KillAfter:  10 * time.Second,
		Logger:     slog.New(slog.NewJSONHandler(buf, &slog.HandlerOptions{Level: slog.LevelDebug})).With("job", "job"),
		Signals:    signals,
		Exec:       f.exec,
		Rand:       func() float64 { return 0 },
		SleepUntil: func(t time.Time) { time.Sleep(time.Until(t)) },
		Clock:      goClock{},
	}
}

func offsets(starts []time.Time, origin time.Time) []time.Duration {
	var ds []time.Duration
	for _, s := range starts {
		ds = append(ds, s.Sub(origin))
	}
	return ds
}

func TestLoopHoursWithoutDrift(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fakeExec{took: []time.Duration{7 * time.Second, 13 * time.Second, 89 * time.Second}}
		var buf bytes.Buffer
		cfg := testConfig(f, &buf, make(chan os.Signal))
		cfg.Schedule = grid("90s")
		cfg.MaxRuns = 240 // six hours
		origin := time.Now()
		end := Loop(context.Background(), cfg)
		if end.Reason != MaxRuns || end.Last.ExitCode != 0 {
			t.Fatalf("end = %+v, want MaxRuns with status 0", end)
		}
		starts := f.starts()
		if len(starts) != 240 {
			t.Fatalf("%d runs, want 240", len(starts))
		}
		for k, s := range starts {
			if want := time.Duration(k) * 90 * time.Second; s.Sub(origin) != want {
				t.Fatalf("run %d started at +%v, want +%v", k, s.Sub(origin), want)
			}
		}
		if skips := eventsNamed(logEvents(t, &buf), "skip"); len(skips) != 0 {
			t.Errorf("skips logged: %v", skips)
		}
	})
}

func TestLoopOverrunSkipsSlots(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// Slots every 10s; the second run takes 25s, so slots +20s and +30s are
		// skipped and the third run starts at +40s. The fourth takes exactly 10s
		// and ends on slot +50s: it is the next slot, not skipped.
		f := &fakeExec{took: []time.Duration{5 * time.Second, 25 * time.Second, 10 * time.Second, time.Second}}
		var buf bytes.Buffer
		cfg := testConfig(f, &buf, make(chan os.Signal))
		cfg.MaxRuns = 4
		origin := time.Now()
		Loop(context.Background(), cfg)
		got := offsets(f.starts(), origin)
		want := []time.Duration{0, 10 * time.Second, 40 * time.Second, 50 * time.Second}
		if !slices.Equal(got, want) {
			t.Fatalf("starts %v, want %v", got, want)
		}
		skips := eventsNamed(logEvents(t, &buf), "skip")
		if len(skips) != 1 || skips[0]["reason"] != "overrun" || skips[0]["count"] != 2.0 {
			t.Fatalf("skip events %v, want one overrun with count 2", skips)
		}
	})
}

func TestLoopRetryWaits(t *testing.T) {
	for _, tt := range []struct {
		name string
		rand float64
		want []time.Duration
	}{
		// backoff 1s, max 3s: waits 1s, 2s, 3s (capped), 3s
		{"no jitter", 0, []time.Duration{0, 1 * time.Second, 3 * time.Second, 6 * time.Second, 9 * time.Second}},
		// +15%: 1.15s, 2.3s, 3.45s, 3.45s
		{"half jitter", 0.5, []time.Duration{0, 1150 * time.Millisecond, 3450 * time.Millisecond, 6900 * time.Millisecond, 10350 * time.Millisecond}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f := &fakeExec{results: []Result{{Outcome: Failure, ExitCode: 3}}}
				var buf bytes.Buffer
				cfg := testConfig(f, &buf, make(chan os.Signal))
				cfg.Schedule = grid("1h")
				cfg.Retries = 4
				cfg.BackoffMax = 3 * time.Second
				cfg.MaxRuns = 1
				cfg.Rand = func() float64 { return tt.rand }
				origin := time.Now()
				end := Loop(context.Background(), cfg)
				if end.Reason != MaxRuns || end.Last.ExitCode != 3 {
					t.Fatalf("end = %+v, want MaxRuns with status 3", end)
				}
				if got := offsets(f.starts(), origin); !slices.Equal(got, tt.want) {
					t.Fatalf("attempts at %v, want %v", got, tt.want)
				}
				for i, c := range f.calls {
					if got, want := c.env["EVERY_ATTEMPT"], string(rune('1'+i)); got != want {
						t.Errorf("attempt %d: EVERY_ATTEMPT=%q, want %q", i+1, got, want)
					}
				}
				events := logEvents(t, &buf)
				if n := len(eventsNamed(events, "retry")); n != 4 {
					t.Errorf("%d retry events, want 4", n)
				}
				fin := eventsNamed(events, "finish")
				if len(fin) != 1 || fin[0]["attempts"] != 5.0 || fin[0]["result"] != "failure" {
					t.Errorf("finish events %v, want one failure after 5 attempts", fin)
				}
			})
		})
	}
}

func TestLoopRetrySucceeds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fakeExec{results: []Result{{Outcome: Failure, ExitCode: 1}, {Outcome: Success}}}
		var buf bytes.Buffer
		cfg := testConfig(f, &buf, make(chan os.Signal))
		cfg.Retries = 5
		cfg.MaxRuns = 1
		end := Loop(context.Background(), cfg)
		if end.Reason != MaxRuns || end.Last.Outcome != Success || len(f.calls) != 2 {
			t.Fatalf("end = %+v after %d attempts, want success after 2", end, len(f.calls))
		}
	})
}

func TestLoopMaxFailures(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// fail, fail, succeed (resets the count), then fail three times in a row
		f := &fakeExec{results: []Result{
			{Outcome: Failure, ExitCode: 1}, {Outcome: Failure, ExitCode: 1}, {Outcome: Success},
			{Outcome: Failure, ExitCode: 2}, {Outcome: Timeout, ExitCode: 124}, {Outcome: Failure, ExitCode: 5},
			{Outcome: Success},
		}}
		var buf bytes.Buffer
		cfg := testConfig(f, &buf, make(chan os.Signal))
		cfg.MaxFailures = 3
		end := Loop(context.Background(), cfg)
		if end.Reason != MaxFailures || len(f.calls) != 6 || end.Last.ExitCode != 5 {
			t.Fatalf("end = %+v after %d runs, want MaxFailures after 6", end, len(f.calls))
		}
	})
}

func TestLoopMaxRunsReportsLastRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fakeExec{results: []Result{{Outcome: Success}, {Outcome: Failure, ExitCode: 7}}}
		var buf bytes.Buffer
		cfg := testConfig(f, &buf, make(chan os.Signal))
		cfg.MaxRuns = 2
		end := Loop(context.Background(), cfg)
		if end.Reason != MaxRuns || end.Last.ExitCode != 7 || len(f.calls) != 2 {
			t.Fatalf("end = %+v after %d runs, want MaxRuns with status 7 after 2", end, len(f.calls))
		}
	})
}

func TestLoopStopDuringBackoff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fakeExec{results: []Result{{Outcome: Failure, ExitCode: 1}}}
		var buf bytes.Buffer
		signals := make(chan os.Signal, 1)
		cfg := testConfig(f, &buf, signals)
		cfg.Retries = 3
		cfg.Backoff = time.Hour
		cfg.BackoffMax = time.Hour
		done := make(chan Exit)
		go func() { done <- Loop(context.Background(), cfg) }()
		time.Sleep(time.Minute) // well into the first backoff wait
		synctest.Wait()
		sent := time.Now()
		signals <- syscall.SIGTERM
		end := <-done
		if end.Reason != Stopped || end.Signal != syscall.SIGTERM {
			t.Fatalf("end = %+v, want stopped by SIGTERM", end)
		}
		if waited := time.Since(sent); waited != 0 {
			t.Errorf("stop took %v of the backoff wait, want 0", waited)
		}
		if len(f.calls) != 1 {
			t.Errorf("%d attempts, want 1", len(f.calls))
		}
	})
}

func TestLoopStopWhileIdle(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fakeExec{}
		var buf bytes.Buffer
		signals := make(chan os.Signal, 1)
		cfg := testConfig(f, &buf, signals)
		cfg.Schedule = grid("1h")
		done := make(chan Exit)
		go func() { done <- Loop(context.Background(), cfg) }()
		time.Sleep(time.Minute)
		sent := time.Now()
		signals <- syscall.SIGINT
		end := <-done
		if end.Reason != Stopped || end.Signal != syscall.SIGINT || time.Since(sent) != 0 {
			t.Fatalf("end = %+v after %v, want an immediate stop by SIGINT", end, time.Since(sent))
		}
		stops := eventsNamed(logEvents(t, &buf), "stop")
		if len(stops) != 1 || stops[0]["signal"] != "SIGINT" {
			t.Errorf("stop events %v, want one naming SIGINT", stops)
		}
	})
}

func TestLoopStopWhileRunningForwards(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fakeExec{took: []time.Duration{time.Hour}}
		var buf bytes.Buffer
		signals := make(chan os.Signal, 1)
		cfg := testConfig(f, &buf, signals)
		cfg.Retries = 3 // a stopped run is not retried
		done := make(chan Exit)
		go func() { done <- Loop(context.Background(), cfg) }()
		time.Sleep(time.Second)
		signals <- syscall.SIGTERM
		end := <-done
		if end.Reason != Stopped || end.Signal != syscall.SIGTERM || end.Last.Outcome != Interrupted {
			t.Fatalf("end = %+v, want stopped by SIGTERM with an interrupted run", end)
		}
		if len(f.calls) != 1 {
			t.Errorf("%d attempts, want 1", len(f.calls))
		}
	})
}

func TestLoopUSR1RunsNowWithoutMovingGrid(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fakeExec{took: []time.Duration{time.Second}}
		var buf bytes.Buffer
		signals := make(chan os.Signal, 1)
		cfg := testConfig(f, &buf, signals)
		cfg.Schedule = grid("1m")
		cfg.MaxRuns = 3
		origin := time.Now()
		done := make(chan Exit)
		go func() { done <- Loop(context.Background(), cfg) }()
		time.Sleep(25 * time.Second)
		signals <- syscall.SIGUSR1
		<-done
		got := offsets(f.starts(), origin)
		want := []time.Duration{0, 25 * time.Second, time.Minute}
		if !slices.Equal(got, want) {
			t.Fatalf("starts %v, want %v", got, want)
		}
	})
}

func TestLoopUSR1OverrunSkips(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// A run asked for by hand at +50s that lasts 20s passes over slot +60s.
		f := &fakeExec{took: []time.Duration{time.Second, 20 * time.Second, time.Second}}
		var buf bytes.Buffer
		signals := make(chan os.Signal, 1)
		cfg := testConfig(f, &buf, signals)
		cfg.Schedule = grid("1m")
		cfg.MaxRuns = 3
		origin := time.Now()
		done := make(chan Exit)
		go func() { done <- Loop(context.Background(), cfg) }()
		time.Sleep(50 * time.Second)
		signals <- syscall.SIGUSR1
		<-done
		got := offsets(f.starts(), origin)
		want := []time.Duration{0, 50 * time.Second, 2 * time.Minute}
		if !slices.Equal(got, want) {
			t.Fatalf("starts %v, want %v", got, want)
		}
	})
}

func TestLoopForwardsHUPAndUSR2(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		got := make(chan os.Signal, 4)
		exec := func(ctx context.Context, a Attempt) Result {
			for sig := range a.Signals {
				got <- sig
				if sig == syscall.SIGTERM {
					return Result{Outcome: Interrupted}
				}
			}
			return Result{}
		}
		signals := make(chan os.Signal, 1)
		cfg := testConfig(nil, &bytes.Buffer{}, signals)
		cfg.Exec = exec
		done := make(chan Exit)
		go func() { done <- Loop(context.Background(), cfg) }()
		synctest.Wait() // the first run is under way
		for _, sig := range []os.Signal{syscall.SIGHUP, syscall.SIGUSR1, syscall.SIGUSR2, syscall.SIGTERM} {
			signals <- sig
		}
		<-done
		close(got)
		var seen []os.Signal
		for sig := range got {
			seen = append(seen, sig)
		}
		want := []os.Signal{syscall.SIGHUP, syscall.SIGUSR2, syscall.SIGTERM}
		if len(seen) != len(want) || seen[0] != want[0] || seen[1] != want[1] || seen[2] != want[2] {
			t.Fatalf("child got %v, want %v (SIGUSR1 is every's own)", seen, want)
		}
	})
}

func TestLoopTimeoutPerAttempt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fakeExec{took: []time.Duration{time.Hour}}
		var buf bytes.Buffer
		cfg := testConfig(f, &buf, make(chan os.Signal))
		cfg.Schedule = grid("1h")
		cfg.Timeout = 3 * time.Second
		cfg.Retries = 1
		cfg.MaxRuns = 1
		origin := time.Now()
		end := Loop(context.Background(), cfg)
		if end.Last.Outcome != Timeout || end.Last.ExitCode != 124 {
			t.Fatalf("end = %+v, want a timeout with status 124", end)
		}
		// attempt 1 at 0 times out at 3s, backoff 1s, attempt 2 at 4s times out at 7s
		if got, want := offsets(f.starts(), origin), []time.Duration{0, 4 * time.Second}; !slices.Equal(got, want) {
			t.Fatalf("attempts at %v, want %v", got, want)
		}
		if elapsed := time.Since(origin); elapsed != 7*time.Second {
			t.Errorf("loop ended at +%v, want +7s", elapsed)
		}
	})
}

func TestLoopJitterDelaysStartsNotGrid(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fakeExec{}
		var buf bytes.Buffer
		cfg := testConfig(f, &buf, make(chan os.Signal))
		cfg.Jitter = 4 * time.Second
		cfg.Rand = func() float64 { return 0.75 }
		cfg.Delay = 5 * time.Second
		cfg.MaxRuns = 3
		origin := time.Now()
		Loop(context.Background(), cfg)
		want := []time.Duration{8 * time.Second, 18 * time.Second, 28 * time.Second}
		if got := offsets(f.starts(), origin); !slices.Equal(got, want) {
			t.Fatalf("starts %v, want %v", got, want)
		}
		for i, c := range f.calls {
			slot := origin.Add(5*time.Second + time.Duration(i)*10*time.Second).UTC().Format(time.RFC3339Nano)
			if c.env["EVERY_SLOT"] != slot {
				t.Errorf("run %d: EVERY_SLOT=%s, want %s", i+1, c.env["EVERY_SLOT"], slot)
			}
		}
	})
}

func TestLoopChildEnvironment(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fakeExec{results: []Result{{Outcome: Success}, {Outcome: Failure, ExitCode: 1}}}
		var buf bytes.Buffer
		cfg := testConfig(f, &buf, make(chan os.Signal))
		cfg.Env = []string{"HOME=/home/x"}
		cfg.MaxRuns = 3
		origin := time.Now()
		Loop(context.Background(), cfg)
		first := origin.UTC().Format(time.RFC3339Nano)
		wantLast := []string{"", first, first}
		for i, c := range f.calls {
			if c.env["HOME"] != "/home/x" || c.env["EVERY_NAME"] != "job" || c.env["EVERY_RUN"] != string(rune('1'+i)) {
				t.Errorf("run %d: env %v", i+1, c.env)
			}
			if c.env["EVERY_LAST_SUCCESS"] != wantLast[i] {
				t.Errorf("run %d: EVERY_LAST_SUCCESS=%q, want %q", i+1, c.env["EVERY_LAST_SUCCESS"], wantLast[i])
			}
		}
	})
}

const sigterm = syscall.SIGTERM

var errNoSpace = syscall.ENOSPC
