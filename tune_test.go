package main

import (
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
)

// The runtime defaults apply unless the environment sets GOMAXPROCS or GOGC:
// then what the runtime took from it (here 7 and 150) is left alone.
func TestTuneRuntime(t *testing.T) {
	procs, gc := runtime.GOMAXPROCS(0), debug.SetGCPercent(100)
	defer func() { runtime.GOMAXPROCS(procs); debug.SetGCPercent(gc) }()
	for _, tc := range []struct {
		env            map[string]string
		wantP, wantGCP int
	}{
		{map[string]string{}, defaultMaxProcs, defaultGCPercent},
		{map[string]string{"GOMAXPROCS": "7"}, 7, defaultGCPercent},
		{map[string]string{"GOGC": "150"}, defaultMaxProcs, 150},
		{map[string]string{"GOMAXPROCS": "7", "GOGC": "150"}, 7, 150},
	} {
		runtime.GOMAXPROCS(7)
		debug.SetGCPercent(150)
		tuneRuntime(func(k string) string { return tc.env[k] })
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
