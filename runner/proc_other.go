//go:build !linux && !darwin && !(freebsd && !386 && !arm)

package runner

// The seam for other systems: what proc_linux.go does with Linux's own
// means (a child subreaper, /proc, the parent-death signal), and
// proc_freebsd.go and proc_darwin.go with theirs, not done at all. The
// command still gets a process group of its own, and timeouts and stops
// reach that group; what leaves it is out of reach, and the command is not
// killed should every die by SIGKILL. Porting every to a system means
// replacing this file (and the stubs of proc_nosweep.go) with its own.

import (
	"os/exec"
)

// procs starts and forgets the command's processes; there is no reaper.
var procs reaper

type reaper struct{}

func (reaper) enable() {}

func (reaper) start(cmd *exec.Cmd) (*escapees, error) {
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return &escapees{pgid: cmd.Process.Pid}, nil // its own group (Setpgid)
}

func (reaper) forget(int) {}

// awaitExit cannot wait without reaping here: cmd.Wait does it.
func awaitExit(int) bool { return false }
