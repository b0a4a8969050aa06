//go:build !linux && !darwin && !(freebsd && !386 && !arm)

package runner

// The seam for other systems: what proc_linux.go does with Linux's own
// means (a child subreaper, /proc, the parent-death signal), and
// proc_freebsd.go and proc_darwin.go with theirs, not done at all. The
// command still gets a process group of its own, and timeouts and stops
// reach that group; what leaves it is out of reach, and the command is not
// killed should every die by SIGKILL. Porting every to a system means
// replacing this file with one of its own.

import (
	"os/exec"
	"syscall"
	"time"
)

// procs starts and forgets the command's processes; there is no reaper.
var procs reaper

type reaper struct{}

func (reaper) enable() {}

func (reaper) start(cmd *exec.Cmd) (*escapees, error) { return &escapees{}, cmd.Start() }

func (reaper) forget(int) {}

// escapees are the processes that left the command's group: none can be
// found here.
type escapees struct{ pgid int }

func (*escapees) signal(syscall.Signal) int    { return 0 }
func (*escapees) kill() (escaped, survive int) { return 0, 0 }

// sweepBound is how long a sweep of escapees may take.
const sweepBound = 3 * time.Second

// sysProcAttr puts the command in a process group of its own.
func sysProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

// awaitExit cannot wait without reaping here: cmd.Wait does it.
func awaitExit(int) bool { return false }
