package jobs

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/everycli/every/internal/job"
	"github.com/everycli/every/runner"
	"github.com/everycli/every/schedule"
)

// runs records the attempts of the fake commands, by job.
type runs struct {
	mu    sync.Mutex
	start map[string][]time.Duration // since origin
	ended map[string][]runner.Outcome
}

// exec is a fake command of job name that takes took, or ends on a stop
// signal passed on to it.
func (r *runs) exec(origin time.Time, name string, took time.Duration) runner.ExecFunc {
	return func(ctx context.Context, a runner.Attempt) runner.Result {
		r.mu.Lock()
		r.start[name] = append(r.start[name], time.Since(origin))
		r.mu.Unlock()
		res := runner.Result{Outcome: runner.Success}
		timer := time.NewTimer(took)
		defer timer.Stop()
	wait:
		for {
			select {
			case <-timer.C:
				break wait
			case <-ctx.Done():
				res = runner.Result{Outcome: runner.Timeout, ExitCode: 124}
				break wait
			case sig := <-a.Signals:
				if sig == syscall.SIGTERM || sig == syscall.SIGINT {
					res = runner.Result{Outcome: runner.Interrupted, ExitCode: 143}
					break wait
				}
			}
		}
		r.mu.Lock()
		r.ended[name] = append(r.ended[name], res.Outcome)
		r.mu.Unlock()
		return res
	}
}

func (r *runs) starts(name string) []time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]time.Duration(nil), r.start[name]...)
}

// fakeJob is a job of schedule every that runs for took: its Def says
// both.
func fakeJob(name, every string, took time.Duration) Job {
	s, err := schedule.Parse(every, schedule.Options{})
	if err != nil {
		panic(err)
	}
	return Job{Name: name, Where: "jobs.tab:1", Def: every + " " + took.String(),
		Settings: job.Settings{Loop: runner.Config{Name: name, Command: []string{name}, Schedule: s, Signal: syscall.SIGTERM,
			KillAfter: 10 * time.Second}}}
}

// harness runs a supervisor on fake jobs under synctest.
type harness struct {
	s       *supervisor
	runs    *runs
	signals chan os.Signal
	log     *bytes.Buffer
	origin  time.Time
	took    map[string]time.Duration
	done    chan struct{}
	code    int
	sig     os.Signal
}

func newHarness(t *testing.T, opts Options) *harness {
	h := &harness{runs: &runs{start: map[string][]time.Duration{}, ended: map[string][]runner.Outcome{}},
		signals: make(chan os.Signal, 8), log: &bytes.Buffer{}, origin: time.Now(), took: map[string]time.Duration{},
		done: make(chan struct{})}
	opts.Signals = h.signals
	opts.LogFormat = "json"
	h.s = newSupervisor(opts, io.Discard, &syncBuffer{b: h.log})
	h.s.tune = nil
	h.s.build = func(st job.Settings, _ io.Writer) (runner.Config, func(), error) {
		cfg := st.Loop
		if cfg.Command[0] == "broken" {
			return cfg, nil, errors.New("cannot run \"broken\"")
		}
		cfg.Exec = h.runs.exec(h.origin, cfg.Name, h.took[st.Loop.Name])
		cfg.Logger = slog.New(slog.DiscardHandler)
		cfg.Clock = runner.GoTimers()
		cfg.SleepUntil = func(at time.Time) { time.Sleep(time.Until(at)) }
		cfg.Rand = func() float64 { return 0 }
		return cfg, func() {}, nil
	}
	return h
}

func (h *harness) run(jobs []Job) {
	for _, j := range jobs {
		if _, ok := h.took[j.Name]; !ok {
			h.took[j.Name], _ = time.ParseDuration(strings.Fields(j.Def)[1])
		}
	}
	go func() {
		h.code, h.sig = h.s.run(jobs)
		close(h.done)
	}()
}

// syncBuffer is a buffer the jobs' goroutines write to at once.
type syncBuffer struct {
	mu sync.Mutex
	b  *bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// TestSupervisorStop: SIGTERM stops every job at once, the running
// commands by their stop sequence, and every jobs exits by the signal.
func TestSupervisorStop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, Options{})
		h.run([]Job{fakeJob("a", "10s", 30*time.Second), fakeJob("b", "10s", time.Second)})
		time.Sleep(15 * time.Second) // a's first run is under way, b idle
		synctest.Wait()
		h.signals <- syscall.SIGTERM
		<-h.done
		if h.code != 0 || h.sig != syscall.SIGTERM {
			t.Fatalf("exit %d, %v; want by SIGTERM", h.code, h.sig)
		}
		if took := time.Since(h.origin); took != 15*time.Second {
			t.Fatalf("stopped at +%v, want at once (+15s)", took)
		}
		if got := h.runs.ended["a"]; len(got) != 1 || got[0] != runner.Interrupted {
			t.Fatalf("a's run ended %v, want interrupted by the stop", got)
		}
	})
}

// TestSupervisorRunNow: SIGUSR1 runs every job now.
func TestSupervisorRunNow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, Options{})
		h.run([]Job{fakeJob("a", "1h", time.Second), fakeJob("b", "1h", time.Second)})
		time.Sleep(10 * time.Minute)
		synctest.Wait()
		h.signals <- syscall.SIGUSR1
		time.Sleep(time.Second / 2)
		synctest.Wait()
		for _, name := range []string{"a", "b"} {
			if got := h.runs.starts(name); len(got) != 2 || got[1] != 10*time.Minute {
				t.Errorf("%s started at %v, want at 0 and at the SIGUSR1 (+10m)", name, got)
			}
		}
		h.signals <- syscall.SIGTERM
		<-h.done
	})
}

// TestSupervisorReload: by name, an unchanged job is left alone (its
// running command too), a changed one finishes its run on the old
// definition and then goes on with the new, a removed one finishes its run
// and ends, a new one starts; the reload waits for no command, and says
// what it did in one line.
func TestSupervisorReload(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		next := []Job{fakeJob("same", "10s", 25*time.Second), fakeJob("changed", "1m", 5*time.Second), fakeJob("new", "10s", time.Second)}
		h := newHarness(t, Options{Load: func() ([]Job, error) { return next, nil }})
		h.run([]Job{fakeJob("same", "10s", 25*time.Second), fakeJob("changed", "10s", 20*time.Second),
			fakeJob("gone", "10s", 15*time.Second)})
		time.Sleep(5 * time.Second) // every job's first run is under way
		synctest.Wait()
		same := h.s.loopOf("same")
		h.signals <- syscall.SIGHUP
		synctest.Wait()
		if took := time.Since(h.origin); took != 5*time.Second {
			t.Fatalf("the reload ended at +%v: it waited", took)
		}
		if h.s.loopOf("same") != same {
			t.Fatal("the unchanged job's loop was replaced")
		}
		time.Sleep(30 * time.Second) // to +35s
		synctest.Wait()
		if got := h.runs.starts("same"); fmt.Sprint(got) != "[0s 30s]" {
			t.Errorf("same started at %v, want [0s 30s]: left alone", got)
		}
		if got := h.runs.ended["changed"]; len(got) == 0 || got[0] != runner.Success {
			t.Errorf("changed's run under way ended %v, want a success: it finishes", got)
		}
		if got := h.runs.starts("gone"); fmt.Sprint(got) != "[0s]" {
			t.Errorf("gone started at %v, want only its run under way", got)
		}
		if got := h.runs.ended["gone"]; len(got) != 1 || got[0] != runner.Success {
			t.Errorf("gone's run ended %v, want a success: it finishes", got)
		}
		if got := h.runs.starts("new"); len(got) == 0 || got[0] != 5*time.Second {
			t.Errorf("new started at %v, want at the reload, +5s", got)
		}
		if h.s.loopOf("gone") != nil {
			t.Error("the removed job still runs")
		}
		if l := h.s.loopOf("changed"); l == nil || l.job.Def != next[1].Def {
			t.Errorf("changed runs %+v, want its new definition", l)
		}
		h.signals <- syscall.SIGTERM
		<-h.done
		line := findEvent(t, h.log, "reload")
		for k, want := range map[string]any{"added": 1.0, "changed": 1.0, "removed": 1.0, "unchanged": 1.0} {
			if line[k] != want {
				t.Errorf("reload line %v: %s %v, want %v", line, k, line[k], want)
			}
		}
	})
}

// TestSupervisorBadReload: a reload whose files have bad lines changes
// nothing, and logs each bad line; every jobs goes on.
func TestSupervisorBadReload(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		bad := errors.Join(errors.New("jobs.tab:3: bad --retries \"x\""), errors.New("jobs.tab:7: a 6-field line"))
		h := newHarness(t, Options{Load: func() ([]Job, error) { return nil, bad }})
		h.run([]Job{fakeJob("a", "10s", time.Second)})
		time.Sleep(5 * time.Second)
		synctest.Wait()
		a := h.s.loopOf("a")
		h.signals <- syscall.SIGHUP
		time.Sleep(10 * time.Second)
		synctest.Wait()
		if h.s.loopOf("a") != a || len(h.runs.starts("a")) != 2 {
			t.Fatalf("a's loop replaced or stopped by a bad reload: %v", h.runs.starts("a"))
		}
		h.signals <- syscall.SIGTERM
		<-h.done
		var n int
		for _, e := range events(t, h.log) {
			if e["event"] == "reload" && e["level"] == "ERROR" {
				n++
			}
		}
		if n != 2 {
			t.Fatalf("%d reload errors logged, want one per bad line (2):\n%s", n, h.log)
		}
	})
}

// TestSupervisorStartRefused: a job that cannot start refuses them all,
// before any runs.
func TestSupervisorStartRefused(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, Options{})
		broken := fakeJob("b", "10s", time.Second)
		broken.Settings.Loop.Command = []string{"broken"}
		h.run([]Job{fakeJob("a", "10s", time.Second), broken})
		<-h.done
		if h.code == 0 || len(h.runs.starts("a")) != 0 {
			t.Fatalf("exit %d with a's runs %v; want a refusal before any run", h.code, h.runs.starts("a"))
		}
		if !strings.Contains(h.log.String(), "jobs.tab:1: job b: cannot run") {
			t.Fatalf("the refusal does not name the job's line:\n%s", h.log)
		}
	})
}

// TestSupervisorMaxConcurrent: with --max-concurrent 1 two jobs due at
// once never run together.
func TestSupervisorMaxConcurrent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, Options{MaxConcurrent: 1})
		h.run([]Job{fakeJob("a", "10s", 3*time.Second), fakeJob("b", "10s", 3*time.Second)})
		time.Sleep(35 * time.Second)
		synctest.Wait()
		h.signals <- syscall.SIGTERM
		<-h.done
		a, b := h.runs.starts("a"), h.runs.starts("b")
		for _, sa := range a {
			for _, sb := range b {
				if d := sa - sb; d < 3*time.Second && d > -3*time.Second {
					t.Fatalf("a at %v and b at %v ran together: a %v, b %v", sa, sb, a, b)
				}
			}
		}
		if len(a) < 3 || len(b) < 3 {
			t.Fatalf("a %v, b %v: each should run at each slot, one after the other", a, b)
		}
	})
}

// The output of commands running at once never mixes within a line, and
// each line says its job.
func TestOutputLines(t *testing.T) {
	var stdout, stderr bytes.Buffer
	o := &output{stdout: &stdout, stderr: &stderr}
	var wg sync.WaitGroup
	for _, name := range []string{"alpha", "beta", "gamma"} {
		sink := o.sink(name)
		wg.Go(func() {
			for i := range 200 {
				sink(i%2 == 1, []byte(strings.Repeat(name[:1], 100)+fmt.Sprint(i)))
			}
		})
	}
	wg.Wait()
	for _, buf := range []*bytes.Buffer{&stdout, &stderr} {
		lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
		if len(lines) != 300 {
			t.Fatalf("%d lines, want 300", len(lines))
		}
		for _, line := range lines {
			name, text, ok := strings.Cut(line, " | ")
			if !ok || !strings.HasPrefix(text, strings.Repeat(name[:1], 100)) || strings.Count(line, " | ") != 1 {
				t.Fatalf("line %q is mixed or unprefixed", line)
			}
		}
	}
}

func events(t *testing.T, buf *bytes.Buffer) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range bytes.Split(bytes.TrimSpace(buf.Bytes()), []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal(line, &m); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		out = append(out, m)
	}
	return out
}

func findEvent(t *testing.T, buf *bytes.Buffer, event string) map[string]any {
	t.Helper()
	for _, e := range events(t, buf) {
		if e["event"] == event && e["level"] == "INFO" {
			return e
		}
	}
	t.Fatalf("no %s line in:\n%s", event, buf)
	return nil
}

// TestSupervisorReleasesMemory: the process gives its memory back once no
// job has a slot within the release's bound, by the last job to go idle,
// once a slot; a job that runs holds it, and one of short slots holds it
// always.
func TestSupervisorReleasesMemory(t *testing.T) {
	for _, tc := range []struct {
		name string
		jobs []Job
		want []time.Duration
	}{
		{"two jobs of 1m", []Job{fakeJob("a", "1m", time.Second), fakeJob("b", "1m", 10*time.Second)},
			[]time.Duration{10 * time.Second, 70 * time.Second, 130 * time.Second}},
		{"and one of 2s", []Job{fakeJob("a", "1m", time.Second), fakeJob("b", "1m", 10*time.Second), fakeJob("c", "2s", 0)},
			nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := newHarness(t, Options{})
				var mu sync.Mutex
				var got []time.Duration
				h.s.mem = newReleaser(5*time.Second, func() {
					mu.Lock()
					got = append(got, time.Since(h.origin))
					mu.Unlock()
				})
				h.run(tc.jobs)
				time.Sleep(150 * time.Second)
				synctest.Wait()
				h.signals <- syscall.SIGTERM
				<-h.done
				mu.Lock()
				defer mu.Unlock()
				if !slices.Equal(got, tc.want) {
					t.Errorf("memory given back at %v, want at %v", got, tc.want)
				}
			})
		})
	}
}

// With --log-format json, the commands' output is event=output records at
// any log level: -q quiets every's own lines, never the output.
func TestOutputRecordsPastTheLevel(t *testing.T) {
	var stderr bytes.Buffer
	o := &output{json: true, log: job.NewLogger(&stderr, "json", "info", true)}
	o.sink("alpha")(true, []byte("hello"))
	got := events(t, &stderr)
	if len(got) != 1 || got[0]["event"] != runner.EventOutput || got[0]["job"] != "alpha" ||
		got[0]["stream"] != "stderr" || got[0]["line"] != "hello" {
		t.Fatalf("records %v, want one event=output of alpha's stderr line", got)
	}
}

// A stop reaches a job whose loop has not kept up with the signals before
// it (SIGUSR1s queued while its run went on): it is never dropped.
func TestTellAllNeverDropsAStop(t *testing.T) {
	s := newSupervisor(Options{}, io.Discard, io.Discard)
	l := &loop{signals: make(chan os.Signal, 4)}
	s.running["a"] = l
	for range cap(l.signals) + 2 {
		s.tellAll(syscall.SIGUSR1)
	}
	s.tellAll(syscall.SIGTERM)
	var got []os.Signal
	for len(l.signals) > 0 {
		got = append(got, <-l.signals)
	}
	if len(got) != cap(l.signals) || got[len(got)-1] != syscall.SIGTERM {
		t.Fatalf("the loop gets %v, want its buffer full, the SIGTERM last", got)
	}
}
