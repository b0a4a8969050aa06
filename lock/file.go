package lock

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
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
//
// A *File keeps the lock file open between runs (unlocked: the lock is never
// held while idle), and saves an open, an fstat and a close per run; not an
// executable file, which is closed after each run as before. Once
// the lock is taken, the path is checked to lead to the very file locked
// (lstat: same device and inode): a lock file deleted, renamed away or
// replaced (by another file, a link, a directory) since it was opened is let
// go and the path opened afresh, with all the checks above, so that the lock
// is always on the file that flock(1) and other instances open by that path.
// A File must not be copied once used.
type File struct {
	Path string

	mu   sync.Mutex
	fd   int  // the kept descriptor; valid when open
	open bool // fd is open
	held bool // fd is locked by a lease not yet released
	keep bool // keep fd open after the release: the file is not executable
}

// ErrNotRegular is the error, wrapped in an *fs.PathError, of a lock path
// that exists but is not a regular file.
var ErrNotRegular = regular.ErrNotRegular

// open opens the lock file for flock(2), creating it 0600 if missing. It
// opens it read-write where it can (flock on NFS is emulated with fcntl
// locks, which need write access) and read-only where it cannot, as for a
// read-only script locked with --lock "$0", or must not (an executable, which
// could not be run while open for writing): flock(2) locks either way, and
// excludes flock(1), which opens read-only. Nothing is ever written.
func open(path string) (int, error) {
	// Lstat first, so that a device or a FIFO is never opened at all (opening
	// some devices does something); the fstat below closes the race.
	fi, err := os.Lstat(path)
	switch {
	case err == nil && !fi.Mode().IsRegular():
		return -1, &fs.PathError{Op: "open", Path: path, Err: regular.NotMode(fi.Mode())}
	case err == nil && fi.Mode()&0o111 != 0:
		// An executable (a script locked with --lock "$0", or the very
		// command every runs) is opened read-only, as flock(1) opens files:
		// while a descriptor is open for writing, its exec fails with
		// ETXTBSY.
		return regular.Open(path, unix.O_RDONLY, 0)
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

// Lock takes the file lock, trying again until wait has passed. On a *File
// it keeps the descriptor for the next Lock (see File).
func (f *File) Lock(ctx context.Context, wait time.Duration) (Lease, error) {
	f.mu.Lock()
	if f.held {
		f.mu.Unlock()
		// A second lease on one *File at once: a descriptor of its own, or
		// flock(2) would grant it on the one already locked.
		return lockFresh(ctx, f.Path, wait)
	}
	f.held = true // the descriptor is this call's, then its lease's
	f.mu.Unlock()
	lease, err := f.lockKept(ctx, wait)
	if err != nil {
		f.release()
	}
	return lease, err
}

// lockKept takes the lock on the kept descriptor, opened if need be.
func (f *File) lockKept(ctx context.Context, wait time.Duration) (Lease, error) {
	for tries := 0; ; tries++ {
		if !f.open {
			fd, err := open(f.Path)
			if err != nil {
				return nil, err
			}
			f.fd, f.open = fd, true
		}
		ok, err := tryLock(f.fd)
		if err == nil && !ok && tries == 0 {
			// Busy: but a kept descriptor may be of a file no longer at the
			// path (deleted or replaced while every was idle), held by
			// whoever still has the old file. The path decides.
			if same, _, _ := f.atPath(); !same {
				f.close()
				continue
			}
		}
		if err == nil && !ok && wait > 0 {
			ok, err = waitLock(ctx, f.fd, wait)
		}
		if err != nil {
			f.close()
			return nil, fmt.Errorf("lock %q: %w", f.Path, err)
		}
		if !ok {
			return nil, &BusyError{}
		}
		same, mode, err := f.atPath()
		if same {
			// An executable (a script locked with --lock "$0") is not kept
			// open between runs: a descriptor open for writing would make
			// anyone's exec of it fail with ETXTBSY while every is idle.
			f.keep = mode&0o111 == 0
			return &keptLease{f: f}, nil
		}
		// The file locked is no longer the one at the path: let it go,
		// and lock what is there now. Twice at most: a path replaced at
		// each try is someone else's game, reported.
		f.close()
		if err != nil || tries == 1 {
			if err == nil {
				err = errors.New("the lock file was replaced while being locked, twice")
			}
			return nil, fmt.Errorf("lock %q: %w", f.Path, err)
		}
	}
}

// release marks the kept descriptor free for the next Lock.
func (f *File) release() {
	f.mu.Lock()
	f.held = false
	f.mu.Unlock()
}

// atPath reports whether the kept descriptor is the file at the path now,
// and the file's mode. A missing path is false, with no error: it is opened
// (created) again.
func (f *File) atPath() (bool, uint32, error) {
	var held, now unix.Stat_t
	if err := unix.Fstat(f.fd, &held); err != nil {
		return false, 0, &fs.PathError{Op: "fstat", Path: f.Path, Err: err}
	}
	err := unix.Lstat(f.Path, &now)
	switch {
	case errors.Is(err, unix.ENOENT):
		return false, 0, nil
	case err != nil:
		return false, 0, &fs.PathError{Op: "lstat", Path: f.Path, Err: err}
	}
	return held.Dev == now.Dev && held.Ino == now.Ino, uint32(held.Mode), nil
}

// close closes the kept descriptor, releasing a lock on it.
func (f *File) close() {
	if f.open {
		unix.Close(f.fd)
		f.open = false
	}
}

// Close closes the kept descriptor. The File can still be locked again.
func (f *File) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.held {
		return errors.New("close the lock file: the lock is held")
	}
	f.close()
	return nil
}

// lockFresh takes the lock on a descriptor of its own, closed when the lease
// is released.
func lockFresh(ctx context.Context, path string, wait time.Duration) (Lease, error) {
	fd, err := open(path)
	if err != nil {
		return nil, err
	}
	ok, err := tryLock(fd)
	if err == nil && !ok && wait > 0 {
		ok, err = waitLock(ctx, fd, wait)
	}
	if err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("lock %q: %w", path, err)
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

// keptLease is a lease on a *File's kept descriptor.
type keptLease struct {
	f    *File
	once sync.Once
}

// Unlock releases the lock and keeps the descriptor for the next Lock.
func (l *keptLease) Unlock() error {
	err := errors.New("unlock: already released")
	l.once.Do(func() {
		err = unix.Flock(l.f.fd, unix.LOCK_UN)
		if err != nil || !l.f.keep {
			// Closing releases it for sure.
			l.f.close()
		}
		if err != nil {
			err = fmt.Errorf("unlock: %w", err)
		}
		l.f.release()
	})
	return err
}

func (*keptLease) Lost() <-chan struct{}     { return nil }
func (*keptLease) Token() int64              { return 0 }
func (*keptLease) Expiring() <-chan struct{} { return nil }

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
