package etcd

// This file is etcd's key-value and lease API over the client: ranges,
// transactions with their compares, puts, deletes, leases.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"
)

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

// Keys reads the keys from key to end (exclusive), at most limit of them
// (0: all), without their values.
func (c *Client) Keys(ctx context.Context, key, end []byte, limit int) (*RangeResponse, error) {
	req := map[string]any{"key": key, "range_end": end, "keys_only": true}
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
