// Package etcd is a small client of etcd v3's JSON gateway (served on the
// client port by every etcd since 3.4), over the net/http the binary links
// anyway: the official client brings gRPC and a hundred-odd packages, and
// with them a binary 39% larger, twice the start-up time and half as much
// memory again, paid by every user whether or not a fleet is on etcd.
//
// It knows what a fleet's lock and state need and no more: KV range, put,
// delete and transactions, leases (grant, one keep-alive, revoke), and
// simple authentication. Each call is bounded, tries the cluster's other
// endpoints when one cannot be reached, and returns as soon as its context
// ends.
package etcd

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// gRPC status codes the gateway passes on, that the client decides on.
const (
	CodeInvalidArgument    = 3
	CodeNotFound           = 5
	CodePermissionDenied   = 7
	CodeFailedPrecondition = 9
	CodeUnavailable        = 14
	CodeUnauthenticated    = 16
)

// Error is an error the server answered: a gRPC status, as the gateway
// reports it.
type Error struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Status  int    `json:"-"` // the HTTP status
	// GRPCCode is Code as a stream's frame (a keep-alive's) names it.
	GRPCCode int `json:"grpc_code"`
}

func (e *Error) Error() string { return e.Message + " (code " + strconv.Itoa(e.Code) + ")" }

// Permanent reports whether no retry will change the server's mind: the
// credentials or the permissions are wrong.
func (e *Error) Permanent() bool {
	return e.Code == CodeInvalidArgument || e.Code == CodePermissionDenied || e.Code == CodeUnauthenticated
}

// ErrNotEtcd is the error of a server that answered, but not as etcd's
// gateway does (another HTTP server, or something else on the port).
var ErrNotEtcd = errors.New("not an etcd v3 server (3.4 or later)")

// ErrUnreachable wraps the errors of a cluster none of whose endpoints
// answered in time.
var ErrUnreachable = errors.New("etcd unreachable")

// maxBody bounds what is read of an answer: etcd's largest request is 1.5
// MiB by default, and a record at most 1 MiB, base64 making it 4/3 larger.
const maxBody = 4 << 20

// Config says how to reach a cluster.
type Config struct {
	Endpoints      []string // host:port
	TLS            bool     // https (etcds://)
	User, Password string   // simple authentication, if User is set
	// Timeout bounds each call to one endpoint: a silent server is given up
	// on then, for the next.
	Timeout time.Duration
}

// Client talks to one cluster. It is safe for concurrent use.
type Client struct {
	cfg  Config
	base []string // the endpoints' URLs
	http *http.Client

	mu     sync.Mutex
	token  string // the auth token, once authenticated
	authed bool   // authenticated (or no authentication needed)
	next   int    // the endpoint to try first: the last that answered
}

// New makes a client. It does not connect.
func New(cfg Config) *Client {
	scheme := "http://"
	if cfg.TLS {
		scheme = "https://"
	}
	c := &Client{cfg: cfg}
	for _, e := range cfg.Endpoints {
		c.base = append(c.base, scheme+e)
	}
	dialer := &net.Dialer{Timeout: cfg.Timeout, KeepAlive: 15 * time.Second}
	c.http = &http.Client{
		Transport: &http.Transport{
			DialContext:           dialer.DialContext,
			TLSClientConfig:       &tls.Config{MinVersion: tls.VersionTLS12},
			TLSHandshakeTimeout:   cfg.Timeout,
			ResponseHeaderTimeout: cfg.Timeout,
			MaxIdleConnsPerHost:   4,
			IdleConnTimeout:       90 * time.Second,
			// No proxy from the environment: a lock's lease is timed on a
			// direct connection to the cluster.
			Proxy: nil,
		},
		// A gateway never redirects; an answer that does is not etcd's.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	return c
}

// Close closes the idle connections.
func (c *Client) Close() { c.http.CloseIdleConnections() }

// Call posts req (JSON) to path on the cluster and decodes the answer into
// resp. An endpoint that cannot be reached, or answers Unavailable (no
// leader), is given up on for the next; a token that expired is renewed
// once.
func (c *Client) Call(ctx context.Context, path string, req, resp any) error {
	body, err := json.Marshal(req)
	if err != nil {
		return err
	}
	c.mu.Lock()
	first, authed := c.next, c.authed
	c.mu.Unlock()
	if !authed && c.cfg.User != "" && path != authPath {
		// Not yet (the cluster was down at start-up, say): a call without
		// the token would only be refused.
		if err := c.Authenticate(ctx); err != nil {
			return err
		}
	}
	reauthed := false
	var last error
	for i := 0; i < len(c.base); i++ {
		n := (first + i) % len(c.base)
		err := c.post(ctx, n, path, body, resp)
		var serr *Error
		switch {
		case err == nil:
			c.mu.Lock()
			c.next = n
			c.mu.Unlock()
			return nil
		case errors.As(err, &serr) && serr.Code == CodeUnauthenticated && c.cfg.User != "" && !reauthed && path != authPath:
			// The token expired (simple tokens live five minutes by default).
			reauthed = true
			if aerr := c.Authenticate(ctx); aerr != nil {
				return aerr
			}
			i--
			continue
		case errors.As(err, &serr) && serr.Code != CodeUnavailable:
			return err
		case errors.Is(err, ErrNotEtcd):
			return err
		case ctx.Err() != nil:
			return fmt.Errorf("%w: %w", ErrUnreachable, ctx.Err())
		}
		last = err
	}
	return fmt.Errorf("%w: %w", ErrUnreachable, last)
}

// request is a JSON POST of body to path on endpoint n, with the token of
// the last authentication, if any.
func (c *Client) request(ctx context.Context, n int, path string, body []byte) (*http.Request, error) {
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base[n]+path, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	hr.Header.Set("Content-Type", "application/json")
	c.mu.Lock()
	if c.token != "" {
		hr.Header.Set("Authorization", c.token)
	}
	c.mu.Unlock()
	return hr, nil
}

// post makes one call to endpoint n.
func (c *Client) post(ctx context.Context, n int, path string, body []byte, resp any) error {
	ctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	hr, err := c.request(ctx, n, path, body)
	if err != nil {
		return err
	}
	res, err := c.http.Do(hr)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(io.LimitReader(res.Body, maxBody))
	if err != nil {
		return err
	}
	if res.StatusCode != http.StatusOK {
		var e Error
		if json.Unmarshal(b, &e) != nil || e.Code == 0 {
			return fmt.Errorf("%w: HTTP %d from %s", ErrNotEtcd, res.StatusCode, c.cfg.Endpoints[n])
		}
		e.Status = res.StatusCode
		return &e
	}
	// Every answer of the gateway has the cluster's header, or an error in
	// a stream's frame; an answer with neither is not etcd's.
	var probe struct {
		Header *Header          `json:"header"`
		Result *json.RawMessage `json:"result"`
		Error  *Error           `json:"error"`
		Token  string           `json:"token"`
	}
	if json.Unmarshal(b, &probe) != nil || (probe.Header == nil && probe.Result == nil && probe.Error == nil) {
		return fmt.Errorf("%w: %s answered %.40q", ErrNotEtcd, c.cfg.Endpoints[n], b)
	}
	if probe.Error != nil {
		if probe.Error.Code == 0 {
			probe.Error.Code = probe.Error.GRPCCode
		}
		return probe.Error
	}
	if probe.Result != nil {
		b = *probe.Result
	}
	return json.Unmarshal(b, resp)
}

const authPath = "/v3/auth/authenticate"

// Authenticate takes a token for the configured user. A server without
// authentication enabled needs none: that is no error.
func (c *Client) Authenticate(ctx context.Context) error {
	if c.cfg.User == "" {
		return nil
	}
	c.mu.Lock()
	c.token = ""
	c.mu.Unlock()
	var res struct {
		Token string `json:"token"`
	}
	err := c.Call(ctx, authPath, map[string]string{"name": c.cfg.User, "password": c.cfg.Password}, &res)
	var serr *Error
	if errors.As(err, &serr) && serr.Code == CodeFailedPrecondition {
		err = nil // authentication is not enabled: no token needed
	}
	if err != nil {
		return err
	}
	c.mu.Lock()
	c.token, c.authed = res.Token, true
	c.mu.Unlock()
	return nil
}

// Version asks an endpoint for etcd's version (GET /version): an answer
// without "etcdserver" is ErrNotEtcd.
func (c *Client) Version(ctx context.Context) (string, error) {
	var last error
	for n := range c.base {
		v, err := c.version(ctx, n)
		if err == nil || errors.Is(err, ErrNotEtcd) {
			return v, err
		}
		if ctx.Err() != nil {
			return "", fmt.Errorf("%w: %w", ErrUnreachable, ctx.Err())
		}
		last = err
	}
	return "", fmt.Errorf("%w: %w", ErrUnreachable, last)
}

func (c *Client) version(ctx context.Context, n int) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	hr, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base[n]+"/version", nil)
	if err != nil {
		return "", err
	}
	res, err := c.http.Do(hr)
	if err != nil {
		return "", err
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(res.Body, 4096))
	var v struct {
		Server string `json:"etcdserver"`
	}
	if json.Unmarshal(b, &v) != nil || v.Server == "" {
		return "", fmt.Errorf("%w: %s answered /version with HTTP %d %.40q", ErrNotEtcd, c.cfg.Endpoints[n], res.StatusCode, b)
	}
	return v.Server, nil
}
