// Package fleet is the store that carries a fleet's locks and states
// (--store): a Redis server or an etcd cluster, its URL made a client with
// bounded timeouts, the start-up check, and a job's lock.Locker and
// state.Store.
package fleet

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/everycli/every/internal/ui"
	"github.com/everycli/every/lock"
	"github.com/everycli/every/state"
)

// Store is the store a fleet shares, Redis or etcd: what a job and every
// status need of it, whichever it is.
type Store interface {
	// Job returns a fleet job's lock and store, either nil when the job has
	// none.
	Job(name, host string, ttl, period time.Duration, withLock, withState bool) (lock.Locker, state.Store)
	// Check reaches the store once at start-up: fatal is an error waiting
	// will not heal (73), transient one it may (its slots are skipped).
	Check(ctx context.Context) (fatal, transient error)
	// LeaseTTL is the lease the store grants for --lock-ttl ttl.
	LeaseTTL(ttl time.Duration) time.Duration
	// Server is the store's URL without its password, for messages.
	Server() string
	// Kind names the store in messages: "redis" or "etcd".
	Kind() string
	// Records reads the records of every job of the fleet.
	Records(ctx context.Context) ([]*state.Record, error)
	// LockHeld reports whether a fleet job's lock is held now.
	LockHeld(ctx context.Context, name string) (bool, error)
	// Announce keeps this every of the job announced alive in the store
	// (presence.go) until stop is called, or until the process dies and the
	// announcement expires within ttl.
	Announce(name, host string, pid int, ttl time.Duration) (stop func())
	// Live reads the everys announced alive for the job.
	Live(ctx context.Context, name string) ([]Alive, error)
	// Transient reports whether an error of the store's may heal within
	// seconds (a leader election, a replica promoted, a store loading its
	// data, a call timed out), so that a reader may try again.
	Transient(err error) bool
}

// Open parses a --store URL, redis:// or rediss://, etcd:// or etcds://,
// and makes its client. It does not connect.
func Open(raw string) (Store, error) {
	if IsEtcd(raw) {
		return openEtcd(raw)
	}
	return openRedis(raw)
}

// Redis is the Redis server that carries a fleet's locks and states.
type Redis struct {
	client *redis.Client
	prefix string // of every key: PREFIX NAME ":lock", ":state"
	server string // the URL without its password, for messages
}

// userinfo matches what comes before the last '@' of a URL, after its
// scheme and "//" if any, to keep passwords out of messages even for a URL
// that does not parse: a password may hold any character unescaped, '/' and
// '@' too, and the "//" or the scheme may be missing. A '@' after the host
// (in ?prefix=) hides the host too: a message may show too little, never a
// password.
var userinfo = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?s)^([a-zA-Z][a-zA-Z0-9+.-]*:(?://)?)?.*@`)
})

// quotedUserinfo is what may be a user and password in a message of
// go-redis, which quotes the path ("redis:///u:pw@host" has the path
// "/u:pw@host") and the values of options.
var quotedUserinfo = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[^"]*@`) })

// redactURL hides a URL's password (and user) for messages.
func redactURL(s string) string {
	return userinfo().ReplaceAllString(s, "${1}***@")
}

type discardLogger struct{}

func (discardLogger) Printf(context.Context, string, ...any) {}

// openRedis parses --store redis://[user:pass@]host:port/db[?prefix=every:]
// (or rediss:// for TLS) and makes a client with short timeouts, so that a
// dead server never stalls the loop or a stop. It does not connect.
func openRedis(raw string) (*Redis, error) {
	shown := redactURL(raw)
	u, err := url.Parse(raw)
	if err != nil {
		return nil, ui.Usagef("bad --store %q: not a URL; try redis://host:6379/0", shown)
	}
	if u.Scheme != "redis" && u.Scheme != "rediss" {
		return nil, ui.Usagef("bad --store %q: the scheme must be redis:// or rediss://", shown)
	}
	if u.Opaque != "" {
		return nil, ui.Usagef("bad --store %q: no host; try redis://host:6379/0", shown)
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return nil, ui.Usagef("bad --store %q: port %s is out of range; try 6379", shown, p)
		}
	}
	q := u.Query()
	prefix := "every:"
	if q.Has("prefix") {
		prefix = q.Get("prefix")
		q.Del("prefix")
		u.RawQuery = q.Encode()
	}
	// go-redis would print its own lines on stderr; every's lines are slog's.
	redis.SetLogger(discardLogger{})
	opt, err := redis.ParseURL(u.String())
	if err != nil {
		// go-redis names the bad part; the URL itself is not repeated (a
		// *url.Error would repeat it: its inner error is enough).
		var uerr *url.Error
		if errors.As(err, &uerr) {
			err = uerr.Err
		}
		return nil, ui.Usagef("bad --store %q: %s", shown, NoPassword(quotedUserinfo().ReplaceAllString(err.Error(), "***@"), raw))
	}
	bound(opt, q)
	return &Redis{client: redis.NewClient(opt), prefix: prefix, server: redactURL(u.Redacted())}, nil
}

// storeTimeout is how long a store call waits for a silent server, by
// default: far above a healthy Redis's answer (well under a millisecond on a
// LAN, tens across regions), far below a slot a person would notice. The URL
// may say otherwise (?dial_timeout=2s&read_timeout=2s&write_timeout=2s).
const storeTimeout = 500 * time.Millisecond

// bound sets the client's options so that no call stalls: a refused
// connection fails at once, a silent server within the timeouts, and a
// context's deadline cuts a call short. Options the URL gives are kept.
func bound(opt *redis.Options, q url.Values) {
	if !q.Has("dial_timeout") {
		opt.DialTimeout = storeTimeout
	}
	if !q.Has("read_timeout") {
		opt.ReadTimeout = storeTimeout
	}
	if !q.Has("write_timeout") {
		opt.WriteTimeout = storeTimeout
	}
	if !q.Has("pool_timeout") {
		opt.PoolTimeout = storeTimeout
	}
	if !q.Has("max_retries") {
		// No retry (go-redis reads 0 as its default, 3): a call that failed is
		// the slot's answer, and the next slot tries again. A retry would
		// double the wait for a silent server, and run an acquire twice.
		opt.MaxRetries = -1
	}
	// One dial per call: go-redis's default, 5 dials 100ms apart, made a
	// refused connection take half a second. (0 would mean that default.)
	opt.DialerRetries = 1
	// Deadlines of the callers' contexts (a renewal's, the start-up check's)
	// reach the socket; without this go-redis only applies its own timeouts.
	opt.ContextTimeoutEnabled = true
	opt.PoolSize = 4
	opt.Protocol = 2
	opt.DisableIdentity = true
}

// Job returns a fleet job's lock and store, either nil when the job has
// none: with both, one session (a lock.RedisSession and the record's
// store) is both, so that a run costs two round trips (the lock with the
// start, the end with the release; three, with the start apart, when the
// record is not the one this process wrote last) instead of five, and its
// writes are fenced.
func (f *Redis) Job(name, host string, ttl, period time.Duration, withLock, withState bool) (lock.Locker, state.Store) {
	l := lock.Redis{Client: f.client, Key: f.lockKey(name), TTL: ttl, Host: host, Server: f.server}
	s := state.Redis{Client: f.client, Key: f.stateKey(name), Period: period, Server: f.server}
	switch {
	case withLock && withState:
		ls := &lock.RedisSession{Redis: l, RecordKey: s.Key, RecordMax: state.MaxSize}
		j := &startSession{session{ls, s}, ls}
		return j, j
	case withLock:
		return l, nil
	case withState:
		return nil, s
	}
	return nil, nil
}

func (f *Redis) lockKey(name string) string  { return f.prefix + name + ":lock" }
func (f *Redis) stateKey(name string) string { return f.prefix + name + ":state" }

// Server is the server's URL without its password, for messages.
func (f *Redis) Server() string { return f.server }

// Kind is "redis".
func (f *Redis) Kind() string { return "redis" }

// LeaseTTL is ttl: Redis keys expire to the millisecond.
func (f *Redis) LeaseTTL(ttl time.Duration) time.Duration { return ttl }

// Records reads the records of every job of the fleet.
func (f *Redis) Records(ctx context.Context) ([]*state.Record, error) {
	return state.Redis{Client: f.client, Server: f.server}.List(ctx, f.prefix+"*:state")
}

// LockHeld reports whether a fleet job's lock is held now: one of its runs
// holds the lease, which its holder renews (a holder that died lets it
// expire within --lock-ttl). An idle every of the job is told by its
// announcement instead (Live).
func (f *Redis) LockHeld(ctx context.Context, name string) (bool, error) {
	n, err := f.client.Exists(ctx, f.lockKey(name)).Result()
	if err != nil {
		return false, fmt.Errorf("redis at %s: %w", f.server, err)
	}
	return n > 0, nil
}

// checkTimeout bounds the start-up check: a server that does not answer
// within it is taken as down for now (its slots are skipped until it
// answers), and the first slot is not held up for long.
const checkTimeout = 200 * time.Millisecond

// Check reaches the server once at start-up. A server that is down may come
// back, and its slots are skipped meanwhile; one that answers with an error
// (wrong password, no such database) or fails the TLS handshake will not
// change its mind: that is returned as fatal. Errors a server gives while it
// starts or fails over (LOADING, MASTERDOWN, TRYAGAIN, max clients) are
// transient.
func (f *Redis) Check(ctx context.Context) (fatal, transient error) {
	ctx, cancel := context.WithTimeout(ctx, checkTimeout)
	defer cancel()
	err := f.client.Ping(ctx).Err()
	var (
		certErr   *tls.CertificateVerificationError
		recordErr tls.RecordHeaderError
		alertErr  tls.AlertError
		redisErr  redis.Error
	)
	switch {
	case err == nil:
		return nil, nil
	case redis.IsAuthError(err) || redis.IsPermissionError(err):
		return fmt.Errorf("redis at %s refused the credentials: %v; check the user and password in --store", f.server, err), nil
	case errors.As(err, &certErr) || errors.As(err, &recordErr) || errors.As(err, &alertErr):
		return fmt.Errorf("redis at %s: TLS failed: %v; check rediss:// against the server's TLS setup", f.server, err), nil
	case redis.IsLoadingError(err) || redis.IsMasterDownError(err) || redis.IsTryAgainError(err) ||
		redis.IsMaxClientsError(err) || redis.IsClusterDownError(err):
	case errors.As(err, &redisErr):
		return fmt.Errorf("redis at %s refused the connection: %v; check the database number and options in --store", f.server, err), nil
	case !errors.Is(err, context.DeadlineExceeded) && !timeout(err):
		// The server answered, or hung up: if what it says is not Redis's
		// protocol at all (an HTTP server, an SSH banner), no retry will
		// make it Redis.
		if answer, ok := f.notRedis(); ok {
			return fmt.Errorf("%s is not a Redis server: it answered %q; check the host and port in --store", f.server, answer), nil
		}
	}
	return nil, fmt.Errorf("redis at %s: %w", f.server, err)
}

// timeout reports whether err is a network timeout.
func timeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// redisTypes are the bytes a Redis reply starts with: RESP2's and RESP3's
// types.
const redisTypes = "+-:$*_#,(!=%~|>"

// notRedis asks the server for PING on a connection of its own, and
// returns the start of its answer when that answer is not in Redis's
// protocol: its first byte is none of RESP's types. A server that says
// nothing, or hangs up, or cannot be reached, may be a Redis on its way up:
// that is not known to be no Redis. The answer is decided on its bytes,
// not on the words of a go-redis error.
func (f *Redis) notRedis() (answer string, ok bool) {
	opt := f.client.Options()
	ctx, cancel := context.WithTimeout(context.Background(), checkTimeout)
	defer cancel()
	conn, err := opt.Dialer(ctx, opt.Network, opt.Addr)
	if err != nil {
		return "", false
	}
	defer conn.Close()
	deadline, _ := ctx.Deadline()
	_ = conn.SetDeadline(deadline)
	// A server that speaks first (a banner) has its say before PING is
	// read, and the answer is that all the same.
	if _, err := conn.Write([]byte("*1\r\n$4\r\nPING\r\n")); err != nil {
		return "", false
	}
	buf := make([]byte, 64)
	n, _ := conn.Read(buf)
	if n == 0 || strings.IndexByte(redisTypes, buf[0]) >= 0 {
		return "", false
	}
	line, _, _ := strings.Cut(string(buf[:n]), "\n")
	return strings.TrimSuffix(line, "\r"), true
}

// NoPassword makes sure an error message carries no password, whatever a
// library put in it.
func NoPassword(msg string, raw string) string {
	for _, p := range passwords(raw) {
		msg = strings.ReplaceAll(msg, p, "***")
	}
	return msg
}

// passwords are what raw may hold as a password: the one url.Parse finds,
// and the one a user meant in a URL that does not parse as one, from the
// first ':' after the scheme and "//" to the last '@'.
func passwords(raw string) []string {
	var ps []string
	if u, err := url.Parse(raw); err == nil {
		if p, ok := u.User.Password(); ok && p != "" {
			ps = append(ps, p)
		}
	}
	rest := raw
	if m := scheme().FindString(raw); m != "" {
		rest = strings.TrimPrefix(raw[len(m):], "//")
	}
	if at := strings.LastIndex(rest, "@"); at >= 0 {
		if colon := strings.Index(rest[:at], ":"); colon >= 0 && colon+1 < at {
			ps = append(ps, rest[colon+1:at])
		}
	}
	return ps
}

// scheme matches a URL's scheme and its colon.
var scheme = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9+.-]*:`) })
