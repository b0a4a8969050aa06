package fleet

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/everycli/every/internal/etcd"
	"github.com/everycli/every/internal/ui"
	"github.com/everycli/every/lock"
	"github.com/everycli/every/state"
)

// Etcd is the etcd cluster that carries a fleet's locks and states.
type Etcd struct {
	client *etcd.Client
	cfg    etcd.Config
	prefix string // of every key: PREFIX NAME "/lock", "/state"
	server string // the URL without its user and password, for messages
}

// IsEtcd reports whether a --store URL names etcd (etcd:// or etcds://).
func IsEtcd(raw string) bool {
	s := strings.ToLower(raw)
	return strings.HasPrefix(s, "etcd://") || strings.HasPrefix(s, "etcds://")
}

// etcdPrefix is what a key prefix may hold: names of [A-Za-z0-9._-]
// joined by '/'.
var etcdPrefix = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^[A-Za-z0-9._-]+(/[A-Za-z0-9._-]+)*/?$`)
})

// openEtcd parses --store etcd://[user:password@]host:port[,host:port...][/prefix]
// (or etcds:// for TLS) and makes a client whose calls are bounded, so that
// a dead cluster never stalls the loop or a stop. It does not connect.
func openEtcd(raw string) (*Etcd, error) {
	shown := redactURL(raw)
	scheme, rest, _ := strings.Cut(raw, "://")
	cfg := etcd.Config{TLS: strings.EqualFold(scheme, "etcds"), Timeout: storeTimeout}
	// The password may hold '/' and '@'; the hosts and the prefix cannot.
	if at := strings.LastIndex(rest, "@"); at >= 0 {
		user, password, _ := strings.Cut(rest[:at], ":")
		cfg.User, cfg.Password = unescape(user), unescape(password)
		if cfg.User == "" {
			return nil, ui.Usagef("bad --store %q: a password needs a user; try etcd://user:password@host:2379", shown)
		}
		rest = rest[at+1:]
	}
	hosts, path, _ := strings.Cut(rest, "/")
	for _, h := range strings.Split(hosts, ",") {
		host, port, err := net.SplitHostPort(h)
		if err != nil || host == "" {
			return nil, ui.Usagef("bad --store %q: endpoint %q is not host:port; try etcd://host:2379", shown, h)
		}
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			return nil, ui.Usagef("bad --store %q: port %q is out of range; try 2379", shown, port)
		}
		cfg.Endpoints = append(cfg.Endpoints, h)
	}
	prefix := "every/"
	if path != "" {
		if !etcdPrefix().MatchString(path) {
			return nil, ui.Usagef("bad --store %q: prefix %q may hold only letters, digits, '.', '_', '-' and '/'; try etcd://host:2379/every", shown, path)
		}
		prefix = strings.TrimSuffix(path, "/") + "/"
	}
	server := strings.ToLower(scheme) + "://" + strings.Join(cfg.Endpoints, ",") + "/" + prefix
	return &Etcd{client: etcd.New(cfg), cfg: cfg, prefix: prefix, server: server}, nil
}

// unescape decodes a URL's %-escapes, if it has valid ones.
func unescape(s string) string {
	if u, err := url.PathUnescape(s); err == nil {
		return u
	}
	return s
}

func (f *Etcd) lockKey(name string) string  { return f.prefix + name + "/lock" }
func (f *Etcd) stateKey(name string) string { return f.prefix + name + "/state" }

// Job returns a fleet job's lock and store, either nil when the job has
// none: with both, one session (a lock.Etcd that carries the record, and
// the record's store) is both, so that the record comes with the lock and
// every write under a lease is guarded by it.
func (f *Etcd) Job(name, host string, ttl, period time.Duration, withLock, withState bool) (lock.Locker, state.Store) {
	s := state.Etcd{Client: f.client, Key: f.stateKey(name), Period: period, Server: f.server}
	l := &lock.Etcd{Client: f.client, Key: f.lockKey(name), TTL: lock.EtcdTTL(ttl), Host: host, Server: f.server}
	switch {
	case withLock && withState:
		l.RecordKey = s.Key
		j := &session{l, s}
		return j, j
	case withLock:
		return l, nil
	case withState:
		return nil, s
	}
	return nil, nil
}

// Check reaches the cluster once at start-up. A cluster that is down may
// come back, and its slots are skipped meanwhile; one that is not etcd,
// refuses the credentials or the prefix, or fails the TLS handshake will
// not change its mind: that is returned as fatal.
func (f *Etcd) Check(ctx context.Context) (fatal, transient error) {
	vctx, cancel := context.WithTimeout(ctx, checkTimeout)
	_, err := f.client.Version(vctx)
	cancel()
	if err == nil {
		// It answered: authentication (bcrypt on the server) and a read of
		// the prefix are given longer.
		actx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		if err = f.client.Authenticate(actx); err == nil {
			_, err = f.client.Range(actx, []byte(f.prefix), etcd.PrefixEnd([]byte(f.prefix)), 1)
		}
	}
	var (
		serr      *etcd.Error
		certErr   *tls.CertificateVerificationError
		authErr   x509.UnknownAuthorityError
		recordErr tls.RecordHeaderError
		alertErr  tls.AlertError
	)
	switch {
	case err == nil:
		return nil, nil
	case errors.Is(err, etcd.ErrNotEtcd):
		return fmt.Errorf("%s is not an etcd server: %v; check the host and port in --store (etcd 3.4 or later)", f.server, err), nil
	case errors.As(err, &serr) && serr.Code == etcd.CodePermissionDenied:
		return fmt.Errorf("etcd at %s refused access to prefix %q: %v; grant the user a role on it, or change the prefix in --store", f.server, f.prefix, err), nil
	case errors.As(err, &serr) && serr.Permanent():
		return fmt.Errorf("etcd at %s refused the credentials: %v; check the user and password in --store", f.server, err), nil
	case errors.As(err, &certErr) || errors.As(err, &authErr) || errors.As(err, &recordErr) || errors.As(err, &alertErr):
		return fmt.Errorf("etcd at %s: TLS failed: %v; check etcds:// against the cluster's TLS setup (SSL_CERT_FILE names a CA)", f.server, err), nil
	case f.cfg.TLS && f.plainAnswers(ctx):
		// etcd hangs up on a TLS hello to a plain port: no TLS error to see.
		return fmt.Errorf("etcd at %s: TLS failed: the cluster serves plain HTTP; use etcd:// instead of etcds://, or enable TLS on the cluster", f.server), nil
	}
	return nil, fmt.Errorf("etcd at %s: %w", f.server, err)
}

// plainAnswers reports whether the cluster answers /version without TLS.
func (f *Etcd) plainAnswers(ctx context.Context) bool {
	cfg := f.cfg
	cfg.TLS = false
	c := etcd.New(cfg)
	defer c.Close()
	ctx, cancel := context.WithTimeout(ctx, checkTimeout)
	defer cancel()
	_, err := c.Version(ctx)
	return err == nil
}

// Server is the cluster's URL without its user and password, for messages.
func (f *Etcd) Server() string { return f.server }

// Kind is "etcd".
func (f *Etcd) Kind() string { return "etcd" }

// LeaseTTL is the lease etcd grants for ttl: whole seconds, at least 2.
func (f *Etcd) LeaseTTL(ttl time.Duration) time.Duration { return lock.EtcdTTL(ttl) }

// Records reads the records of every job of the fleet.
func (f *Etcd) Records(ctx context.Context) ([]*state.Record, error) {
	return state.Etcd{Client: f.client, Server: f.server}.List(ctx, f.prefix, "/state")
}

// LockHeld reports whether a fleet job's lock key exists now: a holder that
// died lets its lease, and so its key, expire within the lease's TTL. An
// idle every of the job is told by its announcement instead (Live).
func (f *Etcd) LockHeld(ctx context.Context, name string) (bool, error) {
	r, err := f.client.Range(ctx, []byte(f.lockKey(name)), nil, 1)
	if err != nil {
		return false, fmt.Errorf("etcd at %s: %w", f.server, err)
	}
	return len(r.KVs) > 0, nil
}
