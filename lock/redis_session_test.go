package lock

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/everycli/every/internal/redistest"
	"github.com/everycli/every/internal/testutil"
	"github.com/everycli/every/state"
)

// newSession returns a Session on srv through a counting proxy, and the proxy.
func newSession(t *testing.T, srv *redistest.Server, ttl time.Duration) (*Session, *redistest.Proxy) {
	t.Helper()
	// Each session stands for a fresh every process on a fresh server: no
	// script is taken as loaded already (the counts would depend on which
	// tests ran before in this process).
	loaded.Clear()
	proxy := redistest.NewProxy(t, srv.Addr)
	// As fleet.go sets it up (no retry), with timeouts a loaded machine
	// does not trip.
	c := redis.NewClient(&redis.Options{Addr: proxy.Addr, Protocol: 2, DisableIdentity: true, MaxRetries: -1,
		ReadTimeout: 2 * time.Second, WriteTimeout: 2 * time.Second, ContextTimeoutEnabled: true})
	t.Cleanup(func() { c.Close() })
	s := &Session{
		Locks:   Redis{Client: c, Key: "every:job:lock", TTL: ttl, Host: "web-1", Server: proxy.Addr},
		Records: state.Redis{Client: c, Key: "every:job:state", Server: proxy.Addr},
	}
	// The connection's handshake is no part of a run.
	if err := s.Locks.Client.Ping(context.Background()).Err(); err != nil {
		t.Fatal(err)
	}
	proxy.Trips()
	return s, proxy
}

// trips returns the round trips since the last call, EVALSHA shown as EVAL.
func trips(p *redistest.Proxy) []string {
	seq, _ := p.TripNames()
	return seq
}

func record(runs int, running bool, slot time.Time) *state.Record {
	return &state.Record{Version: state.Version, Name: "job", Command: []string{"true"}, Schedule: "1m",
		Anchor: slot.Add(-time.Hour), LastSlot: slot, LastRun: slot, Running: running, Runs: runs}
}

// TestSessionRoundTrips pins the round trips of each kind of slot, as the
// loop makes its calls (runner/slot.go): lock, load, start, end, unlock.
func TestSessionRoundTrips(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	s, proxy := newSession(t, srv, 10*time.Second)
	slot := time.Now().Truncate(time.Minute).UTC()
	if err := s.Records.Save(ctx, record(1, false, slot.Add(-time.Minute))); err != nil {
		t.Fatal(err)
	}
	trips(proxy)

	// A run: the lock with the record, the start, the end with the release.
	lease, err := s.Lock(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := s.Load(ctx)
	if err != nil || rec == nil || rec.Runs != 1 {
		t.Fatalf("Load = %+v, %v; want the record of 1 run", rec, err)
	}
	if err := s.Save(ctx, record(2, true, slot)); err != nil {
		t.Fatal(err)
	}
	if err := s.Save(ctx, record(2, false, slot)); err != nil {
		t.Fatal(err)
	}
	if err := lease.Unlock(); err != nil {
		t.Fatal(err)
	}
	if got, want := trips(proxy), []string{"EVAL", "EVAL", "EVAL"}; !slices.Equal(got, want) {
		t.Fatalf("a run: round trips %v, want %v", got, want)
	}
	if n, err := srv.Client("").Exists(ctx, "every:job:lock").Result(); err != nil || n != 0 {
		t.Fatalf("lock key exists = %d, %v after the run; want it released", n, err)
	}

	// A slot already run (done): the lock with the record, the release.
	lease, err = s.Lock(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if rec, err := s.Load(ctx); err != nil || rec == nil || rec.Runs != 2 || rec.Running || !rec.LastSlot.Equal(slot) {
		t.Fatalf("Load = %+v, %v; want the record of the run just ended", rec, err)
	}
	if err := lease.Unlock(); err != nil {
		t.Fatal(err)
	}
	if got, want := trips(proxy), []string{"EVAL", "EVAL"}; !slices.Equal(got, want) {
		t.Fatalf("a slot done: round trips %v, want %v", got, want)
	}

	// A busy lock: the lock.
	other, _ := newSession(t, srv, 10*time.Second)
	held, err := other.Lock(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Unlock()
	trips(proxy)
	if _, err := s.Lock(ctx, 0); !errors.Is(err, ErrBusy) {
		t.Fatalf("Lock = %v, want busy", err)
	}
	if got, want := trips(proxy), []string{"EVAL"}; !slices.Equal(got, want) {
		t.Fatalf("a busy lock: round trips %v, want %v", got, want)
	}
}

// TestSessionFencesStaleWrites: a holder whose key expired, and whose lock
// another took, cannot write the record over the later holder's, neither the
// start nor the end of its run; and its late Unlock leaves the other's key.
func TestSessionFencesStaleWrites(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	old, _ := newSession(t, srv, 10*time.Second)
	now, _ := newSession(t, srv, 10*time.Second)
	slot := time.Now().Truncate(time.Minute).UTC()

	stale, err := old.Lock(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := old.Load(ctx); err != nil {
		t.Fatal(err)
	}
	if err := old.Save(ctx, record(1, true, slot.Add(-time.Minute))); err != nil {
		t.Fatal(err)
	}
	// The key expires (a partition), and another holder takes the lock.
	if _, err := srv.Do(ctx, "", "DEL", "every:job:lock"); err != nil {
		t.Fatal(err)
	}
	lease, err := now.Lock(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if lease.Token() <= stale.Token() {
		t.Fatalf("tokens %d then %d, want increasing", stale.Token(), lease.Token())
	}
	rec, err := now.Load(ctx)
	if err != nil || rec == nil || !rec.Running || rec.Runs != 1 {
		t.Fatalf("Load = %+v, %v; want the stale holder's start, running", rec, err)
	}
	if err := now.Save(ctx, record(2, true, slot)); err != nil {
		t.Fatal(err)
	}
	// The stale holder's end is refused, whether the key is the other's...
	if err := old.Save(ctx, record(1, false, slot.Add(-time.Minute))); !errors.Is(err, ErrFenced) {
		t.Fatalf("stale Save = %v, want ErrFenced", err)
	}
	// ... or gone (the other released it): the counter is past its token.
	if err := now.Save(ctx, record(2, false, slot)); err != nil {
		t.Fatal(err)
	}
	if err := lease.Unlock(); err != nil {
		t.Fatal(err)
	}
	if err := old.Save(ctx, record(1, true, slot.Add(-time.Minute))); !errors.Is(err, ErrFenced) {
		t.Fatalf("stale Save after the other's release = %v, want ErrFenced", err)
	}
	b, err := srv.Client("").Get(ctx, "every:job:state").Bytes()
	if err != nil {
		t.Fatal(err)
	}
	if got, err := state.Decode(b); err != nil || got.Runs != 2 || got.Running || !got.LastSlot.Equal(slot) {
		t.Fatalf("record %+v, %v; want the later holder's end", got, err)
	}
	// A third holder takes the lock; the stale lease's Unlock leaves it.
	third, err := now.Lock(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer third.Unlock()
	if err := stale.Unlock(); err != nil {
		t.Fatal(err)
	}
	if n, err := srv.Client("").Exists(ctx, "every:job:lock").Result(); err != nil || n != 1 {
		t.Fatalf("lock key exists = %d, %v; want the third holder's kept", n, err)
	}
}

// TestSessionLostLockEndWritten: a holder whose key expired with nobody
// taking it since still writes its end (the run is recorded as lost_lock),
// and that is the release too.
func TestSessionLostLockEndWritten(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	s, proxy := newSession(t, srv, 10*time.Second)
	slot := time.Now().Truncate(time.Minute).UTC()
	lease, err := s.Lock(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Save(ctx, record(1, true, slot)); err != nil {
		t.Fatal(err)
	}
	if _, err := srv.Do(ctx, "", "DEL", "every:job:lock"); err != nil {
		t.Fatal(err)
	}
	end := record(1, false, slot)
	end.LastResult = "lost_lock"
	if err := s.Save(ctx, end); err != nil {
		t.Fatalf("Save of the end after the key expired = %v, want it written", err)
	}
	trips(proxy)
	if err := lease.Unlock(); err != nil {
		t.Fatal(err)
	}
	if got := trips(proxy); len(got) != 0 {
		t.Fatalf("Unlock after the end was written: round trips %v, want none", got)
	}
	b, err := srv.Client("").Get(ctx, "every:job:state").Bytes()
	if err != nil || !strings.Contains(string(b), `"last_result": "lost_lock"`) {
		t.Fatalf("record %s, %v; want lost_lock", b, err)
	}
}

// TestSessionLoadFresh: the record read with the lock is served once, under
// that lease only; a lost lease, a second Load, or Load between runs read
// Redis again.
func TestSessionLoadFresh(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	s, proxy := newSession(t, srv, 10*time.Second)
	slot := time.Now().Truncate(time.Minute).UTC()
	if err := s.Records.Save(ctx, record(1, false, slot)); err != nil {
		t.Fatal(err)
	}
	lease, err := s.Lock(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	// Written behind the lock's back after it was taken: the first Load
	// serves what the lock read; the second reads Redis.
	if err := s.Records.Save(ctx, record(7, false, slot)); err != nil {
		t.Fatal(err)
	}
	trips(proxy)
	if rec, err := s.Load(ctx); err != nil || rec.Runs != 1 {
		t.Fatalf("first Load = %+v, %v; want the record read with the lock", rec, err)
	}
	if got := trips(proxy); len(got) != 0 {
		t.Fatalf("first Load: round trips %v, want none", got)
	}
	if rec, err := s.Load(ctx); err != nil || rec.Runs != 7 {
		t.Fatalf("second Load = %+v, %v; want the record read again", rec, err)
	}
	if err := lease.Unlock(); err != nil {
		t.Fatal(err)
	}
	if rec, err := s.Load(ctx); err != nil || rec.Runs != 7 {
		t.Fatalf("Load between runs = %+v, %v; want the record read again", rec, err)
	}

	// A lease lost before Load: the record is read again. (A short lease
	// for this part only: above, a stall must not lose the lease.)
	s, proxy = newSession(t, srv, 300*time.Millisecond)
	lease, err = s.Lock(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer lease.Unlock()
	if err := s.Records.Save(ctx, record(9, false, slot)); err != nil {
		t.Fatal(err)
	}
	proxy.Freeze()
	if _, ok := testutil.Receive(lease.Lost()); !ok {
		t.Fatal("lease not lost with the server silent")
	}
	proxy.Thaw()
	if rec, err := s.Load(ctx); err != nil || rec.Runs != 9 {
		t.Fatalf("Load under a lost lease = %+v, %v; want the record read again", rec, err)
	}
}

// run is one run as the loop makes its calls with LockStart: the lock with
// the start, or, when it was not written, the record's Load and the start;
// then the end with the release. It returns whether the start went with the
// lock, and the record Load served (nil when not called).
func run(t *testing.T, s *Session, start, end *state.Record) (started bool, loaded *state.Record) {
	t.Helper()
	ctx := context.Background()
	lease, started, err := s.LockStart(ctx, start)
	if err != nil {
		t.Fatal(err)
	}
	if !started {
		if loaded, err = s.Load(ctx); err != nil {
			t.Fatal(err)
		}
		if err := s.Save(ctx, start); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Save(ctx, end); err != nil {
		t.Fatal(err)
	}
	if err := lease.Unlock(); err != nil {
		t.Fatal(err)
	}
	return started, loaded
}

// stored returns the record Redis holds.
func stored(t *testing.T, srv *redistest.Server) *state.Record {
	t.Helper()
	b, err := srv.Client("").Get(context.Background(), "every:job:state").Bytes()
	if err != nil {
		t.Fatal(err)
	}
	rec, err := state.Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

// TestSessionLockStartRoundTrips: a run costs two round trips (the lock
// with the start, the end with the release) once the session has written
// the record that Redis holds; three the first time, and whenever the record
// changed behind its back, which is then read, never overwritten.
func TestSessionLockStartRoundTrips(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	s, proxy := newSession(t, srv, 10*time.Second)
	slot := time.Now().Truncate(time.Minute).UTC()
	if err := s.Records.Save(ctx, record(1, false, slot.Add(-time.Minute))); err != nil {
		t.Fatal(err)
	}
	trips(proxy)

	// The first run: nothing written by this session yet.
	started, loaded := run(t, s, record(2, true, slot), record(2, false, slot))
	if started || loaded == nil || loaded.Runs != 1 {
		t.Fatalf("first run: started %v, loaded %+v; want the record read, the start apart", started, loaded)
	}
	if got, want := trips(proxy), []string{"EVAL", "EVAL", "EVAL"}; !slices.Equal(got, want) {
		t.Fatalf("first run: round trips %v, want %v", got, want)
	}

	// The next ones: the start goes with the lock.
	for runs := 3; runs <= 4; runs++ {
		at := slot.Add(time.Duration(runs) * time.Minute)
		started, _ := run(t, s, record(runs, true, at), record(runs, false, at))
		if !started {
			t.Fatalf("run %d: start not written with the lock", runs)
		}
		if got, want := trips(proxy), []string{"EVAL", "EVAL"}; !slices.Equal(got, want) {
			t.Fatalf("run %d: round trips %v, want %v", runs, got, want)
		}
		if rec := stored(t, srv); rec.Runs != runs || rec.Running {
			t.Fatalf("run %d: record %+v, want its end", runs, rec)
		}
	}
	if n, err := srv.Client("").Exists(ctx, "every:job:lock").Result(); err != nil || n != 0 {
		t.Fatalf("lock key exists = %d, %v after the runs; want it released", n, err)
	}

	// The start written with the lock is what Load serves, should it be
	// called, with no round trip.
	at := slot.Add(5 * time.Minute)
	lease, started, err := s.LockStart(ctx, record(5, true, at))
	if err != nil || !started {
		t.Fatalf("LockStart = %v, %v; want the start written", started, err)
	}
	trips(proxy)
	if rec, err := s.Load(ctx); err != nil || rec == nil || rec.Runs != 5 || !rec.Running {
		t.Fatalf("Load after the start = %+v, %v; want the start", rec, err)
	}
	if got := trips(proxy); len(got) != 0 {
		t.Fatalf("Load after the start: round trips %v, want none", got)
	}
	if err := s.Save(ctx, record(5, false, at)); err != nil {
		t.Fatal(err)
	}
	if err := lease.Unlock(); err != nil {
		t.Fatal(err)
	}
	trips(proxy)

	// Another host ran meanwhile: its record is read, not overwritten by
	// the start made from this session's own.
	if err := s.Records.Client.Set(ctx, "every:job:state", mustEncode(t, record(9, false, at)), 0).Err(); err != nil {
		t.Fatal(err)
	}
	trips(proxy)
	lease, started, err = s.LockStart(ctx, record(6, true, at.Add(time.Minute)))
	if err != nil || started {
		t.Fatalf("LockStart after another's write = %v, %v; want the lock only", started, err)
	}
	if rec := stored(t, srv); rec.Runs != 9 {
		t.Fatalf("record %+v after LockStart; want the other host's, kept", rec)
	}
	if rec, err := s.Load(ctx); err != nil || rec == nil || rec.Runs != 9 {
		t.Fatalf("Load = %+v, %v; want the other host's record", rec, err)
	}
	if err := s.Save(ctx, record(10, true, at.Add(time.Minute))); err != nil {
		t.Fatal(err)
	}
	if err := s.Save(ctx, record(10, false, at.Add(time.Minute))); err != nil {
		t.Fatal(err)
	}
	if err := lease.Unlock(); err != nil {
		t.Fatal(err)
	}
	if got, want := trips(proxy), []string{"EVAL", "EVAL", "EVAL"}; !slices.Equal(got, want) {
		t.Fatalf("a run after another's write: round trips %v, want %v", got, want)
	}
	// And the one after that is its own again.
	if started, _ := run(t, s, record(11, true, at.Add(2*time.Minute)), record(11, false, at.Add(2*time.Minute))); !started {
		t.Fatal("run after the record was this session's again: start not written with the lock")
	}

	// A busy lock: the lock only, nothing written.
	other, _ := newSession(t, srv, 10*time.Second)
	held, err := other.Lock(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Unlock()
	trips(proxy)
	if _, _, err := s.LockStart(ctx, record(12, true, at.Add(3*time.Minute))); !errors.Is(err, ErrBusy) {
		t.Fatalf("LockStart = %v, want busy", err)
	}
	if got, want := trips(proxy), []string{"EVAL"}; !slices.Equal(got, want) {
		t.Fatalf("a busy lock: round trips %v, want %v", got, want)
	}
	if rec := stored(t, srv); rec.Runs != 11 || rec.Running {
		t.Fatalf("record %+v after a busy LockStart; want the last run's end", rec)
	}
}

func mustEncode(t *testing.T, rec *state.Record) []byte {
	t.Helper()
	b, err := state.Encode(rec)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestSessionLockStartAfterRefusal: a write Redis refused (fenced: another
// took the lock meanwhile) leaves the session not knowing what Redis holds:
// the next run reads the record, even if it is still the session's start.
func TestSessionLockStartAfterRefusal(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	s, _ := newSession(t, srv, 10*time.Second)
	other, _ := newSession(t, srv, 10*time.Second)
	slot := time.Now().Truncate(time.Minute).UTC()
	run(t, s, record(1, true, slot), record(1, false, slot))

	lease, started, err := s.LockStart(ctx, record(2, true, slot.Add(time.Minute)))
	if err != nil || !started {
		t.Fatalf("LockStart = %v, %v; want the start written", started, err)
	}
	// The key expires (a partition); another holder takes the lock and
	// lets it go without writing.
	if _, err := srv.Do(ctx, "", "DEL", "every:job:lock"); err != nil {
		t.Fatal(err)
	}
	held, err := other.Lock(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := held.Unlock(); err != nil {
		t.Fatal(err)
	}
	if err := s.Save(ctx, record(2, false, slot.Add(time.Minute))); !errors.Is(err, ErrFenced) {
		t.Fatalf("stale end = %v, want ErrFenced", err)
	}
	if err := lease.Unlock(); err != nil {
		t.Fatal(err)
	}
	// Redis still holds the session's start; the refusal says nothing of
	// what it holds, so the next run reads it (a run cut short).
	started, loaded := run(t, s, record(2, true, slot.Add(2*time.Minute)), record(2, false, slot.Add(2*time.Minute)))
	if started || loaded == nil || !loaded.Running || loaded.Runs != 2 {
		t.Fatalf("run after a refusal: started %v, loaded %+v; want the start left running read", started, loaded)
	}
}

// TestSessionLockStartAfterLostAnswer: a write whose answer never came
// (the server silent past the call's deadline) leaves the session not
// knowing what Redis holds, even if the write landed after all: the next run
// reads the record.
func TestSessionLockStartAfterLostAnswer(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	s, proxy := newSession(t, srv, 10*time.Second)
	slot := time.Now().Truncate(time.Minute).UTC()
	run(t, s, record(1, true, slot), record(1, false, slot))

	lease, started, err := s.LockStart(ctx, record(2, true, slot.Add(time.Minute)))
	if err != nil || !started {
		t.Fatalf("LockStart = %v, %v; want the start written", started, err)
	}
	proxy.Freeze()
	sctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	err = s.Save(sctx, record(2, false, slot.Add(time.Minute)))
	cancel()
	if err == nil {
		t.Fatal("Save through a frozen proxy succeeded")
	}
	proxy.Thaw()
	// The held write lands now.
	if !testutil.Eventually(func() bool { return !stored(t, srv).Running }) {
		t.Fatal("the held end never landed")
	}
	if err := lease.Unlock(); err != nil {
		t.Fatal(err)
	}
	started, loaded := run(t, s, record(3, true, slot.Add(2*time.Minute)), record(3, false, slot.Add(2*time.Minute)))
	if started || loaded == nil || loaded.Runs != 2 || loaded.Running {
		t.Fatalf("run after a lost answer: started %v, loaded %+v; want the record read", started, loaded)
	}
	if started, _ := run(t, s, record(4, true, slot.Add(3*time.Minute)), record(4, false, slot.Add(3*time.Minute))); !started {
		t.Fatal("run after a confirmed write: start not written with the lock")
	}
}

// TestSessionLockStartAbandoned: a LockStart that stops waiting (its
// context ends) before the answer comes leaves no run on record that never
// ran: when the answer comes, within the client's timeouts, the start it
// wrote is undone (the record as it was) and the key released, before
// LockStart returns, so that a stopping every can wait for it.
func TestSessionLockStartAbandoned(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	s, proxy := newSession(t, srv, 10*time.Second)
	slot := time.Now().Truncate(time.Minute).UTC()
	run(t, s, record(1, true, slot), record(1, false, slot))
	c := srv.Client("")
	before, err := c.Get(ctx, "every:job:state").Result()
	if err != nil {
		t.Fatal(err)
	}
	fence, err := c.Get(ctx, "every:job:lock:fence").Int64()
	if err != nil {
		t.Fatal(err)
	}

	proxy.Freeze()
	lctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	type result struct {
		started bool
		err     error
	}
	done := make(chan result, 1)
	go func() {
		_, started, err := s.LockStart(lctx, record(2, true, slot.Add(time.Minute)))
		done <- result{started, err}
	}()
	<-lctx.Done()
	// The script is held until now: it runs (the fencing counter moves),
	// and its answer is undone.
	proxy.Thaw()
	r, ok := testutil.Receive(done)
	if !ok {
		t.Fatal("LockStart did not return")
	}
	if r.started || r.err == nil {
		t.Fatalf("LockStart = %v, %v; want an error (its context ended)", r.started, r.err)
	}
	f, _ := c.Get(ctx, "every:job:lock:fence").Int64()
	n, _ := c.Exists(ctx, "every:job:lock").Result()
	b, _ := c.Get(ctx, "every:job:state").Result()
	if f <= fence || n != 0 || b != before {
		t.Fatalf("when LockStart returned: fence %d (was %d), lock key exists %d, record %s; want the start undone and the key released", f, fence, n, b)
	}
}

// TestSessionUndoLate: the undo of a LockStart whose answer went unused
// puts the record back and releases the key only while the key holds the
// lease's value; the record only if it holds the start.
func TestSessionUndoLate(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	s, _ := newSession(t, srv, 10*time.Second)
	c := srv.Client("")
	for _, tc := range []struct {
		name, key, record string
		wantKey, wantRec  string
	}{
		{"ours, start written", "v1", "start", "", "prev"},
		{"ours, start not written", "v1", "other", "", "other"},
		{"taken by another since", "v2", "start", "v2", "start"},
		{"gone", "", "start", "", "start"},
	} {
		c.Del(ctx, "every:job:lock")
		if tc.key != "" {
			c.Set(ctx, "every:job:lock", tc.key, 0)
		}
		c.Set(ctx, "every:job:state", tc.record, 0)
		s.undoLate(ctx, "v1", []byte("start"), []byte("prev"))
		key, _ := c.Get(ctx, "every:job:lock").Result()
		rec, _ := c.Get(ctx, "every:job:state").Result()
		if key != tc.wantKey || rec != tc.wantRec {
			t.Errorf("%s: key %q, record %q; want %q, %q", tc.name, key, rec, tc.wantKey, tc.wantRec)
		}
	}
}
