package servertest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/everycli/every/internal/testutil"
)

// TestOrphanParent with EVERY_TEST_SERVER_PID set: a test process that
// starts a server, writes its pid there, and waits to be killed (at most
// the wait bound), as a test binary killed by its -timeout is.
func TestOrphanParent(t *testing.T) {
	pidFile := os.Getenv("EVERY_TEST_SERVER_PID")
	if pidFile == "" {
		t.Skip("a helper process for TestServerDiesWithItsTestProcess")
	}
	p := Run(t, sleeper(t, func() error { return nil }))
	tmp := pidFile + ".tmp"
	if err := os.WriteFile(tmp, []byte(strconv.Itoa(p.cmd.Process.Pid)), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, pidFile); err != nil {
		t.Fatal(err)
	}
	time.Sleep(testutil.WaitBound) // killed long before
}

// A server outlives no test process, even one killed before its cleanups.
func TestServerDiesWithItsTestProcess(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "server.pid")
	parent := exec.Command(os.Args[0], "-test.run=^TestOrphanParent$", "-test.timeout="+(2*testutil.WaitBound).String())
	parent.Env = append(os.Environ(), "EVERY_TEST_SERVER_PID="+pidFile)
	if err := parent.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = parent.Process.Kill(); _ = parent.Wait() }()
	var b []byte
	if !testutil.Eventually(func() bool { var err error; b, err = os.ReadFile(pidFile); return err == nil }) {
		t.Fatalf("the helper started no server within %v", testutil.WaitBound)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	// Should the server outlive its parent, it must not outlive this test.
	defer func() {
		if t.Failed() {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}()
	_ = parent.Process.Kill()
	_ = parent.Wait()
	if !testutil.Eventually(func() bool { return gone(pid) }) {
		t.Fatalf("server %d still runs %v after its test process was killed", pid, testutil.WaitBound)
	}
}
