package fleet

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/everycli/every/internal/etcdtest"
	"github.com/everycli/every/internal/testutil"
	"github.com/everycli/every/runner"
	"github.com/everycli/every/schedule"
)

// etcdTripLoop runs a job of max runs of `true` every 20ms on etcd reached
// through a counting HTTP proxy, wired as job.fleetStore wires it, from the
// start-up check on, and returns the requests it made (their paths).
func etcdTripLoop(t *testing.T, addr, name string, runs int) []string {
	t.Helper()
	var mu sync.Mutex
	var paths []string
	rp := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: "http", Host: addr})
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		paths = append(paths, r.URL.Path)
		mu.Unlock()
		rp.ServeHTTP(w, r)
	}))
	defer proxy.Close()
	f, err := openEtcd("etcd://" + strings.TrimPrefix(proxy.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.client.Close()
	if fatal, transient := f.Check(context.Background()); fatal != nil || transient != nil {
		t.Fatalf("check: %v, %v", fatal, transient)
	}
	cfg := runner.Config{Name: name, Command: []string{"true"}, Schedule: schedule.Grid{Interval: 20 * time.Millisecond},
		MaxRuns: runs, Timeout: time.Minute, KillAfter: time.Second, Host: "web-1", PID: os.Getpid(),
		Env: os.Environ(), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	// A lease of 30s: no keep-alive falls within a run of `true`.
	cfg.Lock, cfg.Store = f.Job(name, "web-1", 30*time.Second, 20*time.Millisecond, true, true)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if exit := runner.Loop(ctx, cfg); exit.Reason != runner.MaxRuns || exit.Last.ExitCode != 0 {
		t.Fatalf("loop exit %v", exit)
	}
	mu.Lock()
	defer mu.Unlock()
	return slices.Clone(paths)
}

// etcdTripChild runs etcdTripLoop in a child process (runner.Loop makes its
// process a subreaper, see tripChild).
func etcdTripChild(t *testing.T, addr, name string, runs int) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testutil.WaitBound)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestEtcdFleetRoundTrips$", "-test.count=1")
	cmd.Env = append(os.Environ(), "EVERY_ETCDRT_CHILD="+strings.Join([]string{addr, name, strconv.Itoa(runs)}, " "))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	for line := range strings.Lines(string(out)) {
		if b, ok := strings.CutPrefix(line, "ETCDTRIPS "); ok {
			var paths []string
			if err := json.Unmarshal([]byte(b), &paths); err != nil {
				t.Fatal(err)
			}
			return paths
		}
	}
	t.Fatalf("child said no ETCDTRIPS line:\n%s", out)
	return nil
}

// TestEtcdFleetRoundTrips pins the HTTP round trips of a fleet job on etcd,
// counted by a proxy between every's client and a real etcd: the start-up
// check, a one-shot, and each further run of a loop.
func TestEtcdFleetRoundTrips(t *testing.T) {
	if args := os.Getenv("EVERY_ETCDRT_CHILD"); args != "" {
		f := strings.Fields(args)
		runs, _ := strconv.Atoi(f[2])
		b, err := json.Marshal(etcdTripLoop(t, f[0], f[1], runs))
		if err != nil {
			t.Fatal(err)
		}
		fmt.Printf("ETCDTRIPS %s\n", b)
		return
	}
	srv := etcdtest.Start(t)
	one := etcdTripChild(t, srv.Addr, "one-shot", 1)
	three := etcdTripChild(t, srv.Addr, "loop", 3)
	t.Logf("one-shot: %d requests %v", len(one), one)
	t.Logf("loop of 3: %d requests %v", len(three), three)
	// Each run also watches its lock key, one stream for the length of the
	// run, opened beside its other requests, in no fixed order with them.
	one, three = withoutWatches(t, one), withoutWatches(t, three)
	// Pinned: the start-up check (the version, a range of the prefix), the
	// record read at start (outside the lock), then each run: the grant,
	// the lock with the record (one transaction), the start, the end, the
	// revoke.
	run := []string{"/v3/lease/grant", "/v3/kv/txn", "/v3/kv/txn", "/v3/kv/txn", "/v3/lease/revoke"}
	want := append([]string{"/version", "/v3/kv/range", "/v3/kv/range"}, run...)
	if !slices.Equal(one, want) {
		t.Errorf("one-shot made %d requests\n%v\nwant %d\n%v", len(one), one, len(want), want)
	}
	want = append(want, slices.Concat(run, run)...)
	if !slices.Equal(three, want) {
		t.Errorf("loop of 3 made %d requests\n%v\nwant %d\n%v", len(three), three, len(want), want)
	}
}

// withoutWatches returns the requests but the watches, after checking that
// each run (from a grant to its revoke) opened exactly one, after its lock.
func withoutWatches(t *testing.T, paths []string) []string {
	t.Helper()
	var rest []string
	inRun, watches := false, 0
	for _, p := range paths {
		switch p {
		case "/v3/watch":
			watches++
			if !inRun || rest[len(rest)-1] == "/v3/lease/grant" {
				t.Errorf("a watch outside a run's lock: %v", paths)
			}
			continue
		case "/v3/lease/grant":
			inRun, watches = true, 0
		case "/v3/lease/revoke":
			if watches != 1 {
				t.Errorf("a run watched its key %d times, want once: %v", watches, paths)
			}
			inRun = false
		}
		rest = append(rest, p)
	}
	return rest
}
