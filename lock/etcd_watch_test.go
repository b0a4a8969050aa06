package lock

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/everycli/every/internal/etcd"
	"github.com/everycli/every/internal/etcdtest"
	"github.com/everycli/every/internal/testutil"
)

// watchBound is how soon a holder must see its lock taken away: generous
// for a loaded machine, and far under the next keep-alive (2s, a third of
// the 6s TTL of these tests), which is all that noticed it before.
const watchBound = 500 * time.Millisecond

// lostWithin waits for the lease to be lost and expiring, and returns how
// long after cut that was.
func lostWithin(t *testing.T, l Lease, cut time.Time) time.Duration {
	t.Helper()
	for _, ch := range []<-chan struct{}{l.Lost(), l.Expiring()} {
		if _, ok := testutil.Receive(ch); !ok {
			t.Fatalf("lease not lost %v after its key was taken away", testutil.WaitBound)
		}
	}
	return time.Since(cut)
}

// The holder watches its key: deleted, replaced by hand, or gone with its
// revoked lease, the lock is lost (and the command to be killed) as soon as
// the cluster says so, not at the next keep-alive.
func TestEtcdWatchTakenAway(t *testing.T) {
	srv := etcdtest.Start(t)
	c := srv.Client("")
	ctx := context.Background()
	for _, cut := range []string{"delete", "revoke", "put"} {
		t.Run(cut, func(t *testing.T) {
			var took []time.Duration
			for i := range 5 {
				e := etcdLock(t, c, "watch-"+cut+strconv.Itoa(i))
				e.TTL = 6 * time.Second
				l, err := e.Lock(ctx, 0)
				if err != nil {
					t.Fatal(err)
				}
				sent := time.Now()
				switch cut {
				case "delete":
					err = c.Delete(ctx, []byte(e.Key))
				case "revoke":
					err = c.Revoke(ctx, e.held.id)
				case "put":
					err = c.Put(ctx, []byte(e.Key), []byte("an operator's"))
				}
				if err != nil {
					t.Fatal(err)
				}
				d := lostWithin(t, l, sent)
				_ = l.Unlock()
				if d > watchBound {
					t.Errorf("try %d: lost %v after the %s, want within %v", i, d, cut, watchBound)
				}
				took = append(took, d)
			}
			slices.Sort(took)
			t.Logf("%s: lost after min %v, median %v, max %v", cut, took[0], took[len(took)/2], took[len(took)-1])
		})
	}
}

// watchGate is a proxy to etcd that refuses watches while closed, and
// counts the watches it let through.
type watchGate struct {
	addr    string
	closed  atomic.Bool
	refused atomic.Int32
	opened  atomic.Int32
}

func newWatchGate(t *testing.T, to string) *watchGate {
	g := &watchGate{}
	rp := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: "http", Host: to})
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v3/watch" {
			if g.closed.Load() {
				g.refused.Add(1)
				http.Error(w, "closed", http.StatusServiceUnavailable)
				return
			}
			g.opened.Add(1)
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(proxy.Close)
	g.addr = strings.TrimPrefix(proxy.URL, "http://")
	return g
}

// compact compacts the cluster's history up to now, after a few writes:
// a watch from before then is refused.
func compact(t *testing.T, c *etcd.Client) {
	t.Helper()
	ctx := context.Background()
	for range 3 {
		if err := c.Put(ctx, []byte("other"), []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	r, err := c.Range(ctx, []byte("other"), nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	var res struct{}
	if err := c.Call(ctx, "/v3/kv/compaction", map[string]string{"revision": strconv.FormatInt(r.Header.Revision, 10)}, &res); err != nil {
		t.Fatal(err)
	}
}

// A watch that could not be opened for a while, and whose revisions were
// compacted meanwhile, checks the key before it goes on: still the
// lease's, it watches on (and a later delete is seen at once); deleted and
// created again by another meanwhile, the lock is lost.
func TestEtcdWatchAfterCompaction(t *testing.T) {
	srv := etcdtest.Start(t)
	admin := srv.Client("")
	ctx := context.Background()
	for _, meanwhile := range []string{"nothing", "replaced"} {
		t.Run(meanwhile, func(t *testing.T) {
			g := newWatchGate(t, srv.Addr)
			c := etcd.New(etcd.Config{Endpoints: []string{g.addr}, Timeout: 2 * time.Second})
			defer c.Close()
			e := etcdLock(t, c, "compact-"+meanwhile)
			e.TTL = 6 * time.Second
			g.closed.Store(true)
			l, err := e.Lock(ctx, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer l.Unlock()
			if !testutil.Eventually(func() bool { return g.refused.Load() > 0 }) {
				t.Fatal("the holder never tried to watch its key")
			}
			if meanwhile == "replaced" {
				if err := admin.Delete(ctx, []byte(e.Key)); err != nil {
					t.Fatal(err)
				}
				if err := admin.Put(ctx, []byte(e.Key), []byte("another holder")); err != nil {
					t.Fatal(err)
				}
			}
			compact(t, admin)
			open := time.Now()
			g.closed.Store(false)
			if meanwhile == "replaced" {
				// The next try of the watch, a quarter of a second on.
				if d := lostWithin(t, l, open); d > time.Second {
					t.Errorf("lost %v after the watch could be opened again, want within 1s", d)
				}
				return
			}
			// The watch is opened, compacted, checked, and opened again.
			if !testutil.Eventually(func() bool { return g.opened.Load() >= 2 }) {
				t.Fatalf("the watch was opened %d times, want 2 (compacted, then from now)", g.opened.Load())
			}
			select {
			case <-l.Lost():
				t.Fatal("lost, though the key is still the lease's")
			default:
			}
			sent := time.Now()
			if err := admin.Delete(ctx, []byte(e.Key)); err != nil {
				t.Fatal(err)
			}
			if d := lostWithin(t, l, sent); d > watchBound {
				t.Errorf("lost %v after the delete, want within %v", d, watchBound)
			}
		})
	}
}
