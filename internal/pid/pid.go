// Package pid owns the one question every asks of a process it did not
// start: is it alive, on this host?
package pid

import (
	"errors"
	"syscall"
)

// Alive reports whether a process with this pid exists on this host (a
// zombie counts). A pid of 0 or less is no process: kill(0) and kill(-n)
// would ask about process groups, and always find one.
func Alive(pid int) bool {
	if pid <= 0 {
		return false
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
