package scripttest

import (
	"bufio"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/everycli/every/internal/redistest"
	"github.com/everycli/every/internal/testutil"
)

// blackhole: a listener that accepts and never answers; sets $HOLE
// (host:port).
func blackhole(ts *testscript.TestScript, neg bool, args []string) {
	noNeg(ts, neg, "blackhole")
	ts.Setenv("HOLE", redistest.NewBlackHole(scriptTB{ts}).Addr)
}

// refused: sets $REFUSED to a loopback host:port where nothing listens.
func refused(ts *testscript.TestScript, neg bool, args []string) {
	noNeg(ts, neg, "refused")
	ts.Setenv("REFUSED", redistest.RefusedAddr(scriptTB{ts}))
}

// storedown N FIRST STOP ADDR: N times, start every 100ms with its store at
// ADDR (down or silent) and measure how long it takes to log its first
// skip (reason=store) and, SIGTERM sent at a random moment 150 to 450ms
// after that (for a black hole, while a store call is in flight), to end. The
// median of each must be within FIRST and STOP. The time to the first skip
// leaves out every's own start-up, which a loaded machine stretches to most
// of a second for a -race binary: before each run, every --version is timed
// from start to exit, and that is taken off.
func storedown(ts *testscript.TestScript, neg bool, args []string) {
	noNeg(ts, neg, "storedown")
	if len(args) != 4 {
		ts.Fatalf("usage: storedown N FIRST STOP ADDR")
	}
	n, err := strconv.Atoi(args[0])
	ts.Check(err)
	maxFirst, err := time.ParseDuration(args[1])
	ts.Check(err)
	maxStop, err := time.ParseDuration(args[2])
	ts.Check(err)
	every, err := exec.LookPath("every")
	ts.Check(err)
	var firsts, stops, startups []time.Duration
	for i := range n {
		version := exec.Command(every, "--version")
		version.Env = append(os.Environ(), "GORACE=atexit_sleep_ms=0")
		t0 := time.Now()
		if out, err := version.CombinedOutput(); err != nil {
			ts.Fatalf("run %d: every --version: %v\n%s", i, err, out)
		}
		startup := time.Since(t0)
		startups = append(startups, startup)
		url := "redis://" + args[3] + "/0"
		if strings.Contains(args[3], "://") {
			url = args[3] // another store's URL (etcd://)
		}
		cmd := exec.Command(every, "100ms", "--store", url, "--name", "down", "--", "true")
		cmd.Env = append(os.Environ(), "PATH="+ts.Getenv("PATH"), "GORACE=atexit_sleep_ms=0")
		stderr, err := cmd.StderrPipe()
		ts.Check(err)
		started := time.Now()
		ts.Check(cmd.Start())
		ts.Defer(func() { _ = cmd.Process.Kill() })
		skipped := make(chan time.Time, 1)
		var log strings.Builder
		go func() {
			sc := bufio.NewScanner(stderr)
			for sc.Scan() {
				log.WriteString(sc.Text() + "\n")
				// A slot's skip, not the start-up's line (which has no count).
				if strings.Contains(sc.Text(), "reason=store count=") {
					select {
					case skipped <- time.Now():
					default:
					}
				}
			}
			_, _ = io.Copy(io.Discard, stderr)
		}()
		at, ok := testutil.Receive(skipped)
		if !ok {
			ts.Fatalf("run %d: no skip reason=store within %v", i, testutil.WaitBound)
		}
		firsts = append(firsts, at.Sub(started)-startup)
		// The next slot comes within 100ms of the skip, and a black hole
		// keeps its lock call waiting 500ms: from 150 to 450ms after the
		// skip, the signal lands while that call is in flight.
		time.Sleep(150*time.Millisecond + time.Duration(rand.Int64N(int64(300*time.Millisecond))))
		ts.Check(cmd.Process.Signal(syscall.SIGTERM))
		sent := time.Now()
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		err, ok = testutil.Receive(done)
		if !ok {
			ts.Fatalf("run %d: every still runs %v after SIGTERM", i, testutil.WaitBound)
		}
		stops = append(stops, time.Since(sent))
		if cmd.ProcessState == nil {
			ts.Fatalf("run %d: waiting for every: %v", i, err)
		}
		if ws := cmd.ProcessState.Sys().(syscall.WaitStatus); !ws.Signaled() || ws.Signal() != syscall.SIGTERM {
			ts.Fatalf("run %d: every ended with %v, want killed by SIGTERM\n%s", i, cmd.ProcessState, log.String())
		}
	}
	slices.Sort(firsts)
	slices.Sort(stops)
	slices.Sort(startups)
	ts.Logf("%d runs against %s: first skip after start-up (median %v) and min %v, median %v, max %v; stop after min %v, median %v, max %v",
		n, args[3], startups[n/2], firsts[0], firsts[n/2], firsts[n-1], stops[0], stops[n/2], stops[n-1])
	if firsts[n/2] > maxFirst {
		ts.Fatalf("first skip after %v (median), want at most %v", firsts[n/2], maxFirst)
	}
	if stops[n/2] > maxStop {
		ts.Fatalf("stop took %v (median), want at most %v", stops[n/2], maxStop)
	}
}
