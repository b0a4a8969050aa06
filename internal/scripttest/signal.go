package scripttest

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"

	"github.com/everycli/every/internal/testutil"
	"github.com/rogpeppe/go-internal/testscript"
	"golang.org/x/sys/unix"
)

// ParsePid parses a pid file's content. A pid of 0 or less is an error,
// never a process: kill(2) takes 0 for the caller's process group and -1 for
// every process it may signal.
func ParsePid(content string) (int, error) {
	pid, err := strconv.Atoi(strings.TrimSpace(content))
	if err != nil {
		return 0, fmt.Errorf("parse pid: %w", err)
	}
	if pid <= 0 {
		return 0, fmt.Errorf("pid %d is not a process", pid)
	}
	return pid, nil
}

// readPid reads a pid file written by job.
func readPid(ts *testscript.TestScript, name string) int {
	pid, err := ParsePid(ts.ReadFile(name))
	if err != nil {
		ts.Fatalf("pid file %s: %v", name, err)
	}
	return pid
}

// alive reports whether pid is a process that has not ended (a zombie has).
// It fails the script for a pid of 0 or less (see ParsePid).
func alive(ts *testscript.TestScript, pid int) bool {
	if pid <= 0 {
		ts.Fatalf("alive(%d): not a process", pid)
	}
	if err := syscall.Kill(pid, 0); err != nil {
		return false
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// The state follows the parenthesised command name.
	rest := stat[strings.LastIndexByte(string(stat), ')')+1:]
	return !strings.HasPrefix(strings.TrimSpace(string(rest)), "Z")
}

// errNotOurs says a pid is that of a process the script did not start.
var errNotOurs = errors.New("not a process of this script")

// signal SIG PIDFILE: send SIG to the process whose pid is in PIDFILE, if it
// is still one of this script's (see signalOwn): never to one that took the
// pid after it ended. With !, the process must be refused as not the
// script's, and get nothing.
func signalCmd(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 {
		ts.Fatalf("usage: signal SIG PIDFILE")
	}
	sig := unix.SignalNum("SIG" + args[0])
	if sig == 0 {
		ts.Fatalf("unknown signal %s", args[0])
	}
	err := signalOwn(ts, readPid(ts, args[1]), sig)
	switch {
	case neg && err == nil:
		ts.Fatalf("signal %s %s: sent, want it refused", args[0], args[1])
	case neg && !errors.Is(err, errNotOurs):
		ts.Fatalf("signal %s %s: %v, want it refused as %v", args[0], args[1], err, errNotOurs)
	case neg:
		ts.Logf("refused: %v", err)
	case err != nil:
		ts.Fatalf("signal %s %s: %v", args[0], args[1], err)
	}
}

// gone PIDFILE...: wait until each process has ended; with !, check that
// each is still running.
func goneCmd(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) == 0 {
		ts.Fatalf("usage: gone PIDFILE...")
	}
	for _, a := range args {
		pid := readPid(ts, a)
		if neg {
			if !alive(ts, pid) {
				ts.Fatalf("process %d (%s) has ended", pid, a)
			}
			continue
		}
		if !testutil.Eventually(func() bool { return !alive(ts, pid) }) {
			ts.Fatalf("process %d (%s) still runs after %v", pid, a, testutil.WaitBound)
		}
	}
}
