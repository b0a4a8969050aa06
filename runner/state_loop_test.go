package runner

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/everycli/every/lock"
	"github.com/everycli/every/state"
)

// memStore keeps a record in memory, as a copy, like a file would.
type memStore struct {
	mu    sync.Mutex
	rec   *state.Record
	saves int
}

func (m *memStore) Load(context.Context) (*state.Record, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.rec == nil {
		return nil, nil
	}
	c := *m.rec
	return &c, nil
}

func (m *memStore) Save(_ context.Context, r *state.Record) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	c := *r
	m.rec = &c
	m.saves++
	return nil
}

func (m *memStore) Where() string { return "memory" }

func (m *memStore) get() state.Record {
	m.mu.Lock()
	defer m.mu.Unlock()
	return *m.rec
}

// memLock is a try-lock shared by the loops of one test.
type memLock struct {
	mu   sync.Mutex
	held bool
}

func (m *memLock) Lock(context.Context, time.Duration) (lock.Lease, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.held {
		return nil, &lock.BusyError{}
	}
	m.held = true
	return memLease{m}, nil
}

type memLease struct{ m *memLock }

func (l memLease) Unlock() error {
	l.m.mu.Lock()
	defer l.m.mu.Unlock()
	l.m.held = false
	return nil
}
func (memLease) Lost() <-chan struct{}     { return nil }
func (memLease) Token() int64              { return 0 }
func (memLease) Expiring() <-chan struct{} { return nil }

// runFor runs a loop until d has passed, then stops it with SIGTERM.
func runFor(cfg Config, d time.Duration) Exit {
	signals := make(chan os.Signal, 1)
	cfg.Signals = signals
	done := make(chan Exit, 1)
	go func() { done <- Loop(context.Background(), cfg) }()
	time.Sleep(d)
	signals <- os.Signal(sigterm)
	return <-done
}

func TestLoopRestartKeepsPhase(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := &memStore{}
		f := &fakeExec{took: []time.Duration{time.Second}}
		cfg := testConfig(f, &bytes.Buffer{}, nil)
		cfg.Schedule = grid("90s")
		cfg.Store = store
		origin := time.Now()
		// Two runs (at +0 and +90s), then a stop at +120s.
		runFor(cfg, 120*time.Second)
		// A restart 30s after the last run waits 60s for the next slot.
		cfg.MaxRuns = 2
		end := Loop(context.Background(), cfg)
		if end.Reason != MaxRuns {
			t.Fatalf("end = %+v", end)
		}
		want := []time.Duration{0, 90 * time.Second, 180 * time.Second, 270 * time.Second}
		if got := offsets(f.starts(), origin); !slices.Equal(got, want) {
			t.Fatalf("starts %v, want %v", got, want)
		}
		rec := store.get()
		if rec.Runs != 4 || rec.Running || rec.LastResult != "success" || !rec.Anchor.Equal(origin) {
			t.Errorf("record %+v", rec)
		}
		if got := f.calls[2].env["EVERY_RUN"]; got != "3" {
			t.Errorf("EVERY_RUN across a restart = %s, want 3", got)
		}
	})
}

func TestLoopCatchUpPolicies(t *testing.T) {
	for _, tt := range []struct {
		policy CatchUp
		max    int
		// starts after the restart, relative to it; slots are every 10s and
		// the restart comes 45s after the last run's slot (4 missed).
		want []time.Duration
		// the slots they ran, in seconds after the first run's
		slots []int
	}{
		{CatchUpOnce, 10, []time.Duration{0, 5 * time.Second}, []int{40, 50}},
		{CatchUpNone, 10, []time.Duration{5 * time.Second, 15 * time.Second}, []int{50, 60}},
		{CatchUpAll, 10, []time.Duration{0, 0, 0, 0, 5 * time.Second}, []int{10, 20, 30, 40, 50}},
		{CatchUpAll, 2, []time.Duration{0, 0, 5 * time.Second}, []int{30, 40, 50}},
	} {
		t.Run(tt.policy.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				store := &memStore{}
				f := &fakeExec{}
				origin := time.Now()
				var buf bytes.Buffer
				cfg := testConfig(f, &buf, nil)
				cfg.Store = store
				cfg.MaxRuns = 1
				Loop(context.Background(), cfg)
				time.Sleep(45 * time.Second)

				f.calls = nil
				restart := time.Now()
				cfg.CatchUp, cfg.CatchUpMax = tt.policy, tt.max
				cfg.MaxRuns = len(tt.want)
				Loop(context.Background(), cfg)
				if got := offsets(f.starts(), restart); !slices.Equal(got, tt.want) {
					t.Fatalf("starts %v, want %v", got, tt.want)
				}
				for i, c := range f.calls {
					want := origin.Add(time.Duration(tt.slots[i]) * time.Second).UTC().Format(time.RFC3339Nano)
					if c.env["EVERY_SLOT"] != want {
						t.Errorf("run %d: slot %s, want %s", i, c.env["EVERY_SLOT"], want)
					}
				}
				ev := eventsNamed(logEvents(t, &buf), "catch_up")
				if len(ev) != 1 || ev[0]["missed"] != 4.0 || ev[0]["policy"] != tt.policy.String() {
					t.Errorf("catch_up events %v, want one with missed=4", ev)
				}
			})
		})
	}
}

func TestLoopInterruptedRunIsCaughtUp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := &memStore{}
		origin := time.Now()
		// A run that started at +20s on a 10s grid and never ended: its
		// process died (another host's pid would be taken as alive).
		store.rec = &state.Record{Version: 1, Name: "job", Schedule: "10s", Anchor: origin.Add(-time.Minute),
			LastSlot: origin.Add(-40 * time.Second), Running: true, Runs: 7, Host: "here", PID: 1 << 30}
		f := &fakeExec{}
		cfg := testConfig(f, &bytes.Buffer{}, nil)
		cfg.Store, cfg.Host, cfg.PID = store, "here", 4242
		cfg.Lock = &memLock{}
		cfg.MaxRuns = 2 // not a one-shot, which runs the latest slot only
		cfg.CatchUp = CatchUpAll
		cfg.CatchUpMax = 10
		Loop(context.Background(), cfg)
		// Slots -40s (cut short), -30s, -20s, -10s and 0 are missed: the first
		// of them runs at once.
		if f.calls[0].env["EVERY_SLOT"] != origin.Add(-40*time.Second).UTC().Format(time.RFC3339Nano) {
			t.Errorf("first catch-up slot %s, want the interrupted one", f.calls[0].env["EVERY_SLOT"])
		}
		rec := store.get()
		if rec.Runs != 9 || rec.Failures != 1 || rec.ConsecutiveFailures != 0 || rec.LastResult != "success" {
			t.Errorf("record %+v: the cut-short run counts as a failure, then this one succeeded", rec)
		}
	})
}

func TestLoopTwoInstancesOneRunPerSlot(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := &memStore{}
		lk := &memLock{}
		f := &fakeExec{took: []time.Duration{2 * time.Second}}
		var bufA, bufB bytes.Buffer
		a := testConfig(f, &bufA, nil)
		a.Store, a.Lock, a.PID = store, lk, 1
		b := testConfig(f, &bufB, nil)
		b.Store, b.Lock, b.PID = store, lk, 2
		origin := time.Now()
		done := make(chan Exit)
		go func() { done <- runFor(a, 95*time.Second) }()
		// B starts 3.5s later, on a grid of its own until it reads A's.
		time.Sleep(3500 * time.Millisecond)
		go func() { done <- runFor(b, 91*time.Second) }()
		<-done
		<-done
		var want []time.Duration
		for k := range 10 {
			want = append(want, time.Duration(k)*10*time.Second)
		}
		if got := offsets(f.starts(), origin); !slices.Equal(got, want) {
			t.Fatalf("starts %v, want one a slot on A's grid: %v", got, want)
		}
		if rec := store.get(); rec.Runs != 10 {
			t.Errorf("record shows %d runs, want 10", rec.Runs)
		}
	})
}

func TestLoopOneShotLockBusy(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		lk := &memLock{held: true}
		f := &fakeExec{}
		var buf bytes.Buffer
		cfg := testConfig(f, &buf, nil)
		cfg.Lock = lk
		cfg.MaxRuns = 1
		if end := Loop(context.Background(), cfg); end.Reason != LockBusy || len(f.calls) != 0 {
			t.Fatalf("end = %+v after %d runs, want LockBusy without a run", end, len(f.calls))
		}
		skips := eventsNamed(logEvents(t, &buf), "skip")
		if len(skips) != 1 || skips[0]["reason"] != "locked" {
			t.Errorf("skip events %v, want one locked", skips)
		}
	})
}

func TestLoopStateWriteFailureKeepsRunning(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fakeExec{}
		var buf bytes.Buffer
		cfg := testConfig(f, &buf, nil)
		cfg.Store = failingStore{}
		cfg.MaxRuns = 3
		if end := Loop(context.Background(), cfg); end.Reason != MaxRuns || len(f.calls) != 3 {
			t.Fatalf("end = %+v after %d runs, want 3 runs", end, len(f.calls))
		}
		if n := len(eventsNamed(logEvents(t, &buf), "state_error")); n != 6 {
			t.Errorf("%d state_error events, want 6 (each start and end)", n)
		}
		if got := f.calls[2].env["EVERY_RUN"]; got != "3" {
			t.Errorf("EVERY_RUN = %s, want 3: the counts go on in memory", got)
		}
	})
}

type failingStore struct{}

func (failingStore) Load(context.Context) (*state.Record, error) { return nil, nil }
func (failingStore) Save(context.Context, *state.Record) error {
	return &os.PathError{Op: "write", Path: "x", Err: errNoSpace}
}
func (failingStore) Where() string { return "x" }

// flakyLock fails with lock.ErrStore while down is true.
type flakyLock struct {
	memLock
	mu   sync.Mutex
	down bool
}

func (f *flakyLock) setDown(d bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.down = d
}

func (f *flakyLock) Lock(ctx context.Context, wait time.Duration) (lock.Lease, error) {
	f.mu.Lock()
	down := f.down
	f.mu.Unlock()
	if down {
		return nil, fmt.Errorf("%w: connection refused", lock.ErrStore)
	}
	return f.memLock.Lock(ctx, wait)
}

func TestLoopStoreOutageLoggedOnceThenSummarised(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		lk := &flakyLock{}
		f := &fakeExec{}
		var buf bytes.Buffer
		cfg := testConfig(f, &buf, nil)
		cfg.Lock = lk
		// 10s slots: the first runs; the store is down for 150s (15 slots),
		// then back.
		signals := make(chan os.Signal, 1)
		cfg.Signals = signals
		done := make(chan Exit)
		go func() { done <- Loop(context.Background(), cfg) }()
		time.Sleep(5 * time.Second)
		lk.setDown(true)
		time.Sleep(150 * time.Second)
		lk.setDown(false)
		time.Sleep(20 * time.Second)
		signals <- sigterm
		<-done

		if len(f.calls) != 3 {
			t.Errorf("%d runs, want 3: one before the outage, none during, two after", len(f.calls))
		}
		var levels []string
		var counts []float64
		for _, e := range eventsNamed(logEvents(t, &buf), "skip") {
			if e["reason"] == "store" && e["level"] != "DEBUG" {
				levels = append(levels, e["level"].(string))
				counts = append(counts, e["count"].(float64))
			}
		}
		// First skip at +10s; a summary 60s later (+70s: slots +20s..+70s),
		// another at +130s (+80s..+130s), then back at +160s (+140s, +150s).
		wantLevels := []string{"ERROR", "WARN", "WARN", "INFO"}
		wantCounts := []float64{1, 6, 6, 2}
		if fmt.Sprint(levels) != fmt.Sprint(wantLevels) || fmt.Sprint(counts) != fmt.Sprint(wantCounts) {
			t.Fatalf("store skips logged at %v with counts %v, want %v with %v", levels, counts, wantLevels, wantCounts)
		}
	})
}

// endFailsOnce is a memStore whose first write of a run's end fails (a full
// disk): the store keeps that run's start.
type endFailsOnce struct {
	memStore
	failed bool
}

func (e *endFailsOnce) Save(ctx context.Context, r *state.Record) error {
	e.memStore.mu.Lock()
	fail := !r.Running && !e.failed
	e.failed = e.failed || fail
	e.memStore.mu.Unlock()
	if fail {
		return &os.PathError{Op: "write", Path: "x", Err: errNoSpace}
	}
	return e.memStore.Save(ctx, r)
}

// TestLoopFailedEndWriteLosesNothing: the end of a run that could not be
// written is not lost: the next run, under the lock, finds the store still
// holding that run's start, by this very instance, and goes on from its own
// record (the run succeeded) instead of booking it as cut short.
func TestLoopFailedEndWriteLosesNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fakeExec{}
		cfg := testConfig(f, &bytes.Buffer{}, nil)
		store := &endFailsOnce{}
		cfg.Store, cfg.Lock, cfg.MaxRuns = store, &memLock{}, 2
		if end := Loop(context.Background(), cfg); end.Reason != MaxRuns || len(f.calls) != 2 {
			t.Fatalf("end = %+v after %d runs, want 2 runs", end, len(f.calls))
		}
		rec := store.get()
		if rec.Runs != 2 || rec.Failures != 0 || rec.ConsecutiveFailures != 0 || rec.LastResult != string(Success) || rec.Running {
			t.Errorf("record %+v: want 2 runs, both successes, none cut short", rec)
		}
		if got := f.calls[1].env["EVERY_RUN"]; got != "2" {
			t.Errorf("EVERY_RUN of the second run = %s, want 2", got)
		}
	})
}

// A record of another schedule: a new grid, said at start with a token for
// its reason (not prose), the slot run at once as on a fresh start.
func TestLoopScheduleChangedReason(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		origin := time.Now()
		store := &memStore{rec: &state.Record{Version: 1, Name: "job", Schedule: "1m", Anchor: origin.Add(-time.Hour),
			LastSlot: origin.Add(-time.Minute), Runs: 3}}
		f := &fakeExec{}
		var buf bytes.Buffer
		cfg := testConfig(f, &buf, nil)
		cfg.Store, cfg.MaxRuns = store, 1
		Loop(context.Background(), cfg)
		caught := eventsNamed(logEvents(t, &buf), "catch_up")
		if len(caught) != 1 || caught[0]["reason"] != "schedule_changed" || caught[0]["msg"] != "schedule changed, starting on a new grid" {
			t.Errorf("catch_up lines %v, want one with reason=schedule_changed", caught)
		}
		if len(f.calls) != 1 || !f.calls[0].at.Equal(origin) {
			t.Errorf("runs %v, want one at once, on the new grid", f.calls)
		}
	})
}
