package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// fleet is the Redis server that carries a fleet's locks and states.
type fleet struct {
	client *redis.Client
	prefix string // of every key: PREFIX NAME ":lock", ":state"
	server string // the URL without its password, for messages
}

// userinfo matches the user:password@ part of a URL, to keep passwords out
// of messages even for a URL that does not parse.
var userinfo = regexp.MustCompile(`//[^/@]*@`)

// redactURL hides a URL's password (and user) for messages.
func redactURL(s string) string {
	return userinfo.ReplaceAllString(s, "//***@")
}

func init() {
	// go-redis would print its own lines on stderr; every's lines are slog's.
	redis.SetLogger(discardLogger{})
}

type discardLogger struct{}

func (discardLogger) Printf(context.Context, string, ...any) {}

// openFleet parses --store redis://[user:pass@]host:port/db[?prefix=every:]
// (or rediss:// for TLS) and makes a client with short timeouts, so that a
// dead server never stalls the loop or a stop. It does not connect.
func openFleet(raw string) (*fleet, error) {
	shown := redactURL(raw)
	u, err := url.Parse(raw)
	if err != nil {
		return nil, usagef("bad --store %q: not a URL; try redis://host:6379/0", shown)
	}
	if u.Scheme != "redis" && u.Scheme != "rediss" {
		return nil, usagef("bad --store %q: the scheme must be redis:// or rediss://", shown)
	}
	q := u.Query()
	prefix := "every:"
	if q.Has("prefix") {
		prefix = q.Get("prefix")
		q.Del("prefix")
		u.RawQuery = q.Encode()
	}
	opt, err := redis.ParseURL(u.String())
	if err != nil {
		// go-redis names the bad part; the URL itself is not repeated.
		return nil, usagef("bad --store %q: %v", shown, errors.Unwrap(err))
	}
	opt.DialTimeout = 500 * time.Millisecond
	opt.ReadTimeout = 500 * time.Millisecond
	opt.WriteTimeout = 500 * time.Millisecond
	opt.MaxRetries = 1
	opt.PoolSize = 4
	opt.Protocol = 2
	opt.DisableIdentity = true
	return &fleet{client: redis.NewClient(opt), prefix: prefix, server: redactURL(u.Redacted())}, nil
}

func (f *fleet) lockKey(name string) string  { return f.prefix + name + ":lock" }
func (f *fleet) stateKey(name string) string { return f.prefix + name + ":state" }

// check reaches the server once at start-up. A server that is down may come
// back, and its slots are skipped meanwhile; one that refuses the password or
// the TLS handshake will not change its mind: that is returned as fatal.
func (f *fleet) check(ctx context.Context) (fatal, transient error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	err := f.client.Ping(ctx).Err()
	var certErr *tls.CertificateVerificationError
	var recordErr tls.RecordHeaderError
	switch {
	case err == nil:
		return nil, nil
	case redis.IsAuthError(err) || redis.IsPermissionError(err):
		return fmt.Errorf("redis at %s refused the credentials: %v; check the user and password in --store", f.server, err), nil
	case errors.As(err, &certErr) || errors.As(err, &recordErr):
		return fmt.Errorf("redis at %s: TLS failed: %v; check rediss:// against the server's TLS setup", f.server, err), nil
	}
	return nil, fmt.Errorf("redis at %s: %v", f.server, err)
}

// noPassword makes sure an error message carries no password, whatever a
// library put in it.
func noPassword(msg string, raw string) string {
	if u, err := url.Parse(raw); err == nil {
		if p, ok := u.User.Password(); ok && p != "" {
			msg = strings.ReplaceAll(msg, p, "***")
		}
	}
	return msg
}
