//go:build linux

package runner

import (
	"os/exec"
	"testing"

	"github.com/everycli/every/internal/testutil"
)

// A registered child's exit is told by the reaper, from the SIGCHLD it gets,
// without reaping it (Wait still gets its status); one started while another
// registered child's zombie is still there is told too.
func TestAwaitExitFromSIGCHLD(t *testing.T) {
	procs.enable()
	start := func() *exec.Cmd {
		t.Helper()
		cmd := exec.Command("/bin/true")
		if _, err := procs.start(cmd); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_ = cmd.Process.Kill()
			if cmd.ProcessState == nil {
				_ = cmd.Wait()
			}
			procs.forget(cmd.Process.Pid)
		})
		return cmd
	}
	await := func(cmd *exec.Cmd) {
		t.Helper()
		if _, ok := testutil.Receive(procs.exited(cmd.Process.Pid)); !ok {
			t.Fatalf("the exit of child %d was not told within %s", cmd.Process.Pid, waitBound)
		}
	}
	first := start()
	await(first) // a zombie, unreaped: waitid names it before any later child
	second := start()
	if err := first.Wait(); err != nil {
		t.Fatal(err)
	}
	procs.forget(first.Process.Pid)
	await(second)
	if !awaitExit(second.Process.Pid) {
		t.Fatal("awaitExit of a registered child that has exited reports no exit")
	}
	if err := second.Wait(); err != nil {
		t.Fatal(err)
	}
	if awaitExit(second.Process.Pid + 1<<22) {
		t.Fatal("awaitExit of a pid that is no registered child reports an exit")
	}
}
