package lock

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// ErrStore wraps the errors of a lock's store (Redis unreachable, refused):
// the slot is skipped, never run without the lock.
var ErrStore = errors.New("lock store unavailable")

// Redis is a lock in Redis for jobs that run on several hosts: SET NX PX with
// a random token, renewed while the run lasts, released by compare-and-delete.
// Each acquisition takes a fencing token from INCR, strictly increasing.
type Redis struct {
	Client *redis.Client
	Key    string        // the lock's key; the fencing counter is Key+":fence"
	TTL    time.Duration // how long the lock outlives a holder that stops renewing
	Host   string
	// Where names the server for messages, without a password.
	Where string
}

// acquire sets the lock if it is free and takes a fencing token with it, in
// one step: {1, token} when taken, {0, value} with the holder's value when not.
var acquire = redis.NewScript(`
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  return {1, redis.call('INCR', KEYS[2])}
end
return {0, redis.call('GET', KEYS[1])}
`)

// renew extends the lock if it still holds our value.
var renew = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0
`)

// release deletes the lock if it still holds our value.
var release = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
`)

// redisPoll is how often a waiting Lock tries again.
const redisPoll = 50 * time.Millisecond

// Lock takes the lock, trying again until wait has passed.
func (r Redis) Lock(ctx context.Context, wait time.Duration) (Lease, error) {
	var b [16]byte
	_, _ = rand.Read(b[:])
	// The value names its holder after the random token, for those who find
	// the lock busy.
	value := hex.EncodeToString(b[:]) + " " + strconv.Itoa(os.Getpid()) + " " + r.Host
	deadline := time.Now().Add(wait)
	for {
		res, err := acquire.Run(ctx, r.Client, []string{r.Key, r.Key + ":fence"}, value, r.TTL.Milliseconds()).Slice()
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %v", ErrStore, r.Where, err)
		}
		if len(res) == 2 && res[0] == int64(1) {
			token, _ := res[1].(int64)
			return r.lease(value, token), nil
		}
		if !time.Now().Before(deadline) {
			holder, _ := res[1].(string)
			return nil, &BusyError{Holder: parseRedisHolder(holder)}
		}
		select {
		case <-ctx.Done():
			holder, _ := res[1].(string)
			return nil, &BusyError{Holder: parseRedisHolder(holder)}
		case <-time.After(min(redisPoll, time.Until(deadline))):
		}
	}
}

func parseRedisHolder(value string) Holder {
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

// lease starts renewing the lock every third of its TTL until Unlock.
func (r Redis) lease(value string, token int64) *redisLease {
	l := &redisLease{r: r, value: value, token: token, lost: make(chan struct{}), done: make(chan struct{})}
	l.wg.Add(1)
	go l.keep()
	return l
}

type redisLease struct {
	r      Redis
	value  string
	token  int64
	lost   chan struct{}
	done   chan struct{}
	wg     sync.WaitGroup
	closed sync.Once
}

// keep renews the lock. The lock is lost when a renewal finds another value
// (or none) under the key, or when no renewal has succeeded for a whole TTL:
// by then the key has expired and another host may hold it.
func (l *redisLease) keep() {
	defer l.wg.Done()
	every := l.r.TTL / 3
	last := time.Now()
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-l.done:
			return
		case <-tick.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), every)
		n, err := renew.Run(ctx, l.r.Client, []string{l.r.Key}, l.value, l.r.TTL.Milliseconds()).Int64()
		cancel()
		switch {
		case err == nil && n == 1:
			last = time.Now()
			continue
		case err == nil || time.Since(last) >= l.r.TTL:
			close(l.lost)
			return
		}
	}
}

func (l *redisLease) Lost() <-chan struct{} { return l.lost }
func (l *redisLease) Token() int64          { return l.token }

// Expiring is not yet closed by anything: the lease's hard end comes with the lease-safety work.
func (l *redisLease) Expiring() <-chan struct{} { return nil }

// Unlock stops the renewals and deletes the key if it still holds ours.
func (l *redisLease) Unlock() error {
	l.closed.Do(func() { close(l.done) })
	l.wg.Wait()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := release.Run(ctx, l.r.Client, []string{l.r.Key}, l.value).Err(); err != nil {
		return fmt.Errorf("%w: %s: release: %v", ErrStore, l.r.Where, err)
	}
	return nil
}
