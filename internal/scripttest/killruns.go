package scripttest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/everycli/every/internal/testutil"
	"github.com/everycli/every/state"
)

// killruns N DIR: N times, start every on a 2ms job (job -append) with its
// state in DIR, wait for a run to start, then SIGKILL every at a random
// moment in the next 12ms: before, during or after a start's write, an
// exec, an end. Then one clean run. EVERY_RUN never repeats, and every run
// that started is counted: the record's runs is the last number handed
// out, and each number that no job wrote (every died after its start was
// written, before its command could) counts as a run cut short. The
// moments come from a logged seed; EVERY_TORTURE_SEED=SEED replays them.
func killRuns(ts *testscript.TestScript, neg bool, args []string) {
	noNeg(ts, neg, "killruns")
	n, rng, dir := nDir(ts, "killruns", args, 1)
	runs := filepath.Join(dir, "runs")
	every, err := exec.LookPath("every")
	ts.Check(err)
	argv := []string{"2ms", "--state-dir", dir, "--name", "k", "--", "job", "-append", runs}
	env := append(os.Environ(), "PATH="+ts.Getenv("PATH"), "GORACE=atexit_sleep_ms=0")
	size := func() int64 {
		fi, err := os.Stat(runs)
		if err != nil {
			return 0
		}
		return fi.Size()
	}
	start := time.Now()
	for i := range n {
		cmd := exec.Command(every, argv...)
		cmd.Env = env
		ts.Check(cmd.Start())
		// Killed from a goroutine once a run has started, at a moment
		// drawn now: the wait for the run does not shift it.
		after := time.Duration(rng.Int64N(int64(12 * time.Millisecond)))
		killed := make(chan struct{})
		go func(was int64) {
			defer close(killed)
			// Killed all the same should no run start in time: the clean
			// run and the record's check below tell what went wrong.
			testutil.Eventually(func() bool { return size() != was })
			time.Sleep(after)
			_ = cmd.Process.Kill()
		}(size())
		<-killed
		_ = cmd.Wait()
		if i%50 == 49 {
			ts.Logf("%d kills in %v", i+1, time.Since(start).Round(time.Millisecond))
		}
	}
	cmd := exec.Command(every, append([]string{"--max-runs", "1"}, argv...)...)
	cmd.Env = env
	if out, err := cmd.CombinedOutput(); err != nil {
		ts.Fatalf("clean run after the kills: %v\n%s", err, out)
	}
	// The jobs of killed every's run on: their lines come within moments,
	// taken as over once the file has not grown for 200ms.
	was, since := size(), time.Now()
	if !testutil.Eventually(func() bool {
		if s := size(); s != was {
			was, since = s, time.Now()
		}
		return time.Since(since) >= 200*time.Millisecond
	}) {
		ts.Fatalf("the jobs of the killed every's still write %v after the clean run", testutil.WaitBound)
	}
	b, err := os.ReadFile(filepath.Join(dir, "k.json"))
	ts.Check(err)
	rec, err := state.Decode(b)
	ts.Check(err)
	seen := map[int]bool{}
	last := 0
	for line := range strings.Lines(ts.ReadFile(runs)) {
		f := strings.Fields(line)
		if len(f) != 4 || f[0] != "run" {
			ts.Fatalf("bad line %q in %s", line, runs)
		}
		k, err := strconv.Atoi(f[1])
		ts.Check(err)
		if seen[k] {
			ts.Fatalf("EVERY_RUN %d handed out twice", k)
		}
		seen[k] = true
		last = max(last, k)
	}
	if rec.Runs != last {
		ts.Fatalf("the record counts %d runs, the last EVERY_RUN was %d", rec.Runs, last)
	}
	unseen := rec.Runs - len(seen)
	if unseen > rec.Failures {
		ts.Fatalf("%d numbers handed out that no job wrote, %d runs cut short on record: want each counted", unseen, rec.Failures)
	}
	ts.Logf("%d kills in %v: %d runs, EVERY_RUN never repeated, %d numbers whose job never wrote (killed before its exec), %d runs cut short on record",
		n, time.Since(start).Round(time.Millisecond), rec.Runs, unseen, rec.Failures)
}
