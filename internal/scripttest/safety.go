package scripttest

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/everycli/every/internal/testutil"
	"github.com/rogpeppe/go-internal/testscript"
)

// tmpfsCondition is the script condition [tmpfs]: a tmpfs can be mounted
// here (root, or CAP_SYS_ADMIN).
func tmpfsCondition() (bool, error) {
	dir, err := os.MkdirTemp("", "every-tmpfs-")
	if err != nil {
		return false, err
	}
	defer os.Remove(dir)
	if err := mountTmpfs(dir, "64k"); err != nil {
		return false, nil
	}
	return true, unmountDetach(dir)
}

// tmpfs DIR SIZE: mount a tmpfs of SIZE (such as 256k) at DIR, unmounted when
// the script ends. Guard the script with [tmpfs].
func tmpfsCmd(ts *testscript.TestScript, neg bool, args []string) {
	noNeg(ts, neg, "tmpfs")
	if len(args) != 2 {
		ts.Fatalf("usage: tmpfs DIR SIZE")
	}
	dir := ts.MkAbs(args[0])
	ts.Check(os.MkdirAll(dir, 0o700))
	ts.Check(mountTmpfs(dir, args[1]))
	ts.Defer(func() { _ = unmountDetach(dir) })
}

// fill FILE: write FILE until its file system is full.
func fillCmd(ts *testscript.TestScript, neg bool, args []string) {
	noNeg(ts, neg, "fill")
	if len(args) != 1 {
		ts.Fatalf("usage: fill FILE")
	}
	f, err := os.Create(ts.MkAbs(args[0]))
	ts.Check(err)
	defer f.Close()
	block := make([]byte, 4096)
	for {
		if _, err := f.Write(block); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				ts.Fatalf("fill %s: %v", args[0], err)
			}
			return
		}
	}
}

// runsincrease FILE: the EVERY_RUN numbers in FILE, as job -append writes
// them, are 1, 2, 3, ... with none repeated or left out.
func runsIncrease(ts *testscript.TestScript, neg bool, args []string) {
	noNeg(ts, neg, "runsincrease")
	if len(args) != 1 {
		ts.Fatalf("usage: runsincrease FILE")
	}
	lines := strings.Split(strings.TrimSpace(ts.ReadFile(args[0])), "\n")
	for i, line := range lines {
		f := strings.Fields(line)
		if len(f) < 2 || f[1] != strconv.Itoa(i+1) {
			ts.Fatalf("line %d of %s is %q, want run %d: EVERY_RUN must count 1, 2, 3, ...", i+1, args[0], line, i+1)
		}
	}
	ts.Logf("%d runs, numbered 1 to %d", len(lines), len(lines))
}

// within D PIDFILE: wait until the process in PIDFILE has ended, and fail if
// that took longer than D. For the few promises about time that are a
// behaviour, not a speed (a stop without a one-second fallback): D is set
// well above the expected figure, well below the bug's.
func within(ts *testscript.TestScript, neg bool, args []string) {
	noNeg(ts, neg, "within")
	if len(args) != 2 {
		ts.Fatalf("usage: within D PIDFILE")
	}
	d, err := time.ParseDuration(args[0])
	ts.Check(err)
	pid := readPid(ts, args[1])
	start := time.Now()
	if !testutil.Eventually(func() bool { return !alive(ts, pid) }) {
		ts.Fatalf("process %d still runs after %v", pid, testutil.WaitBound)
	}
	if took := time.Since(start); took > d {
		ts.Fatalf("process %d took %v to end, want at most %v", pid, took, d)
	}
}
