package lock

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/everycli/every/internal/etcd"
	"github.com/everycli/every/internal/etcdtest"
	"github.com/everycli/every/internal/redistest"
	"github.com/everycli/every/internal/testutil"
)

func TestEtcdTTL(t *testing.T) {
	for _, c := range []struct{ in, want time.Duration }{
		{200 * time.Millisecond, 2 * time.Second},
		{2 * time.Second, 2 * time.Second},
		{2001 * time.Millisecond, 3 * time.Second},
		{30 * time.Second, 30 * time.Second},
		{90500 * time.Millisecond, 91 * time.Second},
	} {
		if got := EtcdTTL(c.in); got != c.want {
			t.Errorf("EtcdTTL(%v) = %v, want %v", c.in, got, c.want)
		}
	}
}

// etcdLock is a lock (and record) on srv for job name.
func etcdLock(t *testing.T, c *etcd.Client, name string) *Etcd {
	return &Etcd{Client: c, Key: "every/" + name + "/lock", TTL: 2 * time.Second, Host: "h1", Server: "etcd://test",
		RecordKey: "every/" + name + "/state"}
}

// etcdLoad is a Load of the job's store (internal/fleet's session): the
// record read with the lock, else the record read from etcd.
func etcdLoad(ctx context.Context, e *Etcd) (*fakeRecord, error) {
	if b, ok := e.Record(); ok {
		return parse(b)
	}
	r, err := e.Client.Range(ctx, []byte(e.RecordKey), nil, 1)
	if err != nil || len(r.KVs) == 0 {
		return nil, err
	}
	return parse(r.KVs[0].Value)
}

// etcdSave is a Save of the job's store: fenced under a lease, else a
// write as a store without a lock makes.
func etcdSave(ctx context.Context, e *Etcd, r *fakeRecord) error {
	leased, err := e.WriteRecord(ctx, r.bytes(), r.Running)
	if leased {
		return err
	}
	return e.Client.Put(ctx, []byte(e.RecordKey), r.bytes())
}

func TestEtcdLockBusyFencingRelease(t *testing.T) {
	srv := etcdtest.Start(t)
	c := srv.Client("")
	a, b := etcdLock(t, c, "j"), etcdLock(t, c, "j")
	ctx := context.Background()
	var last int64
	for i := range 3 {
		la, err := a.Lock(ctx, 0)
		if err != nil {
			t.Fatalf("lock %d: %v", i, err)
		}
		if la.Token() <= last {
			t.Fatalf("fencing token %d after %d: not increasing", la.Token(), last)
		}
		last = la.Token()
		_, err = b.Lock(ctx, 100*time.Millisecond)
		var busy *BusyError
		if !errors.As(err, &busy) || busy.Holder.Host != "h1" {
			t.Fatalf("second lock while held: %v, want busy, held by h1", err)
		}
		if err := la.Unlock(); err != nil {
			t.Fatalf("unlock: %v", err)
		}
	}
	lb, err := b.Lock(ctx, 0)
	if err != nil {
		t.Fatalf("lock after release: %v", err)
	}
	if lb.Token() <= last {
		t.Fatalf("fencing token %d after %d", lb.Token(), last)
	}
	_ = lb.Unlock()
}

// A lease kept alive outlives its TTL; a lock key deleted, or a lease
// revoked, while the run lasts is a lost lock, at once.
func TestEtcdLeaseKeptAndLost(t *testing.T) {
	srv := etcdtest.Start(t)
	c := srv.Client("")
	ctx := context.Background()
	for _, cut := range []string{"delete", "revoke"} {
		t.Run(cut, func(t *testing.T) {
			e := etcdLock(t, c, "cut-"+cut)
			l, err := e.Lock(ctx, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer l.Unlock()
			// Kept alive past its TTL (2s).
			select {
			case <-l.Lost():
				t.Fatal("lease lost while kept alive")
			case <-time.After(3 * time.Second):
			}
			switch cut {
			case "delete":
				if err := c.Delete(ctx, []byte(e.Key)); err != nil {
					t.Fatal(err)
				}
			case "revoke":
				if err := c.Revoke(ctx, e.held.id); err != nil {
					t.Fatal(err)
				}
			}
			cutAt := time.Now()
			for _, ch := range []<-chan struct{}{l.Lost(), l.Expiring()} {
				if _, ok := testutil.Receive(ch); !ok {
					t.Fatal("lease not lost after its key was cut")
				}
			}
			// Found at the next keep-alive (a third of the TTL), long
			// before the lease's clock would have run out.
			if d := time.Since(cutAt); d > e.TTL*2/3 {
				t.Errorf("lost %v after the cut, want within a keep-alive period", d)
			}
		})
	}
}

// A holder whose lease ended cannot overwrite the record of the holder
// after it; while it holds the lock, its writes go.
func TestEtcdStaleWriteRefused(t *testing.T) {
	srv := etcdtest.Start(t)
	c := srv.Client("")
	ctx := context.Background()
	a, b := etcdLock(t, c, "j"), etcdLock(t, c, "j")
	la, err := a.Lock(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	rec := &fakeRecord{LastSlot: time.Now(), Runs: 1, Host: "a"}
	if err := etcdSave(ctx, a, rec); err != nil {
		t.Fatalf("save under the lock: %v", err)
	}
	// A's lease ends (as when it expires in a partition) and B takes the lock.
	if err := c.Revoke(ctx, a.held.id); err != nil {
		t.Fatal(err)
	}
	lb, err := b.Lock(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	got, err := etcdLoad(ctx, b)
	if err != nil || got == nil || got.Host != "a" {
		t.Fatalf("B loads %+v, %v; want A's record", got, err)
	}
	recB := *rec
	recB.Host, recB.Runs = "b", 2
	if err := etcdSave(ctx, b, &recB); err != nil {
		t.Fatalf("B's save: %v", err)
	}
	stale := *rec
	stale.Runs = 99
	if err := etcdSave(ctx, a, &stale); !errors.Is(err, ErrFenced) {
		t.Fatalf("A's late save = %v, want ErrFenced", err)
	}
	// Still refused once B released: B wrote the record since A saw it.
	_ = lb.Unlock()
	if err := etcdSave(ctx, a, &stale); !errors.Is(err, ErrFenced) {
		t.Fatalf("A's late save after B's release = %v, want ErrFenced", err)
	}
	got, err = etcdLoad(ctx, b) // after its Unlock: read from etcd
	if err != nil || got.Host != "b" || got.Runs != 2 {
		t.Fatalf("record %+v, %v; want B's", got, err)
	}
	_ = la.Unlock()
}

// A holder whose key vanished, with nobody taking the lock since, still
// writes its run's end (lost_lock must be recorded).
func TestEtcdWriteAfterKeyGone(t *testing.T) {
	srv := etcdtest.Start(t)
	c := srv.Client("")
	ctx := context.Background()
	a := etcdLock(t, c, "j")
	la, err := a.Lock(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer la.Unlock()
	rec := &fakeRecord{LastSlot: time.Now(), Running: true}
	if err := etcdSave(ctx, a, rec); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete(ctx, []byte(a.Key)); err != nil {
		t.Fatal(err)
	}
	rec.Running, rec.LastResult = false, "lost_lock"
	if err := etcdSave(ctx, a, rec); err != nil {
		t.Fatalf("end of the run after the key vanished: %v", err)
	}
}

// With the cluster unreachable, Lock fails as a store error, quickly:
// refused at once, silent within the client's timeout, and at once when
// its context ends. "At once" is against a client timeout of 10s, so that
// the bounds are far from both the figure (milliseconds) and the bug's (the
// timeout), and a loaded machine meets them (300ms against 500ms did not
// always).
func TestEtcdUnreachable(t *testing.T) {
	for _, c := range []struct {
		name    string
		addr    func(t *testing.T) string
		timeout time.Duration
		bound   time.Duration
	}{
		{"refused", func(t *testing.T) string { return redistest.RefusedAddr(t) }, 10 * time.Second, 5 * time.Second},
		// Ended by the client's timeout, 500ms: bounded, not stalled.
		{"silent", func(t *testing.T) string { return redistest.NewBlackHole(t).Addr }, 500 * time.Millisecond, 5 * time.Second},
	} {
		t.Run(c.name, func(t *testing.T) {
			addr := c.addr(t)
			cl := etcd.New(etcd.Config{Endpoints: []string{addr}, Timeout: c.timeout})
			e := etcdLock(t, cl, "j")
			start := time.Now()
			_, err := e.Lock(context.Background(), 0)
			if !errors.Is(err, ErrStore) || !errors.Is(err, etcd.ErrUnreachable) {
				t.Fatalf("lock = %v, want a store error", err)
			}
			d := time.Since(start)
			t.Logf("lock failed after %v (client timeout %v)", d, c.timeout)
			if d > c.bound {
				t.Errorf("took %v, want under %v", d, c.bound)
			}
			cl = etcd.New(etcd.Config{Endpoints: []string{addr}, Timeout: 10 * time.Second})
			e = etcdLock(t, cl, "j")
			ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
			defer cancel()
			start = time.Now()
			if _, err := e.Lock(ctx, 0); !errors.Is(err, ErrStore) {
				t.Fatalf("lock = %v, want a store error", err)
			}
			d = time.Since(start)
			t.Logf("a lock cancelled at 50ms failed after %v (client timeout 10s)", d)
			if d > 5*time.Second {
				t.Errorf("a cancelled lock took %v, want at once, not at the client's timeout of 10s", d)
			}
		})
	}
}

// The second endpoint answers when the first does not.
func TestEtcdFailover(t *testing.T) {
	srv := etcdtest.Start(t)
	cl := etcd.New(etcd.Config{Endpoints: []string{redistest.RefusedAddr(t), srv.Addr}, Timeout: 500 * time.Millisecond})
	e := etcdLock(t, cl, "j")
	l, err := e.Lock(context.Background(), 0)
	if err != nil {
		t.Fatalf("lock through the second endpoint: %v", err)
	}
	_ = l.Unlock()
}

// A release that failed (the cluster down) is tried again: once the cluster
// is back, the lock is free long before its lease's TTL would have freed it.
func TestEtcdReleaseRetried(t *testing.T) {
	srv := etcdtest.Start(t)
	c := etcd.New(etcd.Config{Endpoints: []string{srv.Addr}, Timeout: 500 * time.Millisecond})
	a, b := etcdLock(t, c, "j"), etcdLock(t, c, "j")
	a.TTL, b.TTL = 20*time.Second, 20*time.Second
	ctx := context.Background()
	la, err := a.Lock(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	srv.Stop()
	if err := la.Unlock(); !errors.Is(err, ErrStore) {
		t.Fatalf("unlock with the cluster down = %v, want a store error", err)
	}
	srv.Restart()
	start := time.Now()
	lb, err := b.Lock(ctx, 10*time.Second)
	if err != nil {
		t.Fatalf("lock after the cluster came back: %v (after %v)", err, time.Since(start))
	}
	_ = lb.Unlock()
}
