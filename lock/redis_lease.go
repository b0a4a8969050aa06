package lock

// This file keeps a Redis lease: renewals every third of the TTL, counted
// from the send Redis confirmed, lost at two thirds, expiring before the TTL.

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

type redisLease struct {
	r        Redis
	value    string
	token    int64
	lost     chan struct{}
	expiring chan struct{}
	done     chan struct{}
	wg       sync.WaitGroup
	closed   sync.Once
	// session is the RedisSession whose lease this is, if any; released is
	// set when its write of the run's end also released the key.
	session  *RedisSession
	released atomic.Bool
}

// renewal is the outcome of one renewal: when it was sent, and whether Redis
// confirmed that the key was still ours (held false: it was not; err: no
// answer).
type renewal struct {
	sent time.Time
	held bool
	err  error
}

// renew sends a renewal a third of the TTL after the last one was sent (the
// first after the acquiring script), until Unlock, even after the lease is
// lost: the key must outlive whatever is left of the command. Each call is
// bounded by the period, so that the next one can go.
func (l *redisLease) renew(sent time.Time, out chan<- renewal) {
	defer l.wg.Done()
	renewLoop(l.r.TTL, sent, l.done, out, func(ctx context.Context) (bool, error) {
		n, err := runScript(ctx, l.r.Client, renew, []string{l.r.Key}, l.value, l.r.TTL.Milliseconds()).Int64()
		return n == 1, err
	})
}

// keep watches the lease's clock (see keepClock) with the lease's TTL.
func (l *redisLease) keep(confirmed time.Time, renewals <-chan renewal) {
	defer l.wg.Done()
	keepClock(l.r.TTL, confirmed, renewals, l.done, l.lost, l.expiring)
}

func (l *redisLease) Lost() <-chan struct{} { return l.lost }

func (l *redisLease) Expiring() <-chan struct{} { return l.expiring }

func (l *redisLease) Token() int64 { return l.token }

// RunFloor is the fencing token: above every token handed out before, and
// so above every run number too (a run takes at least a token, and a
// microsecond of the server's clock; see acquire), even after Redis lost
// its data, as long as its clock does not go back.
func (l *redisLease) RunFloor() int { return int(l.token) }

// Unlock stops the renewals and deletes the key if it still holds ours (never
// another holder's, even after the lease was lost). The call is bounded by
// the client's timeouts and by the TTL, after which the key is gone anyway.
// A RedisSession's lease whose end was written, and the key released with
// it, is released already: nothing is sent.
func (l *redisLease) Unlock() error {
	l.stopRenewing()
	if l.session != nil {
		l.session.forget(l)
	}
	if l.released.Load() {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), l.r.TTL)
	defer cancel()
	if err := runScript(ctx, l.r.Client, release, []string{l.r.Key}, l.value).Err(); err != nil {
		return fmt.Errorf("%w: %s: release: %w", ErrStore, l.r.Server, err)
	}
	return nil
}

// stopRenewing stops the renewals and the lease's clock, and waits for them.
func (l *redisLease) stopRenewing() {
	l.closed.Do(func() { close(l.done) })
	l.wg.Wait()
}

// isLost reports whether the lease is lost already.
func (l *redisLease) isLost() bool {
	select {
	case <-l.lost:
		return true
	default:
		return false
	}
}
