//go:build freebsd && !386 && !arm

package runner

import (
	"errors"
	"unsafe"

	"golang.org/x/sys/unix"
)

// idtype_t P_PID of FreeBSD's sys/wait.h. (On 386 and arm, whose id_t
// argument takes two registers, proc_other.go stands in.)
const pPID = 0

// awaitExit returns once process pid has exited, without reaping it, so that
// exec.Cmd.Wait then returns at once, and reports whether it saw the exit:
// until Wait, the process is a zombie whose pid (and process group id)
// cannot be reused, and exec.go sweeps the group in that window. It blocks
// its thread in wait6(WEXITED|WNOWAIT), as Go's own Wait does here before
// it reaps. On any error it returns false, and Wait blocks as usual.
func awaitExit(pid int) bool {
	var status int32
	for {
		_, _, errno := unix.Syscall6(unix.SYS_WAIT6, pPID, uintptr(pid), uintptr(unsafe.Pointer(&status)),
			unix.WEXITED|unix.WNOWAIT, 0, 0)
		if errno == 0 {
			return true
		}
		if !errors.Is(errno, unix.EINTR) {
			return false
		}
	}
}
