package main

import (
	"errors"
	"io"
	"io/fs"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/everycli/every/internal/regular"
)

// A running every marks its job active for its whole life by holding a
// shared (read) record lock on a file beside the job's state,
// <state>.active, and every status probes that lock. A record lock, not a pid
// in a file: the kernel drops it when its holder ends, however it ends
// (SIGKILL, OOM, a crash), so a dead every is never taken for a live one, and
// a pid reused by another process means nothing here. Shared, because several
// every processes may run one job (SPEC section 8), and each holds the
// marker at once. Not flock(2): the probe must ask "is it held?" without
// taking anything, and fcntl's GETLK does exactly that. On Linux the locks
// are open file description locks (F_OFD_*), which belong to the open file,
// not to the process, so no other descriptor of this file in the holder can
// drop them by being closed; elsewhere they are classic POSIX record locks,
// which behave the same here as long as the holder opens the marker once
// (it does) and the prober is another process (it is).

// markerSuffix is what a job's state path takes to name its active marker.
// every status lists *.json files only, so the marker is never listed as a
// job.
const markerSuffix = ".active"

// markerPath is the active marker of the job whose state is at statePath.
func markerPath(statePath string) string { return statePath + markerSuffix }

// held are the descriptors of the markers this process holds. They are
// never closed: the locks last until the process ends, and a raw descriptor
// (unlike an *os.File) has no finalizer to close it behind our back.
var held struct {
	sync.Mutex
	fds []int
}

// holdActive marks the job active for the rest of this process's life: it
// opens (creating 0600) the marker at path and takes a shared lock on all of
// it, which it never releases. A path that is a link, or anything but a
// regular file, is refused.
func holdActive(path string) error {
	fd, err := openMarker(path, unix.O_RDONLY|unix.O_CREAT)
	if err != nil {
		return err
	}
	lk := unix.Flock_t{Type: unix.F_RDLCK, Whence: io.SeekStart} // Len 0: the whole file, however it grows
	if err := fcntlLock(fd, setLock, &lk); err != nil {
		unix.Close(fd)
		return &fs.PathError{Op: "lock", Path: path, Err: err}
	}
	held.Lock()
	held.fds = append(held.fds, fd)
	held.Unlock()
	return nil
}

// probeActive reports whether a process holds the marker at path: whether
// a whole-file write lock would conflict with a lock someone holds. A
// missing marker is inactive (no every has run the job since, or it ran
// with a version that did not mark). The probe takes no lock and creates
// nothing.
func probeActive(path string) (bool, error) {
	fd, err := openMarker(path, unix.O_RDONLY)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	defer unix.Close(fd)
	lk := unix.Flock_t{Type: unix.F_WRLCK, Whence: io.SeekStart}
	if err := fcntlLock(fd, getLock, &lk); err != nil {
		return false, &fs.PathError{Op: "probe lock", Path: path, Err: err}
	}
	return lk.Type != unix.F_UNLCK, nil
}

// openMarker opens the marker at path with flags, refusing what is not a
// regular file without blocking or following a link. It never leaks into the
// command: a command that inherited the descriptor would keep the lock, and
// the job active, after every died.
func openMarker(path string, flags int) (int, error) {
	return regular.Open(path, flags, 0o600)
}

// fcntlLock sets or gets a record lock, again if a signal interrupts it.
func fcntlLock(fd, cmd int, lk *unix.Flock_t) error {
	for {
		err := unix.FcntlFlock(uintptr(fd), cmd, lk)
		if !errors.Is(err, unix.EINTR) {
			return err
		}
	}
}
