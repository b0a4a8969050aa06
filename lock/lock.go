// Package lock owns mutual exclusion between the instances of one job: a
// Locker hands out a Lease for the length of one run, on a file (gofrs/flock)
// for one host, or in Redis or etcd for a fleet.
package lock

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"
)

// ErrBusy is the error, wrapped in a *BusyError, of a lock that another holder
// kept for longer than the wait.
var ErrBusy = errors.New("lock busy")

// ErrStore wraps the errors of a lock's store (Redis or etcd unreachable, or
// refusing): the slot is skipped, never run without the lock.
var ErrStore = errors.New("lock store unavailable")

// ErrFenced is the error of a write of the record that the store refused:
// since the lease it was made under, another holder has taken the lock (in
// Redis, its key holds another value, or the fencing counter has passed the
// lease's token; in etcd, the key is another's, or the record was written
// since the lease last saw it). The record of the later holder is kept,
// never overwritten by an older run.
var ErrFenced = errors.New("state write refused: another holder took the lock since")

// Holder says who holds a lock, where known.
type Holder struct {
	PID  int    `json:"pid,omitempty"`
	Host string `json:"host,omitempty"`
}

func (h Holder) String() string {
	switch {
	case h.PID == 0 && h.Host == "":
		return "unknown"
	case h.Host == "":
		return "pid " + strconv.Itoa(h.PID)
	}
	return fmt.Sprintf("pid %d on %s", h.PID, h.Host)
}

// BusyError is a busy lock, with its holder when known.
type BusyError struct {
	Holder Holder
}

func (e *BusyError) Error() string { return "lock busy, held by " + e.Holder.String() }

// Unwrap makes errors.Is(err, ErrBusy) true.
func (e *BusyError) Unwrap() error { return ErrBusy }

// Locker takes a job's lock.
type Locker interface {
	// Lock takes the lock, waiting up to wait for a busy one, or less if ctx
	// ends. A lock still busy then is a *BusyError.
	Lock(ctx context.Context, wait time.Duration) (Lease, error)
}

// Lease is one holding of a lock, for the length of one run.
type Lease interface {
	// Unlock releases the lock.
	Unlock() error
	// Lost is closed when the lock must be taken as lost while held: the
	// command is then stopped as on timeout. A file lock never is.
	Lost() <-chan struct{}
	// Expiring is closed when the lease is about to run out for good:
	// whatever is left of the command must be killed at once (SIGKILL),
	// whatever --kill-after says, so that it is dead before another holder
	// can take the lock. nil where a lease cannot expire.
	Expiring() <-chan struct{}
	// Token is the fencing token of this acquisition, increasing with each
	// one; 0 where the locker has none.
	Token() int64
}
