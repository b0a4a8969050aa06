//go:build !linux

package scripttest

import (
	"fmt"
	"syscall"

	"github.com/rogpeppe/go-internal/testscript"
)

// signalOwn sends sig to pid. Without /proc and pidfds it cannot tell a
// process of the script from one that took its pid since; the scripts that
// signal pids from files are run on Linux (see ownproc_linux_test.go).
func signalOwn(_ *testscript.TestScript, pid int, sig syscall.Signal) error {
	if pid <= 0 {
		return fmt.Errorf("pid %d is not a process", pid)
	}
	return syscall.Kill(pid, sig)
}

// signalOwnGroup sends sig to process group pgid.
func signalOwnGroup(_ *testscript.TestScript, pgid int, sig syscall.Signal) {
	if pgid > 0 {
		_ = syscall.Kill(-pgid, sig)
	}
}
