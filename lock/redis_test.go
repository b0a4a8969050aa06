package lock

import (
	"context"
	"errors"
	"sort"
	"testing"
	"time"

	"github.com/everycli/every/internal/redistest"
)

func newRedisLock(t *testing.T, ttl time.Duration) (Redis, *redistest.Server) {
	srv := redistest.Start(t)
	return Redis{Client: srv.Client(""), Key: "every:job:lock", TTL: ttl, Host: "web-1", Where: srv.Addr}, srv
}

func TestRedisLockExcludesAndFences(t *testing.T) {
	r, _ := newRedisLock(t, 10*time.Second)
	ctx := context.Background()
	var tokens []int64
	for range 5 {
		lease, err := r.Lock(ctx, 0)
		if err != nil {
			t.Fatal(err)
		}
		_, err = r.Lock(ctx, 0)
		var busy *BusyError
		if !errors.As(err, &busy) || busy.Holder.Host != "web-1" || busy.Holder.PID == 0 {
			t.Fatalf("second Lock = %v (holder %+v), want busy, held by this pid on web-1", err, busy)
		}
		tokens = append(tokens, lease.Token())
		if err := lease.Unlock(); err != nil {
			t.Fatal(err)
		}
	}
	if tokens[0] != 1 {
		t.Fatalf("fencing tokens %v, want them to start at 1", tokens)
	}
	for i := 1; i < len(tokens); i++ {
		if tokens[i] <= tokens[i-1] {
			t.Fatalf("fencing tokens %v not strictly increasing", tokens)
		}
	}
}

func TestRedisRenewKeepsTheLock(t *testing.T) {
	// A TTL of a second, renewed every third: a renewal would have to come
	// 600ms late to lose it, which a loaded machine does not do.
	r, srv := newRedisLock(t, time.Second)
	lease, err := r.Lock(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	defer lease.Unlock()
	// Two TTLs later, the renewals have kept it.
	deadline := time.Now().Add(2 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-lease.Lost():
			t.Fatal("lock lost while renewed")
		case <-time.After(50 * time.Millisecond):
		}
	}
	if v, err := srv.Do(context.Background(), "", "EXISTS", "every:job:lock"); err != nil || v != int64(1) {
		t.Fatalf("EXISTS = %v, %v; want the key kept", v, err)
	}
}

func TestRedisLostWhenKeyDeleted(t *testing.T) {
	r, srv := newRedisLock(t, 300*time.Millisecond)
	lease, err := r.Lock(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	defer lease.Unlock()
	if _, err := srv.Do(context.Background(), "", "DEL", "every:job:lock"); err != nil {
		t.Fatal(err)
	}
	select {
	case <-lease.Lost():
	case <-time.After(30 * time.Second):
		t.Fatal("deleting the key did not lose the lock")
	}
}

func TestRedisLostWhenServerGone(t *testing.T) {
	r, srv := newRedisLock(t, 300*time.Millisecond)
	lease, err := r.Lock(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	defer lease.Unlock()
	srv.Stop()
	select {
	case <-lease.Lost():
	case <-time.After(30 * time.Second):
		t.Fatal("a dead server did not lose the lock")
	}
	if _, err := r.Lock(context.Background(), 0); !errors.Is(err, ErrStore) {
		t.Fatalf("Lock with the server down = %v, want ErrStore", err)
	}
}

func TestRedisScripts(t *testing.T) {
	srv := redistest.Start(t)
	c := srv.Client("")
	ctx := context.Background()
	key := []string{"k"}

	// Renewal after expiry fails: the key is gone.
	if err := c.Set(ctx, "k", "mine", 50*time.Millisecond).Err(); err != nil {
		t.Fatal(err)
	}
	for c.Exists(ctx, "k").Val() == 1 {
		time.Sleep(10 * time.Millisecond)
	}
	if n, err := renew.Run(ctx, c, key, "mine", 10000).Int64(); err != nil || n != 0 {
		t.Errorf("renew after expiry = %d, %v; want 0", n, err)
	}
	if c.Exists(ctx, "k").Val() != 0 {
		t.Error("renew after expiry brought the key back")
	}

	// Renewal and release of a foreign value do nothing.
	c.Set(ctx, "k", "theirs", time.Minute)
	if n, _ := renew.Run(ctx, c, key, "mine", 10).Int64(); n != 0 {
		t.Errorf("renew of a foreign value = %d, want 0", n)
	}
	if n, _ := release.Run(ctx, c, key, "mine").Int64(); n != 0 {
		t.Errorf("release of a foreign value = %d, want 0", n)
	}
	if v := c.Get(ctx, "k").Val(); v != "theirs" {
		t.Errorf("key holds %q, want theirs untouched", v)
	}
	if ttl := c.PTTL(ctx, "k").Val(); ttl < 50*time.Second {
		t.Errorf("foreign key's TTL changed to %v", ttl)
	}

	// Our own: renewed, then released.
	c.Set(ctx, "k", "mine", time.Second)
	if n, _ := renew.Run(ctx, c, key, "mine", 60000).Int64(); n != 1 {
		t.Errorf("renew of our value = %d, want 1", n)
	}
	if ttl := c.PTTL(ctx, "k").Val(); ttl < 50*time.Second {
		t.Errorf("renewed TTL %v, want about a minute", ttl)
	}
	if n, _ := release.Run(ctx, c, key, "mine").Int64(); n != 1 || c.Exists(ctx, "k").Val() != 0 {
		t.Errorf("release of our value = %d, key left: %d", n, c.Exists(ctx, "k").Val())
	}

	// Acquire: only when free; the fence counts acquisitions only.
	res, _ := acquire.Run(ctx, c, []string{"k", "k:fence"}, "a", 60000).Slice()
	if res[0] != int64(1) || res[1] != int64(1) {
		t.Errorf("first acquire = %v, want [1 1]", res)
	}
	res, _ = acquire.Run(ctx, c, []string{"k", "k:fence"}, "b", 60000).Slice()
	if res[0] != int64(0) || res[1] != "a" {
		t.Errorf("acquire of a held lock = %v, want [0 a]", res)
	}
	release.Run(ctx, c, key, "a")
	res, _ = acquire.Run(ctx, c, []string{"k", "k:fence"}, "b", 60000).Slice()
	if res[0] != int64(1) || res[1] != int64(2) {
		t.Errorf("acquire after release = %v, want [1 2]", res)
	}
}

// BenchmarkRedisLock measures a lock's acquire against a local redis-server,
// reporting the median and p99 of Lock alone.
func BenchmarkRedisLock(b *testing.B) {
	srv := redistest.Start(b)
	r := Redis{Client: srv.Client(""), Key: "every:bench:lock", TTL: 30 * time.Second, Host: "h", Where: srv.Addr}
	ctx := context.Background()
	times := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		lease, err := r.Lock(ctx, 0)
		times = append(times, time.Since(start))
		if err != nil {
			b.Fatal(err)
		}
		lease.Unlock()
	}
	b.StopTimer()
	sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
	b.ReportMetric(float64(times[len(times)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(times[len(times)*99/100].Microseconds()), "p99-µs")
}
