package fleet

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/everycli/every/internal/etcd"
)

// A fleet's lock is held only while a run lasts, so the store alone cannot
// tell a live every waiting for its next slot from a dead one: every status
// showed a healthy idle fleet as ACTIVE no. So each every of a fleet job
// announces itself in the store for as long as it lives (Announce), and
// every status reads the announcements (Live) beside the lock's holder.
//
// An announcement is the host and pid of one every, kept with a TTL (the
// job's --lock-ttl, the lease the store grants for it) and renewed every
// third of it, as a lock is: an every that dies (SIGKILL, a crash, a host
// gone, a partition from the store) stops renewing, and its announcement
// expires within the TTL; one that stops cleanly takes it back at once. In
// Redis the announcements of a job are the members of one sorted set,
// PREFIX NAME ":alive", each scored with its expiry on the server's clock
// (so the hosts' clocks do not matter), and a read counts only those not
// yet expired; in etcd each is a key PREFIX NAME "/alive/" HOST ":" PID
// attached to a lease of its every's own, which etcd deletes when the lease
// expires. The cost is one request per every every TTL/3 (10s by default).
//
// Announcing never delays the loop: it runs in its own goroutine, each call
// bounded; a failed one is tried again at the next beat, silently (the
// store's outages are the loop's to report).

// Alive is an every that announced itself for a job, and is alive as far
// as the store knows: its announcement has not expired.
type Alive struct {
	Host string `json:"host"`
	PID  int    `json:"pid"`
}

// member is an announcement's name in Redis's set: its pid, then its host
// (a host name holds no space).
func (a Alive) member() string { return strconv.Itoa(a.PID) + " " + a.Host }

// parseMember reads a member written by member.
func parseMember(s string) (Alive, bool) {
	p, host, ok := strings.Cut(s, " ")
	pid, err := strconv.Atoi(p)
	return Alive{Host: host, PID: pid}, ok && err == nil
}

// sortAlive orders announcements by host, then pid, for a stable listing.
func sortAlive(as []Alive) {
	slices.SortFunc(as, func(a, b Alive) int {
		if c := strings.Compare(a.Host, b.Host); c != 0 {
			return c
		}
		return a.PID - b.PID
	})
}

// beat runs once at once, then every third of ttl, in a goroutine of its
// own, until the returned stop is called; stop ends it, then runs leave,
// the two within leaveTimeout. A call that fails is simply made again at the next beat.
func beat(ttl time.Duration, once func(context.Context), leave func(context.Context)) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	every := max(ttl/3, 10*time.Millisecond)
	go func() {
		defer close(done)
		t := time.NewTimer(0)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			c, cl := context.WithTimeout(ctx, min(every, 2*time.Second))
			once(c)
			cl()
			t.Reset(every)
		}
	}()
	return func() {
		cancel()
		c, cl := context.WithTimeout(context.Background(), leaveTimeout)
		defer cl()
		select {
		case <-done:
		case <-c.Done():
			return // a beat still in flight: a store that does not answer
		}
		leave(c)
	}
}

// leaveTimeout bounds the whole of taking an announcement back at a stop,
// the wait for a beat in flight included: a store that does not answer
// lets the announcement expire instead, and the stop (within 100 ms, even
// while a store call is in flight) is not held up.
const leaveTimeout = 50 * time.Millisecond

func (f *Redis) aliveKey(name string) string { return f.prefix + name + ":alive" }

// announce adds (or renews) an every's announcement, scored with its expiry
// on the server's clock in milliseconds, drops the expired ones, and keeps
// the set itself no longer than the longest announcement in it.
var announce = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[1])
if redis.call('PTTL', KEYS[1]) < tonumber(ARGV[2]) then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 1
`)

// alive reads the announcements that have not expired, on the server's
// clock.
var alive = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
return redis.call('ZRANGEBYSCORE', KEYS[1], '(' .. now, '+inf')
`)

// Announce keeps the job's every (host, pid) announced as alive in Redis
// until stop, or until it dies and its announcement expires within ttl.
func (f *Redis) Announce(name, host string, pid int, ttl time.Duration) (stop func()) {
	key, member := f.aliveKey(name), Alive{host, pid}.member()
	ms := max(ttl.Milliseconds(), 1)
	return beat(ttl, func(ctx context.Context) {
		_ = announce.Run(ctx, f.client, []string{key}, member, ms).Err()
	}, func(ctx context.Context) {
		_ = f.client.ZRem(ctx, key, member).Err()
	})
}

// Live reads the everys announced alive for a job.
func (f *Redis) Live(ctx context.Context, name string) ([]Alive, error) {
	members, err := alive.Run(ctx, f.client, []string{f.aliveKey(name)}).StringSlice()
	if err != nil {
		return nil, fmt.Errorf("redis at %s: %w", f.server, err)
	}
	var as []Alive
	for _, m := range members {
		if a, ok := parseMember(m); ok {
			as = append(as, a)
		}
	}
	sortAlive(as)
	return as, nil
}

func (f *Etcd) alivePrefix(name string) string { return f.prefix + name + "/alive/" }

// Announce keeps the job's every (host, pid) announced as alive in etcd,
// as a key attached to a lease of its own, until stop, or until it dies
// and the lease expires within ttl (whole seconds, as for a lock).
func (f *Etcd) Announce(name, host string, pid int, ttl time.Duration) (stop func()) {
	ttl = f.LeaseTTL(ttl)
	a := Alive{host, pid}
	key := []byte(f.alivePrefix(name) + host + ":" + strconv.Itoa(pid))
	value, _ := json.Marshal(a)
	var lease int64 // the beat's goroutine's own until stop; 0: none yet
	return beat(ttl, func(ctx context.Context) {
		if lease != 0 {
			if left, err := f.client.KeepAlive(ctx, lease); err != nil || left > 0 {
				return // renewed, or to be tried again
			}
			lease = 0 // expired meanwhile (a long partition): announce again
		}
		id, _, err := f.client.Grant(ctx, int64(ttl/time.Second))
		if err != nil {
			return
		}
		if _, err := f.client.Txn(ctx, nil, []etcd.Op{etcd.Put(key, value, id)}, nil); err != nil {
			_ = f.client.Revoke(ctx, id)
			return
		}
		lease = id
	}, func(ctx context.Context) {
		if lease != 0 {
			_ = f.client.Revoke(ctx, lease)
		}
	})
}

// Live reads the everys announced alive for a job: the keys whose leases
// etcd has not expired.
func (f *Etcd) Live(ctx context.Context, name string) ([]Alive, error) {
	prefix := []byte(f.alivePrefix(name))
	r, err := f.client.Range(ctx, prefix, etcd.PrefixEnd(prefix), 0)
	if err != nil {
		return nil, fmt.Errorf("etcd at %s: %w", f.server, err)
	}
	var as []Alive
	for _, kv := range r.KVs {
		var a Alive
		if json.Unmarshal(kv.Value, &a) == nil && a.Host != "" {
			as = append(as, a)
		}
	}
	sortAlive(as)
	return as, nil
}

// Transient reports whether a Redis error may heal within seconds: the
// server loading its data or failing over, or a call that timed out. A
// refused connection is not: the server is down, and a reader says so at
// once.
func (f *Redis) Transient(err error) bool {
	return redis.IsLoadingError(err) || redis.IsMasterDownError(err) || redis.IsTryAgainError(err) ||
		redis.IsClusterDownError(err) || timeout(err) || errors.Is(err, context.DeadlineExceeded)
}

// Transient reports whether an etcd error may heal within seconds: the
// cluster without a leader, or electing one (etcd answers Unavailable:
// "no leader", "leader changed"), or a call that timed out meanwhile. A
// refused connection on every endpoint is not: the cluster is down.
func (f *Etcd) Transient(err error) bool {
	var serr *etcd.Error
	if errors.As(err, &serr) {
		return serr.Code == etcd.CodeUnavailable
	}
	return timeout(err) || errors.Is(err, context.DeadlineExceeded)
}
