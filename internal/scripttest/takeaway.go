package scripttest

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/everycli/every/internal/testutil"
)

// etcdtakeaway del|revoke N BOUND: N times, an every on the script's etcd
// (--lock-ttl 6s: a keep-alive every 2s) runs a job with a grandchild in
// its group, and once the job has started, its lock is taken away: the
// lock key deleted (del) or its lease revoked (revoke). The job and its
// grandchild must be gone (reaped) within BOUND of the request's sending,
// each time, and the run recorded as lost_lock; the figures are logged
// (min, median, max). A keep-alive would notice 2s after the start: only
// the holder's watch of its key can meet a BOUND well under that.
func etcdTakeAway(ts *testscript.TestScript, neg bool, args []string) {
	noNeg(ts, neg, "etcdtakeaway")
	if len(args) != 3 || args[0] != "del" && args[0] != "revoke" {
		ts.Fatalf("usage: etcdtakeaway del|revoke N BOUND")
	}
	n, err := strconv.Atoi(args[1])
	ts.Check(err)
	bound, err := time.ParseDuration(args[2])
	ts.Check(err)
	etcdServersMu.Lock()
	srv := etcdServers[ts]
	etcdServersMu.Unlock()
	if srv == nil {
		ts.Fatalf("etcdtakeaway: no etcd started")
	}
	every, err := exec.LookPath("every")
	ts.Check(err)
	c := srv.Client(ts.Getenv("ETCD_PASSWORD"))
	var took []time.Duration
	for i := range n {
		dir := ts.MkAbs(fmt.Sprintf("%s%d", args[0], i))
		ts.Check(os.MkdirAll(dir, 0o700))
		name := args[0] + strconv.Itoa(i)
		cmd := exec.Command(every, "1h", "--max-runs", "1", "--store", "etcd://"+srv.Addr, "--lock-ttl", "6s", "--kill-after", "1h",
			"--name", name, "--", "job", "-pid", "child.pid", "-grandchild", "grandchild.pid", "-touch", "started", "-sleep", "1h")
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "PATH="+ts.Getenv("PATH"), "GORACE=atexit_sleep_ms=0")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		ts.Check(cmd.Start())
		ts.Defer(func() { _ = cmd.Process.Kill() })
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		if !waitForFile(filepath.Join(dir, "started")) {
			ts.Fatalf("try %d: the job did not start within %v\n%s", i, testutil.WaitBound, &stderr)
		}
		pids := []int{readPid(ts, filepath.Join(dir, "child.pid")), readPid(ts, filepath.Join(dir, "grandchild.pid"))}
		// Should the test fail, the job's group must not outlive it.
		ts.Defer(func() { signalOwnGroup(ts, pids[0], syscall.SIGKILL) })

		ctx, cancel := context.WithTimeout(context.Background(), testutil.WaitBound)
		key := []byte("every/" + name + "/lock")
		r, err := c.Range(ctx, key, nil, 1)
		ts.Check(err)
		if len(r.KVs) != 1 {
			ts.Fatalf("try %d: no lock key %s while the job runs", i, key)
		}
		sent := time.Now()
		if args[0] == "del" {
			err = c.Delete(ctx, key)
		} else {
			err = c.Revoke(ctx, r.KVs[0].Lease)
		}
		cancel()
		ts.Check(err)
		// Seen gone to the 5ms of a poll.
		var gone time.Duration
		if !testutil.Eventually(func() bool {
			gone = time.Since(sent)
			return !alive(ts, pids[0]) && !alive(ts, pids[1])
		}) {
			ts.Fatalf("try %d: the job still runs %v after its lock was taken away\n%s", i, testutil.WaitBound, &stderr)
		}
		if _, ok := testutil.Receive(done); !ok {
			ts.Fatalf("try %d: every did not end within %v\n%s", i, testutil.WaitBound, &stderr)
		}
		if !strings.Contains(stderr.String(), "event=finish result=lost_lock") {
			ts.Fatalf("try %d: the run was not recorded as lost_lock:\n%s", i, &stderr)
		}
		if gone > bound {
			ts.Fatalf("try %d: the job gone %v after its lock was taken away (%s), want within %v\n%s", i, gone, args[0], bound, &stderr)
		}
		took = append(took, gone)
	}
	slices.Sort(took)
	ts.Logf("%d tries, lock taken away by %s: the job and its grandchild gone after min %v, median %v, max %v (bound %v)",
		n, args[0], took[0], took[len(took)/2], took[len(took)-1], bound)
}
