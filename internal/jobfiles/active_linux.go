package jobfiles

import "golang.org/x/sys/unix"

// Open file description locks: owned by the open file, not the process, so
// they survive nothing but the descriptor, and the holder's other
// descriptors of the file cannot drop them.
const (
	setLock = unix.F_OFD_SETLK
	getLock = unix.F_OFD_GETLK
)
