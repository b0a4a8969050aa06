package lock

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/everycli/every/internal/redistest"
	"github.com/everycli/every/internal/testutil"
)

// newRedisSession returns a RedisSession on srv through a counting proxy,
// and the proxy.
func newRedisSession(t *testing.T, srv *redistest.Server, ttl time.Duration) (*RedisSession, *redistest.Proxy) {
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
	s := &RedisSession{
		Redis:     Redis{Client: c, Key: "every:job:lock", TTL: ttl, Host: "web-1", Server: proxy.Addr},
		RecordKey: "every:job:state",
		RecordMax: 1 << 20,
	}
	// The connection's handshake is no part of a run.
	if err := s.Client.Ping(context.Background()).Err(); err != nil {
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

// fakeRecord stands for the job's record: to a RedisSession, bytes it never
// looks inside (internal/fleet pairs it with state's records).
type fakeRecord struct {
	Runs       int       `json:"runs"`
	Running    bool      `json:"running"`
	LastSlot   time.Time `json:"last_slot"`
	LastResult string    `json:"last_result,omitempty"`
	Host       string    `json:"host,omitempty"`
}

func record(runs int, running bool, slot time.Time) *fakeRecord {
	return &fakeRecord{Runs: runs, Running: running, LastSlot: slot}
}

// bytes is the record as the store keeps it.
func (r *fakeRecord) bytes() []byte {
	b, _ := json.Marshal(r)
	return append(b, '\n')
}

// parse reads a record the store kept: nil for none.
func parse(b []byte) (*fakeRecord, error) {
	if len(b) == 0 {
		return nil, nil
	}
	var r fakeRecord
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// load is a Load of the job's store (internal/fleet's session): the record
// read with the lock, else the record read from Redis.
func load(ctx context.Context, s *RedisSession) (*fakeRecord, error) {
	if b, ok := s.Record(); ok {
		return parse(b)
	}
	b, err := s.Client.GetRange(ctx, s.RecordKey, 0, int64(s.RecordMax)).Bytes()
	if err != nil {
		return nil, err
	}
	return parse(b)
}

// save is a Save of the job's store: fenced under a lease, else a write
// as a store without a lock makes (put).
func save(ctx context.Context, s *RedisSession, r *fakeRecord) error {
	leased, err := s.WriteRecord(ctx, r.bytes(), r.Running)
	if leased {
		return err
	}
	return put(ctx, s, r)
}

// put writes the record as a store without a lock does, whatever lease
// the session holds.
func put(ctx context.Context, s *RedisSession, r *fakeRecord) error {
	return s.Client.Set(ctx, s.RecordKey, r.bytes(), 0).Err()
}

// TestRedisSessionRoundTrips pins the round trips of each kind of slot, as the
// loop makes its calls (runner/slot.go): lock, load, start, end, unlock.
func TestRedisSessionRoundTrips(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	s, proxy := newRedisSession(t, srv, 10*time.Second)
	slot := time.Now().Truncate(time.Minute).UTC()
	if err := put(ctx, s, record(1, false, slot.Add(-time.Minute))); err != nil {
		t.Fatal(err)
	}
	trips(proxy)

	// A run: the lock with the record, the start, the end with the release.
	lease, err := s.Lock(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := load(ctx, s)
	if err != nil || rec == nil || rec.Runs != 1 {
		t.Fatalf("Load = %+v, %v; want the record of 1 run", rec, err)
	}
	if err := save(ctx, s, record(2, true, slot)); err != nil {
		t.Fatal(err)
	}
	if err := save(ctx, s, record(2, false, slot)); err != nil {
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
	if rec, err := load(ctx, s); err != nil || rec == nil || rec.Runs != 2 || rec.Running || !rec.LastSlot.Equal(slot) {
		t.Fatalf("Load = %+v, %v; want the record of the run just ended", rec, err)
	}
	if err := lease.Unlock(); err != nil {
		t.Fatal(err)
	}
	if got, want := trips(proxy), []string{"EVAL", "EVAL"}; !slices.Equal(got, want) {
		t.Fatalf("a slot done: round trips %v, want %v", got, want)
	}

	// A busy lock: the lock.
	other, _ := newRedisSession(t, srv, 10*time.Second)
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

// TestRedisSessionFencesStaleWrites: a holder whose key expired, and whose lock
// another took, cannot write the record over the later holder's, neither the
// start nor the end of its run; and its late Unlock leaves the other's key.
func TestRedisSessionFencesStaleWrites(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	old, _ := newRedisSession(t, srv, 10*time.Second)
	now, _ := newRedisSession(t, srv, 10*time.Second)
	slot := time.Now().Truncate(time.Minute).UTC()

	stale, err := old.Lock(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := load(ctx, old); err != nil {
		t.Fatal(err)
	}
	if err := save(ctx, old, record(1, true, slot.Add(-time.Minute))); err != nil {
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
	rec, err := load(ctx, now)
	if err != nil || rec == nil || !rec.Running || rec.Runs != 1 {
		t.Fatalf("Load = %+v, %v; want the stale holder's start, running", rec, err)
	}
	if err := save(ctx, now, record(2, true, slot)); err != nil {
		t.Fatal(err)
	}
	// The stale holder's end is refused, whether the key is the other's...
	if err := save(ctx, old, record(1, false, slot.Add(-time.Minute))); !errors.Is(err, ErrFenced) {
		t.Fatalf("stale Save = %v, want ErrFenced", err)
	}
	// ... or gone (the other released it): the counter is past its token.
	if err := save(ctx, now, record(2, false, slot)); err != nil {
		t.Fatal(err)
	}
	if err := lease.Unlock(); err != nil {
		t.Fatal(err)
	}
	if err := save(ctx, old, record(1, true, slot.Add(-time.Minute))); !errors.Is(err, ErrFenced) {
		t.Fatalf("stale Save after the other's release = %v, want ErrFenced", err)
	}
	b, err := srv.Client("").Get(ctx, "every:job:state").Bytes()
	if err != nil {
		t.Fatal(err)
	}
	if got, err := parse(b); err != nil || got.Runs != 2 || got.Running || !got.LastSlot.Equal(slot) {
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

// TestRedisSessionLostLockEndWritten: a holder whose key expired with nobody
// taking it since still writes its end (the run is recorded as lost_lock),
// and that is the release too.
func TestRedisSessionLostLockEndWritten(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	s, proxy := newRedisSession(t, srv, 10*time.Second)
	slot := time.Now().Truncate(time.Minute).UTC()
	lease, err := s.Lock(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := save(ctx, s, record(1, true, slot)); err != nil {
		t.Fatal(err)
	}
	if _, err := srv.Do(ctx, "", "DEL", "every:job:lock"); err != nil {
		t.Fatal(err)
	}
	end := record(1, false, slot)
	end.LastResult = "lost_lock"
	if err := save(ctx, s, end); err != nil {
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
	if got, perr := parse(b); err != nil || perr != nil || got.LastResult != "lost_lock" {
		t.Fatalf("record %s, %v; want lost_lock", b, err)
	}
}

// TestRedisSessionLoadFresh: the record read with the lock is served once,
// under that lease only; a lost lease, a second Load, or Load between runs
// read Redis again.
func TestRedisSessionLoadFresh(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	s, proxy := newRedisSession(t, srv, 10*time.Second)
	slot := time.Now().Truncate(time.Minute).UTC()
	if err := put(ctx, s, record(1, false, slot)); err != nil {
		t.Fatal(err)
	}
	lease, err := s.Lock(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	// Written behind the lock's back after it was taken: the first Load
	// serves what the lock read; the second reads Redis.
	if err := put(ctx, s, record(7, false, slot)); err != nil {
		t.Fatal(err)
	}
	trips(proxy)
	if rec, err := load(ctx, s); err != nil || rec.Runs != 1 {
		t.Fatalf("first Load = %+v, %v; want the record read with the lock", rec, err)
	}
	if got := trips(proxy); len(got) != 0 {
		t.Fatalf("first Load: round trips %v, want none", got)
	}
	if rec, err := load(ctx, s); err != nil || rec.Runs != 7 {
		t.Fatalf("second Load = %+v, %v; want the record read again", rec, err)
	}
	if err := lease.Unlock(); err != nil {
		t.Fatal(err)
	}
	if rec, err := load(ctx, s); err != nil || rec.Runs != 7 {
		t.Fatalf("Load between runs = %+v, %v; want the record read again", rec, err)
	}

	// A lease lost before Load: the record is read again. (A short lease
	// for this part only: above, a stall must not lose the lease.)
	s, proxy = newRedisSession(t, srv, 300*time.Millisecond)
	lease, err = s.Lock(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer lease.Unlock()
	if err := put(ctx, s, record(9, false, slot)); err != nil {
		t.Fatal(err)
	}
	proxy.Freeze()
	if _, ok := testutil.Receive(lease.Lost()); !ok {
		t.Fatal("lease not lost with the server silent")
	}
	proxy.Thaw()
	if rec, err := load(ctx, s); err != nil || rec.Runs != 9 {
		t.Fatalf("Load under a lost lease = %+v, %v; want the record read again", rec, err)
	}
}

// run is one run as the loop makes its calls with LockStart: the lock with
// the start, or, when it was not written, the record's Load and the start;
// then the end with the release. It returns whether the start went with the
// lock, and the record Load served (nil when not called).
func run(t *testing.T, s *RedisSession, start, end *fakeRecord) (started bool, loaded *fakeRecord) {
	t.Helper()
	ctx := context.Background()
	lease, started, err := s.LockStart(ctx, start.bytes())
	if err != nil {
		t.Fatal(err)
	}
	if !started {
		if loaded, err = load(ctx, s); err != nil {
			t.Fatal(err)
		}
		if err := save(ctx, s, start); err != nil {
			t.Fatal(err)
		}
	}
	if err := save(ctx, s, end); err != nil {
		t.Fatal(err)
	}
	if err := lease.Unlock(); err != nil {
		t.Fatal(err)
	}
	return started, loaded
}

// stored returns the record Redis holds.
func stored(t *testing.T, srv *redistest.Server) *fakeRecord {
	t.Helper()
	b, err := srv.Client("").Get(context.Background(), "every:job:state").Bytes()
	if err != nil {
		t.Fatal(err)
	}
	rec, err := parse(b)
	if err != nil || rec == nil {
		t.Fatalf("record %q: %v", b, err)
	}
	return rec
}

// TestRedisSessionLockStartRoundTrips: a run costs two round trips (the lock
// with the start, the end with the release) once the session has written
// the record that Redis holds; three the first time, and whenever the record
// changed behind its back, which is then read, never overwritten.
func TestRedisSessionLockStartRoundTrips(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	s, proxy := newRedisSession(t, srv, 10*time.Second)
	slot := time.Now().Truncate(time.Minute).UTC()
	if err := put(ctx, s, record(1, false, slot.Add(-time.Minute))); err != nil {
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
	lease, started, err := s.LockStart(ctx, record(5, true, at).bytes())
	if err != nil || !started {
		t.Fatalf("LockStart = %v, %v; want the start written", started, err)
	}
	trips(proxy)
	if rec, err := load(ctx, s); err != nil || rec == nil || rec.Runs != 5 || !rec.Running {
		t.Fatalf("Load after the start = %+v, %v; want the start", rec, err)
	}
	if got := trips(proxy); len(got) != 0 {
		t.Fatalf("Load after the start: round trips %v, want none", got)
	}
	if err := save(ctx, s, record(5, false, at)); err != nil {
		t.Fatal(err)
	}
	if err := lease.Unlock(); err != nil {
		t.Fatal(err)
	}
	trips(proxy)

	// Another host ran meanwhile: its record is read, not overwritten by
	// the start made from this session's own.
	if err := s.Client.Set(ctx, "every:job:state", record(9, false, at).bytes(), 0).Err(); err != nil {
		t.Fatal(err)
	}
	trips(proxy)
	lease, started, err = s.LockStart(ctx, record(6, true, at.Add(time.Minute)).bytes())
	if err != nil || started {
		t.Fatalf("LockStart after another's write = %v, %v; want the lock only", started, err)
	}
	if rec := stored(t, srv); rec.Runs != 9 {
		t.Fatalf("record %+v after LockStart; want the other host's, kept", rec)
	}
	if rec, err := load(ctx, s); err != nil || rec == nil || rec.Runs != 9 {
		t.Fatalf("Load = %+v, %v; want the other host's record", rec, err)
	}
	if err := save(ctx, s, record(10, true, at.Add(time.Minute))); err != nil {
		t.Fatal(err)
	}
	if err := save(ctx, s, record(10, false, at.Add(time.Minute))); err != nil {
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
	other, _ := newRedisSession(t, srv, 10*time.Second)
	held, err := other.Lock(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Unlock()
	trips(proxy)
	if _, _, err := s.LockStart(ctx, record(12, true, at.Add(3*time.Minute)).bytes()); !errors.Is(err, ErrBusy) {
		t.Fatalf("LockStart = %v, want busy", err)
	}
	if got, want := trips(proxy), []string{"EVAL"}; !slices.Equal(got, want) {
		t.Fatalf("a busy lock: round trips %v, want %v", got, want)
	}
	if rec := stored(t, srv); rec.Runs != 11 || rec.Running {
		t.Fatalf("record %+v after a busy LockStart; want the last run's end", rec)
	}
}

// TestRedisSessionLockStartAfterRefusal: a write Redis refused (fenced: another
// took the lock meanwhile) leaves the session not knowing what Redis holds:
// the next run reads the record, even if it is still the session's start.
func TestRedisSessionLockStartAfterRefusal(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	s, _ := newRedisSession(t, srv, 10*time.Second)
	other, _ := newRedisSession(t, srv, 10*time.Second)
	slot := time.Now().Truncate(time.Minute).UTC()
	run(t, s, record(1, true, slot), record(1, false, slot))

	lease, started, err := s.LockStart(ctx, record(2, true, slot.Add(time.Minute)).bytes())
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
	if err := save(ctx, s, record(2, false, slot.Add(time.Minute))); !errors.Is(err, ErrFenced) {
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

// TestRedisSessionLockStartAfterLostAnswer: a write whose answer never came
// (the server silent past the call's deadline) leaves the session not
// knowing what Redis holds, even if the write landed after all: the next run
// reads the record.
func TestRedisSessionLockStartAfterLostAnswer(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	s, proxy := newRedisSession(t, srv, 10*time.Second)
	slot := time.Now().Truncate(time.Minute).UTC()
	run(t, s, record(1, true, slot), record(1, false, slot))

	lease, started, err := s.LockStart(ctx, record(2, true, slot.Add(time.Minute)).bytes())
	if err != nil || !started {
		t.Fatalf("LockStart = %v, %v; want the start written", started, err)
	}
	proxy.Freeze()
	sctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	err = save(sctx, s, record(2, false, slot.Add(time.Minute)))
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

// TestRedisSessionLockStartAbandoned: a LockStart that stops waiting (its
// context ends) before the answer comes leaves no run on record that never
// ran: when the answer comes, within the client's timeouts, the start it
// wrote is undone (the record as it was) and the key released, before
// LockStart returns, so that a stopping every can wait for it.
func TestRedisSessionLockStartAbandoned(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	s, proxy := newRedisSession(t, srv, 10*time.Second)
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
		_, started, err := s.LockStart(lctx, record(2, true, slot.Add(time.Minute)).bytes())
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

// TestRedisSessionUndoLate: the undo of a LockStart whose answer went unused
// puts the record back and releases the key only while the key holds the
// lease's value; the record only if it holds the start.
func TestRedisSessionUndoLate(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	s, _ := newRedisSession(t, srv, 10*time.Second)
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
