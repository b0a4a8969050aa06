package scripttest

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/everycli/every/internal/testutil"
	"github.com/rogpeppe/go-internal/testscript"
)

// Script commands for the process-tree scripts (proc_*.txtar).

// dead PIDFILE...: each process has ended already, without waiting: every
// must not exit before what its command left behind is dead. (For "still
// running", use ! gone.)
func deadCmd(ts *testscript.TestScript, neg bool, args []string) {
	noNeg(ts, neg, "dead")
	if len(args) == 0 {
		ts.Fatalf("usage: dead PIDFILE...")
	}
	for _, a := range args {
		if pid := readPid(ts, a); alive(ts, pid) {
			ts.Fatalf("process %d (%s) still runs", pid, a)
		}
	}
}

// cleanup PIDFILE...: at the end of the script, whatever happened, kill each
// process still running, so a failing script leaves nothing behind; only
// processes of this script, never one that took the pid since (signalOwn).
func cleanupCmd(ts *testscript.TestScript, neg bool, args []string) {
	noNeg(ts, neg, "cleanup")
	if len(args) == 0 {
		ts.Fatalf("usage: cleanup PIDFILE...")
	}
	for _, a := range args {
		name := ts.MkAbs(a)
		ts.Defer(func() {
			b, err := os.ReadFile(name)
			if err != nil {
				return
			}
			if pid, err := ParsePid(string(b)); err == nil {
				_ = signalOwn(ts, pid, syscall.SIGKILL)
			}
		})
	}
}

// findpid1 PIDFILE: wait for the every that runs as PID 1 of its own
// namespace, in this script's directory, and write its pid (as this
// namespace sees it) to PIDFILE.
func findPid1Cmd(ts *testscript.TestScript, neg bool, args []string) {
	noNeg(ts, neg, "findpid1")
	if len(args) != 1 {
		ts.Fatalf("usage: findpid1 PIDFILE")
	}
	wd := ts.MkAbs(".")
	var pid int
	if !testutil.Eventually(func() bool { pid = findPid1(wd); return pid != 0 }) {
		ts.Fatalf("no every as PID 1 in %s within %v", wd, testutil.WaitBound)
	}
	ts.Check(os.WriteFile(ts.MkAbs(args[0]), []byte(strconv.Itoa(pid)), 0o644))
}

// nsorphan PIDFILE: from outside, enter the PID namespace of the process in
// PIDFILE and leave an orphan there that ends at once: its init inherits it,
// though it never started it.
func nsOrphanCmd(ts *testscript.TestScript, neg bool, args []string) {
	noNeg(ts, neg, "nsorphan")
	if len(args) != 1 {
		ts.Fatalf("usage: nsorphan PIDFILE")
	}
	out, err := exec.Command("nsenter", "-t", strconv.Itoa(readPid(ts, args[0])), "--pid", "--",
		"sh", "-c", "(sleep 0.05 &)").CombinedOutput()
	if err != nil {
		ts.Fatalf("nsenter: %v: %s", err, out)
	}
}

// nochildren PIDFILE: wait until the process has no child left, not even a
// zombie.
func noChildrenCmd(ts *testscript.TestScript, neg bool, args []string) {
	noNeg(ts, neg, "nochildren")
	if len(args) != 1 {
		ts.Fatalf("usage: nochildren PIDFILE")
	}
	pid := readPid(ts, args[0])
	var kids []string
	if !testutil.Eventually(func() bool { kids = childStates(pid); return len(kids) == 0 }) {
		ts.Fatalf("process %d still has children after %v: %s", pid, testutil.WaitBound, strings.Join(kids, ", "))
	}
}

// findPid1 returns the pid of a process named every, with working directory
// wd, that is PID 1 of its own namespace, or 0.
func findPid1(wd string) int {
	names, _ := filepath.Glob("/proc/[0-9]*")
	for _, dir := range names {
		if cwd, err := os.Readlink(dir + "/cwd"); err != nil || cwd != wd {
			continue
		}
		status, err := os.ReadFile(dir + "/status")
		if err != nil {
			continue
		}
		var name, nspid string
		for line := range strings.SplitSeq(string(status), "\n") {
			if v, ok := strings.CutPrefix(line, "Name:"); ok {
				name = strings.TrimSpace(v)
			}
			if v, ok := strings.CutPrefix(line, "NSpid:"); ok {
				nspid = v
			}
		}
		f := strings.Fields(nspid)
		if name == "every" && len(f) > 1 && f[len(f)-1] == "1" {
			pid, _ := strconv.Atoi(filepath.Base(dir))
			return pid
		}
	}
	return 0
}

// childStates lists the children of pid, each as "PID (STATE)".
func childStates(pid int) []string {
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", pid))
	var kids []string
	for _, t := range tasks {
		b, _ := os.ReadFile(t)
		for _, c := range strings.Fields(string(b)) {
			state := "?"
			if stat, err := os.ReadFile("/proc/" + c + "/stat"); err == nil {
				if f := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:])); len(f) > 0 {
					state = f[0]
				}
			}
			kids = append(kids, c+" ("+state+")")
		}
	}
	return kids
}

// pidnsCondition is the script condition [pidns]: unshare(1) can make a PID
// namespace with its own /proc here (root, or user namespaces).
func pidnsCondition() (bool, error) {
	err := exec.Command("unshare", "--pid", "--fork", "--mount-proc", "true").Run()
	return err == nil, nil
}
