package lock

import (
	"context"
	"errors"
	"sort"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/everycli/every/internal/redistest"
	"github.com/everycli/every/internal/testutil"
)

func newRedisLock(t *testing.T, ttl time.Duration) (Redis, *redistest.Server) {
	srv := redistest.Start(t)
	return Redis{Client: srv.Client(""), Key: "every:job:lock", TTL: ttl, Host: "web-1", Server: srv.Addr}, srv
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
	// The first token is the server's clock in microseconds (the counter
	// starts below it): within a minute of this host's.
	if now := time.Now().UnixMicro(); tokens[0] < now-int64(time.Minute/time.Microsecond) || tokens[0] > now+int64(time.Minute/time.Microsecond) {
		t.Fatalf("fencing tokens %v, want the first near the clock in microseconds, %d", tokens, now)
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
	select {
	case <-lease.Lost():
		t.Fatal("lock lost while renewed")
	case <-time.After(2 * time.Second):
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
	if _, ok := testutil.Receive(lease.Lost()); !ok {
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
	if _, ok := testutil.Receive(lease.Lost()); !ok {
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
	if !testutil.Eventually(func() bool { return c.Exists(ctx, "k").Val() == 0 }) {
		t.Fatal("a key with a TTL of 50ms never expired")
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

	// Acquire: only when free; the fence counts acquisitions only, from a
	// counter ahead of the clock (as after a burst of acquisitions).
	far := int64(1) << 52 // Lua numbers are doubles: exact up to 2^53
	c.Set(ctx, "k:fence", far, 0)
	res, _ := acquire.Run(ctx, c, []string{"k", "k:fence"}, "a", 60000).Slice()
	if res[0] != int64(1) || res[1] != far+1 {
		t.Errorf("first acquire = %v, want [1 %d]", res, far+1)
	}
	res, _ = acquire.Run(ctx, c, []string{"k", "k:fence"}, "b", 60000).Slice()
	if res[0] != int64(0) || res[1] != "a" {
		t.Errorf("acquire of a held lock = %v, want [0 a]", res)
	}
	release.Run(ctx, c, key, "a")
	res, _ = acquire.Run(ctx, c, []string{"k", "k:fence"}, "b", 60000).Slice()
	if res[0] != int64(1) || res[1] != far+2 {
		t.Errorf("acquire after release = %v, want [1 %d]", res, far+2)
	}
	// A counter behind the clock (lost, or from a lagging replica) is
	// raised to the clock, and the clock is stored back.
	release.Run(ctx, c, key, "b")
	c.Set(ctx, "k:fence", 5, 0)
	before := time.Now().UnixMicro()
	res, _ = acquire.Run(ctx, c, []string{"k", "k:fence"}, "c", 60000).Slice()
	if tok, _ := res[1].(int64); res[0] != int64(1) || tok < before-int64(time.Minute/time.Microsecond) {
		t.Errorf("acquire with the counter at 5 = %v, want a token from the clock, about %d", res, before)
	}
	if stored, _ := c.Get(ctx, "k:fence").Int64(); stored != res[1] {
		t.Errorf("counter holds %d after acquire, want the token %v stored back", stored, res[1])
	}
}

// BenchmarkRedisLock measures a lock's acquire against a local redis-server,
// reporting the median and p99 of Lock alone.
func BenchmarkRedisLock(b *testing.B) {
	srv := redistest.Start(b)
	r := Redis{Client: srv.Client(""), Key: "every:bench:lock", TTL: 30 * time.Second, Host: "h", Server: srv.Addr}
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

// boundedClient is a client configured as every's fleet client: short
// timeouts, no retries, contexts' deadlines honoured.
func boundedClient(t *testing.T, addr string) *redis.Client {
	return boundedClientTimeout(t, addr, 500*time.Millisecond)
}

// boundedClientTimeout is boundedClient with its timeouts at d.
func boundedClientTimeout(t *testing.T, addr string, d time.Duration) *redis.Client {
	c := redis.NewClient(&redis.Options{
		Addr: addr, Protocol: 2, DisableIdentity: true,
		DialTimeout: d, ReadTimeout: d, WriteTimeout: d,
		PoolTimeout: d, MaxRetries: -1, DialerRetries: 1, ContextTimeoutEnabled: true, PoolSize: 4,
	})
	t.Cleanup(func() { c.Close() })
	return c
}

func TestMargin(t *testing.T) {
	tests := []struct {
		ttl, want time.Duration
	}{
		{100 * time.Millisecond, 20 * time.Millisecond}, // the floor
		{150 * time.Millisecond, 20 * time.Millisecond},
		{time.Second, 100 * time.Millisecond},
		{30 * time.Second, 3 * time.Second},
		{45 * time.Millisecond, 15 * time.Millisecond}, // never past a third: lost comes first
	}
	for _, tt := range tests {
		if got := Margin(tt.ttl); got != tt.want {
			t.Errorf("Margin(%v) = %v, want %v", tt.ttl, got, tt.want)
		}
	}
}

// TestRedisFencingSurvivesDataLoss: the token after FLUSHALL, or after a
// restart without persistence, is still greater than every one before.
func TestRedisFencingSurvivesDataLoss(t *testing.T) {
	r, srv := newRedisLock(t, 10*time.Second)
	ctx := context.Background()
	token := func() int64 {
		t.Helper()
		lease, err := r.Lock(ctx, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer lease.Unlock()
		return lease.Token()
	}
	var tokens []int64
	for range 3 {
		tokens = append(tokens, token())
	}
	if _, err := srv.Do(ctx, "", "FLUSHALL"); err != nil {
		t.Fatal(err)
	}
	tokens = append(tokens, token())
	srv.Stop()
	srv.Restart()
	tokens = append(tokens, token(), token())
	for i := 1; i < len(tokens); i++ {
		if tokens[i] <= tokens[i-1] {
			t.Fatalf("fencing tokens %v: %d after %d (FLUSHALL after the third, a restart after the fourth)", tokens, tokens[i], tokens[i-1])
		}
	}
}

// TestRedisLeaseClockAcrossPartition: a holder cut off from Redis (a frozen
// proxy: no answer, no reset) loses its lease at two thirds of the TTL and
// is told to kill a margin before it, while the key still lives in Redis;
// no other holder can take the lock until then.
func TestRedisLeaseClockAcrossPartition(t *testing.T) {
	srv := redistest.Start(t)
	proxy := redistest.NewProxy(t, srv.Addr)
	// The TTL sets the slack of the real-clock bounds below: a quarter of it
	// for lost, the margin (a tenth) for the key still A's when A is told
	// to kill. At 600ms those were 150ms and 60ms, which a wake-up on a
	// 2-core machine at load 12 can miss (a goroutine 100ms late there is
	// nothing rare); at 3s they are 750ms and 300ms.
	const ttl = 3 * time.Second
	a := Redis{Client: boundedClient(t, proxy.Addr), Key: "every:p:lock", TTL: ttl, Host: "a", Server: proxy.Addr}
	b := Redis{Client: boundedClient(t, srv.Addr), Key: "every:p:lock", TTL: ttl, Host: "b", Server: srv.Addr}
	ctx := context.Background()
	lease, err := a.Lock(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer lease.Unlock()
	// Let a renewal or two through, then cut A off.
	time.Sleep(ttl / 2)
	proxy.Freeze()
	cut := time.Now()
	defer proxy.Thaw()

	if _, ok := testutil.Receive(lease.Lost()); !ok {
		t.Fatal("a holder cut off from Redis never lost its lease")
	}
	lost := time.Since(cut)
	if _, ok := testutil.Receive(lease.Expiring()); !ok {
		t.Fatal("a holder cut off from Redis was never told to kill")
	}
	expiring := time.Since(cut)
	// The key must still be A's, with at least part of the margin to run:
	// B cannot have it yet.
	pttl, err := b.Client.PTTL(ctx, b.Key).Result()
	if err != nil {
		t.Fatal(err)
	}
	_, berr := b.Lock(ctx, 0)
	t.Logf("cut at 0: lost at %v, expiring at %v, key's PTTL then %v", lost, expiring, pttl)
	if pttl <= 0 || !errors.Is(berr, ErrBusy) {
		t.Fatalf("when A was told to kill, the key had %v to live and B's Lock gave %v: B could run alongside A", pttl, berr)
	}
	// Lost comes at two thirds of the TTL after the last confirmed send,
	// which was at most a third before the cut.
	if lost > ttl*2/3+ttl/4 {
		t.Errorf("lost %v after the cut, want at most 2/3 of %v (plus slack)", lost, ttl)
	}
	// Then B takes it, once it has expired.
	var bl Lease
	if !testutil.Eventually(func() bool { bl, err = b.Lock(ctx, 0); return err == nil }) {
		t.Fatalf("B never took the expired lock: %v", err)
	}
	defer bl.Unlock()
	if bl.Token() <= lease.Token() {
		t.Errorf("B's token %d not above A's %d", bl.Token(), lease.Token())
	}
}

// TestRedisExpiringAtOnceWhenKeyGone: a renewal that finds the key gone
// loses the lease and asks for the kill at once: another holder may take it
// any moment.
func TestRedisExpiringAtOnceWhenKeyGone(t *testing.T) {
	r, srv := newRedisLock(t, 3*time.Second)
	lease, err := r.Lock(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	defer lease.Unlock()
	if _, err := srv.Do(context.Background(), "", "DEL", r.Key); err != nil {
		t.Fatal(err)
	}
	deleted := time.Now()
	if _, ok := testutil.Receive(lease.Expiring()); !ok {
		t.Fatal("the key deleted, the lease never asked for the kill")
	}
	select {
	case <-lease.Lost():
	default:
		t.Fatal("expiring but not lost")
	}
	// The next renewal (a third of the TTL) found it: not the timer, which
	// would fire at TTL - margin.
	if d := time.Since(deleted); d > 2*time.Second {
		t.Errorf("kill asked %v after the key went, want at the next renewal (1s)", d)
	}
}

// TestRedisUnlockAfterLossKeepsOthersKey: a holder whose lease was lost
// does not delete the next holder's key at Unlock.
func TestRedisUnlockAfterLossKeepsOthersKey(t *testing.T) {
	r, srv := newRedisLock(t, 3*time.Second)
	ctx := context.Background()
	lease, err := r.Lock(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	srv.Do(ctx, "", "DEL", r.Key)
	other, err := r.Lock(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Unlock()
	<-lease.Lost()
	if err := lease.Unlock(); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Lock(ctx, 0); !errors.Is(err, ErrBusy) {
		t.Fatalf("after the old holder's Unlock, Lock = %v; want busy: the new holder's key kept", err)
	}
}

// TestRedisLockReturnsWhenCancelled: a silent server (accepts, never
// answers) does not hold Lock past its context's end.
func TestRedisLockReturnsWhenCancelled(t *testing.T) {
	hole := redistest.NewBlackHole(t)
	// Cancelled, against timeouts of 10s: "at once" is then anything well
	// under them, which a loaded machine meets (a median under 150ms against
	// timeouts of 500ms did not always).
	r := Redis{Client: boundedClientTimeout(t, hole.Addr, 10*time.Second), Key: "k", TTL: time.Second, Server: hole.Addr}
	var took []time.Duration
	for range 5 {
		ctx, cancel := context.WithCancel(context.Background())
		go func() {
			time.Sleep(50 * time.Millisecond)
			cancel()
		}()
		start := time.Now()
		_, err := r.Lock(ctx, 0)
		took = append(took, time.Since(start))
		if !errors.Is(err, ErrStore) {
			t.Fatalf("Lock on a black hole = %v, want ErrStore", err)
		}
	}
	sort.Slice(took, func(i, j int) bool { return took[i] < took[j] })
	t.Logf("Lock cancelled at 50ms returned after %v", took)
	if took[2] > 5*time.Second {
		t.Fatalf("Lock cancelled at 50ms returned after %v (median), want at once; the read timeout is 10s", took[2])
	}
	// Uncancelled, it ends at the client's timeout.
	r.Client = boundedClient(t, hole.Addr)
	start := time.Now()
	if _, err := r.Lock(context.Background(), 0); !errors.Is(err, ErrStore) {
		t.Fatalf("Lock on a black hole = %v, want ErrStore", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("Lock on a black hole took %v, want about the 500ms timeout", d)
	}
}
