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

// post makes one call to endpoint n.
func (c *Client) post(ctx context.Context, n int, path string, body []byte, resp any) error {
	ctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base[n]+path, bytes.NewReader(body))
	if err != nil {
		return err
	}
	hr.Header.Set("Content-Type", "application/json")
	c.mu.Lock()
	if c.token != "" {
		hr.Header.Set("Authorization", c.token)
	}
	c.mu.Unlock()
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

// Header is the cluster's header of an answer.
type Header struct {
	Revision int64 `json:"revision,string"`
}

// KV is a key and its value.
type KV struct {
	Key            []byte `json:"key"`
	Value          []byte `json:"value"`
	CreateRevision int64  `json:"create_revision,string"`
	ModRevision    int64  `json:"mod_revision,string"`
	Lease          int64  `json:"lease,string"`
}

// RangeResponse is the answer to a range.
type RangeResponse struct {
	Header Header `json:"header"`
	KVs    []KV   `json:"kvs"`
	More   bool   `json:"more"`
}

// TxnResponse is the answer to a transaction.
type TxnResponse struct {
	Header    Header `json:"header"`
	Succeeded bool   `json:"succeeded"`
	Responses []struct {
		Range *RangeResponse `json:"response_range"`
	} `json:"responses"`
}

// Ranges returns the answers of the transaction's range operations, in
// order.
func (t *TxnResponse) Ranges() []*RangeResponse {
	var rs []*RangeResponse
	for _, r := range t.Responses {
		if r.Range != nil {
			rs = append(rs, r.Range)
		}
	}
	return rs
}

// Op is one operation of a transaction.
type Op map[string]any

// Put puts value at key, attached to lease (0: none).
func Put(key, value []byte, lease int64) Op {
	p := map[string]any{"key": key, "value": value}
	if lease != 0 {
		p["lease"] = strconv.FormatInt(lease, 10)
	}
	return Op{"request_put": p}
}

// Get reads key.
func Get(key []byte) Op { return Op{"request_range": map[string]any{"key": key}} }

// Delete deletes key.
func Delete(key []byte) Op { return Op{"request_delete_range": map[string]any{"key": key}} }

// Cmp is one comparison of a transaction.
type Cmp map[string]any

// CreateIs compares key's creation revision with rev (0: the key is absent).
func CreateIs(key []byte, rev int64) Cmp {
	return Cmp{"target": "CREATE", "key": key, "result": "EQUAL", "create_revision": strconv.FormatInt(rev, 10)}
}

// ModIs compares key's last modification revision with rev (0: absent).
func ModIs(key []byte, rev int64) Cmp {
	return Cmp{"target": "MOD", "key": key, "result": "EQUAL", "mod_revision": strconv.FormatInt(rev, 10)}
}

// Txn runs ops if all of cmps hold, else orElse.
func (c *Client) Txn(ctx context.Context, cmps []Cmp, ops, orElse []Op) (*TxnResponse, error) {
	req := map[string]any{"compare": cmps, "success": ops, "failure": orElse}
	var res TxnResponse
	if err := c.Call(ctx, "/v3/kv/txn", req, &res); err != nil {
		return nil, err
	}
	return &res, nil
}

// Range reads key, or the keys from key to end (exclusive) when end is set,
// at most limit of them (0: all).
func (c *Client) Range(ctx context.Context, key, end []byte, limit int) (*RangeResponse, error) {
	req := map[string]any{"key": key}
	if end != nil {
		req["range_end"] = end
	}
	if limit > 0 {
		req["limit"] = strconv.Itoa(limit)
	}
	var res RangeResponse
	if err := c.Call(ctx, "/v3/kv/range", req, &res); err != nil {
		return nil, err
	}
	return &res, nil
}

// Put puts value at key.
func (c *Client) Put(ctx context.Context, key, value []byte) error {
	var res struct{}
	return c.Call(ctx, "/v3/kv/put", map[string]any{"key": key, "value": value}, &res)
}

// Delete deletes key.
func (c *Client) Delete(ctx context.Context, key []byte) error {
	var res struct{}
	return c.Call(ctx, "/v3/kv/deleterange", map[string]any{"key": key}, &res)
}

// Grant grants a lease of ttl whole seconds; it returns its ID and the TTL
// the cluster granted (it may raise a short one).
func (c *Client) Grant(ctx context.Context, ttl int64) (id int64, granted int64, err error) {
	var res struct {
		ID    int64  `json:"ID,string"`
		TTL   int64  `json:"TTL,string"`
		Error string `json:"error"`
	}
	if err := c.Call(ctx, "/v3/lease/grant", map[string]string{"TTL": strconv.FormatInt(ttl, 10)}, &res); err != nil {
		return 0, 0, err
	}
	if res.Error != "" || res.ID == 0 {
		return 0, 0, fmt.Errorf("lease not granted: %q", res.Error)
	}
	return res.ID, res.TTL, nil
}

// KeepAlive renews the lease once; it returns the TTL it now has, 0 when
// the lease is gone (expired or revoked).
func (c *Client) KeepAlive(ctx context.Context, id int64) (int64, error) {
	var res struct {
		TTL int64 `json:"TTL,string"`
	}
	if err := c.Call(ctx, "/v3/lease/keepalive", map[string]string{"ID": strconv.FormatInt(id, 10)}, &res); err != nil {
		return 0, err
	}
	return res.TTL, nil
}

// Revoke revokes the lease, and with it deletes the keys attached to it. A
// lease that is gone already is no error.
func (c *Client) Revoke(ctx context.Context, id int64) error {
	var res struct{}
	err := c.Call(ctx, "/v3/lease/revoke", map[string]string{"ID": strconv.FormatInt(id, 10)}, &res)
	var serr *Error
	if errors.As(err, &serr) && serr.Code == CodeNotFound {
		return nil
	}
	return err
}

// PrefixEnd is the end of the range of the keys that start with prefix.
func PrefixEnd(prefix []byte) []byte {
	end := bytes.Clone(prefix)
	for i := len(end) - 1; i >= 0; i-- {
		if end[i] < 0xff {
			end[i]++
			return end[:i+1]
		}
	}
	return []byte{0}
}
