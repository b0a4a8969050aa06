package job

import (
	"io"
	"net"
	"net/http"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/everycli/every/internal/listen"
	"github.com/everycli/every/internal/testutil"
	"github.com/everycli/every/internal/ui"
	"github.com/everycli/every/runner"
	"github.com/everycli/every/schedule"
	"github.com/everycli/every/state"
)

// settings are a job's with no files, listening at addr ("": not).
func settings(t *testing.T, name, addr string) Settings {
	t.Helper()
	sched, err := schedule.Parse("1h", schedule.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return Settings{Loop: runner.Config{Name: name, Command: []string{"true"}, Schedule: sched},
		NoState: true, NoLock: true, LogFormat: "text", LogLevel: "info", Listen: addr, ListenFlag: "--listen"}
}

// listening is the URL of the server whose start-up line is in log.
func listening(t *testing.T, log string) string {
	t.Helper()
	m := regexp.MustCompile(`event=listen addr=(http://\S+)/`).FindStringSubmatch(log)
	if m == nil {
		t.Fatalf("no start-up line of the server in the log:\n%s", log)
	}
	return m[1]
}

// status is the HTTP status of GET url, or 0 when nothing answers.
func status(url string) int {
	c := http.Client{Timeout: testutil.WaitBound}
	resp, err := c.Get(url)
	if err != nil {
		return 0
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// Build with --listen starts the server before the loop, tells it of the
// job through the job's observers, and done stops it.
func TestBuildServes(t *testing.T) {
	var log testutil.Buffer
	st := settings(t, "backup", "127.0.0.1:0")
	st.MaxAge = time.Hour
	cfg, done, err := Build(st, &log)
	if err != nil {
		t.Fatal(err)
	}
	url := listening(t, log.String())
	if code := status(url + "/healthz"); code != 200 {
		t.Errorf("/healthz before the loop began = %d, want 200", code)
	}
	now := time.Now()
	cfg.Observer.Began(state.Record{}, now)
	rec := state.Record{Runs: 1, LastRun: now, LastEnd: now, LastResult: "failure", LastExitCode: 3, Failures: 1, ConsecutiveFailures: 1}
	cfg.Observer.Finished(runner.Run{Start: now, End: now, Result: runner.Result{Outcome: runner.Failure, ExitCode: 3}, Record: rec})
	if code := status(url + "/healthz"); code != 503 {
		t.Errorf("/healthz after a failed run = %d, want 503", code)
	}
	done()
	if code := status(url + "/healthz"); code != 0 {
		t.Errorf("/healthz after done = %d, want no answer", code)
	}
}

// Without --listen, nothing of the server is made: no goroutine is left
// running by Build (and none listens).
func TestBuildWithoutListenServesNothing(t *testing.T) {
	before := runtime.NumGoroutine()
	cfg, done, err := Build(settings(t, "quiet", ""), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	defer done()
	if cfg.Observer != nil {
		t.Errorf("an observer without --listen, metrics or pings: %T", cfg.Observer)
	}
	if n := runtime.NumGoroutine(); n > before {
		buf := make([]byte, 1<<16)
		t.Errorf("%d goroutines after Build, %d before:\n%s", n, before, buf[:runtime.Stack(buf, true)])
	}
}

// A port in use is one line naming the address and the fix, and exit 73,
// before anything runs.
func TestBuildPortInUse(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	addr := ln.Addr().String()
	_, _, err = Build(settings(t, "backup", addr), io.Discard)
	if err == nil {
		t.Fatal("Build on a port in use succeeded")
	}
	want := `cannot listen on "` + addr + `": the address is in use, by another every's --listen or another server; choose another port for --listen, or stop what listens there`
	if err.Error() != want || StartCode(err) != ui.ExitCantCreate {
		t.Errorf("Build on a port in use: %q (exit %d), want %q (exit 73)", err, StartCode(err), want)
	}
}

// Serve puts jobs built without --listen on one server, every jobs' own:
// each job's events reach it with its other observers'.
func TestServeManyJobs(t *testing.T) {
	srv := listen.New("127.0.0.1:0", nil)
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	for _, name := range []string{"a", "b"} {
		st := settings(t, name, "")
		cfg, done, err := Build(st, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		defer done()
		Serve(srv, st, &cfg)
		cfg.Observer.Began(state.Record{Runs: 7}, time.Now().Add(time.Hour))
	}
	resp, err := http.Get("http://" + srv.Addr().String() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	for _, line := range []string{`every_runs_total{job="a"} 7`, `every_runs_total{job="b"} 7`} {
		if !strings.Contains(string(body), line+"\n") {
			t.Errorf("/metrics lacks %q:\n%s", line, body)
		}
	}
}
