package runner

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/everycli/every/internal/testutil"
)

// The watchdog darwin relies on for the parent-death guarantee is plain
// POSIX (sh, a pipe, kill 0): it is proven here, where /proc shows when its
// traps are in place. It joins the command's group, outlives the signals
// every passes on to the group, and once every's end of its pipe closes (as
// when every is SIGKILLed), kills the group.
func TestWatchdogKillsGroupWhenEveryDies(t *testing.T) {
	// The command ignores the signals it is sent below, as the watchdog
	// must: only the watchdog's SIGKILL can end it.
	cmd := exec.Command("/bin/sh", "-c", `trap '' HUP USR2 TERM; exec sleep 60`)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// Registered with the reaper, which other tests of this binary have
	// started: it reaps every child it does not know, and this Wait must get
	// the command's status.
	if _, err := procs.start(cmd); err != nil {
		t.Fatal(err)
	}
	pgid := cmd.Process.Pid
	waited := make(chan error, 1)
	go func() { err := cmd.Wait(); procs.forget(pgid); waited <- err }()
	t.Cleanup(func() {
		// By pidfd, not kill(-pgid): the group may be gone by now, and its
		// id another's. Its other member, the watchdog, has a cleanup of
		// its own.
		_ = cmd.Process.Kill()
		<-waited
	})
	d, err := startWatchdog(pgid)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.cmd.Process.Kill(); d.release() })
	if pg, err := syscall.Getpgid(d.cmd.Process.Pid); err != nil || pg != pgid {
		t.Fatalf("watchdog's process group = %d (%v), want the command's, %d", pg, err, pgid)
	}
	ignores := func(pid int, sigs ...syscall.Signal) func() bool {
		return func() bool {
			b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
			if err != nil {
				return false
			}
			for line := range strings.Lines(string(b)) {
				if mask, ok := strings.CutPrefix(line, "SigIgn:"); ok {
					m, err := strconv.ParseUint(strings.TrimSpace(mask), 16, 64)
					for _, s := range sigs {
						if err != nil || m&(1<<(s-1)) == 0 {
							return false
						}
					}
					return true
				}
			}
			return false
		}
	}
	until(t, "command ignoring HUP, USR2, TERM", ignores(pgid, syscall.SIGHUP, syscall.SIGUSR2, syscall.SIGTERM))
	until(t, "watchdog's traps", ignores(d.cmd.Process.Pid, syscall.SIGHUP, syscall.SIGUSR2, syscall.SIGTERM))
	for _, sig := range []syscall.Signal{syscall.SIGHUP, syscall.SIGUSR2, syscall.SIGTERM} {
		if err := syscall.Kill(-pgid, sig); err != nil {
			t.Fatal(err)
		}
	}
	// Had the signals ended the watchdog, nothing would kill the command
	// below: the wait for its SIGKILL is what shows the watchdog survived.
	d.w.Close() // every dies: the kernel closes its descriptors
	if _, ok := testutil.Receive(waited); !ok {
		t.Fatalf("the command was not killed within %v of every's death", waitBound)
	}
	waited <- nil // for the cleanup
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Errorf("command ended by %v, want SIGKILL", cmd.ProcessState)
	}
}
