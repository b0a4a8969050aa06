package lock

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/everycli/every/internal/etcd"
	"github.com/everycli/every/internal/etcdtest"
	"github.com/everycli/every/internal/testutil"
)

// A lock key deleted just after the holder checked it (the worst moment) is
// noticed at the next keep-alive, should the watch of the key miss it (here
// the watch is refused): within a third of the TTL, plus the round trips,
// not at the next-but-one or when the lease's clock runs out.
func TestEtcdDeletedKeyNoticedWithinKeepAlive(t *testing.T) {
	srv := etcdtest.Start(t)
	// The holder reaches etcd through a proxy that refuses watches, and
	// says when a check of the key (a range, after a keep-alive) was
	// answered.
	checked := make(chan struct{}, 16)
	rp := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: "http", Host: srv.Addr})
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v3/watch" {
			http.Error(w, "no watch here", http.StatusServiceUnavailable)
			return
		}
		rp.ServeHTTP(w, r)
		if r.URL.Path == "/v3/kv/range" {
			select {
			case checked <- struct{}{}:
			default:
			}
		}
	}))
	defer proxy.Close()
	c := etcd.New(etcd.Config{Endpoints: []string{strings.TrimPrefix(proxy.URL, "http://")}, Timeout: 2 * time.Second})
	defer c.Close()
	e := etcdLock(t, c, "deleted")
	e.RecordKey = "" // a lock alone: the only ranges are the key's checks
	ctx := context.Background()
	l, err := e.Lock(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Unlock()
	// The second check: the keep-alives are under way on their period.
	for range 2 {
		if _, ok := testutil.Receive(checked); !ok {
			t.Fatal("no check of the key after a keep-alive")
		}
	}
	if err := srv.Client("").Delete(ctx, []byte(e.Key)); err != nil {
		t.Fatal(err)
	}
	cut := time.Now()
	if _, ok := testutil.Receive(l.Lost()); !ok {
		t.Fatal("a deleted lock key was never noticed")
	}
	d := time.Since(cut)
	// The slack is for the keep-alive's and the check's round trips on a
	// loaded machine; the next-but-one keep-alive would be a third later.
	if bound := e.TTL/3 + 250*time.Millisecond; d > bound {
		t.Errorf("a deleted lock key noticed %v after the delete, want within %v (TTL %v / 3 and the round trips)", d, bound, e.TTL)
	}
	if !closed(l.Expiring()) {
		t.Error("lost but not expiring: the command would outlive a lock that is gone")
	}
	t.Logf("a deleted lock key noticed %v after the delete (TTL %v)", d.Round(time.Millisecond), e.TTL)
}
