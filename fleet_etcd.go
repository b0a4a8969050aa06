package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/everycli/every/internal/etcd"
	"github.com/everycli/every/lock"
	"github.com/everycli/every/runner"
	"github.com/everycli/every/state"
)

// etcdFleet is the etcd cluster that carries a fleet's locks and states.
type etcdFleet struct {
	client *etcd.Client
	cfg    etcd.Config
	prefix string // of every key: PREFIX NAME "/lock", "/state"
	server string // the URL without its user and password, for messages
}

// isEtcd reports whether a --store URL names etcd (etcd:// or etcds://).
func isEtcd(raw string) bool {
	s := strings.ToLower(raw)
	return strings.HasPrefix(s, "etcd://") || strings.HasPrefix(s, "etcds://")
}

// etcdPrefix is what a key prefix may hold: names of [A-Za-z0-9._-]
// joined by '/'.
var etcdPrefix = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^[A-Za-z0-9._-]+(/[A-Za-z0-9._-]+)*/?$`)
})

// openEtcdFleet parses --store etcd://[user:password@]host:port[,host:port...][/prefix]
// (or etcds:// for TLS) and makes a client whose calls are bounded, so that
// a dead cluster never stalls the loop or a stop. It does not connect.
func openEtcdFleet(raw string) (*etcdFleet, error) {
	shown := redactURL(raw)
	scheme, rest, _ := strings.Cut(raw, "://")
	cfg := etcd.Config{TLS: strings.EqualFold(scheme, "etcds"), Timeout: storeTimeout}
	// The password may hold '/' and '@'; the hosts and the prefix cannot.
	if at := strings.LastIndex(rest, "@"); at >= 0 {
		user, password, _ := strings.Cut(rest[:at], ":")
		cfg.User, cfg.Password = unescape(user), unescape(password)
		if cfg.User == "" {
			return nil, usagef("bad --store %q: a password needs a user; try etcd://user:password@host:2379", shown)
		}
		rest = rest[at+1:]
	}
	hosts, path, _ := strings.Cut(rest, "/")
	for _, h := range strings.Split(hosts, ",") {
		host, port, err := net.SplitHostPort(h)
		if err != nil || host == "" {
			return nil, usagef("bad --store %q: endpoint %q is not host:port; try etcd://host:2379", shown, h)
		}
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			return nil, usagef("bad --store %q: port %q is out of range; try 2379", shown, port)
		}
		cfg.Endpoints = append(cfg.Endpoints, h)
	}
	prefix := "every/"
	if path != "" {
		if !etcdPrefix().MatchString(path) {
			return nil, usagef("bad --store %q: prefix %q may hold only letters, digits, '.', '_', '-' and '/'; try etcd://host:2379/every", shown, path)
		}
		prefix = strings.TrimSuffix(path, "/") + "/"
	}
	server := strings.ToLower(scheme) + "://" + strings.Join(cfg.Endpoints, ",") + "/" + prefix
	return &etcdFleet{client: etcd.New(cfg), cfg: cfg, prefix: prefix, server: server}, nil
}

// unescape decodes a URL's %-escapes, if it has valid ones.
func unescape(s string) string {
	if u, err := url.PathUnescape(s); err == nil {
		return u
	}
	return s
}

func (f *etcdFleet) lockKey(name string) string  { return f.prefix + name + "/lock" }
func (f *etcdFleet) stateKey(name string) string { return f.prefix + name + "/state" }

// job returns a fleet job's lock and store, either nil when the job has
// none: with both, one lock.Etcd is both, so that the record comes with the
// lock and every write under a lease is guarded by it.
func (f *etcdFleet) job(name, host string, ttl, period time.Duration, withLock, withState bool) (lock.Locker, state.Store) {
	s := state.Etcd{Client: f.client, Key: f.stateKey(name), Period: period, Server: f.server}
	l := &lock.Etcd{Client: f.client, Key: f.lockKey(name), TTL: lock.EtcdTTL(ttl), Host: host, Server: f.server, Records: s}
	switch {
	case withLock && withState:
		l.RecordKey = s.Key
		return l, l
	case withLock:
		return l, nil
	case withState:
		return nil, s
	}
	return nil, nil
}

// check reaches the cluster once at start-up. A cluster that is down may
// come back, and its slots are skipped meanwhile; one that is not etcd,
// refuses the credentials or the prefix, or fails the TLS handshake will
// not change its mind: that is returned as fatal.
func (f *etcdFleet) check(ctx context.Context) (fatal, transient error) {
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
func (f *etcdFleet) plainAnswers(ctx context.Context) bool {
	cfg := f.cfg
	cfg.TLS = false
	c := etcd.New(cfg)
	defer c.Close()
	ctx, cancel := context.WithTimeout(ctx, checkTimeout)
	defer cancel()
	_, err := c.Version(ctx)
	return err == nil
}

// etcdFleetStore puts the job's lock and state in etcd, as fleetStore does
// in Redis.
func etcdFleetStore(st settings, cfg *runner.Config) error {
	raw := st.store
	f, err := openEtcdFleet(raw)
	if err != nil {
		return err
	}
	fatal, transient := f.check(context.Background())
	if fatal != nil {
		return errors.New(noPassword(fatal.Error(), raw))
	}
	if transient != nil {
		cfg.Logger.Warn("store unreachable at start; slots are skipped until it answers", "event", "state_error", "error", noPassword(transient.Error(), raw))
	}
	ttl := lock.EtcdTTL(st.lockTTL)
	if !st.noLock {
		if ttl != st.lockTTL {
			cfg.Logger.Info("etcd leases are whole seconds, at least 2: --lock-ttl rounded up", "lock_ttl", st.lockTTL.String(), "lease_ttl", ttl.String())
		}
		cfg.KillAfter = min(cfg.KillAfter, ttl-lock.Margin(ttl))
	}
	cfg.Lock, cfg.Store = f.job(cfg.Name, cfg.Host, ttl, period(cfg), !st.noLock, !st.noState)
	return nil
}

// etcdJobs lists the fleet's jobs in etcd for every status (or the named
// ones), and how to tell whether one is active (its lock held now).
func etcdJobs(raw string, names []string) (where string, found []foundJob, problems []problem, active func(foundJob) (bool, error), err error) {
	f, err := openEtcdFleet(raw)
	if err != nil {
		return "", nil, nil, nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	all, err := state.Etcd{Client: f.client, Server: f.server}.List(ctx, f.prefix, "/state")
	if err != nil {
		problems = append(problems, problem{err: fmt.Errorf("cannot list jobs in etcd at %s: %v", f.server, noPassword(err.Error(), raw))})
	}
	slices.SortFunc(all, func(a, b *state.Record) int { return strings.Compare(a.Name, b.Name) })
	for _, rec := range all {
		if len(names) == 0 || slices.Contains(names, rec.Name) {
			found = append(found, foundJob{rec: rec})
		}
	}
	for _, name := range names {
		if err == nil && !slices.ContainsFunc(all, func(r *state.Record) bool { return r.Name == name }) {
			problems = append(problems, problem{name, "no state", fmt.Errorf("no state for job %q in etcd at %s", name, f.server)})
		}
	}
	active = func(j foundJob) (bool, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		r, err := f.client.Range(ctx, []byte(f.lockKey(j.rec.Name)), nil, 1)
		if err != nil {
			return false, fmt.Errorf("etcd at %s: %w", f.server, err)
		}
		return len(r.KVs) > 0, nil
	}
	return f.server, found, problems, active, nil
}
