package lock

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/gofrs/flock"
)

// File is a lock on a file with flock(2), the lock util-linux flock(1) takes,
// so the two exclude each other. The kernel releases it when its holder dies,
// however it dies. The file itself stays; while the lock is held it names its
// holder ("pid host"), for the messages of those who find it busy.
type File struct {
	Path string
	Host string // written into the file with the pid while held
}

// pollEvery is how often a waiting Lock tries again: flock(2) cannot be
// waited for with a deadline.
const pollEvery = 5 * time.Millisecond

// Lock takes the file lock, trying again until wait has passed.
func (f File) Lock(ctx context.Context, wait time.Duration) (Lease, error) {
	// O_RDWR: flock on NFS is emulated with fcntl locks, which need write access.
	fl := flock.New(f.Path, flock.SetFlag(os.O_CREATE|os.O_RDWR))
	ok, err := fl.TryLock()
	if err == nil && !ok && wait > 0 {
		wctx, cancel := context.WithTimeout(ctx, wait)
		ok, err = fl.TryLockContext(wctx, pollEvery)
		cancel()
		if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
			err = nil
		}
	}
	if err != nil {
		return nil, fmt.Errorf("lock %q: %w", f.Path, err)
	}
	if !ok {
		return nil, &BusyError{Holder: ReadHolder(f.Path)}
	}
	// Who holds it, for those who find it busy: written while the run starts,
	// off the path from slot to exec. A failure here costs only the name.
	named := make(chan struct{})
	go func() {
		defer close(named)
		_ = os.WriteFile(f.Path, []byte(strconv.Itoa(os.Getpid())+" "+f.Host+"\n"), 0o600)
	}()
	return fileLease{fl: fl, named: named}, nil
}

type fileLease struct {
	fl    *flock.Flock
	named chan struct{} // closed once the holder is written
}

// Unlock empties the file, so that a holder named there is a live one (or one
// killed before it could empty it), and releases the lock.
func (l fileLease) Unlock() error {
	<-l.named
	_ = os.Truncate(l.fl.Path(), 0)
	return l.fl.Unlock()
}

func (fileLease) Lost() <-chan struct{}     { return nil }
func (fileLease) Token() int64              { return 0 }
func (fileLease) Expiring() <-chan struct{} { return nil }

// ReadHolder reads the holder a lock file names, if any.
func ReadHolder(path string) Holder {
	b, err := os.ReadFile(path)
	if err != nil {
		return Holder{}
	}
	pid, host, _ := strings.Cut(strings.TrimSpace(string(b)), " ")
	n, err := strconv.Atoi(pid)
	if err != nil {
		return Holder{}
	}
	return Holder{PID: n, Host: host}
}

// Check makes sure the lock file's directory exists (created 0700) and that
// the file can be opened for locking: the start-up check.
func Check(path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	fh, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return err
	}
	return fh.Close()
}
