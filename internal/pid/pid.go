// Package pid owns the one question every asks of a process it did not
// start: is it alive, on this host?
package pid

import (
	"errors"
	"syscall"
)

// Alive reports whether a process with this pid exists on this host (a
// zombie counts). A pid of 0 or less is no process: kill(0) and kill(-n)
// would ask about process groups, and always find one. Only ESRCH says a
// process is gone: a refusal (EPERM, or EACCES from a security module) says
// there is one to refuse.
func Alive(pid int) bool {
	if pid <= 0 {
		return false
	}
	return !errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}
