package lock

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/everycli/every/internal/etcd"
)

// EtcdTTL is the lease TTL etcd is asked for, for a --lock-ttl of d: etcd
// grants whole seconds, and a lease much under two seconds would not
// outlive a leader election.
func EtcdTTL(d time.Duration) time.Duration {
	s := (d + time.Second - 1) / time.Second
	return max(s, 2) * time.Second
}

// Etcd is a fleet job's lock in etcd, and its record too when RecordKey is
// set, so that the record comes with the lock and every write of it under
// a lease is guarded by it. The record is bytes to it, as to a
// RedisSession: internal/fleet pairs it with the job's record store
// (state.Etcd) to make the job's state.Store.
//
// The lock is a key created only if absent (a transaction comparing its
// creation revision with 0), attached to a lease the cluster granted with
// TTL seconds; the fencing token is that creation revision: the cluster's
// revision, strictly increasing across leader changes and restarts of
// every. The lease is counted from the moment the grant, or the last
// keep-alive the cluster confirmed, was sent: the cluster restarted the
// lease's clock after that. It is lost at two thirds of the TTL without a
// confirmed keep-alive, expiring (the command must be killed) a margin
// before the TTL (see Margin), and both at once when the key is deleted or
// replaced, or the lease revoked (which deletes the key): the holder
// watches its key, and a keep-alive that finds the lease or the key gone
// says so too, should the watch have missed it.
//
// Each keep-alive is one request and one answer (the gateway's stream,
// read to its end): none can be dropped unread, as the official client's
// channel of 16 drops them.
type Etcd struct {
	Client *etcd.Client
	Key    string        // the lock's key
	TTL    time.Duration // whole seconds, at least 2 (see EtcdTTL)
	Host   string
	Server string // the cluster, for messages, without a password
	// RecordKey is the key of the job's record; "" for a lock alone.
	RecordKey string

	mu sync.Mutex
	// held is the lease of the run under way; nil between runs.
	held *etcdLease
	// fetched says record is the record read with held, not served yet.
	fetched bool
	record  []byte
}

// Lock takes the lock, trying again until wait has passed, and reads the
// record with it (one transaction). It returns as soon as ctx ends; a lease
// granted meanwhile is revoked.
func (e *Etcd) Lock(ctx context.Context, wait time.Duration) (Lease, error) {
	var b [16]byte
	_, _ = rand.Read(b[:])
	value := hex.EncodeToString(b[:]) + " " + strconv.Itoa(os.Getpid()) + " " + e.Host
	deadline := time.Now().Add(wait)
	for {
		l, holder, err := e.try(ctx, value)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %w", ErrStore, e.Server, err)
		}
		if l != nil {
			return l, nil
		}
		if !time.Now().Before(deadline) {
			return nil, &BusyError{Holder: parseHolder(holder)}
		}
		select {
		case <-ctx.Done():
			return nil, &BusyError{Holder: parseHolder(holder)}
		case <-time.After(min(storePoll, time.Until(deadline))):
		}
	}
}

// try takes the lock once: a lease, then the key if absent. A busy lock is
// a nil lease and the holder's value.
func (e *Etcd) try(ctx context.Context, value string) (*etcdLease, string, error) {
	sent := time.Now()
	id, granted, err := e.Client.Grant(ctx, int64(e.TTL/time.Second))
	if err != nil {
		return nil, "", err
	}
	key := []byte(e.Key)
	ops := []etcd.Op{etcd.Put(key, []byte(value), id)}
	if e.RecordKey != "" {
		ops = append(ops, etcd.Get([]byte(e.RecordKey)))
	}
	res, err := e.Client.Txn(ctx, []etcd.Cmp{etcd.CreateIs(key, 0)}, ops, []etcd.Op{etcd.Get(key)})
	if err != nil || !res.Succeeded {
		// The key may have been created with the lease (an answer lost, or
		// ctx ended): revoking the lease deletes it. Busy: the lease is of
		// no use.
		go e.revoke(id)
	}
	if err != nil {
		return nil, "", err
	}
	if !res.Succeeded {
		holder := ""
		if r := res.Ranges(); len(r) > 0 && len(r[0].KVs) > 0 {
			holder = string(r[0].KVs[0].Value)
		}
		return nil, holder, nil
	}
	l := e.lease(id, res.Header.Revision, time.Duration(max(granted, 1))*time.Second, sent)
	if e.RecordKey != "" {
		var rec []byte
		var mod int64
		if r := res.Ranges(); len(r) > 0 && len(r[0].KVs) > 0 {
			rec, mod = r[0].KVs[0].Value, r[0].KVs[0].ModRevision
		}
		l.recordMod = mod
		e.mu.Lock()
		e.held, e.fetched, e.record = l, true, rec
		e.mu.Unlock()
	}
	return l, "", nil
}

// revoke revokes a lease whose key is not to be used, within the TTL (it is
// gone by then anyway).
func (e *Etcd) revoke(id int64) {
	ctx, cancel := context.WithTimeout(context.Background(), e.TTL)
	defer cancel()
	_ = e.Client.Revoke(ctx, id)
}

// lease starts keeping the lease alive every third of its TTL until
// Unlock; sent is when the grant was sent.
func (e *Etcd) lease(id, rev int64, ttl time.Duration, sent time.Time) *etcdLease {
	l := &etcdLease{e: e, id: id, token: rev, ttl: ttl, lost: make(chan struct{}), expiring: make(chan struct{}), done: make(chan struct{})}
	l.wg.Add(3)
	renewals := make(chan renewal, 1)
	go l.renew(sent, renewals)
	go l.watch(renewals)
	go l.keep(sent, renewals)
	return l
}

type etcdLease struct {
	e        *Etcd
	id       int64
	token    int64 // the lock key's creation revision
	ttl      time.Duration
	lost     chan struct{}
	expiring chan struct{}
	done     chan struct{}
	wg       sync.WaitGroup
	closed   sync.Once
	// recordMod is the record's modification revision as this lease last
	// saw it (read with the lock, or written under it): 0 for none.
	recordMod int64
}

// renew sends a keep-alive a third of the TTL after the last one was sent,
// and checks that the key is still this lease's, until Unlock, even after
// the lease is lost: the key must outlive whatever is left of the command.
func (l *etcdLease) renew(sent time.Time, out chan<- renewal) {
	defer l.wg.Done()
	key := []byte(l.e.Key)
	renewLoop(l.ttl, sent, l.done, out, func(ctx context.Context) (bool, error) {
		ttl, err := l.e.Client.KeepAlive(ctx, l.id)
		held := ttl > 0
		if err == nil && held {
			// The lease lives; the key must too, and be this lease's: a key
			// deleted (or deleted and created again by another) while the
			// lease lives is a lost lock.
			var r *etcd.RangeResponse
			r, err = l.e.Client.Range(ctx, key, nil, 1)
			held = err == nil && len(r.KVs) == 1 && r.KVs[0].CreateRevision == l.token && r.KVs[0].Lease == l.id
		}
		var serr *etcd.Error
		if errors.As(err, &serr) && serr.Code == etcd.CodeNotFound {
			return false, nil // the lease is gone
		}
		return held, err
	})
}

// watchRetry bounds the wait before a watch that broke (the network, a
// restart of the member) is opened again; the keep-alives go on checking
// the key meanwhile.
const watchRetry = 250 * time.Millisecond

// watch watches the lock key, from the revision after its creation, until
// Unlock: any change of it (deleted by hand, or with the lease, revoked or
// expired; or replaced) is a lost lock as soon as the cluster says so, not
// at the next keep-alive, and the command is killed at once (keepClock).
// A watch that breaks is opened again from where it was, so that nothing
// between is missed; one whose revisions were compacted away checks the
// key first, as a keep-alive does.
func (l *etcdLease) watch(out chan<- renewal) {
	defer l.wg.Done()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-l.done:
			cancel()
		case <-ctx.Done():
		}
	}()
	key, from := []byte(l.e.Key), l.token+1
	retry := watchRetry
	for {
		held, next, err := l.watchFrom(ctx, key, from)
		if !held {
			select {
			case out <- renewal{sent: time.Now(), held: false}:
			case <-l.done:
			}
			return
		}
		wait := retry
		if err == nil {
			from, retry = next, watchRetry
		} else {
			// A cluster that keeps refusing is not asked four times a
			// second for the length of a run.
			retry = min(retry*2, max(l.ttl/3, watchRetry))
		}
		select {
		case <-l.done:
			return
		case <-time.After(wait):
		}
	}
}

// watchFrom watches the key from revision from until its stream ends: held
// false when the key changed (or is gone) since its creation. A stream
// that ends otherwise returns the revision to watch from next, or an error
// when it could not tell.
func (l *etcdLease) watchFrom(ctx context.Context, key []byte, from int64) (held bool, next int64, err error) {
	w, err := l.e.Client.Watch(ctx, key, from)
	if err != nil {
		return true, from, err
	}
	defer w.Close()
	for {
		r, err := w.Next()
		switch {
		case err != nil:
			return true, from, err
		case len(r.Events) > 0:
			// The key was not touched since its creation but by this: it
			// is gone, or another's.
			return false, 0, nil
		case r.Canceled:
			// Compacted past from, or refused: the key as it is now says
			// whether it is still this lease's, and from when to go on.
			rctx, cancel := context.WithTimeout(ctx, l.ttl/3)
			kr, err := l.e.Client.Range(rctx, key, nil, 1)
			cancel()
			if err != nil {
				return true, from, err
			}
			if len(kr.KVs) != 1 || kr.KVs[0].CreateRevision != l.token || kr.KVs[0].ModRevision != l.token || kr.KVs[0].Lease != l.id {
				return false, 0, nil
			}
			return true, kr.Header.Revision + 1, nil
		}
	}
}

// keep watches the lease's clock (see keepClock) with the TTL the cluster
// granted.
func (l *etcdLease) keep(confirmed time.Time, renewals <-chan renewal) {
	defer l.wg.Done()
	keepClock(l.ttl, confirmed, renewals, l.done, l.lost, l.expiring)
}

func (l *etcdLease) Lost() <-chan struct{}     { return l.lost }
func (l *etcdLease) Expiring() <-chan struct{} { return l.expiring }
func (l *etcdLease) Token() int64              { return l.token }

// RunFloor is this host's clock in microseconds since 1970 (or the fencing
// token, should that be more): above every run number handed out before
// the cluster lost its data, as long as the hosts' clocks agree to within
// the time between two losses. The token alone is no floor: an etcd
// restored from a snapshot goes back to its revisions.
func (l *etcdLease) RunFloor() int { return int(max(l.token, time.Now().UnixMicro())) }

// Unlock stops the keep-alives and revokes the lease, which deletes the key
// with it (never another holder's key: that one is attached to its own
// lease). It is bounded by the TTL, after which the lease is gone anyway.
func (l *etcdLease) Unlock() error {
	l.closed.Do(func() { close(l.done) })
	l.wg.Wait()
	l.e.mu.Lock()
	if l.e.held == l {
		l.e.held, l.e.fetched, l.e.record = nil, false, nil
	}
	l.e.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), l.ttl)
	defer cancel()
	if err := l.e.Client.Revoke(ctx, l.id); err != nil {
		// The key would keep the lock busy for the rest of its TTL (up to
		// --lock-ttl, a restarted cluster keeps its leases): tried again in
		// the background while it can matter.
		go l.e.revokeUntil(l.id, time.Now().Add(l.ttl))
		return fmt.Errorf("%w: %s: release: %w", ErrStore, l.e.Server, err)
	}
	return nil
}

// revokePoll is how often a release that failed is tried again.
const revokePoll = 250 * time.Millisecond

// revokeUntil tries to revoke the lease until it is revoked or the deadline
// passes (the lease is gone by then anyway).
func (e *Etcd) revokeUntil(id int64, deadline time.Time) {
	for time.Now().Before(deadline) {
		time.Sleep(revokePoll)
		ctx, cancel := context.WithDeadline(context.Background(), deadline)
		err := e.Client.Revoke(ctx, id)
		cancel()
		if err == nil {
			return
		}
	}
}

func (l *etcdLease) isLost() bool {
	select {
	case <-l.lost:
		return true
	default:
		return false
	}
}

// Record returns the record read with the lease under way (empty: none),
// if it was not served yet and the lease is not lost: ok. Otherwise the
// caller reads the record itself.
func (e *Etcd) Record() (b []byte, ok bool) {
	e.mu.Lock()
	l, b, fetched := e.held, e.record, e.fetched
	e.fetched, e.record = false, nil
	e.mu.Unlock()
	if fetched && l != nil && !l.isLost() {
		return b, true
	}
	return nil, false
}

// WriteRecord writes the record b under the lease under way, only while
// the lock is this lease's: the key has the lease's creation revision, or
// it is gone and nobody wrote the record since this lease last saw it.
// Otherwise the write is refused (ErrFenced): another holder took the lock
// since, and its record is kept. Each write is fenced alone: running, as
// a RedisSession is told, changes nothing here. Outside a lease it writes
// nothing and returns leased false: the caller writes the record as a
// store without a lock does.
func (e *Etcd) WriteRecord(ctx context.Context, b []byte, running bool) (leased bool, err error) {
	e.mu.Lock()
	l := e.held
	e.fetched, e.record = false, nil
	e.mu.Unlock()
	if l == nil {
		return false, nil
	}
	lockKey, recKey := []byte(e.Key), []byte(e.RecordKey)
	put := []etcd.Op{etcd.Put(recKey, b, 0)}
	res, err := e.Client.Txn(ctx, []etcd.Cmp{etcd.CreateIs(lockKey, l.token)}, put, []etcd.Op{etcd.Get(lockKey)})
	if err == nil && !res.Succeeded {
		if r := res.Ranges(); len(r) > 0 && len(r[0].KVs) == 0 {
			// The key is gone (the lease expired or was revoked): the write
			// may go as long as nobody has written the record since.
			res, err = e.Client.Txn(ctx, []etcd.Cmp{etcd.CreateIs(lockKey, 0), etcd.ModIs(recKey, l.recordMod)}, put, nil)
		}
	}
	switch {
	case err != nil:
		return true, fmt.Errorf("write state to %s: %w", e.where(), err)
	case !res.Succeeded:
		return true, fmt.Errorf("write state to %s with fencing token %d: %w; its record is kept", e.where(), l.token, ErrFenced)
	}
	l.recordMod = res.Header.Revision
	return true, nil
}

// where names the record's cluster and key, as state.Etcd does.
func (e *Etcd) where() string { return e.Server + " key " + e.RecordKey }
