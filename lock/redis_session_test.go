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
		Locks:   Redis{Client: c, Key: "every:job:lock", TTL: ttl, Host: "web-1", Where: proxy.Addr},
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
	select {
	case <-lease.Lost():
	case <-time.After(30 * time.Second):
		t.Fatal("lease not lost with the server silent")
	}
	proxy.Thaw()
	if rec, err := s.Load(ctx); err != nil || rec.Runs != 9 {
		t.Fatalf("Load under a lost lease = %+v, %v; want the record read again", rec, err)
	}
}
