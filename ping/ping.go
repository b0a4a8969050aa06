// Package ping tells a healthchecks.io check (hosted or self-hosted) of each
// run: a start ping when a run starts, and its exit status, or a failure, or
// a log entry, when it ends, with the run's output tail as the body.
//
// The protocol, as the service documents it (https://healthchecks.io/docs/http_api/):
// a check's ping URL is <endpoint>/<uuid> or <endpoint>/<ping-key>/<slug>;
// <url>/start, <url>/<exit-status> (0-255, 0 a success), <url>/fail and
// <url>/log, each with an optional rid=<uuid> that pairs a start with its end;
// a POST body is kept as the ping's log, its first 100 kB on the hosted
// service (a self-hosted one says how much in a Ping-Body-Limit header). More
// than 5 pings a minute to one check may be rate-limited and not recorded.
//
// The URL's path is the check's secret: it never appears in a log line or an
// error; its host does.
package ping

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/everycli/every/runner"
	"github.com/everycli/every/state"
)

// Config is how a Pinger pings a check.
type Config struct {
	URL       *url.URL      // the check's ping URL (http or https), validated by the caller
	Timeout   time.Duration // per request (--ping-timeout); 0: 5s
	FailAfter int           // --ping-fail-after: /log instead of a failure until this many runs in a row failed
	// NoStart leaves out start pings: a schedule that fires more often than
	// once a minute would spend the service's rate limit on them.
	NoStart bool
	// Throttle sends a success ping at most once a minute (failures, and the
	// first success after one, always go): for schedules faster than one run
	// per 12s, above the service's 5 pings a minute. It implies NoStart: a
	// start whose end is held back would leave the check shown as running.
	Throttle bool
	Logger   *slog.Logger // event=ping lines; nil: none
	Client   *http.Client // nil: one of the Pinger's own
}

// The service's limits and ours.
const (
	// DefaultTimeout bounds one request when Config.Timeout is zero.
	DefaultTimeout = 5 * time.Second
	// BodyLimit is the most of a run's output sent: the hosted service keeps
	// the first 100 kB of a body, so more would hide the end of the output,
	// where errors are.
	BodyLimit = 100_000
	// queueSize bounds the pings waiting to be sent; beyond it the oldest
	// is dropped (the newest tells the check's state now).
	queueSize = 64
	// retries is how many times a ping is sent again after a transient error.
	retries = 2
	// retryWait is the wait before the first retry; the second waits twice
	// as long. Both fit in the 2s pings get at stop.
	retryWait = 500 * time.Millisecond
	// throttleEvery is how often a throttled check gets a success ping.
	throttleEvery = time.Minute
)

// Pinger pings a check of each run. It is a runner.Observer: its calls queue
// a ping and return at once, and one goroutine sends them, in order.
type Pinger struct {
	cfg     Config
	log     *slog.Logger
	client  *http.Client
	host    string        // for logs: the URL's host, never its path
	backoff time.Duration // the first retry's wait; the second waits twice as long

	// Only the loop's goroutine touches these (Started, Finished).
	rid         string    // the run's id, from Started to Finished
	lastSuccess time.Time // the end of the last run whose success ping was queued
	lastFailed  bool      // the last run failed: the next success is a recovery, never held back

	mu      sync.Mutex
	queue   []ping
	closed  bool
	drops   repeat // pings dropped from a full queue
	wake    chan struct{}
	closing chan struct{}   // closed by Close
	until   time.Time       // set by Close: when the sender gives up
	ctx     context.Context // cancelled when until has passed: abandon what is in flight
	cancel  context.CancelFunc
	bodyMax int           // the service's Ping-Body-Limit, once it said one; only the sender touches it
	fails   repeat        // failed pings; only the sender touches it
	done    chan struct{} // closed when the sender has returned
	once    sync.Once
	waiting func() // called when a retry's wait begins; tests set it
}

// ping is one request waiting to be sent.
type ping struct {
	kind string // the path's last part: start, fail, log or an exit status
	rid  string
	body []byte
}

// New returns a Pinger and starts its sender. Close stops it.
func New(cfg Config) *Pinger { return newPinger(cfg, retryWait) }

func newPinger(cfg Config, backoff time.Duration) *Pinger {
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.Throttle {
		cfg.NoStart = true
	}
	p := &Pinger{cfg: cfg, log: cfg.Logger, client: cfg.Client, host: cfg.URL.Host, backoff: backoff,
		wake: make(chan struct{}, 1), closing: make(chan struct{}), done: make(chan struct{})}
	p.ctx, p.cancel = context.WithCancel(context.Background())
	if p.log == nil {
		p.log = slog.New(slog.DiscardHandler)
	}
	if p.client == nil {
		p.client = newClient(cfg.Timeout)
	}
	p.client = noRedirects(p.client)
	go p.send()
	return p
}

// Began is not pinged.
func (p *Pinger) Began(state.Record, time.Time) {}

// Skipped is not pinged: a skipped slot sends nothing, so a check whose
// slots keep being skipped goes late, as it should.
func (p *Pinger) Skipped(string, int, time.Time) {}

// WantsOutput is true: the output tail is each end ping's body.
func (p *Pinger) WantsOutput() bool { return true }

// Started gives the run a fresh id and queues its start ping.
func (p *Pinger) Started(runner.Run) {
	p.rid = newUUID()
	if !p.cfg.NoStart {
		p.enqueue(ping{kind: "start", rid: p.rid})
	}
}

// Finished queues the run's end ping: its exit status, or fail when it never
// ran to an exit (lock lost, command not started), or log while fewer than
// FailAfter runs in a row failed. A throttled success may send nothing.
func (p *Pinger) Finished(r runner.Run) {
	rid := p.rid
	if rid == "" { // no Started: the end still gets an id of its own
		rid = newUUID()
	}
	p.rid = ""
	kind := endKind(r.Result, r.Record.ConsecutiveFailures, p.cfg.FailAfter)
	failed := r.Result.Outcome != runner.Success
	recovery := p.lastFailed
	p.lastFailed = failed
	if !failed && p.cfg.Throttle {
		end := r.End
		if end.IsZero() {
			end = time.Now()
		}
		if !recovery && !p.lastSuccess.IsZero() && end.Sub(p.lastSuccess) < throttleEvery && end.Sub(p.lastSuccess) >= 0 {
			return
		}
		p.lastSuccess = end
	}
	p.enqueue(ping{kind: kind, rid: rid, body: tailOf(r.Output, BodyLimit)})
}

// endKind is the last part of a run's end ping's path.
func endKind(res runner.Result, failures, failAfter int) string {
	if res.Outcome == runner.Success {
		return "0"
	}
	if failures < failAfter {
		return "log"
	}
	if res.Outcome == runner.LostLock || res.Err != nil || res.ExitCode < 0 || res.ExitCode > 255 {
		return "fail"
	}
	if res.ExitCode == 0 { // a failure the service must not read as a success
		return "fail"
	}
	return strconv.Itoa(res.ExitCode)
}

// tailOf returns a copy of the last limit bytes of b: the runner may reuse
// its buffer once Finished returns.
func tailOf(b []byte, limit int) []byte {
	if len(b) > limit {
		b = b[len(b)-limit:]
	}
	return bytes.Clone(b)
}

// enqueue adds a ping to the queue, dropping the oldest when it is full,
// and wakes the sender. It never blocks on the network.
func (p *Pinger) enqueue(pg ping) {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return
	}
	var dropped ping
	full := len(p.queue) >= queueSize
	if full {
		dropped = p.queue[0]
		p.queue = append(p.queue[:0], p.queue[1:]...)
	}
	p.queue = append(p.queue, pg)
	var count int
	var due bool
	if full {
		count, due = p.drops.note(time.Now(), 1)
	}
	p.mu.Unlock()
	if due {
		p.log.Warn("ping queue full, dropping the oldest ping", "event", runner.EventPing, "host", p.host, "ping", dropped.kind,
			"count", count, "queue", queueSize)
	}
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// Close sends what is queued for at most bound, then abandons the rest (a
// request in flight included) and returns. Pings queued after it are not
// sent.
func (p *Pinger) Close(bound time.Duration) {
	p.once.Do(func() {
		p.mu.Lock()
		p.closed = true
		p.until = time.Now().Add(bound)
		p.mu.Unlock()
		close(p.closing)
		defer p.cancel()
		t := time.NewTimer(bound)
		defer t.Stop()
		select {
		case <-p.done:
			return
		case <-t.C:
		}
		p.cancel()
		// Cancelled, a request returns at once; a transport that does not
		// listen must not hold the stop of every up.
		t.Reset(50 * time.Millisecond)
		select {
		case <-p.done:
		case <-t.C:
		}
	})
}

// redact returns s with the URL's path and query cut out, wherever an error
// from the transport may have quoted them: whole, escaped or not, or the
// query as a request encodes it (its keys sorted), or any one of their parts
// long enough to be a secret (a path segment, a query value).
func (p *Pinger) redact(s string) string {
	for _, secret := range p.secrets() {
		s = strings.ReplaceAll(s, secret, "…")
	}
	return s
}

// secretPart is the shortest path segment or query value that redact cuts
// out on its own: a check's UUID or ping key is far longer, and shorter
// parts (ping, create=1) would cut words out of messages.
const secretPart = 8

// secrets are the forms of the URL's path and query that redact cuts out,
// longest first, so that a part never leaves the rest of a whole behind.
func (p *Pinger) secrets() []string {
	u := p.cfg.URL
	seen := map[string]bool{}
	var out []string
	add := func(form string, min int) {
		if len(strings.Trim(form, "/")) >= min && !seen[form] {
			seen[form] = true
			out = append(out, form)
		}
	}
	for _, whole := range []string{u.EscapedPath(), u.Path, u.RawQuery, u.Query().Encode()} {
		add(whole, 1)
	}
	for _, seg := range strings.Split(u.EscapedPath(), "/") {
		unescaped, _ := url.PathUnescape(seg)
		add(seg, secretPart)
		add(unescaped, secretPart)
	}
	for _, vs := range u.Query() {
		for _, v := range vs {
			add(v, secretPart)
			add(url.QueryEscape(v), secretPart)
		}
	}
	slices.SortStableFunc(out, func(a, b string) int { return len(b) - len(a) })
	return out
}
