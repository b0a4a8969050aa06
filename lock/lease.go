package lock

// This file is what the fleet's locks share, whichever store grants them
// (Redis, etcd): the clock of a lease, the wait for a busy lock, and who
// holds one.

import (
	"context"
	"strconv"
	"strings"
	"time"
)

// keepClock watches a lease's clock, for Redis and etcd alike: the key
// cannot expire before the last confirmed send plus the TTL. The lease is lost at two thirds of the TTL
// after it, or at once when a renewal finds the key gone or another's; it is
// expiring (the command must die now) a margin before the TTL is up, or at
// once when the key is gone: another holder may take it any moment.
func keepClock(ttl time.Duration, confirmed time.Time, renewals <-chan renewal, done <-chan struct{}, lost, expiring chan struct{}) {
	lostAt := time.NewTimer(time.Until(confirmed.Add(ttl * 2 / 3)))
	defer lostAt.Stop()
	expireAt := time.NewTimer(time.Until(confirmed.Add(ttl - Margin(ttl))))
	defer expireAt.Stop()
	isLost, isExpiring := false, false
	for {
		select {
		case <-done:
			return
		case <-lostAt.C:
			isLost = true
			close(lost)
		case <-expireAt.C:
			isExpiring = true
			close(expiring)
		case r := <-renewals:
			switch {
			case r.err != nil:
				// No answer: the clock runs on from the last confirmed send.
			case !r.held:
				// The key is gone or another's: someone else may hold it now.
				if !isLost {
					isLost = true
					lostAt.Stop()
					close(lost)
				}
				if !isExpiring {
					isExpiring = true
					expireAt.Stop()
					close(expiring)
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

// renewLoop renews a lease every third of ttl, counted from sent, until done:
// each try is bounded by that period, so that the next one can go, and its
// answer goes to out with the time it was sent (keepClock counts from it).
func renewLoop(ttl time.Duration, sent time.Time, done <-chan struct{}, out chan<- renewal, try func(ctx context.Context) (held bool, err error)) {
	every := ttl / 3
	wait := time.NewTimer(time.Until(sent.Add(every)))
	defer wait.Stop()
	for {
		select {
		case <-done:
			return
		case <-wait.C:
		}
		sent = time.Now()
		wait.Reset(time.Until(sent.Add(every)))
		ctx, cancel := context.WithDeadline(context.Background(), sent.Add(every))
		held, err := try(ctx)
		cancel()
		select {
		case out <- renewal{sent: sent, held: held, err: err}:
		case <-done:
			return
		}
	}
}

// storePoll is how often a waiting Lock of a store (Redis, etcd) tries
// again.
const storePoll = 50 * time.Millisecond

// minMargin is the least time a lease keeps between killing the command and
// the key's expiry: enough for SIGKILL to land and the kernel to reap a
// process group on a busy host.
const minMargin = 20 * time.Millisecond

// Margin is how long before the key can expire a holder kills what is left
// of its command: a tenth of the TTL, at least 20ms. It covers the kill and
// the reaping, the scheduling delay of the timer that fires it, and the
// drift between the holder's clock and the store's over one TTL (a tenth is
// far more than any sane clock-rate error). It never exceeds a third of the
// TTL, so the lease is always lost (at two thirds) before it expires.
func Margin(ttl time.Duration) time.Duration {
	return min(max(ttl/10, minMargin), ttl/3)
}

// parseHolder reads who holds a lock from a store's lock value (Redis,
// etcd): a random token, the pid, the host.
func parseHolder(value string) Holder {
	f := strings.Fields(value)
	if len(f) < 2 {
		return Holder{}
	}
	pid, _ := strconv.Atoi(f[1])
	h := Holder{PID: pid}
	if len(f) > 2 {
		h.Host = f[2]
	}
	return h
}
