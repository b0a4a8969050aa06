//go:build darwin || linux || (freebsd && !386 && !arm)

package runner

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"
)

// darwin and FreeBSD use a watchdog as a run's guard (guard_watchdog.go);
// Linux builds it too, for its test.

// A watchdog stands in for the parent-death signal where the kernel has none
// (darwin), and for the whole group's where it cannot be had without a
// process (darwin, FreeBSD): a tiny shell that every starts in the command's process group,
// reading a pipe whose only writer is every. When every dies, even by
// SIGKILL, the kernel closes that end; the read ends, and the watchdog kills
// its own process group, the command's, with `kill -KILL 0`. It never
// signals anything but the group it is a member of, so no pid reuse can turn
// it on a stranger. It ignores every signal it can (those every passes on
// to the group, HUP and USR2 among them, must not end it), but SIGKILL:
// every's own sweeps of the group end it with the command.
type watchdog struct {
	cmd *exec.Cmd
	w   *os.File // every's end of the pipe: open for as long as every lives
}

// watchdogScript ignores the signals it can, waits for the pipe's end, and
// kills its process group.
const watchdogScript = `trap '' HUP INT QUIT TERM USR1 USR2 ALRM PIPE TSTP TTIN TTOU VTALRM PROF XCPU XFSZ WINCH; read x; kill -KILL 0`

// startWatchdog starts a watchdog in process group pgid, which must exist
// (its leader not reaped yet).
func startWatchdog(pgid int) (*watchdog, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("start a watchdog for process group %d: %w", pgid, err)
	}
	defer r.Close()
	cmd := exec.Command("/bin/sh", "-c", watchdogScript)
	cmd.Stdin = r // and no stdout or stderr: /dev/null
	cmd.Env = []string{}
	cmd.Dir = "/"
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pgid: pgid}
	if err := cmd.Start(); err != nil {
		w.Close()
		return nil, fmt.Errorf("start a watchdog for process group %d: %w", pgid, err)
	}
	return &watchdog{cmd: cmd, w: w}, nil
}

// release closes every's end of the pipe and reaps the watchdog. Call it
// once the group has been sent SIGKILL: the watchdog is dead or dying then
// (were it not, it now kills its group, all that is left of which is
// itself).
func (d *watchdog) release() {
	d.w.Close()
	_ = d.cmd.Wait()
}
