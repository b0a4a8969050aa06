package scripttest

import (
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/everycli/every/internal/testutil"
)

// killoverlap N DIR: a restart after a crash never overlaps the dead run.
// N times: start every, with its state in DIR, on a run that lasts 400ms
// and whose command is a shell line, `sh -c 'job ...; true'` (the shape of
// every crontab line: the job is every's grandchild); wait until a run has
// started; SIGKILL every at a random moment of the run; and start the next
// every at once, without waiting for the dead one. Then stop the last with
// SIGTERM. The jobs hold an exclusion probe (job -exclusive), which the
// kernel frees when they die: a job that finds it taken, because one of a
// dead every's run still runs, writes DIR/probe.overlaps. There must be no
// such file, and each every must have started a run. The moments come from a
// logged seed; EVERY_TORTURE_SEED=SEED replays them.
func killOverlap(ts *testscript.TestScript, neg bool, args []string) {
	noNeg(ts, neg, "killoverlap")
	if len(args) != 2 {
		ts.Fatalf("usage: killoverlap N DIR")
	}
	n, err := strconv.Atoi(args[0])
	ts.Check(err)
	seed := tortureSeed(ts)
	ts.Logf("killoverlap seed %d (EVERY_TORTURE_SEED=%d replays it)", seed, seed)
	rng := rand.New(rand.NewPCG(seed, 2))
	dir := ts.MkAbs(args[1])
	ts.Check(os.MkdirAll(dir, 0o700))
	probe, runs := filepath.Join(dir, "probe"), filepath.Join(dir, "runs")
	every, err := exec.LookPath("every")
	ts.Check(err)
	line := "job -exclusive " + probe + " -append " + runs + " -sleep 400ms; true"
	argv := []string{"200ms", "--state-dir", dir, "--name", "ov", "--", "sh", "-c", line}
	env := append(os.Environ(), "PATH="+ts.Getenv("PATH"), "GORACE=atexit_sleep_ms=0")
	count := func() int {
		b, _ := os.ReadFile(runs)
		return strings.Count(string(b), "\n")
	}
	var prev *exec.Cmd
	for i := 0; i <= n; i++ {
		before := count()
		cmd := exec.Command(every, argv...)
		cmd.Env = env
		ts.Check(cmd.Start())
		ts.Defer(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
		if prev != nil {
			_ = prev.Wait() // SIGKILLed: it ends with an error
		}
		if !testutil.Eventually(func() bool { return count() > before }) {
			ts.Fatalf("cycle %d: every started no run within %v", i, testutil.WaitBound)
		}
		if i == n {
			ts.Check(cmd.Process.Signal(syscall.SIGTERM))
			_ = cmd.Wait()
			break
		}
		time.Sleep(time.Duration(rng.IntN(150)) * time.Millisecond)
		ts.Check(cmd.Process.Signal(syscall.SIGKILL))
		prev = cmd
	}
	if b, err := os.ReadFile(probe + ".overlaps"); err == nil {
		ts.Fatalf("a run overlapped a dead every's:\n%s", b)
	}
	ts.Logf("%d every killed in mid-run and restarted, %d runs, no overlap", n, count())
}

// tortureSeed is a random seed for a randomised script command, or
// EVERY_TORTURE_SEED's, to replay one.
func tortureSeed(ts *testscript.TestScript) uint64 {
	seed := rand.Uint64()
	if env := os.Getenv("EVERY_TORTURE_SEED"); env != "" {
		var err error
		if seed, err = strconv.ParseUint(env, 10, 64); err != nil {
			ts.Fatalf("bad EVERY_TORTURE_SEED %q: %v; want a decimal uint64", env, err)
		}
	}
	return seed
}
