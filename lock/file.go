package lock

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"

	"github.com/everycli/every/internal/regular"
)

// File is a lock on a file with flock(2), the lock util-linux flock(1) takes,
// so the two exclude each other. The kernel releases it when its holder dies,
// however it dies.
//
// The file is every's only to lock: it is created 0600 if missing, and its
// content is never read, written or truncated, because flock(1) users share
// lock files and `--lock "$0"` locks a job's own script. Who holds the lock is
// in the job's state record, not here. A path that is a symbolic link (even a
// dangling one), a directory, a device, a FIFO or a socket is refused
// (ErrNotRegular) and never opened in a way that can block or follow the link.
type File struct {
	Path string
}

// ErrNotRegular is the error, wrapped in an *fs.PathError, of a lock path
// that exists but is not a regular file.
var ErrNotRegular = regular.ErrNotRegular

// open opens the lock file for flock(2), creating it 0600 if missing. It
// opens it read-write where it can (flock on NFS is emulated with fcntl
// locks, which need write access) and read-only where it cannot, as for a
// read-only script locked with --lock "$0": flock(2) locks either way, and
// excludes flock(1), which opens read-only. Nothing is ever written.
func open(path string) (int, error) {
	// Lstat first, so that a device or a FIFO is never opened at all (opening
	// some devices does something); the fstat below closes the race.
	if fi, err := os.Lstat(path); err == nil && !fi.Mode().IsRegular() {
		return -1, &fs.PathError{Op: "open", Path: path, Err: regular.NotMode(fi.Mode())}
	}
	return openFD(path)
}

// openFD is open without the Lstat: O_NOFOLLOW, O_NONBLOCK and the fstat
// alone refuse what is not a regular file, without blocking.
func openFD(path string) (int, error) {
	fd, err := regular.Open(path, unix.O_RDWR|unix.O_CREAT, 0o600)
	if errors.Is(err, unix.EACCES) || errors.Is(err, unix.EROFS) || errors.Is(err, unix.ETXTBSY) || errors.Is(err, unix.EPERM) {
		rfd, rerr := regular.Open(path, unix.O_RDONLY, 0)
		if rerr == nil || errors.Is(rerr, regular.ErrNotRegular) {
			return rfd, rerr
		}
	}
	return fd, err
}

// tryLock takes the lock on fd if it is free.
func tryLock(fd int) (bool, error) {
	for {
		err := unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB)
		switch {
		case err == nil:
			return true, nil
		case errors.Is(err, unix.EWOULDBLOCK):
			return false, nil
		case !errors.Is(err, unix.EINTR):
			return false, err
		}
	}
}

// pollEvery is how often a waiting Lock tries again: flock(2) cannot be
// waited for with a deadline.
const pollEvery = 5 * time.Millisecond

// Lock takes the file lock, trying again until wait has passed.
func (f File) Lock(ctx context.Context, wait time.Duration) (Lease, error) {
	fd, err := open(f.Path)
	if err != nil {
		return nil, err
	}
	ok, err := tryLock(fd)
	if err == nil && !ok && wait > 0 {
		ok, err = waitLock(ctx, fd, wait)
	}
	if err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("lock %q: %w", f.Path, err)
	}
	if !ok {
		unix.Close(fd)
		return nil, &BusyError{}
	}
	return fileLease{fd: fd}, nil
}

// waitLock tries again every pollEvery until the lock is taken, wait has
// passed or ctx ends.
func waitLock(ctx context.Context, fd int, wait time.Duration) (bool, error) {
	deadline := time.NewTimer(wait)
	defer deadline.Stop()
	tick := time.NewTicker(pollEvery)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return false, nil
		case <-deadline.C:
			return false, nil
		case <-tick.C:
			if ok, err := tryLock(fd); ok || err != nil {
				return ok, err
			}
		}
	}
}

type fileLease struct {
	fd int
}

// Unlock releases the lock; closing the last descriptor would too.
func (l fileLease) Unlock() error {
	err := unix.Flock(l.fd, unix.LOCK_UN)
	if cerr := unix.Close(l.fd); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("unlock: %w", err)
	}
	return nil
}

func (fileLease) Lost() <-chan struct{}     { return nil }
func (fileLease) Token() int64              { return 0 }
func (fileLease) Expiring() <-chan struct{} { return nil }

// Check makes sure the lock file's directory exists (created 0700) and that
// the file can be opened for locking: the start-up check. A path that is not
// a regular file is an error wrapping ErrNotRegular; nothing at the target
// of a link is ever created or changed, and nothing blocks.
func Check(path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	fd, err := open(path)
	if err != nil {
		return err
	}
	return unix.Close(fd)
}
