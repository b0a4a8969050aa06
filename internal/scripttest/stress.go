package scripttest

import (
	"errors"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/everycli/every/schedule"
	"github.com/everycli/every/state"
)

// checkslots FILE INTERVAL MAXMISSING [ENDS]: the slots in FILE, one RFC 3339
// time a line, are all different, all on one grid of INTERVAL, and leave at
// most MAXMISSING slots of that grid (a number, or a share such as 10%)
// between the first and the last unrun.
//
// With ENDS, one "SLOT TIME" line a run, TIME taken once its lock was
// released (by an --on-success hook, which runs after that), a slot that
// passed while an earlier slot's run still held the lock is not counted as
// missing: it was skipped, as it must be, not doubled. On a loaded machine a
// run (a -race binary's start-up, and every's own work after it) takes longer
// than the interval as often as the load has it; MAXMISSING then bounds only
// the slots that no run explains.
func checkSlots(ts *testscript.TestScript, neg bool, args []string) {
	noNeg(ts, neg, "checkslots")
	if len(args) != 3 && len(args) != 4 {
		ts.Fatalf("usage: checkslots FILE INTERVAL MAXMISSING [ENDS]")
	}
	interval, err := time.ParseDuration(args[1])
	ts.Check(err)
	pct, isPct := strings.CutSuffix(args[2], "%")
	maxMissing, err := strconv.Atoi(pct)
	ts.Check(err)
	var slots []time.Time
	for _, line := range strings.Fields(ts.ReadFile(args[0])) {
		t, err := time.Parse(time.RFC3339Nano, line)
		ts.Check(err)
		slots = append(slots, t)
	}
	if len(slots) < 2 {
		ts.Fatalf("%d slots, want at least 2", len(slots))
	}
	slices.SortFunc(slots, func(a, b time.Time) int { return a.Compare(b) })
	grid := schedule.Grid{Anchor: slots[0], Interval: interval}
	for i, t := range slots {
		if i > 0 && t.Equal(slots[i-1]) {
			ts.Fatalf("slot %s ran twice", t.Format(time.RFC3339Nano))
		}
		if !grid.Prev(t).Equal(t) {
			ts.Fatalf("slot %s is not on the grid of %s (anchor %s)", t.Format(time.RFC3339Nano), interval, slots[0].Format(time.RFC3339Nano))
		}
	}
	var runs []slotRun
	if len(args) == 4 {
		runs = readEnds(ts, args[3])
	}
	span := grid.Index(slots[len(slots)-1]) + 1
	missing, overrun := 0, 0
	for k := range span {
		t := grid.Slot(k)
		if _, ran := slices.BinarySearchFunc(slots, t, time.Time.Compare); ran {
			continue
		}
		if slices.ContainsFunc(runs, func(r slotRun) bool { return r.slot.Before(t) && !r.released.Before(t) }) {
			overrun++
			continue
		}
		missing++
	}
	if isPct {
		maxMissing = int(span) * maxMissing / 100
	}
	ts.Logf("%d runs for %d slots: none twice, %d not run: %d while an earlier slot's run held the lock, %d otherwise", len(slots), span, overrun+missing, overrun, missing)
	if missing > maxMissing {
		ts.Fatalf("%d of %d slots not run (not counting %d that passed while an earlier slot's run held the lock), want at most %d", missing, span, overrun, maxMissing)
	}
}

// slotRun is one run an ENDS file of checkslots tells of: its slot, and a
// time after its lock was released.
type slotRun struct{ slot, released time.Time }

func readEnds(ts *testscript.TestScript, name string) []slotRun {
	var runs []slotRun
	for line := range strings.Lines(ts.ReadFile(name)) {
		f := strings.Fields(line)
		if len(f) != 2 {
			ts.Fatalf("%s: line %q is not \"SLOT TIME\"", name, line)
		}
		slot, err1 := time.Parse(time.RFC3339Nano, f[0])
		released, err2 := time.Parse(time.RFC3339Nano, f[1])
		if err := errors.Join(err1, err2); err != nil {
			ts.Fatalf("%s: line %q: %v", name, line, err)
		}
		runs = append(runs, slotRun{slot, released})
	}
	return runs
}

// torture N DIR: N times, start every on a 1ms job with its state in DIR and
// SIGKILL it at a random moment in its first 30ms. After each kill, the state
// file (if there is one yet) parses, and the temporary files left are those
// of one writer (each start-up removes those of the writer before it), at
// most maxLeftOfOne; a clean run at the end leaves none. The moments
// come from a logged seed; EVERY_TORTURE_SEED=SEED replays them.
func torture(ts *testscript.TestScript, neg bool, args []string) {
	noNeg(ts, neg, "torture")
	if len(args) != 2 {
		ts.Fatalf("usage: torture N DIR")
	}
	n, err := strconv.Atoi(args[0])
	ts.Check(err)
	seed := tortureSeed(ts)
	// Logged first, so a failure's output always carries it.
	ts.Logf("torture seed %d (EVERY_TORTURE_SEED=%d replays it)", seed, seed)
	rng := rand.New(rand.NewPCG(seed, 0))
	dir := ts.MkAbs(args[1])
	ts.Check(os.MkdirAll(dir, 0o700))
	every, err := exec.LookPath("every")
	ts.Check(err)
	argv := []string{"1ms", "--state-dir", dir, "--name", "t", "--catch-up", "all", "--", "true"}
	parsed, maxLeft := 0, 0
	for i := range n {
		cmd := exec.Command(every, argv...)
		cmd.Env = append(os.Environ(), "PATH="+ts.Getenv("PATH"), "GORACE=atexit_sleep_ms=0")
		ts.Check(cmd.Start())
		time.Sleep(time.Duration(rng.Int64N(int64(30 * time.Millisecond))))
		ts.Check(cmd.Process.Kill())
		_ = cmd.Wait()
		if b, err := os.ReadFile(filepath.Join(dir, "t.json")); err == nil {
			if _, err := state.Decode(b); err != nil {
				ts.Fatalf("kill %d: state file torn: %v\n%s", i+1, err, b)
			}
			parsed++
		}
		left, writers := leftovers(ts, dir)
		maxLeft = max(maxLeft, left)
		if len(writers) > 1 || left > maxLeftOfOne {
			ts.Fatalf("kill %d: %d temporary files left, of writers %v (want at most %d, of one writer)",
				i+1, left, writers, maxLeftOfOne)
		}
	}
	cmd := exec.Command(every, append([]string{"--max-runs", "1"}, argv...)...)
	cmd.Env = append(os.Environ(), "PATH="+ts.Getenv("PATH"), "GORACE=atexit_sleep_ms=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		ts.Fatalf("clean run after the kills: %v\n%s", err, out)
	}
	b, err := os.ReadFile(filepath.Join(dir, "t.json"))
	ts.Check(err)
	rec, err := state.Decode(b)
	ts.Check(err)
	if left, _ := leftovers(ts, dir); left != 0 {
		ts.Fatalf("%d temporary files left after a clean run", left)
	}
	ts.Logf("%d kills: state parsed after %d (none torn), at most %d temporary file left at once, %d runs recorded, %d of them cut short",
		n, parsed, maxLeft, rec.Runs, rec.Failures)
}

func leftovers(ts *testscript.TestScript, dir string) (n int, writers map[string]bool) {
	entries, err := os.ReadDir(dir)
	ts.Check(err)
	writers = map[string]bool{}
	for _, e := range entries {
		switch name := e.Name(); {
		case name == "t.json" || name == "t.lock" || name == "t.json.active" || name == ".t.json.synced":
		case strings.HasPrefix(name, ".t.json.tmp-"):
			n++
			pid, _, _ := strings.Cut(strings.TrimPrefix(name, ".t.json.tmp-"), "-")
			writers[pid] = true
		default:
			ts.Fatalf("unexpected file %s in the state directory", name)
		}
	}
	return n, writers
}

// maxLeftOfOne is the most temporary files a writer killed at any moment
// leaves: the next one, prepared, and the records its last writes replaced
// (state's maxKept), not yet removed.
const maxLeftOfOne = 4
