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
	"golang.org/x/sys/unix"

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
	n, rng, dir := nDir(ts, "killoverlap", args, 2)
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

// nDir reads the N DIR arguments of a randomised command, logs its seed
// (tortureSeed) and makes DIR; stream tells the commands' random moments
// apart.
func nDir(ts *testscript.TestScript, name string, args []string, stream uint64) (int, *rand.Rand, string) {
	if len(args) != 2 {
		ts.Fatalf("usage: %s N DIR", name)
	}
	n, err := strconv.Atoi(args[0])
	ts.Check(err)
	seed := tortureSeed(ts)
	ts.Logf("%s seed %d (EVERY_TORTURE_SEED=%d replays it)", name, seed, seed)
	dir := ts.MkAbs(args[1])
	ts.Check(os.MkdirAll(dir, 0o700))
	return n, rand.New(rand.NewPCG(seed, stream)), dir
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

// earlysignal SIG FILE -- ARGS...: start every ARGS, held before its main
// (PauseStart: its package initialisation done, nothing of its own started),
// send it SIG, let it go on, wait until FILE exists (a run happened: the
// job's own file), then send SIGTERM. every must end by that SIGTERM, not by
// SIG: a signal that comes while every starts is handled as every handles it
// once running.
func earlySignal(ts *testscript.TestScript, neg bool, args []string) {
	noNeg(ts, neg, "earlysignal")
	if len(args) < 4 || args[2] != "--" {
		ts.Fatalf("usage: earlysignal SIG FILE -- ARGS...")
	}
	sig := unix.SignalNum("SIG" + args[0])
	if sig == 0 {
		ts.Fatalf("earlysignal: no signal %q", args[0])
	}
	file := ts.MkAbs(args[1])
	pause := ts.MkAbs(args[1] + ".start")
	every, err := exec.LookPath("every")
	ts.Check(err)
	cmd := exec.Command(every, args[3:]...)
	cmd.Dir = ts.MkAbs(".")
	cmd.Env = append(os.Environ(), "PATH="+ts.Getenv("PATH"), "GORACE=atexit_sleep_ms=0",
		"XDG_STATE_HOME="+ts.Getenv("XDG_STATE_HOME"), pauseStart+"="+pause)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	ts.Check(cmd.Start())
	var werr error
	exited := make(chan struct{})
	go func() { werr = cmd.Wait(); close(exited) }()
	ts.Defer(func() { _ = cmd.Process.Kill(); <-exited })
	ended := func() bool {
		select {
		case <-exited:
			return true
		default:
			return false
		}
	}
	if !testutil.Eventually(func() bool { return exists(pause+".paused") || ended() }) || ended() {
		ts.Fatalf("every did not pause at its start; its stderr:\n%s", stderr.String())
	}
	ts.Check(cmd.Process.Signal(sig))
	ts.Check(os.WriteFile(pause, nil, 0o600))
	if !testutil.Eventually(func() bool { return exists(file) || ended() }) {
		ts.Fatalf("no %s within %v; every's stderr:\n%s", args[1], testutil.WaitBound, stderr.String())
	}
	if ended() {
		ts.Fatalf("every ended (%v) on SIG%s sent while it started; its stderr:\n%s", werr, args[0], stderr.String())
	}
	ts.Check(cmd.Process.Signal(syscall.SIGTERM))
	if _, ok := testutil.Receive(exited); !ok {
		ts.Fatalf("every did not end within %v of SIGTERM", testutil.WaitBound)
	}
	ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus)
	if !ok || !ws.Signaled() || ws.Signal() != syscall.SIGTERM {
		ts.Fatalf("every ended with %v, want by SIGTERM; its stderr:\n%s", werr, stderr.String())
	}
}

// pauseStart names the file PauseStart waits for.
const pauseStart = "EVERY_TEST_PAUSE_START"

// PauseStart holds the test binary's every before its main, when
// EVERY_TEST_PAUSE_START names a file: it writes FILE.paused and returns
// once FILE exists (at most the wait bound). Package initialisation, where
// every catches its signals, is done by then; nothing else of every's is.
func PauseStart() {
	name := os.Getenv(pauseStart)
	if name == "" {
		return
	}
	_ = os.Unsetenv(pauseStart)
	writeFile(name+".paused", "")
	testutil.Eventually(func() bool { return exists(name) })
}

func exists(name string) bool {
	_, err := os.Stat(name)
	return err == nil
}
