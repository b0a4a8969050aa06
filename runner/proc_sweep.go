//go:build linux || (freebsd && !386 && !arm)

package runner

import (
	"syscall"
	"time"
)

// This file holds what the systems that find a command's escapees (see
// escapees in proc_linux.go and proc_freebsd.go: how each finds them)
// share: the sweep that kills them, and the command's process attributes.

// kill SIGKILLs the escapees until none is left, as those killed leave
// theirs to every in turn, for sweepBound at most. It returns how many of
// those signalled had left the process group, and how many survive.
func (e *escapees) kill() (escaped, survive int) {
	deadline := time.Now().Add(sweepBound)
	pause := 100 * time.Microsecond
	for {
		n := e.signal(syscall.SIGKILL)
		if n == 0 {
			return len(e.escaped), 0
		}
		if time.Now().After(deadline) {
			return len(e.escaped), n
		}
		time.Sleep(pause)
		pause = min(2*pause, 20*time.Millisecond)
	}
}

// sysProcAttr puts the command in a process group of its own, and has it
// killed should every die, even by SIGKILL (on FreeBSD by procctl
// PROC_PDEATHSIG_CTL, which Go's os/exec calls in the child): the child must
// not run on unsupervised.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
