//go:build !linux

package jobfiles

import "golang.org/x/sys/unix"

// Classic POSIX record locks, where OFD locks are missing: the holder opens
// its marker once and never closes it, and the prober is another process, so
// they serve the same purpose (see active.go).
const (
	setLock = unix.F_SETLK
	getLock = unix.F_GETLK
)
