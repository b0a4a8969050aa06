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

	"github.com/redis/go-redis/v9"
)

// Redis is a lock in Redis for jobs that run on several hosts: SET NX PX with
// a random token, renewed while the run lasts, released by compare-and-delete.
// Each acquisition takes a fencing token, strictly increasing even when Redis
// loses its data: the greater of INCR and the server's clock in microseconds.
//
// A lease counts from the moment the last confirmed renewal (or the
// acquiring SET) was sent: Redis started the key's TTL after that moment, so
// the key cannot expire before it plus the TTL, on the holder's clock, as long
// as the two clocks run at about the same rate. The lease is lost at two
// thirds of the TTL without a confirmed renewal, and expiring (the command
// must be killed) a margin before the TTL is up; see Margin.
//
// Calls to Redis are bounded by the client's timeouts (the lock does not add
// its own, except for renewals, bounded by the renewal period so the next one
// can go), and Lock returns as soon as its context ends, even while a reply is
// awaited: the client only honours deadlines, not cancellation, on a socket.
type Redis struct {
	Client *redis.Client
	Key    string        // the lock's key; the fencing counter is Key+":fence"
	TTL    time.Duration // how long the lock outlives a holder that stops renewing
	Host   string
	// Server names the server for messages, without a password (as
	// state.Redis.Server does).
	Server string
}

// acquire sets the lock if it is free and takes a fencing token with it, in
// one step: {1, token} when taken, {0, value} with the holder's value when not.
// The token is the greater of INCR and the server's clock in microseconds
// (TIME), and the greater is stored back: should the counter vanish (FLUSHALL,
// a restart without persistence, a failover to a replica that lacks it), the
// clock still puts the next token above every one handed out before, as long
// as the server's clock does not go back.
var acquire = redis.NewScript(takeLock + "  return {1, token}\n" + orHolder)

// takeLock is the start of a script that takes the lock and its fencing
// token (see acquire); it leaves the token in the Lua local token, for the
// script to return with whatever else it reads under the lock.
const takeLock = `
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  local token = redis.call('INCR', KEYS[2])
  local t = redis.call('TIME')
  local floor = tonumber(t[1]) * 1000000 + tonumber(t[2])
  if floor > token then
    token = floor
    redis.call('SET', KEYS[2], string.format('%d', token))
  end
`

// orHolder ends a script begun with takeLock: the lock was not free, and
// the holder's value is returned.
const orHolder = "end\nreturn {0, redis.call('GET', KEYS[1])}\n"

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

// Lock takes the lock, trying again until wait has passed. It returns as soon
// as ctx ends, even while Redis has not answered: a reply that comes later and
// took the lock releases it.
func (r Redis) Lock(ctx context.Context, wait time.Duration) (Lease, error) {
	l, _, err := r.take(ctx, wait, acquire, []string{r.Key, r.Key + ":fence"}, nil)
	if err != nil {
		return nil, err
	}
	return l, nil
}

// take takes the lock with script, whose answer is {1, token, ...} when it
// took it and {0, holder's value} when not, trying again until wait has
// passed; keys[0] is the lock's key. It returns the lease and the script's
// whole answer. late undoes an acquisition whose answer went unused (see
// tryAcquire); nil: the key is released.
func (r Redis) take(ctx context.Context, wait time.Duration, script *redis.Script, keys []string, late lateFunc, args ...any) (*redisLease, []any, error) {
	var b [16]byte
	_, _ = rand.Read(b[:])
	// The value names its holder after the random token, for those who find
	// the lock busy.
	value := hex.EncodeToString(b[:]) + " " + strconv.Itoa(os.Getpid()) + " " + r.Host
	args = append([]any{value, r.TTL.Milliseconds()}, args...)
	deadline := time.Now().Add(wait)
	for {
		sent, res, err := r.tryAcquire(ctx, script, keys, value, late, args)
		if err != nil {
			return nil, nil, fmt.Errorf("%w: %s: %w", ErrStore, r.Server, err)
		}
		if len(res) >= 2 && res[0] == int64(1) {
			token, _ := res[1].(int64)
			return r.lease(value, token, sent), res, nil
		}
		holder := ""
		if len(res) == 2 {
			holder, _ = res[1].(string)
		}
		if !time.Now().Before(deadline) {
			return nil, nil, &BusyError{Holder: parseHolder(holder)}
		}
		select {
		case <-ctx.Done():
			return nil, nil, &BusyError{Holder: parseHolder(holder)}
		case <-time.After(min(storePoll, time.Until(deadline))):
		}
	}
}

// tryAcquire runs the acquire script once, and returns when it answers or
// when ctx ends, whichever comes first: go-redis stops waiting for a reply
// at a deadline, not at a cancellation, and a stop must not wait for a
// silent server. sent is when the script was sent: the lease counts from
// there.
//
// A script that may have taken the lock while its answer goes unused (ctx
// ended first, or the answer was lost: a timeout, a dropped connection) is
// cleaned up after (cleanUp). When ctx ends and late is set, that is done
// before tryAcquire returns, within the client's timeouts, so that a
// stopping caller can give it a moment before it exits; otherwise in the
// background.
func (r Redis) tryAcquire(ctx context.Context, script *redis.Script, keys []string, value string, late lateFunc, args []any) (sent time.Time, res []any, err error) {
	got := make(chan acquired, 1)
	sent = time.Now()
	go func() {
		// The call's own deadline is the client's timeouts; ctx's
		// cancellation is watched below.
		res, err := runScript(context.WithoutCancel(ctx), r.Client, script, keys, args...).Slice()
		got <- acquired{res, err}
	}()
	select {
	case a := <-got:
		if a.err != nil {
			go r.cleanUp(value, late, a)
		}
		return sent, a.res, a.err
	case <-ctx.Done():
		if late != nil {
			r.cleanUp(value, late, <-got)
		} else {
			go func() { r.cleanUp(value, nil, <-got) }()
		}
		return sent, nil, ctx.Err()
	}
}

// acquired is the answer to an acquire script: {1, token, ...} when it took
// the lock.
type acquired struct {
	res []any
	err error
}

// lateFunc undoes what an acquire script may have done when its answer went
// unused (none came, or it came too late): value is the lease's.
type lateFunc func(ctx context.Context, value string)

// cleanUp undoes an acquisition whose answer goes unused: nothing if the
// lock was busy, late if set, or the release of the key if it still holds
// value (nobody else can have taken it since).
func (r Redis) cleanUp(value string, late lateFunc, a acquired) {
	took := a.err == nil && len(a.res) >= 2 && a.res[0] == int64(1)
	if a.err == nil && !took {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), r.TTL)
	defer cancel()
	if late != nil {
		late(ctx, value)
		return
	}
	_ = runScript(ctx, r.Client, release, []string{r.Key}, value).Err()
}

// lease starts renewing the lock every third of its TTL until Unlock. sent
// is when the acquiring script was sent.
func (r Redis) lease(value string, token int64, sent time.Time) *redisLease {
	l := &redisLease{r: r, value: value, token: token, lost: make(chan struct{}), expiring: make(chan struct{}), done: make(chan struct{})}
	l.wg.Add(2)
	renewals := make(chan renewal, 1)
	go l.renew(sent, renewals)
	go l.keep(sent, renewals)
	return l
}

// loaded holds the scripts this process has sent whole (EVAL) to a server
// once: those are sent by their SHA1 (EVALSHA) from then on.
var loaded sync.Map

// runScript runs a script in one round trip where it can: the first time in
// this process with EVAL, which loads it, and then with EVALSHA, which sends
// 40 bytes instead of the script, and falls back to EVAL if the server has
// lost it (a restart, SCRIPT FLUSH, another server). go-redis's Run alone
// starts with EVALSHA, and so pays two round trips at the first call of
// every one-shot against a server that does not know the script yet.
func runScript(ctx context.Context, c redis.Scripter, s *redis.Script, keys []string, args ...any) *redis.Cmd {
	if _, ok := loaded.Load(s); ok {
		return s.Run(ctx, c, keys, args...)
	}
	cmd := s.Eval(ctx, c, keys, args...)
	var rerr redis.Error
	if err := cmd.Err(); err == nil || errors.Is(err, redis.Nil) || errors.As(err, &rerr) {
		// The server had it in hand: it is loaded there now.
		loaded.Store(s, struct{}{})
	}
	return cmd
}
