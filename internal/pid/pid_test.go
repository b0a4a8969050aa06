package pid

import (
	"os"
	"os/exec"
	"testing"
)

func TestAlive(t *testing.T) {
	if !Alive(os.Getpid()) {
		t.Error("this process is not alive")
	}
	if !Alive(1) {
		t.Error("pid 1 is not alive (EPERM must count as alive)")
	}
	for _, p := range []int{0, -1, -os.Getpid()} {
		if Alive(p) {
			t.Errorf("Alive(%d): a pid of 0 or less is no process", p)
		}
	}
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	if Alive(cmd.Process.Pid) {
		t.Errorf("pid %d, reaped, is alive", cmd.Process.Pid)
	}
}
