package scripttest

import (
	"fmt"
	"os"
	"strings"

	"github.com/everycli/every/internal/testutil"
	"github.com/rogpeppe/go-internal/testscript"
)

// This file holds the script commands of the clock scripts
// (testdata/script/clock_*.txtar). They never touch the host's clock.

// stoppedCmd is "stopped PIDFILE": wait until the process is stopped (by
// SIGSTOP: state T in /proc); with !, until it runs again (SIGCONT).
func stoppedCmd(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 {
		ts.Fatalf("usage: stopped PIDFILE")
	}
	pid := readPid(ts, args[0])
	if !testutil.Eventually(func() bool { return processState(ts, pid) == "T" != neg }) {
		ts.Fatalf("process %d (%s): stopped is not %v within %v", pid, args[0], !neg, testutil.WaitBound)
	}
}

// processState returns the state letter of process pid (R, S, T, Z, ...).
func processState(ts *testscript.TestScript, pid int) string {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		ts.Fatalf("process %d: %v", pid, err)
	}
	// The state follows the parenthesised command name.
	rest := strings.TrimSpace(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
	return rest[:1]
}
