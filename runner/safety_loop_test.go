package runner

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/everycli/every/lock"
	"github.com/everycli/every/state"
)

// faultyStore is a memStore whose reads and writes fail on demand, as a full
// disk, an unreadable file or an unreachable server would.
type faultyStore struct {
	memStore
	fmu                     sync.Mutex
	failSave, failLoad      bool
	loads, saves, saveFails int
}

func (f *faultyStore) set(failSave, failLoad bool) {
	f.fmu.Lock()
	defer f.fmu.Unlock()
	f.failSave, f.failLoad = failSave, failLoad
}

func (f *faultyStore) Load(ctx context.Context) (*state.Record, error) {
	f.fmu.Lock()
	f.loads++
	fail := f.failLoad
	f.fmu.Unlock()
	if fail {
		return nil, &os.PathError{Op: "read", Path: "x", Err: syscall.EIO}
	}
	return f.memStore.Load(ctx)
}

func (f *faultyStore) Save(ctx context.Context, r *state.Record) error {
	f.fmu.Lock()
	fail := f.failSave
	if fail {
		f.saveFails++
	} else {
		f.saves++
	}
	f.fmu.Unlock()
	if fail {
		return &os.PathError{Op: "write", Path: "x", Err: errNoSpace}
	}
	return f.memStore.Save(ctx, r)
}

// Read peeks at the record, as state.File.Read does.
func (f *faultyStore) Read(time.Time) (*state.Record, error) {
	return f.memStore.Load(context.Background())
}

// nonDebug returns the events of a name logged above debug level.
func nonDebug(events []map[string]any, name string) []map[string]any {
	var out []map[string]any
	for _, e := range eventsNamed(events, name) {
		if e["level"] != "DEBUG" {
			out = append(out, e)
		}
	}
	return out
}

// A full disk loses nothing: while the state cannot be written, EVERY_RUN and
// the counts go on in memory, preferred to the older record read back, and the
// first write that succeeds brings the store up to date. The error is logged
// once, and once more when it ends.
func TestLoopStateWriteFailureLosesNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := &faultyStore{}
		fail := Result{Outcome: Failure, ExitCode: 3}
		f := &fakeExec{results: []Result{{Outcome: Success}, fail, fail, fail, {Outcome: Success}}}
		var buf bytes.Buffer
		signals := make(chan os.Signal, 1)
		cfg := testConfig(f, &buf, signals)
		cfg.Store, cfg.Lock = st, &memLock{}
		done := make(chan Exit)
		go func() { done <- Loop(context.Background(), cfg) }()
		time.Sleep(5 * time.Second) // run 1 at 0s has been written
		st.set(true, false)
		time.Sleep(30 * time.Second) // runs 2, 3, 4 at 10s, 20s, 30s: not written
		if got := st.get().Runs; got != 1 {
			t.Fatalf("the store holds %d runs while full, want 1", got)
		}
		st.set(false, false)
		time.Sleep(10 * time.Second) // run 5 at 40s is written
		signals <- sigterm
		<-done

		var runs []string
		for _, c := range f.calls {
			runs = append(runs, c.env["EVERY_RUN"])
		}
		if fmt.Sprint(runs) != "[1 2 3 4 5]" {
			t.Errorf("EVERY_RUN %v, want [1 2 3 4 5]: never a number twice", runs)
		}
		rec := st.get()
		if rec.Runs != 5 || rec.Failures != 3 || rec.LastResult != "success" {
			t.Errorf("store after the disk came back: runs %d, failures %d, last %q; want 5, 3, success", rec.Runs, rec.Failures, rec.LastResult)
		}
		events := logEvents(t, &buf)
		errs := nonDebug(events, "state_error")
		if len(errs) != 2 || errs[0]["level"] != "ERROR" || errs[1]["ended"] != true || errs[1]["total"] != float64(6) {
			t.Errorf("state_error lines %v, want one error and one end with total 6 (3 runs, start and end)", errs)
		}
	})
}

// A state that cannot be read, for a reason other than corruption, skips the
// slot as a busy lock does: nothing runs, and the record is never replaced.
func TestLoopStateReadFailureSkipsAndKeepsRecord(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := &faultyStore{}
		f := &fakeExec{}
		var buf bytes.Buffer
		signals := make(chan os.Signal, 1)
		cfg := testConfig(f, &buf, signals)
		cfg.Store, cfg.Lock = st, &memLock{}
		done := make(chan Exit)
		go func() { done <- Loop(context.Background(), cfg) }()
		time.Sleep(5 * time.Second) // run 1 at 0s
		before := st.get()
		st.set(false, true)
		time.Sleep(20 * time.Second) // slots 10s and 20s: skipped
		if runs, saves := len(f.calls), st.saves; runs != 1 || saves != 2 {
			t.Fatalf("%d runs and %d writes while unreadable, want 1 and 2 (run 1's start and end)", runs, saves)
		}
		if got := st.get(); fmt.Sprint(got) != fmt.Sprint(before) {
			t.Fatalf("record changed while unreadable:\n%+v\nwant\n%+v", got, before)
		}
		st.set(false, false)
		time.Sleep(10 * time.Second) // slot 30s runs
		signals <- sigterm
		<-done

		if len(f.calls) != 2 || f.calls[1].env["EVERY_RUN"] != "2" {
			t.Fatalf("%d runs after the state came back, want 2, the second EVERY_RUN=2", len(f.calls))
		}
		var reasons []string
		for _, e := range nonDebug(logEvents(t, &buf), "skip") {
			reasons = append(reasons, fmt.Sprint(e["reason"], " ", e["count"]))
		}
		if fmt.Sprint(reasons) != "[state 1 state 1]" {
			t.Errorf("skips logged %v, want the first (count 1) and its end (count 1 not logged yet)", reasons)
		}
	})
}

// A one-shot whose store cannot be reached exits at once as for a busy lock
// (75 in main), and so does one whose state cannot be read.
func TestLoopOneShotStoreDown(t *testing.T) {
	for _, tt := range []struct {
		name string
		cfg  func(*Config)
	}{
		{"lock store down", func(c *Config) { c.Lock = &flakyLock{down: true} }},
		{"state unreadable", func(c *Config) {
			st := &faultyStore{failLoad: true}
			c.Store, c.Lock = st, &memLock{}
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f := &fakeExec{}
				var buf bytes.Buffer
				cfg := testConfig(f, &buf, nil)
				cfg.MaxRuns = 1
				tt.cfg(&cfg)
				start := time.Now()
				end := Loop(context.Background(), cfg)
				if end.Reason != LockBusy || len(f.calls) != 0 || time.Since(start) != 0 {
					t.Fatalf("end %+v after %d runs and %v, want LockBusy at once, nothing run", end, len(f.calls), time.Since(start))
				}
			})
		})
	}
}

// blackHole is a lock and a store whose every call hangs until the test
// ends, whatever its context says, as a server that accepts and never
// answers can.
type blackHole struct{ release chan struct{} }

func (b blackHole) Lock(context.Context, time.Duration) (lock.Lease, error) {
	<-b.release
	return nil, errors.New("released")
}
func (b blackHole) Load(context.Context) (*state.Record, error) {
	<-b.release
	return nil, errors.New("released")
}
func (b blackHole) Save(context.Context, *state.Record) error { <-b.release; return nil }
func (b blackHole) Where() string                             { return "black hole" }

// A stop signal ends the loop at once while a call to the store hangs: at
// start-up (reading the state), and at a slot (taking the lock, or reading the
// state under it).
func TestLoopStopWhileStoreHangs(t *testing.T) {
	for _, tt := range []struct {
		name  string
		after time.Duration // the stop comes this long after the start
		cfg   func(*Config, blackHole)
	}{
		{"start-up read", time.Second, func(c *Config, b blackHole) { c.Store = b }},
		{"lock", time.Second, func(c *Config, b blackHole) { c.Lock = b }},
		{"read under the lock", time.Second, func(c *Config, b blackHole) {
			c.Lock = &memLock{}
			c.Store = &hangAfter{blackHole: b, ok: 1}
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				b := blackHole{release: make(chan struct{})}
				defer close(b.release)
				f := &fakeExec{}
				var buf bytes.Buffer
				signals := make(chan os.Signal, 1)
				cfg := testConfig(f, &buf, signals)
				tt.cfg(&cfg, b)
				done := make(chan Exit)
				go func() { done <- Loop(context.Background(), cfg) }()
				time.Sleep(tt.after)
				signals <- sigterm
				stopped := time.Now()
				end := <-done
				if end.Reason != Stopped || end.Signal != sigterm || time.Since(stopped) != 0 || len(f.calls) != 0 {
					t.Fatalf("end %+v %v after the signal, %d runs; want stopped at once, nothing run", end, time.Since(stopped), len(f.calls))
				}
			})
		})
	}
}

// hangAfter answers its first ok loads (empty), then hangs.
type hangAfter struct {
	blackHole
	mu sync.Mutex
	ok int
}

func (h *hangAfter) Load(ctx context.Context) (*state.Record, error) {
	h.mu.Lock()
	h.ok--
	ok := h.ok >= 0
	h.mu.Unlock()
	if ok {
		return nil, nil
	}
	return h.blackHole.Load(ctx)
}

// hangSavesAfter is hangAfter whose first saves writes are answered too.
type hangSavesAfter struct {
	*hangAfter
	saves int
}

func (h *hangSavesAfter) Save(ctx context.Context, r *state.Record) error {
	h.mu.Lock()
	h.saves--
	ok := h.saves >= 0
	h.mu.Unlock()
	if ok {
		return nil
	}
	return h.blackHole.Save(ctx, r)
}

// At the end of a run, a stopping loop gives a hanging write of the state
// stopGrace, then goes: a dead server does not hold up a stop. (The start
// is answered: the command starts only once it is on record.)
func TestLoopStopDuringRunWithHangingStore(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := blackHole{release: make(chan struct{})}
		defer close(b.release)
		f := &fakeExec{took: []time.Duration{time.Hour}}
		var buf bytes.Buffer
		signals := make(chan os.Signal, 1)
		cfg := testConfig(f, &buf, signals)
		cfg.Lock, cfg.Store = &memLock{}, &hangSavesAfter{hangAfter: &hangAfter{blackHole: b, ok: 2}, saves: 1}
		done := make(chan Exit)
		go func() { done <- Loop(context.Background(), cfg) }()
		time.Sleep(time.Second)
		signals <- sigterm
		stopped := time.Now()
		end := <-done
		if end.Reason != Stopped || len(f.calls) != 1 || time.Since(stopped) > stopGrace {
			t.Fatalf("end %+v %v after the signal with %d runs, want stopped within %v", end, time.Since(stopped), len(f.calls), stopGrace)
		}
	})
}

// A command that fails at every slot is logged when it starts failing, then
// summarised once a minute, not a line per slot; the success that ends it
// says how many failed.
func TestLoopRepeatedFailuresSummarised(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		results := make([]Result, 30)
		for i := range results {
			results[i] = Result{Outcome: Failure, ExitCode: 1}
		}
		f := &fakeExec{results: append(results, Result{Outcome: Success})}
		var buf bytes.Buffer
		cfg := testConfig(f, &buf, nil)
		cfg.Schedule, cfg.MaxRuns = grid("1s"), 31
		Loop(context.Background(), cfg)

		var lines []string
		for _, e := range nonDebug(logEvents(t, &buf), "finish") {
			lines = append(lines, fmt.Sprint(e["result"], " count=", e["count"], " after=", e["after_failures"]))
		}
		want := "[failure count=1 after=<nil> success count=<nil> after=30]"
		if fmt.Sprint(lines) != want {
			t.Errorf("finish lines above debug %v, want %s", lines, want)
		}
	})
}

// A busy file lock names its holder from the record, the lock file's
// content being never touched.
func TestLoopBusyLockNamesHolderFromRecord(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := &faultyStore{}
		st.rec = &state.Record{Version: state.Version, Schedule: "10s", Anchor: time.Now(), Running: true, PID: 4242, Host: "web-1"}
		lk := &memLock{held: true}
		f := &fakeExec{}
		var buf bytes.Buffer
		cfg := testConfig(f, &buf, nil)
		cfg.Store, cfg.Lock, cfg.MaxRuns = st, lk, 1
		if end := Loop(context.Background(), cfg); end.Reason != LockBusy {
			t.Fatalf("end %+v, want LockBusy", end)
		}
		skips := eventsNamed(logEvents(t, &buf), "skip")
		if len(skips) != 1 || skips[0]["holder_pid"] != float64(4242) || skips[0]["holder_host"] != "web-1" {
			t.Fatalf("skips %v, want one naming pid 4242 on web-1", skips)
		}
	})
}

// slowUnlock is a lock whose release takes until the test lets it go.
type slowUnlock struct {
	memLock
	release chan struct{}
}

func (s *slowUnlock) Lock(ctx context.Context, wait time.Duration) (lock.Lease, error) {
	if _, err := s.memLock.Lock(ctx, wait); err != nil {
		return nil, err
	}
	return slowLease{s}, nil
}

type slowLease struct{ s *slowUnlock }

func (l slowLease) Unlock() error {
	<-l.s.release
	return memLease{&l.s.memLock}.Unlock()
}
func (slowLease) Lost() <-chan struct{}     { return nil }
func (slowLease) Token() int64              { return 0 }
func (slowLease) Expiring() <-chan struct{} { return nil }

// A SIGUSR1 that comes once a run has finished, while the lock is still being
// released, is not lost: a run follows at once.
func TestLoopUSR1DuringReleaseRuns(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		lk := &slowUnlock{release: make(chan struct{})}
		f := &fakeExec{took: []time.Duration{time.Second}}
		var buf bytes.Buffer
		signals := make(chan os.Signal, 2)
		cfg := testConfig(f, &buf, signals)
		cfg.Lock = lk
		done := make(chan Exit)
		go func() { done <- Loop(context.Background(), cfg) }()
		time.Sleep(2 * time.Second) // run 1 took 1s; its release hangs
		synctest.Wait()
		signals <- syscall.SIGUSR1
		synctest.Wait()
		close(lk.release)
		time.Sleep(time.Second) // run 2, asked for, takes 1s: 2s..3s
		synctest.Wait()
		signals <- sigterm
		<-done
		starts := offsets(f.starts(), f.starts()[0])
		if len(starts) < 2 || starts[1] != 2*time.Second {
			t.Fatalf("runs at %v, want a second run at 2s, when SIGUSR1 came", starts)
		}
	})
}
