package fleet

// This file makes a fleet job's lock, when it carries the job's record too
// (lock.RedisSession, lock.Etcd with a RecordKey), the job's state.Store:
// the lock reads the record with the lock and fences the writes under its
// lease, as bytes; the store (state.Redis, state.Etcd) parses them, and
// reads and writes outside a lease.

import (
	"context"
	"time"

	"github.com/everycli/every/lock"
	"github.com/everycli/every/state"
)

// recordLock is a lock that reads the job's record with the lock, and
// writes it fenced by the lease: lock.RedisSession, lock.Etcd.
type recordLock interface {
	lock.Locker
	// Record returns the record read with the lease under way, once, while
	// the lease is not lost (ok); otherwise the record is read from the
	// store.
	Record() (b []byte, ok bool)
	// WriteRecord writes the record under the lease under way (leased);
	// outside a lease it writes nothing.
	WriteRecord(ctx context.Context, b []byte, running bool) (leased bool, err error)
}

// recordStore is the job's record in the store, read and written without
// the lock: state.Redis, state.Etcd.
type recordStore interface {
	state.Store
	// Parse makes a record of what the lock read.
	Parse(ctx context.Context, b []byte) (*state.Record, error)
}

// session is a fleet job's lock and state.Store in one: the record comes
// with the lock, and every write under a lease is fenced by it.
type session struct {
	locks   recordLock
	records recordStore
}

// Lock takes the lock, and the record with it.
func (s *session) Lock(ctx context.Context, wait time.Duration) (lock.Lease, error) {
	return s.locks.Lock(ctx, wait)
}

// Load returns the record read with the lock, if the lease under way has
// not served it yet and is not lost; otherwise it reads the record.
func (s *session) Load(ctx context.Context) (*state.Record, error) {
	if b, ok := s.locks.Record(); ok {
		return s.records.Parse(ctx, b)
	}
	return s.records.Load(ctx)
}

// Save writes the record, fenced by the lease under way; outside a lease
// (never, in the loop), as the store does without a lock.
func (s *session) Save(ctx context.Context, rec *state.Record) error {
	b, err := state.Encode(rec)
	if err != nil {
		return err
	}
	if leased, err := s.locks.WriteRecord(ctx, b, rec.Running); leased {
		return err
	}
	return s.records.Save(ctx, rec)
}

// Where names the record's store and key.
func (s *session) Where() string { return s.records.Where() }

// startSession is a session in Redis, whose lock can also write the start
// of the run with the lock (lock.RedisSession.LockStart): the loop then
// saves a round trip a run.
type startSession struct {
	session
	starts *lock.RedisSession
}

// LockStart takes the lock once, and writes start with it when Redis holds
// exactly what this process wrote last (see lock.RedisSession.LockStart).
func (s *startSession) LockStart(ctx context.Context, start *state.Record) (lock.Lease, bool, error) {
	b, err := state.Encode(start)
	if err != nil {
		b = nil // no start to write: the lock alone
	}
	return s.starts.LockStart(ctx, b)
}
