package fleet

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/everycli/every/internal/redistest"
	"github.com/everycli/every/internal/testutil"
	"github.com/everycli/every/lock"
	"github.com/everycli/every/runner"
	"github.com/everycli/every/schedule"
	"github.com/everycli/every/state"
)

// wiring puts a job's lock and store on a fleet, as fleetStore does.
type wiring func(f *Redis, name string) (lock.Locker, state.Store)

// sessionWiring is the wiring of fleet.job: one Session for both.
func sessionWiring(f *Redis, name string) (lock.Locker, state.Store) {
	return f.Job(name, "web-1", 30*time.Second, 20*time.Millisecond, true, true)
}

// separateWiring is the wiring before Session: a lock and a store apart.
func separateWiring(f *Redis, name string) (lock.Locker, state.Store) {
	return lock.Redis{Client: f.client, Key: f.lockKey(name), TTL: 30 * time.Second, Host: "web-1", Server: f.server},
		state.Redis{Client: f.client, Key: f.stateKey(name), Period: 20 * time.Millisecond, Server: f.server}
}

// tripLoop runs a job of max runs of `true` every 20ms on a fleet reached
// through a counting proxy, as every --store does from the start-up check
// on, and returns the round trips it made, each as its commands (EVALSHA
// shown as EVAL: which of the two a script goes by depends on what this
// process sent before), and the connections it dialled.
func tripLoop(t *testing.T, srv *redistest.Server, wire wiring, name string, runs int) ([]string, int, runner.Exit) {
	t.Helper()
	proxy := redistest.NewProxy(t, srv.Addr)
	f, err := openRedis("redis://" + proxy.Addr + "/0")
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
	cfg.Lock, cfg.Store = wire(f, name)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	exit := runner.Loop(ctx, cfg)
	seq, dials := proxy.TripNames()
	return seq, dials, exit
}

// tripResult is what a child running tripLoop reports.
type tripResult struct {
	Trips []string
	Dials int
	Exit  runner.Exit
}

// tripChild runs tripLoop in a child process, the test binary run again for
// it alone: runner.Loop makes its process a child subreaper that reaps
// every orphan, which would steal the children of the other tests of this
// package from their exec.Cmd.
func tripChild(t *testing.T, srv *redistest.Server, wire, name string, runs int) tripResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testutil.WaitBound)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestFleetRoundTrips$", "-test.count=1")
	cmd.Env = append(os.Environ(), "EVERY_FLEETRT_CHILD="+strings.Join([]string{srv.Addr, wire, name, strconv.Itoa(runs)}, " "))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	for line := range strings.Lines(string(out)) {
		if b, ok := strings.CutPrefix(line, "TRIPS "); ok {
			var r tripResult
			if err := json.Unmarshal([]byte(b), &r); err != nil {
				t.Fatal(err)
			}
			return r
		}
	}
	t.Fatalf("child said no TRIPS line:\n%s", out)
	return tripResult{}
}

// fleetRTChild is the child's side of tripChild.
func fleetRTChild(t *testing.T, args string) {
	f := strings.Fields(args)
	runs, _ := strconv.Atoi(f[3])
	wire := separateWiring
	if f[1] == "session" {
		wire = sessionWiring
	}
	trips, dials, exit := tripLoop(t, &redistest.Server{Addr: f[0]}, wire, f[2], runs)
	b, err := json.Marshal(tripResult{trips, dials, exit})
	if err != nil {
		t.Fatal(err)
	}
	fmt.Printf("TRIPS %s\n", b)
}

// TestFleetRoundTrips pins the round trips of a fleet job, counted by a
// proxy between every's client and a real redis-server: from the start-up
// check, a one-shot, and each further run of a loop. (The cases of one slot,
// done or busy, are pinned in lock's TestSessionRoundTrips.)
func TestFleetRoundTrips(t *testing.T) {
	if args := os.Getenv("EVERY_FLEETRT_CHILD"); args != "" {
		fleetRTChild(t, args)
		return
	}
	srv := redistest.Start(t)
	for _, c := range []struct {
		name  string
		runs  int
		want  []string
		dials int
	}{
		// The connection's handshake (go-redis's HELLO), the start-up check,
		// the record read at start (outside the lock), then the run: the
		// lock with the record, the start, the end with the release.
		{"one-shot", 1, []string{"HELLO", "PING", "GETRANGE", "EVAL", "EVAL", "EVAL"}, 1},
		// The first run: three round trips; each further run two (the lock
		// with the start, the end with the release), on the same connection.
		{"loop", 3, []string{"HELLO", "PING", "GETRANGE", "EVAL", "EVAL", "EVAL", "EVAL", "EVAL", "EVAL", "EVAL"}, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			// The separate lock and store, for the record (README, report).
			before := tripChild(t, srv, "separate", c.name+"-before", c.runs)
			t.Logf("before: %d round trips, %d dials: %v", len(before.Trips), before.Dials, before.Trips)
			got := tripChild(t, srv, "session", c.name, c.runs)
			t.Logf("after: %d round trips, %d dials: %v", len(got.Trips), got.Dials, got.Trips)
			if got.Exit.Reason != runner.MaxRuns || got.Exit.Last.ExitCode != 0 {
				t.Fatalf("loop ended %+v, want max runs reached with success", got.Exit)
			}
			if !slices.Equal(got.Trips, c.want) || got.Dials != c.dials {
				t.Fatalf("round trips %v over %d connections, want %v over %d", got.Trips, got.Dials, c.want, c.dials)
			}
			// And the record says what a run writes.
			b, err := srv.Client("").Get(context.Background(), "every:"+c.name+":state").Bytes()
			if err != nil {
				t.Fatal(err)
			}
			rec, err := state.Decode(b)
			if err != nil || rec.Runs != c.runs || rec.Running || rec.LastResult != "success" {
				t.Fatalf("record %+v (%v), want %d runs, ended, success", rec, err, c.runs)
			}
			if n, err := srv.Client("").Exists(context.Background(), "every:"+c.name+":lock").Result(); err != nil || n != 0 {
				t.Fatalf("lock key exists = %d, %v; want it released", n, err)
			}
		})
	}
}
