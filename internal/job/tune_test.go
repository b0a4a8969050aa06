package job

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/everycli/every/internal/testutil"
	"github.com/everycli/every/runner"
)

// The runtime defaults apply unless the environment sets GOMAXPROCS or GOGC:
// then what the runtime took from it (here 7 and 150) is left alone.
func TestTuneRuntime(t *testing.T) {
	procs, gc := runtime.GOMAXPROCS(0), debug.SetGCPercent(100)
	defer func() { runtime.GOMAXPROCS(procs); debug.SetGCPercent(gc) }()
	for _, tc := range []struct {
		env            map[string]string
		procs          int
		wantP, wantGCP int
	}{
		{map[string]string{}, defaultMaxProcs, defaultMaxProcs, defaultGCPercent},
		{map[string]string{"GOMAXPROCS": "7"}, defaultMaxProcs, 7, defaultGCPercent},
		{map[string]string{"GOGC": "150"}, defaultMaxProcs, defaultMaxProcs, 150},
		{map[string]string{"GOMAXPROCS": "7", "GOGC": "150"}, defaultMaxProcs, 7, 150},
		// every jobs: Go's GOMAXPROCS (here as the test found it), the GC target.
		{map[string]string{}, 0, 7, defaultGCPercent},
	} {
		runtime.GOMAXPROCS(7)
		debug.SetGCPercent(150)
		tuneRuntime(func(k string) string { return tc.env[k] }, tc.procs)
		if p := runtime.GOMAXPROCS(0); p != tc.wantP {
			t.Errorf("env %v: GOMAXPROCS %d, want %d", tc.env, p, tc.wantP)
		}
		if g := debug.SetGCPercent(100); g != tc.wantGCP {
			t.Errorf("env %v: GOGC %d, want %d", tc.env, g, tc.wantGCP)
		}
	}
}

// exeRSS is the resident size (kB) of this program's read-only mappings of
// its own executable.
func exeRSS(t *testing.T) int {
	t.Helper()
	exe, err := os.Readlink("/proc/self/exe")
	if err != nil {
		t.Skip("no /proc/self/exe here")
	}
	smaps, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		t.Skip("no /proc/self/smaps here")
	}
	total, in := 0, false
	for line := range strings.Lines(string(smaps)) {
		f := strings.Fields(line)
		switch {
		case len(f) >= 6 && strings.Contains(f[0], "-"):
			in = f[5] == exe && !strings.Contains(f[1], "w")
		case len(f) >= 2 && f[0] == "Rss:" && in:
			kb, _ := strconv.Atoi(f[1])
			total += kb
		}
	}
	return total
}

// Dropping the start-up pages shrinks what is resident of the program's own
// code and read-only data, and the program runs on (a page it needs comes
// back).
func TestDropStartupPages(t *testing.T) {
	before := exeRSS(t)
	dropStartupPages()
	after := exeRSS(t)
	t.Logf("resident of the executable: %d kB, then %d kB", before, after)
	if after >= before {
		t.Errorf("resident %d kB after the drop, %d kB before: nothing given back", after, before)
	}
	// Code and constants that were dropped still work.
	if got := strconv.Itoa(12345) + strings.ToUpper("ok"); got != "12345OK" {
		t.Errorf("after the drop: %q", got)
	}
}

func TestCleanMappings(t *testing.T) {
	const exe = "/usr/bin/every"
	smaps := `00400000-00800000 r-xp 00000000 fd:01 42   /usr/bin/every
Size:               4096 kB
Anonymous:             0 kB
Private_Dirty:         0 kB
VmFlags: rd ex mr mw me
00800000-00900000 r--p 00400000 fd:01 42   /usr/bin/every
Size:               1024 kB
Private_Dirty:       512 kB
Anonymous:             0 kB
00900000-00910000 r--p 00500000 fd:01 42   /usr/bin/every
Size:                 64 kB
Private_Dirty:        64 kB
Anonymous:            64 kB
00910000-00920000 rw-p 00510000 fd:01 42   /usr/bin/every
Private_Dirty:         8 kB
00a00000-00b00000 r--p 00000000 fd:01 77   /usr/lib/other
Anonymous:             0 kB
00c00000-00d00000 r-xp 00000000 fd:01 43   /usr/bin/every (deleted)
Anonymous:             0 kB
7f0000000000-7f0000001000 rw-p 00000000 00:00 0
Anonymous:             4 kB
`
	got := cleanMappings(smaps, exe)
	want := [][2]uint64{{0x400000, 0x800000}, {0x800000, 0x900000}}
	if !slices.Equal(got, want) {
		t.Errorf("cleanMappings = %x, want %x (the written-once read-only mapping, the writable one, other files, a replaced binary and anonymous memory left alone)", got, want)
	}
}

// TestPIELoopSurvivesDrop: a position-independent build (as distributions
// package Go programs) keeps running after its pages are dropped: its
// relocated read-only data is its own and must be left alone.
func TestPIELoopSurvivesDrop(t *testing.T) {
	if testing.Short() {
		t.Skip("builds every with -buildmode=pie")
	}
	bin := filepath.Join(t.TempDir(), "every-pie")
	build := exec.Command("go", "build", "-buildmode=pie", "-o", bin, "github.com/everycli/every")
	if out, err := build.CombinedOutput(); err != nil {
		t.Skipf("no PIE build here: %v\n%s", err, out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), testutil.WaitBound)
	defer cancel()
	out, err := exec.CommandContext(ctx, bin, "10ms", "--max-runs", "3", "--no-state", "--no-lock", "-q", "--", "true").CombinedOutput()
	if err != nil {
		t.Fatalf("every built as PIE: %v\n%s", err, out)
	}
}

// A loop is tuned at once; a one-shot only before a long wait (its Release),
// which either gives.
func TestSleeper(t *testing.T) {
	procs, gc := runtime.GOMAXPROCS(0), debug.SetGCPercent(100)
	defer func() { runtime.GOMAXPROCS(procs); debug.SetGCPercent(gc) }()
	env := func(string) string { return "" }
	for _, tc := range []struct {
		maxRuns int
		atOnce  bool
	}{{0, true}, {5, true}, {1, false}} {
		runtime.GOMAXPROCS(7)
		debug.SetGCPercent(150)
		cfg := &runner.Config{MaxRuns: tc.maxRuns}
		sleeper(cfg, env)
		if tuned := runtime.GOMAXPROCS(0) == defaultMaxProcs; tuned != tc.atOnce {
			t.Errorf("--max-runs %d: tuned at once %v, want %v", tc.maxRuns, tuned, tc.atOnce)
		}
		if cfg.Release == nil || cfg.ReleaseAfter != ReleaseAfter {
			t.Fatalf("--max-runs %d: Release %v after %v, want one after %v", tc.maxRuns, cfg.Release != nil, cfg.ReleaseAfter, ReleaseAfter)
		}
		cfg.Release(time.Now())
		if p, g := runtime.GOMAXPROCS(0), debug.SetGCPercent(100); p != defaultMaxProcs || g != defaultGCPercent {
			t.Errorf("--max-runs %d: after a release GOMAXPROCS %d, GOGC %d; want %d, %d", tc.maxRuns, p, g, defaultMaxProcs, defaultGCPercent)
		}
	}
}
