package scripttest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/everycli/every/internal/etcd"
	"github.com/everycli/every/internal/etcdtest"
	"github.com/everycli/every/internal/testutil"
)

// etcdServers are the scripts' etcd servers, by script; scripts run in
// parallel.
var (
	etcdServersMu sync.Mutex
	etcdServers   = map[*testscript.TestScript]*etcdtest.Server{}
)

// etcdCondition is the script condition [etcd]: etcd is installed. Where it
// is not and EVERY_REQUIRE_ETCD=1 (as in CI), the script fails instead.
func etcdCondition() (bool, error) {
	if _, err := exec.LookPath("etcd"); err != nil {
		if os.Getenv("EVERY_REQUIRE_ETCD") == "1" {
			return false, fmt.Errorf("etcd not found and EVERY_REQUIRE_ETCD=1: %v", err)
		}
		return false, nil
	}
	return true, nil
}

// etcd start [-auth PASSWORD] | stop | restart | get KEY | del KEY |
// revoke KEY | wipe PREFIX: a real single-node etcd for the script; start sets $ETCD
// (host:port of its client port) and $ETCD_PEER (its peer port, which
// speaks HTTP but is no etcd gateway), and with -auth makes the user root
// with PASSWORD and turns authentication on. get writes KEY's value to
// stdout ("(nil)" for none); del deletes KEY; revoke revokes the lease KEY
// is attached to; wipe deletes every key under PREFIX at once. None takes
// "!".
func etcdCmd(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) == 0 {
		ts.Fatalf("usage: etcd start|stop|restart|get|del|revoke ...")
	}
	noNeg(ts, neg, "etcd "+args[0])
	etcdServersMu.Lock()
	srv := etcdServers[ts]
	etcdServersMu.Unlock()
	if srv == nil && args[0] != "start" {
		ts.Fatalf("etcd %s: no server started", args[0])
	}
	ctx, cancel := context.WithTimeout(context.Background(), testutil.WaitBound)
	defer cancel()
	client := func() *etcd.Client { return srv.Client(ts.Getenv("ETCD_PASSWORD")) }
	switch args[0] {
	case "start":
		srv = etcdtest.Start(scriptTB{ts})
		etcdServersMu.Lock()
		etcdServers[ts] = srv
		etcdServersMu.Unlock()
		ts.Defer(func() {
			etcdServersMu.Lock()
			delete(etcdServers, ts)
			etcdServersMu.Unlock()
		})
		ts.Setenv("ETCD", srv.Addr)
		ts.Setenv("ETCD_PEER", srv.Peer())
		if len(args) == 3 && args[1] == "-auth" {
			srv.EnableAuth(args[2])
			ts.Setenv("ETCD_PASSWORD", args[2])
		}
	case "stop":
		srv.Stop()
	case "restart":
		srv.Restart()
	case "wipe":
		// All the keys under a prefix at once, as a restore of a snapshot
		// from before they were written loses them.
		if len(args) != 2 {
			ts.Fatalf("usage: etcd wipe PREFIX")
		}
		var res struct{}
		prefix := []byte(args[1])
		ts.Check(client().Call(ctx, "/v3/kv/deleterange", map[string]any{"key": prefix, "range_end": etcd.PrefixEnd(prefix)}, &res))
	case "get", "del", "revoke":
		if len(args) != 2 {
			ts.Fatalf("usage: etcd %s KEY", args[0])
		}
		c, key := client(), []byte(args[1])
		r, err := c.Range(ctx, key, nil, 1)
		ts.Check(err)
		if len(r.KVs) == 0 {
			if args[0] != "get" {
				ts.Fatalf("etcd %s %s: no such key", args[0], args[1])
			}
			fmt.Fprintln(ts.Stdout(), "(nil)")
			return
		}
		switch args[0] {
		case "get":
			fmt.Fprintf(ts.Stdout(), "%s\n", r.KVs[0].Value)
		case "del":
			ts.Check(c.Delete(ctx, key))
		case "revoke":
			ts.Check(c.Revoke(ctx, r.KVs[0].Lease))
		}
	default:
		ts.Fatalf("unknown etcd command %q", args[0])
	}
}

// etcdpartition N: partition N (see there), with host A and host B on the
// script's etcd (A through the freezing proxy).
func etcdPartition(ts *testscript.TestScript, neg bool, args []string) {
	noNeg(ts, neg, "etcdpartition")
	if len(args) != 1 {
		ts.Fatalf("usage: etcdpartition N")
	}
	n, err := strconv.Atoi(args[0])
	ts.Check(err)
	if env := os.Getenv("EVERY_PARTITION_RUNS"); env != "" {
		n, err = strconv.Atoi(env)
		ts.Check(err)
	}
	etcdServersMu.Lock()
	srv := etcdServers[ts]
	etcdServersMu.Unlock()
	if srv == nil {
		ts.Fatalf("etcdpartition: no etcd started")
	}
	every, err := exec.LookPath("every")
	ts.Check(err)
	var gaps []time.Duration
	for i := range n {
		gaps = append(gaps, partitionOnce(ts, every, "etcd://%s", srv.Addr, ts.MkAbs(fmt.Sprintf("p%d", i)), i))
	}
	slices.Sort(gaps)
	ts.Logf("%d partitions on etcd: A's job dead before B's started in each; gap from A's job's death to B's start: min %v, median %v, max %v",
		n, gaps[0], gaps[len(gaps)/2], gaps[len(gaps)-1])
}
