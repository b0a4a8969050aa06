package servertest

import "syscall"

// sysProcAttr has the kernel kill the server when the test process dies
// before its cleanups run (a test binary's -timeout panic runs none), so
// that no server outlives its test.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
