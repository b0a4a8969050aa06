package runner

import (
	"bytes"
	"context"
	"os"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// Two jobs share a gate of one place (every jobs --max-concurrent 1): the
// short one's slots that find the long one running wait for its end until
// their next slot, else are skipped (reason=concurrency); the long one
// never waits for the short one's brief runs.
func TestLoopGate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		gate := NewGate(1)
		long := &fakeExec{took: []time.Duration{25 * time.Second}}
		short := &fakeExec{took: []time.Duration{time.Second}}
		var longLog, shortLog bytes.Buffer
		longCfg := testConfig(long, &longLog, make(chan os.Signal))
		longCfg.MaxRuns, longCfg.Gate = 2, gate
		shortCfg := testConfig(short, &shortLog, make(chan os.Signal))
		shortCfg.MaxRuns, shortCfg.Gate, shortCfg.Delay = 2, gate, time.Second
		origin := time.Now()
		var wg sync.WaitGroup
		for _, cfg := range []Config{longCfg, shortCfg} {
			wg.Go(func() { Loop(context.Background(), cfg) })
		}
		wg.Wait()
		if got, want := offsets(long.starts(), origin), []time.Duration{0, 30 * time.Second}; !slices.Equal(got, want) {
			t.Errorf("long job's starts %v, want %v: it waited for a place", got, want)
		}
		if got, want := offsets(short.starts(), origin), []time.Duration{25 * time.Second, 55 * time.Second}; !slices.Equal(got, want) {
			t.Errorf("short job's starts %v, want %v (a place at the long one's end, within the slot)", got, want)
		}
		var skipped int
		for _, e := range eventsNamed(logEvents(t, &shortLog), "skip") {
			if e["reason"] == ReasonConcurrency && e["ended"] == nil {
				skipped++
				if e["max_concurrent"] != 1.0 {
					t.Errorf("skip %v, want max_concurrent 1", e)
				}
			}
		}
		if skipped == 0 {
			t.Errorf("no skip with reason=concurrency logged:\n%s", shortLog.String())
		}
		if len(gate) != 0 {
			t.Errorf("%d places still taken after both loops ended", len(gate))
		}
	})
}

// A stop signal ends the wait for a place at once.
func TestLoopGateStop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		gate := NewGate(1)
		gate <- struct{}{} // taken, for good
		f := &fakeExec{}
		var buf bytes.Buffer
		signals := make(chan os.Signal, 1)
		cfg := testConfig(f, &buf, signals)
		cfg.Gate = gate
		done := make(chan Exit)
		go func() { done <- Loop(context.Background(), cfg) }()
		time.Sleep(5 * time.Second) // waiting for a place for the slot at +0
		synctest.Wait()
		signals <- os.Interrupt
		if end := <-done; end.Reason != Stopped || end.Signal != os.Interrupt {
			t.Fatalf("end %+v, want stopped by SIGINT", end)
		}
		if len(f.starts()) != 0 {
			t.Fatalf("ran %d times without a place", len(f.starts()))
		}
	})
}

// A loop retired while it waits for a place (a reload removed its job)
// ends at once: the slot it waited for neither runs nor counts as skipped.
func TestLoopGateRetire(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		gate := NewGate(1)
		gate <- struct{}{} // taken, for good
		f := &fakeExec{}
		var buf bytes.Buffer
		cfg := testConfig(f, &buf, make(chan os.Signal))
		cfg.Gate = gate
		retire := make(chan struct{})
		cfg.Retire = retire
		origin := time.Now()
		done := make(chan Exit)
		go func() { done <- Loop(context.Background(), cfg) }()
		time.Sleep(5 * time.Second) // waiting for a place for the slot at +0
		close(retire)
		if end := <-done; end.Reason != Retired || time.Since(origin) != 5*time.Second {
			t.Fatalf("end %+v at +%v, want Retired at once, +5s", end, time.Since(origin))
		}
		if len(f.starts()) != 0 {
			t.Fatalf("ran %d times without a place", len(f.starts()))
		}
		if skips := eventsNamed(logEvents(t, &buf), "skip"); len(skips) != 0 {
			t.Fatalf("skips logged for a retired loop: %v", skips)
		}
	})
}

// A retired loop (every jobs: its job removed or changed by a reload) lets
// the run under way finish, never stopped, and runs no slot more; idle, it
// ends at once.
func TestLoopRetire(t *testing.T) {
	for _, tc := range []struct {
		name     string
		took     time.Duration // the first run's
		retireAt time.Duration
		endAt    time.Duration
	}{
		{"running", 25 * time.Second, 5 * time.Second, 25 * time.Second}, // the run under way finishes, and no other starts
		{"idle", time.Second, 3 * time.Second, 3 * time.Second},          // waiting for +10s: at once
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f := &fakeExec{took: []time.Duration{tc.took}}
				var buf bytes.Buffer
				cfg := testConfig(f, &buf, make(chan os.Signal))
				retire := make(chan struct{})
				cfg.Retire = retire
				origin := time.Now()
				done := make(chan Exit)
				go func() { done <- Loop(context.Background(), cfg) }()
				time.Sleep(tc.retireAt)
				close(retire)
				if end := <-done; end.Reason != Retired || time.Since(origin) != tc.endAt {
					t.Fatalf("end %+v at +%v, want Retired at +%v", end, time.Since(origin), tc.endAt)
				}
				if n := len(f.starts()); n != 1 {
					t.Fatalf("%d runs, want 1", n)
				}
			})
		})
	}
}
