package status

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/everycli/every/internal/testutil"
	"github.com/everycli/every/internal/ui"
	"github.com/everycli/every/state"
)

func TestShown(t *testing.T) {
	for in, want := range map[string]string{
		"job-1.b_c":           "job-1.b_c",
		"*/5 * * * *":         "*/5 * * * *",
		"Zürich":              "Zürich",
		"\x1b[2Jx":            `"\x1b[2Jx"`,
		"a\nb":                `"a\nb"`,
		"tab\there":           `"tab\there"`,
		"bell\a":              `"bell\a"`,
		"\u202egnp.exe":       `"\u202egnp.exe"`, // a right-to-left override
		"bad\xffutf8":         `"bad\xffutf8"`,
		`"quoted"`:            `"\"quoted\""`, // cannot pass for an escaped name
		`back\slash`:          `"back\\slash"`,
		"osc\x1b]0;title\x07": `"osc\x1b]0;title\a"`,
		"":                    "",
	} {
		if got := shown(in); got != want {
			t.Errorf("shown(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestEscaped(t *testing.T) {
	for in, want := range map[string]string{
		`cannot read state of job "x": open sd/x.JSON: is a FIFO`: `cannot read state of job "x": open sd/x.JSON: is a FIFO`,
		"open sd/\x1b[2J.JSON: is a FIFO":                         `open sd/\x1b[2J.JSON: is a FIFO`,
		"line\nbreak\r":                                           `line\nbreak\r`,
		"bad\xffbyte":                                             `bad\xffbyte`,
		"Zürich \u202e":                                           `Zürich \u202e`,
	} {
		if got := escaped(in); got != want {
			t.Errorf("escaped(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestCut(t *testing.T) {
	for _, tc := range []struct {
		in   string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"exactly10!", 10, "exactly10!"},
		{"longer than ten", 10, "longer ..."},
		{"ééééé", 8, "éé..."}, // never half a character
	} {
		if got := cut(tc.in, tc.n); got != tc.want || len(got) > tc.n {
			t.Errorf("cut(%q, %d) = %q, want %q", tc.in, tc.n, got, tc.want)
		}
	}
}

func TestPerfLabel(t *testing.T) {
	for in, want := range map[string]string{
		"backup":       "backup_age",
		"a=b 'c'|d":    "'a_b _c__d_age'",
		"esc\x1b[31m":  `'"esc\x1b[31m"_age'`,
		"-not-a-name-": "'-not-a-name-_age'",
	} {
		if got := perfLabel(in); got != want {
			t.Errorf("perfLabel(%q) = %s, want %s", in, got, want)
		}
	}
}

// manyJobs is a listing of n jobs, of which the first stale succeeded
// three hours ago and the others a minute ago, all with an every alive.
func manyJobs(n, stale int, now time.Time) listing {
	l := listing{where: "sd"}
	for i := range n {
		ago := time.Minute + time.Duration(i)*time.Millisecond
		if i < stale {
			ago = 3*time.Hour + time.Duration(i)*time.Second
		}
		t := now.Add(-ago)
		l.jobs = append(l.jobs, jobStatus{Name: fmt.Sprintf("job-%05d", i), LastSuccess: &t, LastResult: "success", Active: true})
	}
	return l
}

// TestNagiosLineBounded: however many jobs, --nagios prints one line under
// 4 KiB, with the performance data of the stale jobs, then the oldest, and
// a count.
func TestNagiosLineBounded(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	ss := Settings{Nagios: true, MaxAge: time.Hour, WarnAge: 30 * time.Minute}
	for _, tc := range []struct {
		name        string
		n, stale    int
		code        int
		text        string   // the line's start
		perf        []string // in the performance data
		notPerf     []string
		wholePerfOf int // jobs whose perfdata is all there; 0: bounded
	}{
		{"few jobs: all of it", 3, 1, 2, "EVERY CRITICAL: job job-00000: last success 3h ago, older than 1h | ",
			[]string{"job-00000_age=10800s;1800;3600;0", "job-00001_age=60.001s;", "job-00002_age=60.002s;"}, []string{"jobs="}, 3},
		{"10000 fresh", 10000, 0, 0, "EVERY OK: 10000 jobs, last success 1m10s ago at most | jobs=10000;;;0 ",
			[]string{"job-09999_age=69.999s;", "job-09998_age=69.998s;"}, []string{"job-00000_age"}, 0},
		{"10000 with 3 stale", 10000, 3, 2, "EVERY CRITICAL: job job-00000: last success 3h ago, older than 1h; job job-00001: ",
			[]string{"jobs=10000;;;0", "job-00000_age=10800s;", "job-00001_age=10801s;", "job-00002_age=10802s;", "job-09999_age=69.999s;"}, []string{"job-00003_age"}, 0},
		{"10000 stale", 10000, 10000, 2, "EVERY CRITICAL: job job-00000: last success 3h ago, older than 1h; ",
			[]string{"; and 99", " more | jobs=10000;;;0 job-09999_age=20799s;"}, nil, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			code := nagiosCheck(manyJobs(tc.n, tc.stale, now), ss, now, &b)
			line := b.String()
			if code != tc.code {
				t.Errorf("exit %d, want %d", code, tc.code)
			}
			if len(line) >= 4096 || strings.Count(line, "\n") != 1 || !strings.HasSuffix(line, "\n") {
				t.Fatalf("not one line under 4 KiB: %d bytes, %d newlines", len(line), strings.Count(line, "\n"))
			}
			if !strings.HasPrefix(line, tc.text) {
				t.Errorf("line starts %.200q, want %q", line, tc.text)
			}
			for _, p := range tc.perf {
				if !strings.Contains(line, p) {
					t.Errorf("line lacks %q: %.300q", p, line)
				}
			}
			for _, p := range tc.notPerf {
				if strings.Contains(line, p) {
					t.Errorf("line has %q: %.300q", p, line)
				}
			}
			_, perf, _ := strings.Cut(line, " | ")
			if n := strings.Count(perf, "_age="); tc.wholePerfOf > 0 && n != tc.wholePerfOf {
				t.Errorf("perfdata of %d jobs, want all %d", n, tc.wholePerfOf)
			}
		})
	}
	// One error as long as a path can be: the line stays bounded.
	l := listing{where: "sd", problems: []problem{{err: errors.New("cannot list jobs in state directory " + strings.Repeat("d/", 3000))}}}
	var b bytes.Buffer
	if code := nagiosCheck(l, ss, now, &b); code != int(unknown) || len(b.String()) >= 4096 || strings.Count(b.String(), "\n") != 1 {
		t.Errorf("a long error: exit %d, %d bytes, %d lines", code, len(b.String()), strings.Count(b.String(), "\n"))
	}
}

// TestStatusOutputErrors runs every status and every completion with their
// output going where it cannot be written: a full device is one line and
// exit 74, a reader gone away (EPIPE) exit 141 and nothing said; never 0
// (SPEC sections 7 and 12).
func TestStatusOutputErrors(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"alpha", "beta"} {
		rec := fmt.Sprintf(`{"version": 1, "name": %q, "command": ["job"], "schedule": "1h", "anchor": "2020-01-01T00:00:00Z",
			"last_slot": "2020-01-01T00:00:00Z", "last_run": "2020-01-01T00:00:00Z", "last_end": "2020-01-01T00:00:01Z",
			"last_result": "success", "last_success": "2020-01-01T00:00:00Z", "runs": 1}`, name)
		if err := os.WriteFile(filepath.Join(dir, name+".json"), []byte(rec), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	commands := [][]string{
		{"status", "--state-dir", dir},
		{"status", "--state-dir", dir, "--json"},
		{"status", "--state-dir", dir, "--max-age", "1h"}, // lines for stale jobs
		{"status", "--state-dir", dir, "--nagios", "--max-age", "1h"},
		{"status", "--state-dir", dir, "--nagios", "--bogus"},
		{"status", "--state-dir", dir, "--names"},
		{"completion", "bash"},
		{"completion", "zsh"},
		{"completion", "fish"},
		{"completion", "--help"},
		{"status", "--help"},
		{"--version"},
	}
	run := func(t *testing.T, stdout *os.File, args []string) (int, string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), testutil.WaitBound)
		defer cancel()
		cmd := exec.CommandContext(ctx, "every", args...)
		var stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = stdout, &stderr
		err := cmd.Run()
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			t.Fatalf("every %q: %v", args, err)
		}
		ws := cmd.ProcessState.Sys().(syscall.WaitStatus)
		if ws.Signaled() {
			t.Fatalf("every %q: killed by %v", args, ws.Signal())
		}
		return ws.ExitStatus(), stderr.String()
	}
	full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
	if err != nil {
		t.Skipf("no /dev/full: %v", err)
	}
	defer full.Close()
	for _, args := range commands {
		t.Run(strings.ReplaceAll(strings.Join(args, " "), dir, "DIR"), func(t *testing.T) {
			code, stderr := run(t, full, args)
			if code != ui.ExitIOErr || !strings.HasSuffix(stderr, "every: cannot write to stdout: no space left on device\n") {
				t.Errorf("every %q > /dev/full: exit %d, stderr %q; want exit 74 and the line", args, code, stderr)
			}
			// A pipe whose reader is gone: EPIPE on the first write.
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			r.Close()
			code, stderr = run(t, w, args)
			w.Close()
			if code != ui.ExitPipe || strings.Contains(stderr, "stdout") {
				t.Errorf("every %q | (gone): exit %d, stderr %q; want exit %d and nothing said of it", args, code, stderr, ui.ExitPipe)
			}
		})
	}
}

func TestShort(t *testing.T) {
	for d, want := range map[time.Duration]string{
		12 * time.Second:                                   "12s",
		2*time.Hour + 3*time.Minute:                        "2h3m",
		2*time.Hour + 3*time.Minute + 400*time.Millisecond: "2h3m",
		time.Hour:                 "1h",
		90 * time.Minute:          "1h30m",
		10 * time.Minute:          "10m",
		time.Hour + 5*time.Second: "1h0m5s",
		250 * time.Millisecond:    "250ms",
	} {
		if got := short(d); got != want {
			t.Errorf("short(%v) = %q, want %q", d, got, want)
		}
	}
}

func TestJudge(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	ago := func(d time.Duration) *time.Time { t := now.Add(-d); return &t }
	probe := Settings{MaxAge: time.Hour}
	nagios := Settings{MaxAge: time.Hour, WarnAge: 30 * time.Minute, Nagios: true}
	lenient := Settings{MaxAge: time.Hour, AllowInactive: true}
	for _, tc := range []struct {
		name string
		j    jobStatus
		ss   Settings
		want health
		why  string
	}{
		{"fresh and active", jobStatus{LastSuccess: ago(time.Minute), Active: true}, probe, healthy, ""},
		{"exactly max-age", jobStatus{LastSuccess: ago(time.Hour), Active: true}, probe, healthy, ""},
		{"just older", jobStatus{LastSuccess: ago(time.Hour + time.Second), Active: true}, probe, critical,
			"last success 1h0m1s ago, older than 1h"},
		{"older by less than shows", jobStatus{LastSuccess: ago(time.Hour + 300*time.Millisecond), Active: true}, probe, critical,
			"last success 1h0m0.3s ago, older than 1h"},
		{"never", jobStatus{Active: true}, probe, critical, "never succeeded"},
		{"inactive", jobStatus{LastSuccess: ago(time.Minute)}, probe, critical, "no every running for it"},
		{"inactive allowed", jobStatus{LastSuccess: ago(time.Minute)}, lenient, healthy, ""},
		{"old and inactive", jobStatus{LastSuccess: ago(2 * time.Hour)}, probe, critical,
			"last success 2h ago, older than 1h; no every running for it"},
		{"failing within max-age passes the probe", jobStatus{LastSuccess: ago(time.Minute), Active: true, LastResult: "failure", LastExitCode: code(3)}, probe, healthy, ""},
		{"failing is critical for nagios", jobStatus{LastSuccess: ago(time.Minute), Active: true, LastResult: "failure", LastExitCode: code(3)}, nagios, critical,
			"last run failure (3)"},
		{"warn-age", jobStatus{LastSuccess: ago(45 * time.Minute), Active: true, LastResult: "success"}, nagios, warning,
			"last success 45m ago, older than 30m"},
		{"warn-age and inactive", jobStatus{LastSuccess: ago(45 * time.Minute), LastResult: "success"}, nagios, critical,
			"last success 45m ago, older than 30m; no every running for it"},
		{"a success in the future is fresh", jobStatus{LastSuccess: ago(-time.Minute), Active: true}, probe, healthy, ""},
		// Not run yet (no state; its every holds the marker).
		{"first slot to come", jobStatus{pending: true, Active: true, FirstSlot: ago(-5 * time.Minute)}, probe, healthy, ""},
		{"first slot not known yet", jobStatus{pending: true, Active: true}, probe, healthy, ""},
		{"first slot passed within max-age", jobStatus{pending: true, Active: true, FirstSlot: ago(10 * time.Minute)}, probe, healthy, ""},
		{"first slot older than max-age", jobStatus{pending: true, Active: true, FirstSlot: ago(2 * time.Hour)}, probe, critical,
			"not run yet, first slot 2h ago, older than 1h"},
		{"first slot older than warn-age", jobStatus{pending: true, Active: true, FirstSlot: ago(45 * time.Minute)}, nagios, warning,
			"not run yet, first slot 45m ago, older than 30m"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, why := judge(tc.j, tc.ss, now)
			if h != tc.want || strings.Join(why, "; ") != tc.why {
				t.Errorf("judge = %v %q, want %v %q", h, strings.Join(why, "; "), tc.want, tc.why)
			}
		})
	}
}

func code(c int) *int { return &c }

// TestResultText: the RESULT column never shows a code that is not the
// last run's: a run cut short (every killed mid-run, then booked
// interrupted by the next every) has none, whatever the record still holds.
func TestResultText(t *testing.T) {
	run := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, tc := range []struct {
		name string
		rec  state.Record
		want string
	}{
		{"success", state.Record{LastResult: "success", LastRun: run, LastEnd: run.Add(time.Second)}, "success (0)"},
		{"failure", state.Record{LastResult: "failure", LastExitCode: 3, LastRun: run, LastEnd: run.Add(time.Second)}, "failure (3)"},
		{"stopped by SIGTERM", state.Record{LastResult: "interrupted", LastExitCode: 143, LastRun: run, LastEnd: run.Add(time.Second)}, "interrupted (143)"},
		{"cut short, an older run's code left", state.Record{LastResult: "interrupted", LastExitCode: 0, LastRun: run, LastEnd: run.Add(-time.Hour)}, "interrupted"},
		{"cut short, first run", state.Record{LastResult: "interrupted", LastRun: run}, "interrupted"},
		{"no run finished", state.Record{Running: true, LastRun: run}, "-"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.rec.Name, tc.rec.Schedule = "j", "1h"
			j := describeJob(&tc.rec, "h", run.Add(time.Minute), false)
			if got := resultText(j); got != tc.want {
				t.Errorf("resultText = %q, want %q", got, tc.want)
			}
		})
	}
}
