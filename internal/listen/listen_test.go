package listen

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/everycli/every/internal/testutil"
	"github.com/everycli/every/runner"
	"github.com/everycli/every/state"
)

var (
	t0   = time.Date(2026, 12, 5, 10, 0, 0, 0, time.UTC)
	hour = time.Hour
)

// server is a server whose clock reads now.
func server(now time.Time) *Server {
	s := New("127.0.0.1:0", nil)
	s.now = func() time.Time { return now }
	return s
}

// get answers a GET of path from s's handler.
func get(t *testing.T, s *Server, method, path string) *httptest.ResponseRecorder {
	t.Helper()
	w := httptest.NewRecorder()
	s.handler().ServeHTTP(w, httptest.NewRequest(method, path, nil))
	return w
}

// healthOf is /healthz's status and body.
func healthOf(t *testing.T, s *Server) (int, Health) {
	t.Helper()
	w := get(t, s, "GET", "/healthz")
	var h Health
	if err := json.Unmarshal(w.Body.Bytes(), &h); err != nil {
		t.Fatalf("/healthz body %q: %v", w.Body, err)
	}
	if ct := w.Header().Get("Content-Type"); ct != "application/json" {
		t.Errorf("/healthz Content-Type %q", ct)
	}
	return w.Code, h
}

// ran tells obs of a finished run at start, with the record after it.
func ran(obs runner.Observer, rec *state.Record, start time.Time, outcome runner.Outcome, code int, next time.Time) {
	rec.Runs++
	rec.LastSlot, rec.LastRun, rec.Running = start, start, true
	obs.Started(runner.Run{Slot: start, Start: start, Record: *rec, Next: next})
	end := start.Add(1500 * time.Millisecond)
	rec.Running, rec.LastEnd, rec.LastResult, rec.LastExitCode = false, end, string(outcome), code
	if outcome == runner.Success {
		rec.LastSuccess, rec.ConsecutiveFailures = start, 0
	} else {
		rec.Failures++
		rec.ConsecutiveFailures++
	}
	obs.Finished(runner.Run{Slot: start, Start: start, End: end, Result: runner.Result{Outcome: outcome, ExitCode: code},
		Attempts: 1, Record: *rec, Next: next})
}

func TestHealthz(t *testing.T) {
	now := t0.Add(10 * hour)
	for _, tc := range []struct {
		name   string
		maxAge time.Duration
		tell   func(obs runner.Observer)
		why    string // "" healthy
	}{
		{name: "loop not begun", tell: func(runner.Observer) {}},
		{name: "first slot to come", maxAge: hour, tell: func(obs runner.Observer) {
			obs.Began(state.Record{}, now.Add(hour))
		}},
		{name: "first slot within max-age", maxAge: hour, tell: func(obs runner.Observer) {
			obs.Began(state.Record{}, now.Add(-30*time.Minute))
		}},
		{name: "first slot older than max-age", maxAge: hour, tell: func(obs runner.Observer) {
			obs.Began(state.Record{}, now.Add(-2*hour))
		}, why: "not run yet, first slot 2h0m0s ago, older than --max-age 1h0m0s"},
		{name: "never run, no max-age", tell: func(obs runner.Observer) {
			obs.Began(state.Record{}, now.Add(-100*hour))
		}},
		{name: "succeeded", maxAge: hour, tell: func(obs runner.Observer) {
			obs.Began(state.Record{}, now.Add(-hour))
			rec := state.Record{}
			ran(obs, &rec, now.Add(-10*time.Minute), runner.Success, 0, now.Add(time.Minute))
		}},
		{name: "failed", tell: func(obs runner.Observer) {
			obs.Began(state.Record{}, now.Add(-hour))
			rec := state.Record{}
			ran(obs, &rec, now.Add(-10*time.Minute), runner.Success, 0, now)
			ran(obs, &rec, now.Add(-5*time.Minute), runner.Failure, 3, now.Add(time.Minute))
		}, why: "last run failure (3)"},
		{name: "timed out", tell: func(obs runner.Observer) {
			obs.Began(state.Record{}, now.Add(-hour))
			rec := state.Record{}
			ran(obs, &rec, now.Add(-5*time.Minute), runner.Timeout, 124, now.Add(time.Minute))
		}, why: "last run timeout (124)"},
		{name: "failed before a restart", tell: func(obs runner.Observer) {
			obs.Began(state.Record{Runs: 4, LastRun: now.Add(-2 * hour), LastEnd: now.Add(-2 * hour), LastResult: "failure", LastExitCode: 1}, now.Add(hour))
		}, why: "last run failure (1)"},
		{name: "cut short before a restart", tell: func(obs runner.Observer) {
			obs.Began(state.Record{Runs: 4, LastRun: now.Add(-2 * hour), LastEnd: now.Add(-3 * hour), LastResult: "interrupted", LastExitCode: 0}, now.Add(hour))
		}, why: "last run interrupted"},
		{name: "stale", maxAge: hour, tell: func(obs runner.Observer) {
			obs.Began(state.Record{}, now.Add(-5*hour))
			rec := state.Record{}
			ran(obs, &rec, now.Add(-3*hour), runner.Success, 0, now.Add(time.Minute))
		}, why: "last success 3h0m0s ago, older than --max-age 1h0m0s"},
		{name: "stale, no max-age", tell: func(obs runner.Observer) {
			obs.Began(state.Record{}, now.Add(-5*hour))
			rec := state.Record{}
			ran(obs, &rec, now.Add(-3*hour), runner.Success, 0, now.Add(time.Minute))
		}},
		{name: "first run under way", maxAge: hour, tell: func(obs runner.Observer) {
			obs.Began(state.Record{}, now.Add(-time.Minute))
			obs.Started(runner.Run{Start: now.Add(-time.Minute), Record: state.Record{Runs: 1, LastRun: now.Add(-time.Minute), Running: true}})
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := server(now)
			tc.tell(s.Job(Job{Name: "backup", Schedule: "1h", MaxAge: tc.maxAge}))
			s.Job(Job{Name: "fine", Schedule: "1m"}).Began(state.Record{}, now.Add(time.Minute))
			code, h := healthOf(t, s)
			if tc.why == "" {
				if code != 200 || !h.Healthy || len(h.Unhealthy) != 0 || h.Jobs != 2 {
					t.Errorf("/healthz = %d %+v, want 200, healthy, 2 jobs", code, h)
				}
				return
			}
			want := []Unhealthy{{Job: "backup", Reason: tc.why}}
			if code != 503 || h.Healthy || h.Jobs != 2 || len(h.Unhealthy) != 1 || h.Unhealthy[0] != want[0] {
				t.Errorf("/healthz = %d %+v, want 503 naming %+v", code, h, want)
			}
		})
	}
}

// No job at all is no pass: a server whose jobs are gone is not healthy.
func TestHealthzNoJobs(t *testing.T) {
	s := server(t0)
	if code, h := healthOf(t, s); code != 503 || h.Healthy {
		t.Errorf("/healthz of no jobs = %d %+v, want 503", code, h)
	}
	s.Job(Job{Name: "a"})
	s.Remove("a")
	if code, _ := healthOf(t, s); code != 503 {
		t.Errorf("/healthz after the last job's removal = %d, want 503", code)
	}
}

// /metrics is the exposition of every job, as Prometheus parses it, with
// the counters of the records the loops told.
func TestMetrics(t *testing.T) {
	s := server(t0)
	a := s.Job(Job{Name: "backup", Schedule: "1h"})
	a.Began(state.Record{Runs: 41, Failures: 6, Skipped: 2}, t0)
	rec := state.Record{Runs: 41, Failures: 6, Skipped: 2}
	ran(a, &rec, t0, runner.Failure, 3, t0.Add(hour))
	a.Skipped("locked", 2, t0.Add(hour))
	b := s.Job(Job{Name: `we"ird`, Schedule: "1m"})
	b.Began(state.Record{}, t0.Add(time.Minute))

	w := get(t, s, "GET", "/metrics")
	if ct := w.Header().Get("Content-Type"); ct != metricsType {
		t.Errorf("Content-Type %q, want %q", ct, metricsType)
	}
	p := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(w.Body.Bytes()))
	if err != nil {
		t.Fatalf("the text parser refuses /metrics: %v\n%s", err, w.Body)
	}
	value := func(name, job, reason string) float64 {
		t.Helper()
		for _, m := range fams[name].GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["job"] == job && labels["reason"] == reason {
				if m.Counter != nil {
					return m.GetCounter().GetValue()
				}
				return m.GetGauge().GetValue()
			}
		}
		t.Fatalf("no %s{job=%q,reason=%q} in:\n%s", name, job, reason, w.Body)
		return 0
	}
	for _, c := range []struct {
		name, job, reason string
		want              float64
	}{
		{"every_runs_total", "backup", "", 42},
		{"every_failures_total", "backup", "", 7},
		{"every_skips_total", "backup", "overrun", 2},
		{"every_skips_total", "backup", "locked", 2},
		{"every_last_exit_code", "backup", "", 3},
		{"every_consecutive_failures", "backup", "", 1},
		{"every_next_run_timestamp_seconds", "backup", "", float64(t0.Add(hour).Unix())},
		{"every_runs_total", `we"ird`, "", 0},
		{"every_running", `we"ird`, "", 0},
	} {
		if got := value(c.name, c.job, c.reason); got != c.want {
			t.Errorf("%s{job=%q,reason=%q} = %v, want %v", c.name, c.job, c.reason, got, c.want)
		}
	}

	// A reload's new definition goes on from the old one's counts (skips
	// since start included), and a removed job is gone.
	a2 := s.Job(Job{Name: "backup", Schedule: "2h"})
	a2.Began(rec, t0.Add(2*hour))
	s.Remove(`we"ird`)
	w = get(t, s, "GET", "/metrics")
	body := w.Body.String()
	for _, line := range []string{`every_skips_total{job="backup",reason="locked"} 2`, `every_runs_total{job="backup"} 42`} {
		if !strings.Contains(body, line+"\n") {
			t.Errorf("after a reload, no line %q in:\n%s", line, body)
		}
	}
	if strings.Contains(body, "ird") {
		t.Errorf("a removed job is still shown:\n%s", body)
	}
}

// The page escapes what a job's name and command hold, masks the secrets
// of URLs, reloads itself, and shows the strip of recent results.
func TestPage(t *testing.T) {
	s := server(t0.Add(hour))
	hostile := `<script>alert("x")</script>&`
	obs := s.Job(Job{Name: hostile, Schedule: "1m", Command: []string{"curl", "-fsS", "https://user:pw@hc-ping.com/0f3c9a7e-secret-uuid/fail", `it's <b>`}})
	obs.Began(state.Record{}, t0)
	rec := state.Record{}
	for i := range 25 {
		outcome, code := runner.Success, 0
		if i%5 == 4 {
			outcome, code = runner.Failure, 3
		}
		ran(obs, &rec, t0.Add(time.Duration(i)*time.Minute), outcome, code, t0.Add(time.Duration(i+1)*time.Minute))
	}
	w := get(t, s, "GET", "/")
	body := w.Body.String()
	if ct := w.Header().Get("Content-Type"); ct != "text/html; charset=utf-8" {
		t.Errorf("Content-Type %q", ct)
	}
	if csp := w.Header().Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") {
		t.Errorf("Content-Security-Policy %q lets scripts run", csp)
	}
	for _, bad := range []string{"<script", "<b>", "0f3c9a7e-secret-uuid", "pw@"} {
		if strings.Contains(body, bad) {
			t.Errorf("the page holds %q:\n%s", bad, body)
		}
	}
	for _, want := range []string{
		`&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;&amp;`,
		`https://***@hc-ping.com/…/fail`,
		`<meta http-equiv="refresh" content="5">`,
		`failure (3)`, // the last result
		`1 of 1 job unhealthy`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the page lacks %q:\n%s", want, body)
		}
	}
	if n := strings.Count(body, "✓</span>") + strings.Count(body, "✗</span>"); n != Recent {
		t.Errorf("the strip shows %d results, want the last %d", n, Recent)
	}
	if n := strings.Count(body, "✗</span>"); n != 4 {
		t.Errorf("the strip shows %d failures, want 4 of the last 20", n)
	}
}

func TestPathsAndMethods(t *testing.T) {
	s := server(t0)
	s.Job(Job{Name: "a"}).Began(state.Record{}, t0.Add(time.Minute))
	for _, c := range []struct {
		method, path string
		code         int
	}{
		{"GET", "/", 200},
		{"GET", "/metrics", 200},
		{"GET", "/healthz", 200},
		{"HEAD", "/healthz", 200},
		{"GET", "/index.html", 404},
		{"GET", "/metrics/", 404},
		{"GET", "/healthz/x", 404},
		{"POST", "/healthz", 405},
		{"PUT", "/metrics", 405},
		{"DELETE", "/", 405},
	} {
		w := get(t, s, c.method, c.path)
		if w.Code != c.code {
			t.Errorf("%s %s = %d, want %d", c.method, c.path, w.Code, c.code)
		}
		if c.code == 405 && w.Header().Get("Allow") != "GET, HEAD" {
			t.Errorf("%s %s: Allow %q", c.method, c.path, w.Header().Get("Allow"))
		}
	}
}

// The loop's observer never waits for the server: with the server's lock
// held (a request in the middle of its listing), every event still
// returns at once.
func TestObserverNeverWaits(t *testing.T) {
	s := server(t0)
	obs := s.Job(Job{Name: "a"})
	s.mu.Lock()
	defer s.mu.Unlock()
	done := make(chan struct{})
	go func() {
		defer close(done)
		obs.Began(state.Record{}, t0)
		rec := state.Record{}
		ran(obs, &rec, t0, runner.Success, 0, t0.Add(time.Minute))
		obs.Skipped("locked", 1, t0.Add(time.Minute))
	}()
	if _, ok := testutil.Receive(done); !ok {
		t.Fatal("the observer waited for the server's lock")
	}
}

func TestParseAddr(t *testing.T) {
	for _, c := range []struct {
		in   string
		want Addr
		err  string
	}{
		{in: "localhost:9746", want: Addr{"tcp", "localhost:9746"}},
		{in: ":9746", want: Addr{"tcp", ":9746"}},
		{in: "[::1]:9746", want: Addr{"tcp", "[::1]:9746"}},
		{in: "127.0.0.1:0", want: Addr{"tcp", "127.0.0.1:0"}},
		{in: "unix:/run/every.sock", want: Addr{"unix", "/run/every.sock"}},
		{in: "unix:rel.sock", want: Addr{"unix", "rel.sock"}},
		{in: "9746", err: "did you mean localhost:9746"},
		{in: "http://localhost:9746", err: "not a URL"},
		{in: "localhost", err: "give host:port"},
		{in: "localhost:http", err: "not a number"},
		{in: "localhost:70000", err: "not a number"},
		{in: "unix:", err: "no socket path"},
		{in: "unix:/run/", err: "names a directory"},
		{in: "unix:/" + strings.Repeat("x", 200), err: "at most 107 bytes"},
	} {
		got, err := ParseAddr(c.in)
		switch {
		case c.err == "" && (err != nil || got != c.want):
			t.Errorf("ParseAddr(%q) = %v, %v; want %v", c.in, got, err, c.want)
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("ParseAddr(%q) error %v, want one saying %q", c.in, err, c.err)
		}
	}
}

// started starts s, and closes it at the test's end.
func started(t *testing.T, s *Server) {
	t.Helper()
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
}

// A port in use is a start-up error that says so.
func TestPortInUse(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	s := New(ln.Addr().String(), nil)
	err = s.Start()
	var le *Error
	if !errors.As(err, &le) || !errors.Is(err, syscall.EADDRINUSE) || le.Addr != ln.Addr().String() {
		t.Fatalf("Start on a port in use = %v, want an *Error wrapping EADDRINUSE", err)
	}
}

// Over a real connection: the server answers, a client that sends half a
// request holds nobody up, and Close ends it all.
func TestServe(t *testing.T) {
	s := New("127.0.0.1:0", nil)
	obs := s.Job(Job{Name: "a"})
	started(t, s)
	base := "http://" + s.Addr().String()

	slow, err := net.Dial("tcp", s.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer slow.Close()
	if _, err := io.WriteString(slow, "GET /metrics HTTP/1.1\r\nHost: x\r\n"); err != nil {
		t.Fatal(err)
	}

	obs.Began(state.Record{}, time.Now().Add(time.Hour))
	resp, err := http.Get(base + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("/healthz = %d", resp.StatusCode)
	}
	if s.srv.ReadHeaderTimeout <= 0 || s.srv.WriteTimeout <= 0 || s.srv.IdleTimeout <= 0 {
		t.Errorf("unbounded server: %+v", s.srv)
	}
	if err := testutil.Bounded(t, s.Close); err != nil {
		t.Errorf("Close: %v", err)
	}
	if _, err := http.Get(base + "/healthz"); err == nil {
		t.Error("the server still answers after Close")
	}
}

// A unix socket: served; a stale socket (its server gone without removing
// it) is replaced; a live one, or a path that is not a socket, is refused
// and left as it is.
func TestUnixSocket(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "every.sock")

	// A stale socket, as a server killed by SIGKILL leaves it.
	stale, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	stale.SetUnlinkOnClose(false)
	stale.Close()

	s := New("unix:"+path, nil)
	s.Job(Job{Name: "a"}).Began(state.Record{}, time.Now().Add(time.Hour))
	started(t, s)
	client := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "unix", path)
	}}}
	resp, err := client.Get("http://every/healthz")
	if err != nil {
		t.Fatalf("GET over the socket: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("/healthz over the socket = %d", resp.StatusCode)
	}

	// Live: refused, and the first server goes on.
	err = New("unix:"+path, nil).Start()
	if !errors.Is(err, ErrSocketInUse) {
		t.Errorf("Start on a live socket = %v, want ErrSocketInUse", err)
	}
	if resp, err := client.Get("http://every/healthz"); err != nil {
		t.Errorf("the first server no longer answers: %v", err)
	} else {
		resp.Body.Close()
	}
	if err := s.Close(); err != nil {
		t.Error(err)
	}
	if _, err := os.Lstat(path); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the socket is left after Close: %v", err)
	}

	// Not a socket: a file, a link to a socket, a directory; each kept.
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, []byte("keep me"), 0o600); err != nil {
		t.Fatal(err)
	}
	live := filepath.Join(dir, "live.sock")
	ln, err := net.Listen("unix", live)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	link := filepath.Join(dir, "link")
	if err := os.Symlink(live, link); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{file, link, dir} {
		err := New("unix:"+p, nil).Start()
		if !errors.Is(err, ErrNotSocket) {
			t.Errorf("Start on %s = %v, want ErrNotSocket", p, err)
		}
	}
	if b, err := os.ReadFile(file); err != nil || string(b) != "keep me" {
		t.Errorf("the file is changed: %q, %v", b, err)
	}
	if _, err := os.Lstat(link); err != nil {
		t.Errorf("the link is gone: %v", err)
	}
}
