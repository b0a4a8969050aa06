package ping

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/everycli/every/runner"
)

// newClient returns the client a Pinger uses when it is given none: each
// step of a request bounded, one or two connections kept alive between
// pings, TLS sessions resumed.
func newClient(timeout time.Duration) *http.Client {
	return &http.Client{
		Timeout: timeout,
		Transport: &http.Transport{
			Proxy:                 http.ProxyFromEnvironment,
			DialContext:           (&net.Dialer{Timeout: timeout, KeepAlive: 30 * time.Second}).DialContext,
			ForceAttemptHTTP2:     true,
			TLSClientConfig:       &tls.Config{ClientSessionCache: tls.NewLRUClientSessionCache(4)},
			TLSHandshakeTimeout:   timeout,
			ResponseHeaderTimeout: timeout,
			ExpectContinueTimeout: time.Second,
			MaxIdleConns:          2,
			MaxIdleConnsPerHost:   2,
			IdleConnTimeout:       90 * time.Second,
		},
	}
}

// noRedirects returns a copy of client that follows no redirect: a
// redirect is a ping error, logged with the host it pointed to. Not even
// one to the same host is followed: the output tail must go nowhere the URL
// did not say (another host, or http instead of https), and a 301, 302 or
// 303 would turn the POST into a GET without the output all the same. The
// service's ping URLs never redirect; one that does is a URL to correct
// once, not to follow at every ping.
func noRedirects(client *http.Client) *http.Client {
	c := *client
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &c
}

// send is the sender: it sends the queued pings one at a time, in order,
// until Close, then what is left within Close's bound.
func (p *Pinger) send() {
	defer close(p.done)
	for {
		pg, ok := p.pop()
		if !ok {
			select {
			case <-p.wake:
				continue
			case <-p.closing:
				if pg, ok = p.pop(); !ok {
					p.stopped(0)
					return
				}
			}
		}
		if p.ctx.Err() != nil || !p.deliver(pg) {
			p.stopped(1)
			return
		}
	}
}

// pop takes the oldest ping from the queue.
func (p *Pinger) pop() (ping, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.queue) == 0 {
		return ping{}, false
	}
	pg := p.queue[0]
	p.queue[0] = ping{}
	p.queue = p.queue[1:]
	return pg, true
}

// stopped logs, at the sender's end, the pings it gives up on (taken plus
// those still queued) and the drops not yet counted.
func (p *Pinger) stopped(taken int) {
	p.mu.Lock()
	left := taken + len(p.queue)
	p.queue = nil
	drops, unshown, _, dropped := p.drops.end()
	p.mu.Unlock()
	if dropped && unshown > 0 {
		p.log.Warn("ping queue full, dropped the oldest pings", "event", runner.EventPing, "host", p.host, "count", unshown, "total", drops)
	}
	if left > 0 {
		p.log.Warn("pings not sent at stop", "event", runner.EventPing, "host", p.host, "count", left)
	}
	if total, unshown, since, ok := p.fails.end(); ok && unshown > 0 {
		p.log.Warn("ping failed", "event", runner.EventPing, "host", p.host, "count", unshown, "total", total,
			"since", since.Round(0).UTC(), "repeated", true)
	}
}

// attempt is how one request went.
type attempt struct {
	status   int    // the response's, if one came
	err      string // why no response came, redacted
	redirect string // the host a redirect pointed to (never its path)
	retry    bool   // worth sending again
}

func (a attempt) ok() bool { return a.err == "" && a.status/100 == 2 }

// deliver sends one ping, again after a transient failure (at most retries
// times, waiting backoff, then twice that), and logs it if it failed. It
// returns false when Close's bound cut it short: the ping is not sent.
func (p *Pinger) deliver(pg ping) bool {
	u := p.target(pg)
	var a attempt
	tries := 0
	for tries <= retries {
		if tries > 0 && !p.sleep(p.backoff<<(tries-1)) {
			break
		}
		tries++
		a = p.post(u, pg.body)
		if a.ok() || !a.retry {
			break
		}
	}
	switch {
	case a.ok():
		p.delivered(pg, tries)
	case p.ctx.Err() != nil:
		return false
	default:
		p.failed(pg, a, tries)
	}
	return true
}

// target is the ping's URL: the check's, with the kind of ping appended to
// its path, and the run id added to its query (create=1, say, kept).
func (p *Pinger) target(pg ping) string {
	u := p.cfg.URL.JoinPath(pg.kind)
	q := u.Query()
	q.Set("rid", pg.rid)
	u.RawQuery, u.Fragment, u.RawFragment = q.Encode(), "", ""
	return u.String()
}

// sleep waits d before a retry. It returns false, at once, when closing
// and either what is left of Close's bound is shorter or other pings wait
// (the bound is theirs: the run's end ping is the one that matters most),
// or when the bound passes. A Close that comes during the wait is heard at
// once, and decides the same way.
func (p *Pinger) sleep(d time.Duration) bool {
	end := time.Now().Add(d)
	t := time.NewTimer(d)
	defer t.Stop()
	if p.waiting != nil {
		p.waiting()
	}
	closing := p.closing
	for {
		p.mu.Lock()
		closed, until, waiting := p.closed, p.until, len(p.queue)
		p.mu.Unlock()
		if closed {
			if waiting > 0 || until.Before(end) {
				return false
			}
			closing = nil // the bound leaves time for this retry
		}
		select {
		case <-t.C:
			return true
		case <-p.ctx.Done():
			return false
		case <-closing:
		}
	}
}

// post sends one request, bounded by the timeout and by Close's bound.
func (p *Pinger) post(u string, body []byte) attempt {
	if p.bodyMax > 0 && len(body) > p.bodyMax {
		body = body[len(body)-p.bodyMax:] // the server keeps the first bytes; the last tell more
	}
	ctx, cancel := context.WithTimeout(p.ctx, p.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(body))
	if err != nil {
		return attempt{err: p.describe(err)}
	}
	req.Header.Set("Content-Type", "text/plain")
	req.Header.Set("User-Agent", "every")
	resp, err := p.client.Do(req)
	if err != nil {
		return attempt{err: p.describe(err), retry: transient(err) && p.ctx.Err() == nil}
	}
	// Read a little of the answer ("OK") so that the connection is kept.
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4<<10))
	_ = resp.Body.Close()
	if n, err := strconv.Atoi(resp.Header.Get("Ping-Body-Limit")); err == nil && n > 0 {
		p.bodyMax = min(n, BodyLimit)
	}
	s := resp.StatusCode
	if s/100 == 3 {
		a := attempt{status: s, redirect: "none given"}
		if loc, err := resp.Location(); err == nil {
			a.redirect = loc.Host
		}
		return a
	}
	return attempt{status: s, retry: s == http.StatusRequestTimeout || s == http.StatusTooManyRequests || s >= 500}
}

// transient reports whether a request that got no response is worth sending
// again: a timeout or a connection refused or cut is; a name that does not
// resolve or a certificate that is not trusted will not mend in seconds.
func transient(err error) bool {
	var dns *net.DNSError
	var unknown x509.UnknownAuthorityError
	var hostname x509.HostnameError
	var invalid x509.CertificateInvalidError
	var verify *tls.CertificateVerificationError
	switch {
	case errors.As(err, &dns) && dns.IsNotFound,
		errors.As(err, &unknown), errors.As(err, &hostname), errors.As(err, &invalid), errors.As(err, &verify),
		errors.Is(err, context.Canceled):
		return false
	}
	return true
}

// describe says why a request got no response, for a log line: the
// transport's error without the URL it quotes, and in any case without the
// URL's path and query.
func (p *Pinger) describe(err error) string {
	if p.ctx.Err() != nil {
		return "abandoned at stop"
	}
	var ne net.Error
	if errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne) && ne.Timeout() {
		return fmt.Sprintf("no answer within %v", p.cfg.Timeout)
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return p.redact(err.Error())
}

// delivered logs a ping sent, and the end of a run of failed ones.
func (p *Pinger) delivered(pg ping, tries int) {
	p.log.Debug("ping sent", "event", runner.EventPing, "host", p.host, "ping", pg.kind, "attempts", tries)
	if total, unshown, since, ok := p.fails.end(); ok {
		p.log.Info("pings delivered again", "event", runner.EventPing, "host", p.host, "count", unshown, "total", total,
			"since", since.Round(0).UTC(), "ended", true)
	}
}

// failed logs a ping given up on: the first of a run of failures at warn,
// then a summary at most once every summaryEvery.
func (p *Pinger) failed(pg ping, a attempt, tries int) {
	attrs := []any{"event", runner.EventPing, "host", p.host, "ping", pg.kind}
	switch {
	case a.err != "":
		attrs = append(attrs, "error", a.err)
	case a.redirect != "":
		attrs = append(attrs, "status", a.status, "redirect_host", a.redirect,
			"error", "redirected; pings follow no redirect: give --ping the URL it redirects to")
	default:
		attrs = append(attrs, "status", a.status)
	}
	attrs = append(attrs, "attempts", tries)
	first := p.fails.n == 0
	count, due := p.fails.note(time.Now(), 1)
	switch {
	case !due:
		p.log.Debug("ping failed", append(attrs, "count", 1)...)
	case first:
		p.log.Warn("ping failed", append(attrs, "count", count)...)
	default:
		p.log.Warn("ping failed", append(attrs, "count", count, "since", p.fails.since.Round(0).UTC(), "repeated", true)...)
	}
}
