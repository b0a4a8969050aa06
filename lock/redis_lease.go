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
	// session is the Session whose lease this is, if any; released is set
	// when its write of the run's end also released the key.
	session  *Session
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
	every := l.r.TTL / 3
	wait := time.NewTimer(time.Until(sent.Add(every)))
	defer wait.Stop()
	for {
		select {
		case <-l.done:
			return
		case <-wait.C:
		}
		sent = time.Now()
		wait.Reset(time.Until(sent.Add(every)))
		ctx, cancel := context.WithDeadline(context.Background(), sent.Add(every))
		n, err := runScript(ctx, l.r.Client, renew, []string{l.r.Key}, l.value, l.r.TTL.Milliseconds()).Int64()
		cancel()
		select {
		case out <- renewal{sent: sent, held: n == 1, err: err}:
		case <-l.done:
			return
		}
	}
}

// keep watches the lease's clock: the key cannot expire before the last
// confirmed send plus the TTL. The lease is lost at two thirds of the TTL
// after it, or at once when a renewal finds the key gone or another's; it is
// expiring (the command must die now) a margin before the TTL is up, or at
// once when the key is gone: another holder may take it any moment.
func (l *redisLease) keep(confirmed time.Time, renewals <-chan renewal) {
	defer l.wg.Done()
	ttl := l.r.TTL
	lostAt := time.NewTimer(time.Until(confirmed.Add(ttl * 2 / 3)))
	defer lostAt.Stop()
	expireAt := time.NewTimer(time.Until(confirmed.Add(ttl - Margin(ttl))))
	defer expireAt.Stop()
	isLost, isExpiring := false, false
	for {
		select {
		case <-l.done:
			return
		case <-lostAt.C:
			isLost = true
			close(l.lost)
		case <-expireAt.C:
			isExpiring = true
			close(l.expiring)
		case r := <-renewals:
			switch {
			case r.err != nil:
				// No answer: the clock runs on from the last confirmed send.
			case !r.held:
				// The key is gone or another's: someone else may hold it now.
				if !isLost {
					isLost = true
					lostAt.Stop()
					close(l.lost)
				}
				if !isExpiring {
					isExpiring = true
					expireAt.Stop()
					close(l.expiring)
				}
			case r.sent.After(confirmed):
				confirmed = r.sent
				// A late confirmation cannot undo a loss, but it does put the
				// key's expiry, and so the kill, further off.
				if !isLost {
					lostAt.Reset(time.Until(confirmed.Add(ttl * 2 / 3)))
				}
				if !isExpiring {
					expireAt.Reset(time.Until(confirmed.Add(ttl - Margin(ttl))))
				}
			}
		}
	}
}

func (l *redisLease) Lost() <-chan struct{} { return l.lost }

func (l *redisLease) Expiring() <-chan struct{} { return l.expiring }

func (l *redisLease) Token() int64 { return l.token }

// Unlock stops the renewals and deletes the key if it still holds ours (never
// another holder's, even after the lease was lost). The call is bounded by
// the client's timeouts and by the TTL, after which the key is gone anyway.
// A Session's lease whose end was written, and the key released with it, is
// released already: nothing is sent.
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
