package ping

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/everycli/every/internal/testutil"
	"github.com/everycli/every/runner"
	"github.com/everycli/every/state"
)

// bound is the time the tests give Close to deliver what is queued: long
// enough for a loaded machine, and far from a retry's or a hung server's.
const bound = 10 * time.Second

// check is the check's UUID: the secret that must never be logged.
const check = "5bf66975-d4c7-4bf5-bcc8-b8d8a82ea278"

var uuid4 = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

// request is what the recorder saw of one ping.
type request struct {
	method, path, rid, ctype, body string
	query                          url.Values
}

// recorder is a healthchecks.io stand-in: it records each request on a
// channel, then answers with the status its answer function gives the
// request's number (1, 2, ...), or 200.
type recorder struct {
	srv    *httptest.Server
	reqs   chan request
	n      atomic.Int64
	answer func(n int, w http.ResponseWriter) int
}

func newRecorder(t *testing.T, answer func(n int, w http.ResponseWriter) int) *recorder {
	t.Helper()
	rec := &recorder{reqs: make(chan request, 1024), answer: answer}
	rec.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rec.reqs <- request{method: r.Method, path: r.URL.Path, rid: r.URL.Query().Get("rid"),
			ctype: r.Header.Get("Content-Type"), body: string(body), query: r.URL.Query()}
		status := http.StatusOK
		if rec.answer != nil {
			status = rec.answer(int(rec.n.Add(1)), w)
		}
		w.WriteHeader(status)
		_, _ = io.WriteString(w, "OK")
	}))
	t.Cleanup(rec.srv.Close)
	return rec
}

// url is the check's ping URL on the recorder.
func (rec *recorder) url(t *testing.T) *url.URL {
	t.Helper()
	u, err := url.Parse(rec.srv.URL + "/ping/" + check)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// next returns the next request, waiting for it at most testutil.WaitBound.
func (rec *recorder) next(t *testing.T) request {
	t.Helper()
	r, ok := testutil.Receive(rec.reqs)
	if !ok {
		t.Fatalf("no ping within %v", testutil.WaitBound)
	}
	return r
}

// none fails if a request is left unread. Called after Close has drained
// the queue, it says no more pings were sent.
func (rec *recorder) none(t *testing.T) {
	t.Helper()
	select {
	case r := <-rec.reqs:
		t.Fatalf("unexpected ping %s %s", r.method, r.path)
	default:
	}
}

// logs is a slog text handler's output, safe to read while it is written.
type logs struct{ testutil.Buffer }

// lines returns the lines that hold all of the substrings.
func (l *logs) lines(subs ...string) []string {
	var out []string
	for line := range strings.Lines(l.String()) {
		all := true
		for _, s := range subs {
			all = all && strings.Contains(line, s)
		}
		if all {
			out = append(out, line)
		}
	}
	return out
}

// wait waits until n lines hold all of the substrings, for at most
// testutil.WaitBound.
func (l *logs) wait(t *testing.T, n int, subs ...string) {
	t.Helper()
	if !testutil.Eventually(func() bool { return len(l.lines(subs...)) >= n }) {
		t.Fatalf("no %d lines with %q within %v in\n%s", n, subs, testutil.WaitBound, l)
	}
}

// start returns a Pinger of the recorder's check, logging into the
// returned logs at level, with short retry waits. Close is the test's.
func start(t *testing.T, cfg Config, level slog.Level) (*Pinger, *logs) {
	t.Helper()
	l := &logs{}
	cfg.Logger = slog.New(slog.NewTextHandler(l, &slog.HandlerOptions{Level: level}))
	p := newPinger(cfg, 10*time.Millisecond)
	t.Cleanup(func() { p.Close(0) })
	return p, l
}

// result builds the end of a run.
func result(outcome runner.Outcome, code, failures int, output string) runner.Run {
	r := runner.Run{Result: runner.Result{Outcome: outcome, ExitCode: code}, End: time.Now(),
		Record: state.Record{ConsecutiveFailures: failures}}
	if output != "" {
		r.Output = []byte(output)
	}
	return r
}

var success = result(runner.Success, 0, 0, "all fine\n")

// expect checks a request: a POST of text/plain to the check's path with
// the kind appended, with a v4 run id, and the body.
func expect(t *testing.T, r request, kind, body string) {
	t.Helper()
	if want := "/ping/" + check + "/" + kind; r.method != http.MethodPost || r.path != want {
		t.Errorf("ping %s %s, want POST %s", r.method, r.path, want)
	}
	if !uuid4.MatchString(r.rid) {
		t.Errorf("ping %s: rid %q is not a v4 UUID", kind, r.rid)
	}
	if r.ctype != "text/plain" {
		t.Errorf("ping %s: content type %q, want text/plain", kind, r.ctype)
	}
	if r.body != body {
		t.Errorf("ping %s: body %q, want %q", kind, r.body, body)
	}
}

// TestRun checks the pings of one run, by how it ended: a start, then the
// exit status with the output, or fail when there was no exit status.
func TestRun(t *testing.T) {
	cannotStart := result(runner.Failure, 127, 1, "")
	cannotStart.Result.Err = &exec.Error{Name: "nope", Err: exec.ErrNotFound}
	for _, tc := range []struct {
		name string
		run  runner.Run
		kind string
		body string
	}{
		{"success", success, "0", "all fine\n"},
		{"exit 3", result(runner.Failure, 3, 1, "disk full\n"), "3", "disk full\n"},
		{"timeout", result(runner.Timeout, 124, 1, "slow\n"), "124", "slow\n"},
		{"killed", result(runner.Failure, 137, 1, ""), "137", ""},
		{"lost lock", result(runner.LostLock, 143, 1, "cut\n"), "fail", "cut\n"},
		{"cannot start", cannotStart, "fail", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := newRecorder(t, nil)
			p, _ := start(t, Config{URL: rec.url(t)}, slog.LevelInfo)
			p.Started(runner.Run{})
			p.Finished(tc.run)
			begin, end := rec.next(t), rec.next(t)
			expect(t, begin, "start", "")
			expect(t, end, tc.kind, tc.body)
			if begin.rid != end.rid {
				t.Errorf("rid %s at the start, %s at the end: want one", begin.rid, end.rid)
			}
			p.Close(bound)
			rec.none(t)
		})
	}
}

// TestRidPerRun checks that each run has an id of its own.
func TestRidPerRun(t *testing.T) {
	rec := newRecorder(t, nil)
	p, _ := start(t, Config{URL: rec.url(t)}, slog.LevelInfo)
	seen := map[string]bool{}
	for range 3 {
		p.Started(runner.Run{})
		p.Finished(success)
		begin, end := rec.next(t), rec.next(t)
		if begin.rid != end.rid || seen[begin.rid] {
			t.Errorf("rids %s, %s; seen before: %v", begin.rid, end.rid, seen[begin.rid])
		}
		seen[begin.rid] = true
	}
}

// TestNoStart checks that NoStart leaves the start ping out, and Throttle
// implies it.
func TestNoStart(t *testing.T) {
	for _, cfg := range []Config{{NoStart: true}, {Throttle: true}} {
		rec := newRecorder(t, nil)
		cfg.URL = rec.url(t)
		p, _ := start(t, cfg, slog.LevelInfo)
		p.Started(runner.Run{})
		p.Finished(success)
		expect(t, rec.next(t), "0", "all fine\n")
		p.Close(bound)
		rec.none(t)
	}
}

// TestThrottle checks that a throttled check gets a success ping at most once
// a minute, every failure, and the success after a failure.
func TestThrottle(t *testing.T) {
	rec := newRecorder(t, nil)
	p, _ := start(t, Config{URL: rec.url(t), Throttle: true}, slog.LevelInfo)
	t0 := time.Now()
	at := func(r runner.Run, d time.Duration) runner.Run { r.End = t0.Add(d); return r }
	steps := []struct {
		run  runner.Run
		sent string // the kind of ping sent, "" for none
	}{
		{at(success, 0), "0"},
		{at(success, 10*time.Second), ""},
		{at(success, 59*time.Second), ""},
		{at(result(runner.Failure, 2, 1, "x"), 60*time.Second), "2"},
		{at(result(runner.Failure, 2, 2, "x"), 61*time.Second), "2"},
		{at(success, 62*time.Second), "0"}, // the recovery
		{at(success, 70*time.Second), ""},
		{at(success, 122*time.Second), "0"},
	}
	for i, s := range steps {
		p.Started(runner.Run{})
		p.Finished(s.run)
		if s.sent != "" {
			if r := rec.next(t); r.path != "/ping/"+check+"/"+s.sent {
				t.Errorf("step %d: ping %s, want %s", i, r.path, s.sent)
			}
		}
	}
	p.Close(bound)
	rec.none(t)
}

// TestFailAfter checks that failures are sent as log pings until FailAfter
// runs in a row failed.
func TestFailAfter(t *testing.T) {
	rec := newRecorder(t, nil)
	p, _ := start(t, Config{URL: rec.url(t), FailAfter: 3, NoStart: true}, slog.LevelInfo)
	for i, want := range []string{"log", "log", "3", "3"} {
		p.Started(runner.Run{})
		p.Finished(result(runner.Failure, 3, i+1, "boom\n"))
		expect(t, rec.next(t), want, "boom\n")
	}
	p.Started(runner.Run{})
	p.Finished(success)
	expect(t, rec.next(t), "0", "all fine\n")
	p.Close(bound)
	rec.none(t)
}

// TestEndKind checks the end ping's kind for each way a run can end.
func TestEndKind(t *testing.T) {
	for _, tc := range []struct {
		res       runner.Result
		failures  int
		failAfter int
		want      string
	}{
		{runner.Result{Outcome: runner.Success}, 0, 0, "0"},
		{runner.Result{Outcome: runner.Success}, 0, 5, "0"},
		{runner.Result{Outcome: runner.Failure, ExitCode: 1}, 1, 0, "1"},
		{runner.Result{Outcome: runner.Failure, ExitCode: 255}, 1, 1, "255"},
		{runner.Result{Outcome: runner.Failure, ExitCode: 1}, 1, 2, "log"},
		{runner.Result{Outcome: runner.Failure, ExitCode: 1}, 2, 2, "1"},
		{runner.Result{Outcome: runner.Timeout, ExitCode: 124}, 1, 0, "124"},
		{runner.Result{Outcome: runner.Interrupted, ExitCode: 143}, 1, 0, "143"},
		{runner.Result{Outcome: runner.Interrupted, ExitCode: 0}, 1, 0, "fail"},
		{runner.Result{Outcome: runner.LostLock, ExitCode: 143}, 1, 0, "fail"},
		{runner.Result{Outcome: runner.LostLock, ExitCode: 143}, 1, 2, "log"},
		{runner.Result{Outcome: runner.Failure, ExitCode: 126, Err: errors.New("permission denied")}, 1, 0, "fail"},
		{runner.Result{Outcome: runner.Failure, ExitCode: 256}, 1, 0, "fail"},
	} {
		if got := endKind(tc.res, tc.failures, tc.failAfter); got != tc.want {
			t.Errorf("endKind(%+v, %d, %d) = %s, want %s", tc.res, tc.failures, tc.failAfter, got, tc.want)
		}
	}
}

// TestTarget checks the URLs pinged: the kind after the check's path, the
// run id in the query, the URL's own query kept.
func TestTarget(t *testing.T) {
	for _, tc := range []struct{ url, kind, want string }{
		{"https://hc-ping.com/" + check, "start", "https://hc-ping.com/" + check + "/start?rid=R"},
		{"https://hc-ping.com/" + check + "/", "0", "https://hc-ping.com/" + check + "/0?rid=R"},
		{"https://hc-ping.com/KEY/db-backup?create=1", "fail", "https://hc-ping.com/KEY/db-backup/fail?create=1&rid=R"},
		{"http://hc.local:8000/ping/" + check + "#x", "log", "http://hc.local:8000/ping/" + check + "/log?rid=R"},
	} {
		u, err := url.Parse(tc.url)
		if err != nil {
			t.Fatal(err)
		}
		p := &Pinger{cfg: Config{URL: u}}
		if got := p.target(ping{kind: tc.kind, rid: "R"}); got != tc.want {
			t.Errorf("target(%s, %s) = %s, want %s", tc.url, tc.kind, got, tc.want)
		}
	}
}

// TestUUID checks that run ids are canonical v4 UUIDs, and differ.
func TestUUID(t *testing.T) {
	seen := map[string]bool{}
	for range 1000 {
		id := newUUID()
		if !uuid4.MatchString(id) || seen[id] {
			t.Fatalf("run id %q: not a v4 UUID, or seen before (%v)", id, seen[id])
		}
		seen[id] = true
	}
}

// TestRetry checks that a ping is sent again twice at most on 408, 429 and
// 5xx, and never on other errors, and that a ping given up on is logged.
func TestRetry(t *testing.T) {
	for _, tc := range []struct {
		status int
		fails  int // answers with status before 200
		sent   int // requests in all
		logged bool
	}{
		{http.StatusServiceUnavailable, 1, 2, false},
		{http.StatusServiceUnavailable, 2, 3, false},
		{http.StatusServiceUnavailable, 5, 3, true},
		{http.StatusInternalServerError, 5, 3, true},
		{http.StatusRequestTimeout, 2, 3, false},
		{http.StatusTooManyRequests, 2, 3, false},
		{http.StatusNotFound, 5, 1, true},
		{http.StatusConflict, 5, 1, true},
	} {
		t.Run(strconv.Itoa(tc.status)+"x"+strconv.Itoa(tc.fails), func(t *testing.T) {
			rec := newRecorder(t, func(n int, _ http.ResponseWriter) int {
				if n <= tc.fails {
					return tc.status
				}
				return http.StatusOK
			})
			p, logs := start(t, Config{URL: rec.url(t), NoStart: true}, slog.LevelInfo)
			p.Started(runner.Run{})
			p.Finished(result(runner.Failure, 1, 1, "out"))
			for range tc.sent {
				expect(t, rec.next(t), "1", "out")
			}
			p.Close(bound)
			rec.none(t)
			lines := logs.lines("level=WARN", "event=ping", "status="+strconv.Itoa(tc.status), "ping=1")
			if tc.logged && (len(lines) != 1 || !strings.Contains(lines[0], "attempts="+strconv.Itoa(tc.sent))) {
				t.Errorf("want one warning with attempts=%d, got %q in\n%s", tc.sent, lines, logs)
			}
			if !tc.logged && logs.String() != "" {
				t.Errorf("want no log, got\n%s", logs)
			}
		})
	}
}

// hanging returns a recorder whose handler answers only when the test ends.
func hanging(t *testing.T) *recorder {
	t.Helper()
	release := make(chan struct{})
	rec := newRecorder(t, func(int, http.ResponseWriter) int {
		<-release
		return http.StatusOK
	})
	t.Cleanup(func() { close(release) }) // before the server's Close, which waits for handlers
	return rec
}

// TestHangingServer checks that a server that does not answer neither
// blocks the observer's calls nor holds Close beyond its bound.
func TestHangingServer(t *testing.T) {
	rec := hanging(t)
	p, logs := start(t, Config{URL: rec.url(t), Timeout: time.Minute}, slog.LevelInfo)
	var slowest time.Duration
	for range 5 {
		t0 := time.Now()
		p.Started(runner.Run{})
		slowest = max(slowest, time.Since(t0))
		t0 = time.Now()
		p.Finished(result(runner.Failure, 1, 1, strings.Repeat("x", 10000)))
		slowest = max(slowest, time.Since(t0))
	}
	rec.next(t) // the first is in flight, and stays there
	// The server never answers (Timeout is a minute): a call that waited
	// for it would take that long. 5s is far from both, and a loaded
	// machine meets it (50ms it did not always).
	if slowest > 5*time.Second {
		t.Errorf("slowest observer call took %v, want at once, not at the server's answer", slowest)
	}
	t.Logf("slowest observer call: %v", slowest)
	const closeBound = 200 * time.Millisecond
	t0 := time.Now()
	p.Close(closeBound)
	took := time.Since(t0)
	t.Logf("Close(%v) took %v", closeBound, took)
	// At least its bound; at most the bound and a loaded machine's slack,
	// far below the minute a wait for the hanging server would take.
	if took < closeBound || took > closeBound+5*time.Second {
		t.Errorf("Close(%v) took %v", closeBound, took)
	}
	if l := logs.lines("level=WARN", "pings not sent at stop", "count=10"); len(l) != 1 {
		t.Errorf("want the 10 pings not sent logged, got\n%s", logs)
	}
}

// TestRetryAtStop checks that at stop a failed ping is not sent again while
// others wait: the time left is theirs.
func TestRetryAtStop(t *testing.T) {
	release := make(chan struct{})
	rec := newRecorder(t, func(n int, _ http.ResponseWriter) int {
		if n == 1 {
			<-release
			return http.StatusServiceUnavailable
		}
		return http.StatusOK
	})
	p, logs := start(t, Config{URL: rec.url(t)}, slog.LevelInfo)
	p.Started(runner.Run{})
	rec.next(t) // the start ping is held
	p.Finished(success)
	closed := make(chan struct{})
	go func() { p.Close(bound); close(closed) }()
	if _, ok := testutil.Receive(p.closing); !ok {
		t.Fatal("Close did not begin")
	}
	close(release)
	expect(t, rec.next(t), "0", "all fine\n")
	<-closed
	rec.none(t)
	if l := logs.lines("level=WARN", "ping failed", "ping=start", "status=503", "attempts=1"); len(l) != 1 {
		t.Errorf("want the start ping given up after one try, got\n%s", logs)
	}
}

// TestRequestTimeout checks that each request is bounded by the timeout,
// and retried.
// A client of the caller's, with no timeouts of its own, is bounded too.
func TestRequestTimeout(t *testing.T) {
	for _, client := range []*http.Client{nil, {}} {
		rec := hanging(t)
		p, logs := start(t, Config{URL: rec.url(t), Timeout: 50 * time.Millisecond, NoStart: true, Client: client}, slog.LevelInfo)
		p.Finished(success)
		for range 3 {
			rec.next(t)
		}
		p.Close(bound)
		rec.none(t)
		if l := logs.lines("level=WARN", "ping failed", `error="no answer within 50ms"`, "attempts=3"); len(l) != 1 {
			t.Errorf("client %v: want the timeout logged once, got\n%s", client, logs)
		}
	}
}

// TestTransient checks which errors without a response are worth a retry.
func TestTransient(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{&url.Error{Op: "Post", Err: &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}}, true},
		{&url.Error{Op: "Post", Err: syscall.ECONNRESET}, true},
		{&url.Error{Op: "Post", Err: io.ErrUnexpectedEOF}, true},
		{&url.Error{Op: "Post", Err: context.DeadlineExceeded}, true},
		{&url.Error{Op: "Post", Err: &net.OpError{Op: "dial", Err: &net.DNSError{Err: "no such host", Name: "hc-ping.invalid", IsNotFound: true}}}, false},
		{&url.Error{Op: "Post", Err: &net.OpError{Op: "dial", Err: &net.DNSError{Err: "server misbehaving", Name: "hc-ping.com", IsTemporary: true}}}, true},
		{&url.Error{Op: "Post", Err: &tls.CertificateVerificationError{Err: x509.UnknownAuthorityError{}}}, false},
		{&url.Error{Op: "Post", Err: x509.HostnameError{Host: "hc-ping.com", Certificate: &x509.Certificate{}}}, false},
		{&url.Error{Op: "Post", Err: context.Canceled}, false},
	} {
		if got := transient(tc.err); got != tc.want {
			t.Errorf("transient(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}

// TestQueueFull checks that a full queue drops the oldest pings, logged once
// and then summarised, and keeps the newest.
func TestQueueFull(t *testing.T) {
	release := make(chan struct{})
	rec := newRecorder(t, func(n int, _ http.ResponseWriter) int {
		if n == 1 {
			<-release
		}
		return http.StatusOK
	})
	p, logs := start(t, Config{URL: rec.url(t)}, slog.LevelInfo)
	p.Started(runner.Run{})
	rec.next(t) // the sender waits on the first ping now
	const runs = 40
	for range runs {
		p.Started(runner.Run{})
		p.Finished(success)
	}
	p.mu.Lock()
	newest := p.queue[len(p.queue)-1].rid
	p.mu.Unlock()
	close(release)
	var r request
	for range queueSize {
		r = rec.next(t)
	}
	p.Close(bound)
	rec.none(t)
	if r.rid != newest || !strings.HasSuffix(r.path, "/0") {
		t.Errorf("last ping sent: %s rid %s, want the newest, /0 rid %s", r.path, r.rid, newest)
	}
	first, summary := logs.lines("level=WARN", "ping queue full, dropping", "count=1"), logs.lines("level=WARN", "dropped the oldest pings")
	want := "count=" + strconv.Itoa(2*runs-queueSize-1) + " total=" + strconv.Itoa(2*runs-queueSize)
	if len(first) != 1 || len(summary) != 1 || !strings.Contains(summary[0], want) {
		t.Errorf("want one line at the first drop, one summary with %s, got\n%s", want, logs)
	}
}

// TestRefused checks that a server that refuses connections is logged once,
// then summarised, with no panic and no path in the log.
func TestRefused(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	u, _ := url.Parse("http://" + addr + "/ping/" + check)
	p, logs := start(t, Config{URL: u}, slog.LevelDebug)
	for range 3 {
		p.Started(runner.Run{})
		p.Finished(success)
	}
	logs.wait(t, 6, `msg="ping failed"`) // before Close: at stop, a ping with others behind it is not retried
	p.Close(bound)
	warn := logs.lines("level=WARN", "ping failed", "count=1")
	if len(warn) != 1 || !strings.Contains(warn[0], "host="+addr) || !strings.Contains(warn[0], "connection refused") ||
		!strings.Contains(warn[0], "attempts=3") {
		t.Errorf("want one warning naming the host and the error, got %q", warn)
	}
	if l := logs.lines("level=WARN", "ping failed", "count=5", "total=6", "repeated=true"); len(l) != 1 || len(logs.lines("level=WARN")) != 2 {
		t.Errorf("want the failures summarised at the end, got\n%s", logs)
	}
	if strings.Contains(logs.String(), check) {
		t.Errorf("the check's UUID is in the log:\n%s", logs)
	}
}

// TestSecretNotLogged checks that no log line, at any level, holds the URL's
// path or query, whatever the error: a status, a bad URL, a refused
// connection, a transport whose own error quotes the URL. Two layers hide
// them, and each is needed: describe drops the URL that *url.Error quotes
// (no line quotes the request's URL, even redacted), and redact cuts the path
// and query out of whatever the error underneath says (a proxy's, say),
// in whatever order the query was encoded.
func TestSecretNotLogged(t *testing.T) {
	const key = "k3y-0f-the-check-9d2e" // a secret in the query, sent re-ordered
	secrets := []string{check, key, "/ping"}
	withQuery := func(u *url.URL) *url.URL {
		u.RawQuery = "key=" + key + "&create=1"
		return u
	}
	rec := newRecorder(t, func(int, http.ResponseWriter) int { return http.StatusNotFound })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := ln.Addr().String()
	_ = ln.Close()
	quoting := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		return nil, errors.New("proxy refused " + r.URL.String() + " (path " + r.URL.Path + ")")
	})}
	tests := []struct {
		name   string
		url    *url.URL
		client *http.Client
		want   string // in the warning
	}{
		{name: "a status", url: withQuery(rec.url(t)), want: "status=404"},
		// The transport cannot send it: its *url.Error quotes it.
		{name: "a bad URL", url: withQuery(&url.URL{Scheme: "http", Host: "[::1", Path: "/ping/" + check}),
			want: `error="missing ']' in host"`},
		{name: "a refused connection", url: withQuery(&url.URL{Scheme: "http", Host: refused, Path: "/ping/" + check}),
			want: "connection refused"},
		{name: "an error that quotes the URL itself", url: withQuery(rec.url(t)), client: quoting,
			want: `error="proxy refused `},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, logs := start(t, Config{URL: tt.url, Client: tt.client}, slog.LevelDebug)
			p.Started(runner.Run{})
			p.Finished(success)
			p.Close(bound)
			all := logs.String()
			for _, s := range secrets {
				if strings.Contains(all, s) {
					t.Errorf("%q is in the log:\n%s", s, all)
				}
			}
			// What *url.Error says around the error: the request's URL,
			// quoted (the quote escaped in a logfmt value).
			if urlErrorQuote.MatchString(all) {
				t.Errorf("the request's URL is quoted in the log:\n%s", all)
			}
			if w := logs.lines("level=WARN", `msg="ping failed"`, tt.want); len(w) != 1 || !strings.Contains(w[0], "host="+tt.url.Host) {
				t.Errorf("want one warning naming the host and %s:\n%s", tt.want, all)
			}
		})
	}
}

// urlErrorQuote is how a *url.Error starts: the method or operation, then
// the URL in quotes.
var urlErrorQuote = regexp.MustCompile(`(Post|parse) \\?"`)

// roundTripFunc is an http.RoundTripper.
type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestBody checks that the body is the output's last BodyLimit bytes, or the
// last Ping-Body-Limit bytes once the service said it keeps fewer.
func TestBody(t *testing.T) {
	rec := newRecorder(t, func(_ int, w http.ResponseWriter) int {
		w.Header().Set("Ping-Body-Limit", "10")
		return http.StatusOK
	})
	p, _ := start(t, Config{URL: rec.url(t), NoStart: true}, slog.LevelInfo)
	big := strings.Repeat("a", 50_000) + strings.Repeat("b", BodyLimit)
	p.Finished(result(runner.Failure, 1, 1, big))
	if r := rec.next(t); r.body != big[len(big)-BodyLimit:] {
		t.Errorf("body of %d bytes, want the last %d", len(r.body), BodyLimit)
	}
	p.Finished(result(runner.Failure, 1, 1, "0123456789abcdef"))
	if r := rec.next(t); r.body != "6789abcdef" {
		t.Errorf("body %q, want the last 10 bytes", r.body)
	}
}

// TestRepeat checks the summary of a repeated failure.
func TestRepeat(t *testing.T) {
	t0 := time.Now()
	var r repeat
	for _, s := range []struct {
		at    time.Duration
		count int
		due   bool
	}{
		{0, 1, true},
		{time.Second, 1, false},
		{59 * time.Second, 1, false},
		{60 * time.Second, 3, true},
		{61 * time.Second, 1, false},
	} {
		if count, due := r.note(t0.Add(s.at), 1); count != s.count || due != s.due {
			t.Errorf("at %v: note = %d, %v; want %d, %v", s.at, count, due, s.count, s.due)
		}
	}
	if total, unshown, since, ok := r.end(); total != 5 || unshown != 1 || !since.Equal(t0) || !ok {
		t.Errorf("end = %d, %d, %v, %v; want 5, 1, %v, true", total, unshown, since, ok, t0)
	}
	r.note(t0, 1)
	if _, _, _, ok := r.end(); ok {
		t.Error("a single failure, told by its line, ends silently")
	}
	if _, _, _, ok := r.end(); ok {
		t.Error("nothing repeated: end says so")
	}
}

// TestRetryGivenUpAtClose: a ping whose retry would wait longer than what
// is left of Close's bound is given up at once, whether Close came before
// the failed answer (the wait sees it at its start) or while the retry
// waits (the wait hears it): Close does not sit out its bound.
func TestRetryGivenUpAtClose(t *testing.T) {
	for _, order := range []string{"close before the answer", "close during the wait"} {
		t.Run(order, func(t *testing.T) {
			var p *Pinger
			rec := newRecorder(t, func(int, http.ResponseWriter) int {
				if order == "close before the answer" {
					<-p.closing
				}
				return http.StatusServiceUnavailable
			})
			l := &logs{}
			p = newPinger(Config{URL: rec.url(t), NoStart: true, Logger: slog.New(slog.NewTextHandler(l, nil))}, time.Hour)
			waiting := make(chan struct{})
			p.waiting = func() { close(waiting) }
			p.Finished(success)
			rec.next(t)
			if order == "close during the wait" {
				if _, ok := testutil.Receive(waiting); !ok {
					t.Fatal("no retry wait began")
				}
			}
			t0 := time.Now()
			p.Close(bound)
			if took := time.Since(t0); took > bound/2 {
				t.Errorf("Close took %v: it waited for a retry", took)
			}
			if len(l.lines("level=WARN", "ping failed", "status=503", "attempts=1")) != 1 {
				t.Errorf("want the ping given up after one try, got\n%s", l)
			}
		})
	}
}
