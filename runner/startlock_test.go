package runner

import (
	"bytes"
	"context"
	"os"
	"slices"
	"sync"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/everycli/every/lock"
	"github.com/everycli/every/state"
)

// fakeSession is a lock that is also the store and writes a start with the
// lock, as the fleet's Redis session does: only when the record it holds is exactly what
// it wrote last.
type fakeSession struct {
	mu      sync.Mutex
	rec     []byte // the record held, encoded
	written []byte // the session's last write, as confirmed
	held    bool
	// took is how long LockStart takes (fake time); busy makes the next
	// LockStart find the lock busy. With undoAfter, LockStart waits for its
	// context to end, then undoes (undone) what its answer, coming
	// undoAfter later, did, before it returns, as the fleet's Redis session does.
	took      time.Duration
	busy      bool
	undoAfter time.Duration
	undone    int

	locks      []time.Duration // the waits of Lock's calls
	starts     []state.Record  // the starts LockStart was given
	written1   int             // starts LockStart wrote
	startSaves int             // starts written by Save
	endSaves   int
}

type fakeSessionLease struct{ f *fakeSession }

func (l fakeSessionLease) Unlock() error {
	l.f.mu.Lock()
	defer l.f.mu.Unlock()
	l.f.held = false
	return nil
}
func (fakeSessionLease) Lost() <-chan struct{}     { return nil }
func (fakeSessionLease) Token() int64              { return 1 }
func (fakeSessionLease) Expiring() <-chan struct{} { return nil }

func (f *fakeSession) Lock(_ context.Context, wait time.Duration) (lock.Lease, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.locks = append(f.locks, wait)
	if f.held {
		return nil, &lock.BusyError{}
	}
	f.held = true
	return fakeSessionLease{f}, nil
}

func (f *fakeSession) LockStart(ctx context.Context, start *state.Record) (lock.Lease, bool, error) {
	f.mu.Lock()
	took, undoAfter := f.took, f.undoAfter
	f.mu.Unlock()
	if undoAfter > 0 {
		<-ctx.Done()
		time.Sleep(undoAfter)
		f.mu.Lock()
		f.undone++
		f.mu.Unlock()
		return nil, false, ctx.Err()
	}
	time.Sleep(took)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.starts = append(f.starts, *start)
	if f.held || f.busy {
		f.busy = false
		return nil, false, &lock.BusyError{}
	}
	f.held = true
	if f.written == nil || !bytes.Equal(f.rec, f.written) {
		return fakeSessionLease{f}, false, nil
	}
	b, err := state.Encode(start)
	if err != nil {
		return nil, false, err
	}
	f.rec, f.written = b, b
	f.written1++
	return fakeSessionLease{f}, true, nil
}

func (f *fakeSession) Load(context.Context) (*state.Record, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.rec == nil {
		return nil, nil
	}
	return state.Decode(f.rec)
}

func (f *fakeSession) Save(_ context.Context, r *state.Record) error {
	b, err := state.Encode(r)
	if err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.rec, f.written = b, b
	if r.Running {
		f.startSaves++
	} else {
		f.endSaves++
	}
	return nil
}

func (f *fakeSession) Where() string { return "fake" }

// record returns the record held.
func (f *fakeSession) record(t *testing.T) *state.Record {
	t.Helper()
	rec, err := f.Load(context.Background())
	if err != nil || rec == nil {
		t.Fatalf("record %+v, %v", rec, err)
	}
	return rec
}

func sessionConfig(f *fakeExec, s *fakeSession, signals chan os.Signal) Config {
	cfg := testConfig(f, &bytes.Buffer{}, signals)
	cfg.Lock, cfg.Store = s, s
	return cfg
}

// TestStartLockWritesStartWithLock: from the second run of a process on,
// the start goes with the lock and is not written again; the first run
// reads the record and writes the start apart.
func TestStartLockWritesStartWithLock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &fakeSession{}
		f := &fakeExec{took: []time.Duration{time.Second}}
		cfg := sessionConfig(f, s, nil)
		cfg.MaxRuns = 3
		origin := time.Now()
		if end := Loop(context.Background(), cfg); end.Reason != MaxRuns {
			t.Fatalf("end = %+v", end)
		}
		if !slices.Equal(s.locks, []time.Duration{0}) || s.startSaves != 1 || s.endSaves != 3 || s.written1 != 2 {
			t.Fatalf("Lock calls %v, starts saved %d, ends saved %d, starts with the lock %d; want 1 Lock, 1 start saved, 3 ends, 2 starts with the lock",
				s.locks, s.startSaves, s.endSaves, s.written1)
		}
		for i, st := range s.starts {
			slot := origin.Add(time.Duration(i+1) * 10 * time.Second)
			if st.Runs != i+2 || !st.Running || !st.LastSlot.Equal(slot) || !st.LastRun.Equal(slot) || !st.Anchor.Equal(origin) {
				t.Errorf("start %d = %+v, want run %d of slot %v, running", i, st, i+2, slot)
			}
		}
		if rec := s.record(t); rec.Runs != 3 || rec.Running || rec.LastResult != "success" || !rec.LastSlot.Equal(origin.Add(20*time.Second)) {
			t.Errorf("record %+v, want 3 runs, the last ended", rec)
		}
		if got := f.calls[2].env["EVERY_RUN"]; got != "3" {
			t.Errorf("EVERY_RUN of the third run = %s, want 3", got)
		}
	})
}

// TestStartLockRecordChanged: a record another instance wrote between two
// runs is read under the lock (the start made from the loop's own is not
// written), the run counts from it, and the run after is fast again.
func TestStartLockRecordChanged(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &fakeSession{}
		f := &fakeExec{took: []time.Duration{time.Second}}
		cfg := sessionConfig(f, s, nil)
		cfg.MaxRuns = 3
		origin := time.Now()
		done := make(chan Exit)
		go func() { done <- Loop(context.Background(), cfg) }()
		time.Sleep(5 * time.Second)
		other := *s.record(t)
		other.Runs, other.Host, other.PID = 10, "web-2", 77
		b, err := state.Encode(&other)
		if err != nil {
			t.Fatal(err)
		}
		s.mu.Lock()
		s.rec = b
		s.mu.Unlock()
		if end := <-done; end.Reason != MaxRuns {
			t.Fatalf("end = %+v", end)
		}
		if s.startSaves != 2 || s.written1 != 1 || len(s.starts) != 2 {
			t.Fatalf("starts saved %d, starts with the lock %d of %d tried; want 2 saved, 1 with the lock of 2", s.startSaves, s.written1, len(s.starts))
		}
		if got := []string{f.calls[1].env["EVERY_RUN"], f.calls[2].env["EVERY_RUN"]}; !slices.Equal(got, []string{"11", "12"}) {
			t.Errorf("EVERY_RUN after the other's record = %v, want [11 12]", got)
		}
		if rec := s.record(t); rec.Runs != 12 || rec.Running || !rec.LastSlot.Equal(origin.Add(20*time.Second)) {
			t.Errorf("record %+v, want 12 runs, the last ended", rec)
		}
	})
}

// TestStartLockManual: a run asked for by hand (SIGUSR1) takes the plain
// path: the lock, the record read, the start written apart.
func TestStartLockManual(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &fakeSession{}
		f := &fakeExec{took: []time.Duration{time.Second}}
		signals := make(chan os.Signal, 1)
		cfg := sessionConfig(f, s, signals)
		cfg.MaxRuns = 2
		done := make(chan Exit)
		go func() { done <- Loop(context.Background(), cfg) }()
		time.Sleep(3 * time.Second)
		signals <- syscall.SIGUSR1
		if end := <-done; end.Reason != MaxRuns {
			t.Fatalf("end = %+v", end)
		}
		if len(s.starts) != 0 || len(s.locks) != 2 || s.startSaves != 2 {
			t.Fatalf("LockStart calls %d, Lock calls %d, starts saved %d; want 0, 2, 2", len(s.starts), len(s.locks), s.startSaves)
		}
	})
}

// TestStartLockBusyWaits: a busy lock with --lock-wait waits for it as
// before (Lock with the wait), and the run takes the plain path.
func TestStartLockBusyWaits(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &fakeSession{}
		f := &fakeExec{took: []time.Duration{time.Second}}
		cfg := sessionConfig(f, s, nil)
		cfg.MaxRuns = 2
		cfg.LockWait = 5 * time.Second
		done := make(chan Exit)
		go func() { done <- Loop(context.Background(), cfg) }()
		time.Sleep(5 * time.Second)
		s.mu.Lock()
		s.busy = true
		s.mu.Unlock()
		if end := <-done; end.Reason != MaxRuns {
			t.Fatalf("end = %+v", end)
		}
		if len(s.starts) != 1 || !slices.Equal(s.locks, []time.Duration{0, 5 * time.Second}) || s.startSaves != 2 {
			t.Fatalf("LockStart calls %d, Lock waits %v, starts saved %d; want 1, [0 5s], 2", len(s.starts), s.locks, s.startSaves)
		}
	})
}

// stopDuringLockStart runs a loop on session s whose first run goes as
// usual; then slow is applied to s, and SIGTERM comes at +12s, while the
// second slot's LockStart is under way. It returns once the loop has.
func stopDuringLockStart(t *testing.T, s *fakeSession, slow func(*fakeSession)) {
	t.Helper()
	f := &fakeExec{took: []time.Duration{time.Second}}
	signals := make(chan os.Signal, 1)
	cfg := sessionConfig(f, s, signals)
	done := make(chan Exit)
	go func() { done <- Loop(context.Background(), cfg) }()
	time.Sleep(5 * time.Second)
	s.mu.Lock()
	slow(s)
	s.mu.Unlock()
	time.Sleep(7 * time.Second)
	signals <- sigterm
	if end := <-done; end.Reason != Stopped || len(f.calls) != 1 {
		t.Fatalf("end = %+v after %d runs; want stopped after 1", end, len(f.calls))
	}
}

// TestStartLockStopUndoes: a stop while LockStart is under way ends the
// loop at once; a start the lock wrote after it is undone (the record as it
// was: no run began) and the lock released.
func TestStartLockStopUndoes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &fakeSession{}
		// The second slot's LockStart lasts till +15s.
		stopDuringLockStart(t, s, func(s *fakeSession) { s.took = 5 * time.Second })
		time.Sleep(10 * time.Second) // past LockStart's end, on the fake clock
		s.mu.Lock()
		written, held := s.written1, s.held
		s.mu.Unlock()
		if rec := s.record(t); written != 1 || held || rec.Runs != 1 || rec.Running {
			t.Fatalf("after the stop: starts with the lock %d, held %v, record %+v; want the start undone, the lock free", written, held, rec)
		}
	})
}

// TestStartLockStopWaitsForUndo: a stop while LockStart is under way gives
// the call stopGrace to undo a start its late answer wrote: the loop
// returns (and every exits) only after the undo, when it comes in time.
func TestStartLockStopWaitsForUndo(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &fakeSession{}
		stopDuringLockStart(t, s, func(s *fakeSession) { s.undoAfter = stopGrace / 4 })
		s.mu.Lock()
		undone := s.undone
		s.mu.Unlock()
		if undone != 1 {
			t.Fatalf("undone %d when the loop returned, want 1: every would exit before its late start is undone", undone)
		}
	})
}

// TestStartFirst: the start goes with the lock only when the loop's own
// record is the one reconcile would run from unchanged.
func TestStartFirst(t *testing.T) {
	anchor := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	slot := anchor.Add(time.Hour)
	own := state.Record{Version: state.Version, Name: "job", Command: []string{"job"}, Schedule: "10s", Anchor: anchor,
		LastSlot: slot.Add(-10 * time.Second), Runs: 5}
	session := &fakeSession{}
	for _, tt := range []struct {
		name   string
		change func(l *loop)
		manual bool
		want   bool
	}{
		{"own record", func(*loop) {}, false, true},
		{"manual", func(*loop) {}, true, false},
		{"first run", func(l *loop) { l.ran = 0 }, false, false},
		{"last write failed", func(l *loop) { l.rec.unsaved = true }, false, false},
		{"reads failing", func(l *loop) { l.outages.stateRead.n = 1 }, false, false},
		{"slot done", func(l *loop) { l.rec.LastSlot = slot }, false, false},
		{"running", func(l *loop) { l.rec.Running = true }, false, false},
		{"other grid", func(l *loop) { l.rec.Anchor = anchor.Add(time.Second) }, false, false},
		{"other schedule", func(l *loop) { l.rec.Schedule = "1m" }, false, false},
		{"store apart", func(l *loop) { l.cfg.Store = &memStore{} }, false, false},
		{"lock without LockStart", func(l *loop) { l.cfg.Lock = &memLock{} }, false, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg := Config{Name: "job", Command: []string{"job"}, Schedule: grid("10s"),
				Lock: session, Store: session, Clock: fixedClock{slot.Add(time.Millisecond)}, Host: "web-1", PID: 42}
			l := &loop{cfg: cfg, time: newTimeline(cfg.Clock, cfg.Schedule), rec: held{Record: own}, ran: 1}
			l.time.setGrid(anchor)
			tt.change(l)
			first := l.startFirst(slot, tt.manual)
			if (first != nil) != tt.want {
				t.Fatalf("start = %+v, want one: %v", first, tt.want)
			}
			if first == nil {
				return
			}
			now, start := first.at, first.rec
			if !now.Equal(slot.Add(time.Millisecond)) || start.Runs != 6 || !start.Running || !start.LastSlot.Equal(slot) ||
				!start.LastRun.Equal(now) || start.Host != "web-1" || start.PID != 42 || !start.Anchor.Equal(anchor) {
				t.Fatalf("start %+v at %v, want run 6 of slot %v at now", start, now, slot)
			}
			if l.rec.Runs != 5 || l.rec.Running {
				t.Fatalf("loop's record changed to %+v before the lock", l.rec)
			}
		})
	}
}

// fixedClock is a Clock whose Now is fixed; it arms nothing.
type fixedClock struct{ now time.Time }

func (c fixedClock) Now() time.Time                         { return c.now }
func (fixedClock) Suspended() time.Duration                 { return 0 }
func (fixedClock) Offset() time.Duration                    { return 0 }
func (fixedClock) Wall(time.Time) (<-chan bool, func())     { return nil, func() {} }
func (fixedClock) Boot(time.Duration) (<-chan bool, func()) { return nil, func() {} }
