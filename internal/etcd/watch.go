package etcd

// This file is etcd's watch over the gateway: one key's changes, streamed
// as they are made.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
)

// Event is one change of a watched key: Type "DELETE" for a delete (a
// revoke of its lease, its expiry, or a delete by hand), "" (the gateway
// leaves out the default) for a put.
type Event struct {
	Type string `json:"type"`
	KV   KV     `json:"kv"`
}

// WatchResponse is one answer of a watch's stream: its creation, a batch
// of events, or its end (Canceled: CompactRevision set when the revisions
// asked for were compacted away).
type WatchResponse struct {
	Header          Header  `json:"header"`
	Created         bool    `json:"created"`
	Canceled        bool    `json:"canceled"`
	CompactRevision int64   `json:"compact_revision,string"`
	CancelReason    string  `json:"cancel_reason"`
	Events          []Event `json:"events"`
}

// Watch is a watch's stream, open until Close or until the server or the
// network ends it.
type Watch struct {
	body   io.ReadCloser
	dec    *json.Decoder
	cancel context.CancelFunc
}

// Watch watches key's changes from revision from on (those made since are
// sent first). Only opening the stream is bounded by the client's timeout;
// the stream lasts until ctx ends or Close.
func (c *Client) Watch(ctx context.Context, key []byte, from int64) (*Watch, error) {
	body, err := json.Marshal(map[string]any{"create_request": map[string]any{"key": key, "start_revision": strconv.FormatInt(from, 10)}})
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	first, authed := c.next, c.authed
	c.mu.Unlock()
	if !authed && c.cfg.User != "" {
		if err := c.Authenticate(ctx); err != nil {
			return nil, err
		}
	}
	var last error
	for i := range c.base {
		n := (first + i) % len(c.base)
		w, err := c.openWatch(ctx, n, body)
		var serr *Error
		switch {
		case err == nil:
			return w, nil
		case errors.As(err, &serr) && serr.Code != CodeUnavailable, errors.Is(err, ErrNotEtcd):
			return nil, err
		case ctx.Err() != nil:
			return nil, fmt.Errorf("%w: %w", ErrUnreachable, ctx.Err())
		}
		last = err
	}
	return nil, fmt.Errorf("%w: %w", ErrUnreachable, last)
}

// openWatch opens the stream on endpoint n.
func (c *Client) openWatch(ctx context.Context, n int, body []byte) (*Watch, error) {
	ctx, cancel := context.WithCancel(ctx)
	hr, err := c.request(ctx, n, "/v3/watch", body)
	if err != nil {
		cancel()
		return nil, err
	}
	// The transport's ResponseHeaderTimeout bounds the wait for the
	// answer's head: the gateway sends it with the watch's creation.
	res, err := c.http.Do(hr)
	if err != nil {
		cancel()
		return nil, err
	}
	if res.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(res.Body, maxBody))
		res.Body.Close()
		cancel()
		var e Error
		if json.Unmarshal(b, &e) != nil || e.Code == 0 {
			return nil, fmt.Errorf("%w: HTTP %d from %s", ErrNotEtcd, res.StatusCode, c.cfg.Endpoints[n])
		}
		e.Status = res.StatusCode
		return nil, &e
	}
	return &Watch{body: res.Body, dec: json.NewDecoder(res.Body), cancel: cancel}, nil
}

// Next waits for the stream's next answer. An error ends the stream: the
// server's (a frame with an error), the network's, or Close's.
func (w *Watch) Next() (*WatchResponse, error) {
	var frame struct {
		Result *WatchResponse `json:"result"`
		Error  *Error         `json:"error"`
	}
	if err := w.dec.Decode(&frame); err != nil {
		return nil, err
	}
	switch {
	case frame.Error != nil:
		if frame.Error.Code == 0 {
			frame.Error.Code = frame.Error.GRPCCode
		}
		return nil, frame.Error
	case frame.Result == nil:
		return nil, fmt.Errorf("%w: a watch answered neither a result nor an error", ErrNotEtcd)
	}
	return frame.Result, nil
}

// Close ends the stream.
func (w *Watch) Close() {
	w.cancel()
	w.body.Close()
}
