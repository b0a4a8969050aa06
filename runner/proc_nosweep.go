//go:build !linux && !(freebsd && !386 && !arm)

package runner

import "syscall"

// escapees are the processes that left the command's group: none can be
// found here (macOS and the other systems: a watchdog, or nothing, keeps
// the command's group in check instead).
type escapees struct{ pgid int }

func (*escapees) signal(syscall.Signal) int    { return 0 }
func (*escapees) kill() (escaped, survive int) { return 0, 0 }
func (*escapees) done()                        {}

// sysProcAttr puts the command in a process group of its own.
func sysProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }
