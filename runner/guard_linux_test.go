package runner

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/everycli/every/internal/testutil"
)

// The guard's promise, without killing the test: every's end of the pipe
// closing, as when every dies, has the kernel SIGKILL the command's whole
// group, a grandchild that the parent-death signal never reaches included.
// The guard serves runs one after the other: the first run ends as runs do,
// and the signal goes to the second's group.
func TestGuardKillsTheGroupWhenEveryDies(t *testing.T) {
	g, err := newGuard()
	if err != nil {
		t.Fatal(err)
	}
	first, firstGC := startGuarded(t, g)
	_ = syscall.Kill(-first.Process.Pid, syscall.SIGKILL) // the run's end and sweep
	_ = first.Wait()
	procs.forget(first.Process.Pid)
	g.disarm()
	if !testutil.Eventually(func() bool { return !running(firstGC) }) {
		t.Fatalf("the first run's grandchild %d outlived its group's sweep", firstGC)
	}

	cmd, gc := startGuarded(t, g)
	g.close() // every "dies": its descriptors close
	if !testutil.Eventually(func() bool { return !running(gc) }) {
		t.Fatalf("grandchild %d still runs %v after every's end of the guard closed", gc, testutil.WaitBound)
	}
	err = cmd.Wait()
	procs.forget(cmd.Process.Pid)
	if cmd.ProcessState == nil {
		t.Fatalf("wait for the command: %v", err)
	}
	if ws := cmd.ProcessState.Sys().(syscall.WaitStatus); ws.Signal() != syscall.SIGKILL {
		t.Fatalf("the command ended with %v, want killed by SIGKILL", err)
	}
}

// startGuarded starts, under guard g, a shell in a process group of its own
// whose child (the command's grandchild, as every sees it) ignores SIGTERM
// and SIGHUP, and returns the shell and the grandchild's pid. The test's end
// kills what is left.
func startGuarded(t *testing.T, g *guard) (*exec.Cmd, int) {
	t.Helper()
	pidFile := filepath.Join(t.TempDir(), "gc.pid")
	cmd := exec.Command("/bin/sh", "-c", `trap "" TERM HUP; sleep 60 & echo $! >"$1"; wait; true`, "sh", pidFile)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.ExtraFiles = []*os.File{g.file()}
	// Started as Exec starts its commands: registered with the reaper, which
	// would otherwise reap it as an orphan, were it enabled.
	if _, err := procs.start(cmd); err != nil {
		t.Fatal(err)
	}
	pgid := cmd.Process.Pid
	t.Cleanup(func() { _ = syscall.Kill(-pgid, syscall.SIGKILL) })
	if err := g.arm(pgid); err != nil {
		t.Fatal(err)
	}
	var gc int
	if !testutil.Eventually(func() bool {
		b, err := os.ReadFile(pidFile)
		gc, _ = parsePid(b)
		return err == nil && gc > 0
	}) {
		t.Fatalf("no grandchild pid in %s within %v", pidFile, testutil.WaitBound)
	}
	if !running(gc) {
		t.Fatalf("grandchild %d is not running", gc)
	}
	return cmd, gc
}

// A run's command holds the guard's read end as descriptor 3 and the lock's
// file as 4, and nothing of every's (every's end of the guard stays its
// own, or every's death would go unseen).
func TestExecCommandHoldsGuardAndLock(t *testing.T) {
	dir := t.TempDir()
	lockPath := filepath.Join(dir, "job.lock")
	lockFile, err := os.Create(lockPath)
	if err != nil {
		t.Fatal(err)
	}
	defer lockFile.Close()
	out := filepath.Join(dir, "fds")
	script := `for fd in /proc/$$/fd/*; do echo "${fd##*/} $(readlink "$fd")"; done >"$1"`
	r := Exec(context.Background(), Attempt{Argv: []string{"sh", "-c", script, "sh", out}, Lock: lockFile, Signal: syscall.SIGTERM})
	if r.Outcome != Success {
		t.Fatalf("result %+v", r)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	fds := map[string]string{}
	for line := range strings.Lines(string(b)) {
		if f := strings.Fields(line); len(f) == 2 {
			fds[f[0]] = f[1]
		}
	}
	if !strings.HasPrefix(fds["3"], "pipe:") {
		t.Errorf("descriptor 3 is %q, want the guard's pipe; all:\n%s", fds["3"], b)
	}
	if fds["4"] != lockPath {
		t.Errorf("descriptor 4 is %q, want the lock file %s; all:\n%s", fds["4"], lockPath, b)
	}
	pipes := 0
	for _, target := range fds {
		if target == fds["3"] {
			pipes++
		}
	}
	if pipes != 1 {
		t.Errorf("the guard's pipe is open %d times in the command, want once (its read end); all:\n%s", pipes, b)
	}
}

// running reports whether pid is a process that has not ended (a zombie has).
func running(pid int) bool {
	if unix.Kill(pid, 0) != nil {
		return false
	}
	st, _, err := readStat(pid, nil)
	return err == nil && st.state != 'Z'
}

// parsePid reads a pid written as text.
func parsePid(b []byte) (int, error) { return strconv.Atoi(strings.TrimSpace(string(b))) }
