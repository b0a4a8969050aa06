package scripttest

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/everycli/every/internal/redistest"
	"github.com/everycli/every/internal/testutil"
)

// partition N: N times, host A (an every through a TCP proxy to the
// script's Redis, --lock-ttl 1s) runs a job that ignores SIGTERM and holds an
// exclusive flock on a file; mid-run the proxy is frozen (A's connections stay
// open, nothing gets through). Host B (another every, straight to Redis,
// same job) waits for the lock and runs a job that takes the same flock
// shared, without waiting: it must find it free, that is A's job dead.
// A must log the run as lost_lock. EVERY_PARTITION_RUNS overrides N (the
// stress run: 20).
func partition(ts *testscript.TestScript, neg bool, args []string) {
	noNeg(ts, neg, "partition")
	if len(args) != 1 {
		ts.Fatalf("usage: partition N")
	}
	n, err := strconv.Atoi(args[0])
	ts.Check(err)
	if env := os.Getenv("EVERY_PARTITION_RUNS"); env != "" {
		n, err = strconv.Atoi(env)
		ts.Check(err)
	}
	serversMu.Lock()
	srv := servers[ts]
	serversMu.Unlock()
	if srv == nil {
		ts.Fatalf("partition: no redis started")
	}
	every, err := exec.LookPath("every")
	ts.Check(err)
	var gaps []time.Duration
	for i := range n {
		gaps = append(gaps, partitionOnce(ts, every, "redis://%s/0", srv.Addr, ts.MkAbs(fmt.Sprintf("p%d", i)), i))
	}
	slices.Sort(gaps)
	ts.Logf("%d partitions: A's job dead before B's started in each; gap from A's job's death to B's start: min %v, median %v, max %v",
		n, gaps[0], gaps[len(gaps)/2], gaps[len(gaps)-1])
}

// partitionOnce runs one partition in dir and returns the time from A's
// job's death to B's job's start; store is the --store URL, with %s for the
// server's address (or the proxy's).
func partitionOnce(ts *testscript.TestScript, every, store, redisAddr, dir string, i int) time.Duration {
	ts.Check(os.MkdirAll(dir, 0o700))
	proxy := redistest.NewProxy(scriptTB{ts}, redisAddr)
	defer proxy.Close()
	held := filepath.Join(dir, "held")
	ts.Check(os.WriteFile(held, nil, 0o600))
	name := "part" + strconv.Itoa(i)
	start := func(addr string, opts []string, script string) (*exec.Cmd, *bytes.Buffer, <-chan error) {
		argv := append([]string{"1h", "--max-runs", "1", "--no-state", "--store", fmt.Sprintf(store, addr), "--lock-ttl", "1s", "--name", name}, opts...)
		argv = append(argv, "--", "sh", "-c", script)
		cmd := exec.Command(every, argv...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "PATH="+ts.Getenv("PATH"), "GORACE=atexit_sleep_ms=0")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		ts.Check(cmd.Start())
		ts.Defer(func() { _ = cmd.Process.Kill() })
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		return cmd, &stderr, done
	}
	wait := func(who string, done <-chan error) {
		if _, ok := testutil.Receive(done); !ok {
			ts.Fatalf("run %d: %s did not end within %v", i, who, testutil.WaitBound)
		}
	}

	// A: SIGTERM ignored, --kill-after far beyond the TTL: only the lease's
	// own kill can end it in time.
	_, aErr, aDone := start(proxy.Addr, []string{"--kill-after", "1h"},
		`trap "" TERM INT; echo $$ > a.pid; exec flock -x held sh -c 'touch a.started; exec sleep 3600'`)
	if !waitForFile(filepath.Join(dir, "a.started")) {
		ts.Fatalf("run %d: A's job did not start within %v\n%s", i, testutil.WaitBound, aErr)
	}
	aPid := readPid(ts, filepath.Join(dir, "a.pid"))
	// Should the test fail, A's job (its own process group, TERM ignored,
	// its sleep out of reach of the parent-death signal) must not outlive it;
	// by the end, though, its group may be gone and its id another's.
	ts.Defer(func() { signalOwnGroup(ts, aPid, syscall.SIGKILL) })
	// B waits for the lock (polling every 50ms) while A holds it.
	_, bErr, bDone := start(redisAddr, []string{"--lock-wait", "30s"},
		`date +%s%N > b.tmp && mv b.tmp b.start; flock -n -s held true || echo "A's job still holds the lock" > overlap`)
	// Cut A off mid-run: anywhere in its renewal cycle.
	time.Sleep(time.Duration(rand.Int64N(int64(500 * time.Millisecond))))
	proxy.Freeze()

	// A's job's death, seen as its flock's release (to the 5ms of a poll).
	f, err := os.Open(held)
	ts.Check(err)
	defer f.Close()
	var dead time.Time
	released := testutil.Eventually(func() bool {
		if b, err := os.ReadFile(filepath.Join(dir, "overlap")); err == nil {
			ts.Fatalf("run %d: B's job ran alongside A's: %s\nA:\n%s", i, b, aErr)
		}
		if syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB) != nil {
			return false
		}
		dead = time.Now()
		ts.Check(syscall.Flock(int(f.Fd()), syscall.LOCK_UN))
		return true
	})
	if !released {
		ts.Fatalf("run %d: A's job still holds its lock %v after the partition\nA:\n%s", i, testutil.WaitBound, aErr)
	}
	wait("B", bDone)
	wait("A", aDone)
	if alive(ts, aPid) {
		ts.Fatalf("run %d: A's job (pid %d) still runs", i, aPid)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "overlap")); err == nil {
		ts.Fatalf("run %d: B's job ran alongside A's: %s\nA:\n%s\nB:\n%s", i, b, aErr, bErr)
	}
	b, err := os.ReadFile(filepath.Join(dir, "b.start"))
	if err != nil {
		ts.Fatalf("run %d: B's job never ran: %v\nB:\n%s", i, err, bErr)
	}
	ns, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	ts.Check(err)
	gap := time.Unix(0, ns).Sub(dead)
	if gap < 0 {
		ts.Fatalf("run %d: B's job started %v before A's died\nA:\n%s\nB:\n%s", i, -gap, aErr, bErr)
	}
	if !strings.Contains(aErr.String(), "event=finish result=lost_lock") {
		ts.Fatalf("run %d: A did not record the run as lost_lock:\n%s", i, aErr)
	}
	return gap
}
