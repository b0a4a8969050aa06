package lock

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/gofrs/flock"
	"golang.org/x/sys/unix"

	"github.com/everycli/every/internal/regular"
)

// File is a lock on a file with flock(2) (github.com/gofrs/flock), the lock
// util-linux flock(1) takes, so the two exclude each other. The kernel
// releases it when its holder dies, however it dies.
//
// The file is every's only to lock: it is created 0600 if missing and opened
// read-only, as flock(1) opens it, and its content is never read, written or
// truncated, because flock(1) users share lock files and `--lock "$0"` locks
// a job's own script (which, never open for writing, can still be executed).
// Who holds the lock is in the job's state record, not here. A path that is
// a symbolic link (even a dangling one), a directory, a device, a FIFO or a
// socket is refused (ErrNotRegular) and never opened in a way that can block
// or follow the link.
//
// Each Lock opens the file afresh and each Unlock closes it: nothing is kept
// open between runs. Once the lock is taken, the path is checked to lead to
// the very file locked (lstat: same device and inode): a lock file deleted,
// renamed away or replaced (by another file, a link, a directory) while it
// was being locked is let go and the path locked afresh, so that the lock is
// always on the file that flock(1) and other instances open by that path.
type File struct {
	Path string
}

// ErrNotRegular is the error, wrapped in an *fs.PathError, of a lock path
// that exists but is not a regular file.
var ErrNotRegular = regular.ErrNotRegular

// openFlags never follow a link at the path itself, never block on a FIFO
// or a device and never make a terminal ours; read-only, as flock(1) opens:
// flock(2) locks either way, and a descriptor open for writing would make
// the exec of a locked script fail (ETXTBSY). os.OpenFile adds O_CLOEXEC.
const openFlags = os.O_CREATE | os.O_RDONLY | unix.O_NOFOLLOW | unix.O_NONBLOCK | unix.O_NOCTTY

// newFlock is the flock.Flock of path, unlocked and not yet opened.
func newFlock(path string) *flock.Flock {
	return flock.New(path, flock.SetFlag(openFlags), flock.SetPermissions(0o600))
}

// preCheck refuses a path that exists and is not a regular file before it is
// opened at all: opening some devices does something, and a FIFO is better
// never opened. The check after the lock closes the race.
func preCheck(path string) error {
	fi, err := os.Lstat(path)
	if err == nil && !fi.Mode().IsRegular() {
		return &fs.PathError{Op: "open", Path: path, Err: regular.NotMode(fi.Mode())}
	}
	return nil
}

// openError says what open(2) met at path when it refused a path that is not
// a regular file (O_NOFOLLOW, O_CREAT); other errors are returned as they are.
func openError(path string, err error) error {
	var not string
	switch {
	case errors.Is(err, unix.ELOOP) || errors.Is(err, unix.EMLINK):
		// O_NOFOLLOW met a link at the path (FreeBSD says EMLINK).
		not = "a symbolic link"
	case errors.Is(err, unix.EISDIR):
		not = "a directory"
	case errors.Is(err, unix.ENXIO) || errors.Is(err, unix.ENODEV):
		// What open(2) says of a socket, or of a device without a driver.
		not = "a socket or a device"
	default:
		var pe *fs.PathError
		if errors.As(err, &pe) {
			return err
		}
		return &fs.PathError{Op: "open", Path: path, Err: err}
	}
	return &fs.PathError{Op: "open", Path: path, Err: regular.Not(not)}
}

// pollEvery is how often a waiting Lock tries again: flock(2) cannot be
// waited for with a deadline.
const pollEvery = 5 * time.Millisecond

// Lock takes the file lock, trying again until wait has passed or ctx ends.
func (f *File) Lock(ctx context.Context, wait time.Duration) (Lease, error) {
	if err := preCheck(f.Path); err != nil {
		return nil, err
	}
	return lockPath(ctx, f.Path, wait)
}

// lockPath takes the lock without the Lstat in front: O_NOFOLLOW, O_NONBLOCK
// and the check after the lock alone refuse what is not a regular file,
// without blocking.
func lockPath(ctx context.Context, path string, wait time.Duration) (Lease, error) {
	for tries := 0; ; tries++ {
		fl := newFlock(path)
		ok, err := try(ctx, fl, wait)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, &BusyError{}
		}
		if lockedHook != nil {
			lockedHook(path)
		}
		same, err := atPath(fl)
		if same && err == nil {
			return fileLease{fl: fl}, nil
		}
		fl.Unlock()
		if err != nil {
			return nil, err
		}
		// The file locked is no longer the one at the path: let it go, and
		// lock what is there now. Twice at most: a path replaced at each
		// try is someone else's game, reported.
		if tries == 1 {
			return nil, fmt.Errorf("lock %q: %w", path, errors.New("the lock file was replaced while being locked, twice"))
		}
	}
}

// lockedHook, when set (by tests), is called between the lock and the check
// of the path: where a file replaced under the lock is put.
var lockedHook func(path string)

// try takes the lock on fl if it is free, else tries again every pollEvery
// until wait has passed or ctx ends (busy, with no error).
func try(ctx context.Context, fl *flock.Flock, wait time.Duration) (bool, error) {
	ok, err := fl.TryLock()
	if err == nil && !ok && wait > 0 {
		wctx, cancel := context.WithTimeout(ctx, wait)
		ok, err = fl.TryLockContext(wctx, pollEvery)
		cancel()
		if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
			return false, nil
		}
	}
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) && pe.Op == "open" {
			return false, openError(fl.Path(), err)
		}
		return false, fmt.Errorf("lock %q: %w", fl.Path(), err)
	}
	return ok, nil
}

// atPath reports whether the locked fl is a regular file and the one at its
// path now. A path gone is false, with no error: it is locked (created)
// again.
func atPath(fl *flock.Flock) (bool, error) {
	held, err := fl.Stat()
	if err != nil {
		return false, fmt.Errorf("lock %q: %w", fl.Path(), err)
	}
	if !held.Mode().IsRegular() {
		// A FIFO or a device put at the path after the Lstat: opened
		// without blocking, refused here.
		return false, &fs.PathError{Op: "open", Path: fl.Path(), Err: regular.NotMode(held.Mode())}
	}
	now, err := os.Lstat(fl.Path())
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("lock %q: %w", fl.Path(), err)
	}
	return os.SameFile(held, now), nil
}

type fileLease struct {
	fl *flock.Flock
}

// Unlock releases the lock and closes the file.
func (l fileLease) Unlock() error {
	if err := l.fl.Unlock(); err != nil {
		return fmt.Errorf("unlock %q: %w", l.fl.Path(), err)
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
	if err := preCheck(path); err != nil {
		return err
	}
	return checkOpen(path)
}

// checkOpen is Check's open without the Lstat in front.
func checkOpen(path string) error {
	fh, err := os.OpenFile(path, openFlags, 0o600)
	if err != nil {
		return openError(path, err)
	}
	defer fh.Close()
	fi, err := fh.Stat()
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return &fs.PathError{Op: "open", Path: path, Err: regular.NotMode(fi.Mode())}
	}
	return nil
}
