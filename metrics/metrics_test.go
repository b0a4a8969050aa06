package metrics

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"log/slog"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/everycli/every/internal/regular"
	"github.com/everycli/every/runner"
	"github.com/everycli/every/state"
)

// names are the metric families the file must hold, each once.
var names = []string{
	"every_runs_total", "every_failures_total", "every_skips_total",
	"every_last_run_timestamp_seconds", "every_last_success_timestamp_seconds",
	"every_next_run_timestamp_seconds", "every_last_duration_seconds", "every_last_exit_code",
	"every_last_lateness_seconds", "every_consecutive_failures", "every_running",
}

// parse parses the file as Prometheus does, and checks what every family
// must be: present, of its type, with a help line, each sample labelled with
// the job (and, for skips, a reason) and carrying no timestamp.
func parse(t *testing.T, path, job string) map[string]*dto.MetricFamily {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	p := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("the text parser refuses the file: %v\n%s", err, b)
	}
	if len(fams) != len(names) {
		t.Errorf("%d families, want %d:\n%s", len(fams), len(names), b)
	}
	for _, name := range names {
		fam, ok := fams[name]
		if !ok {
			t.Errorf("no %s in:\n%s", name, b)
			continue
		}
		want := dto.MetricType_GAUGE
		if strings.HasSuffix(name, "_total") {
			want = dto.MetricType_COUNTER
		}
		if fam.GetType() != want {
			t.Errorf("%s is a %v, want a %v", name, fam.GetType(), want)
		}
		if fam.GetHelp() == "" {
			t.Errorf("%s has no help", name)
		}
		for _, m := range fam.GetMetric() {
			if m.TimestampMs != nil {
				t.Errorf("%s has a timestamp", name)
			}
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			wantLabels := 1
			if name == "every_skips_total" {
				wantLabels = 2
			}
			if labels["job"] != job || len(labels) != wantLabels {
				t.Errorf("%s has labels %q, want job=%q", name, labels, job)
			}
		}
	}
	return fams
}

// value is the value of a family's sample, for skips the one with this
// reason.
func value(t *testing.T, fams map[string]*dto.MetricFamily, name, reason string) float64 {
	t.Helper()
	for _, m := range fams[name].GetMetric() {
		r := ""
		for _, l := range m.GetLabel() {
			if l.GetName() == "reason" {
				r = l.GetValue()
			}
		}
		if r != reason {
			continue
		}
		if m.Counter != nil {
			return m.GetCounter().GetValue()
		}
		return m.GetGauge().GetValue()
	}
	t.Fatalf("no %s{reason=%q}", name, reason)
	return 0
}

// want is what one sample must be.
type want struct {
	name, reason string
	v            float64
}

func check(t *testing.T, fams map[string]*dto.MetricFamily, wants []want) {
	t.Helper()
	for _, w := range wants {
		// A float64 holds today's Unix time to a few hundred nanoseconds.
		if got := value(t, fams, w.name, w.reason); math.Abs(got-w.v) > 1e-6 {
			t.Errorf("%s{reason=%q} = %v, want %v", w.name, w.reason, got, w.v)
		}
	}
}

func unix(t time.Time) float64 { return float64(t.UnixNano()) / 1e9 }

var (
	slot    = time.Date(2026, 11, 30, 10, 31, 30, 0, time.UTC)
	lastRun = slot.Add(412 * time.Microsecond)
	lastEnd = slot.Add(1250 * time.Millisecond)
	success = slot.Add(-90*time.Second + 3*time.Millisecond)
	next    = slot.Add(90 * time.Second)
)

// record is a job's record after a failed run, as section 9 shows one.
func record() state.Record {
	return state.Record{
		Version: 1, Name: "backup", Schedule: "90s", Anchor: slot.Add(-time.Hour),
		LastSlot: slot, LastRun: lastRun, LastEnd: lastEnd, LastResult: "failure", LastExitCode: 3,
		LastAttempts: 1, LastSuccess: success, ConsecutiveFailures: 2, Runs: 42, Failures: 7, Skipped: 5,
	}
}

func TestBeganWritesTheRecordAsFound(t *testing.T) {
	path := filepath.Join(t.TempDir(), "backup.prom")
	f := New(path, "backup", nil)
	f.Began(record(), next)
	fams := parse(t, path, "backup")
	check(t, fams, []want{
		{"every_runs_total", "", 42},
		{"every_failures_total", "", 7},
		{"every_skips_total", "overrun", 5},
		{"every_skips_total", "locked", 0},
		{"every_skips_total", "done", 0},
		{"every_skips_total", "store", 0},
		{"every_skips_total", "state", 0},
		{"every_last_run_timestamp_seconds", "", unix(lastRun)},
		{"every_last_success_timestamp_seconds", "", unix(success)},
		{"every_next_run_timestamp_seconds", "", unix(next)},
		{"every_last_duration_seconds", "", lastEnd.Sub(lastRun).Seconds()},
		{"every_last_exit_code", "", 3},
		{"every_last_lateness_seconds", "", 412e-6},
		{"every_consecutive_failures", "", 2},
		{"every_running", "", 0},
	})
	if n := len(fams["every_skips_total"].GetMetric()); n != len(Reasons) {
		t.Errorf("%d skip reasons, want %d", n, len(Reasons))
	}
	// Sub-second precision, exactly: no float64 rounding in the text.
	b, _ := os.ReadFile(path)
	for _, line := range []string{
		`every_last_run_timestamp_seconds{job="backup"} 1796034690.000412` + "\n",
		`every_last_duration_seconds{job="backup"} 1.249588` + "\n",
	} {
		if !bytes.Contains(b, []byte(line)) {
			t.Errorf("no line %q in:\n%s", line, b)
		}
	}
}

// A job that never ran, and never succeeded, says 0 for its times: an alert
// on time() - every_last_success_timestamp_seconds fires for it.
func TestNeverIsZero(t *testing.T) {
	path := filepath.Join(t.TempDir(), "new.prom")
	f := New(path, "new", nil)
	f.Began(state.Record{Version: 1, Name: "new", Schedule: "1h", Anchor: slot}, time.Time{})
	check(t, parse(t, path, "new"), []want{
		{"every_runs_total", "", 0},
		{"every_last_run_timestamp_seconds", "", 0},
		{"every_last_success_timestamp_seconds", "", 0},
		{"every_next_run_timestamp_seconds", "", 0},
		{"every_last_duration_seconds", "", 0},
		{"every_last_lateness_seconds", "", 0},
	})
}

func TestStartedAndFinished(t *testing.T) {
	path := filepath.Join(t.TempDir(), "backup.prom")
	f := New(path, "backup", nil)
	f.Began(record(), slot)

	rec := record()
	rec.Runs, rec.Running, rec.LastSlot, rec.LastRun = 43, true, next, next.Add(2*time.Second)
	after := next.Add(90 * time.Second)
	f.Started(runner.Run{Slot: next, Start: rec.LastRun, Late: 2 * time.Second, Record: rec, Next: after})
	check(t, parse(t, path, "backup"), []want{
		{"every_runs_total", "", 43},
		{"every_running", "", 1},
		{"every_next_run_timestamp_seconds", "", unix(after)},
		// Those of the last finished run, until this one finishes.
		{"every_last_exit_code", "", 3},
		{"every_last_duration_seconds", "", lastEnd.Sub(lastRun).Seconds()},
		{"every_last_lateness_seconds", "", 412e-6},
	})

	end := rec.LastRun.Add(2500 * time.Millisecond)
	rec.Running, rec.LastEnd, rec.LastResult, rec.LastExitCode = false, end, "success", 0
	rec.LastSuccess, rec.ConsecutiveFailures = rec.LastRun, 0
	f.Finished(runner.Run{Slot: next, Start: rec.LastRun, Late: 2 * time.Second, End: end,
		Result: runner.Result{Outcome: runner.Success}, Attempts: 1, Record: rec, Next: after})
	check(t, parse(t, path, "backup"), []want{
		{"every_runs_total", "", 43},
		{"every_failures_total", "", 7},
		{"every_running", "", 0},
		{"every_last_run_timestamp_seconds", "", unix(rec.LastRun)},
		{"every_last_success_timestamp_seconds", "", unix(rec.LastRun)},
		{"every_next_run_timestamp_seconds", "", unix(after)},
		{"every_last_duration_seconds", "", 2.5},
		{"every_last_exit_code", "", 0},
		{"every_last_lateness_seconds", "", 2},
		{"every_consecutive_failures", "", 0},
	})

	// A failure's code, from the run's result.
	rec.LastExitCode, rec.Failures, rec.ConsecutiveFailures = 124, 8, 1
	f.Finished(runner.Run{Slot: next, Start: rec.LastRun, End: end,
		Result: runner.Result{Outcome: runner.Timeout, ExitCode: 124}, Record: rec, Next: after})
	check(t, parse(t, path, "backup"), []want{
		{"every_failures_total", "", 8},
		{"every_last_exit_code", "", 124},
		{"every_consecutive_failures", "", 1},
	})
	if f.WantsOutput() {
		t.Error("WantsOutput is true: every would pipe the output of every run for nothing")
	}
}

func TestLabelValuesEscaped(t *testing.T) {
	for _, tc := range []struct{ job, parsed string }{
		{"we\"ird\\job\nx", "we\"ird\\job\nx"},
		{`\n`, `\n`}, // a backslash and an n, not a newline
		{"a\xffb", "a\uFFFDb"},
	} {
		path := filepath.Join(t.TempDir(), "j.prom")
		f := New(path, tc.job, nil)
		f.Began(record(), next)
		f.Skipped("odd\"reason\\\n", 1, next)
		f.Close() // the skip is held back: Began wrote just now
		fams := parse(t, path, tc.parsed)
		check(t, fams, []want{{"every_runs_total", "", 42}, {"every_skips_total", "odd\"reason\\\n", 1}})
	}
}

// Counters come from the state: a new every (New, Began) with the record of
// the last one goes on from its counts. Skips for reasons the state does not
// count start again from 0.
func TestCountersSurviveRestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "backup.prom")
	f := New(path, "backup", nil)
	f.Began(record(), next)
	f.Skipped("locked", 3, next)
	f.Close()

	f = New(path, "backup", nil)
	f.Began(record(), next)
	check(t, parse(t, path, "backup"), []want{
		{"every_runs_total", "", 42},
		{"every_failures_total", "", 7},
		{"every_skips_total", "overrun", 5},
		{"every_skips_total", "locked", 0},
	})
}

// Overrun skips come from the record, which the loop updates before it tells
// of them: counted once, whether the file is written between the skip and the
// run's end or not. The other reasons add up in process, across runs.
func TestSkips(t *testing.T) {
	path := filepath.Join(t.TempDir(), "backup.prom")
	f := New(path, "backup", nil)
	rec := record()
	f.Began(rec, next) // overrun 5, from the record
	f.Skipped("locked", 2, next)
	f.Skipped("state", 1, next)
	f.Skipped("lock", 1, next)
	f.Skipped("overrun", 3, next) // the loop's record now says 8
	f.Close()                     // writes what was held back
	check(t, parse(t, path, "backup"), []want{
		{"every_skips_total", "overrun", 8},
		{"every_skips_total", "locked", 2},
		{"every_skips_total", "state", 1},
		{"every_skips_total", "lock", 1}, // a reason the loop tells of, beyond the five
		{"every_skips_total", "done", 0},
		{"every_skips_total", "store", 0},
	})

	f = New(path, "backup", nil)
	f.Began(rec, next)
	f.Skipped("locked", 2, next)
	f.Skipped("overrun", 3, next)
	rec.Runs, rec.Skipped = 43, 8
	f.Finished(runner.Run{Start: lastRun, End: lastEnd, Record: rec, Next: next})
	f.Skipped("done", 1, next)
	f.Skipped("locked", 1, next)
	f.Close()
	check(t, parse(t, path, "backup"), []want{
		{"every_skips_total", "overrun", 8}, // 5 + 3 in the record, not 11
		{"every_skips_total", "locked", 3},
		{"every_skips_total", "done", 1},
	})
}

// writeCount is how many times the file was written.
func (f *File) writeCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.writes
}

// At 10ms slots, skips alone rewrite the file at most once a second, and the
// last of them is written all the same, by a timer, without another skip or
// a run.
func TestSkipsThrottled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "fast.prom")
		f := New(path, "fast", nil)
		f.Began(record(), next)
		const n = 1000
		for range n {
			f.Skipped("locked", 1, next)
			time.Sleep(10 * time.Millisecond)
		}
		// 10s of skips: the first write a second after Began, and one a
		// second after, whatever the number of skips.
		if w := f.writeCount(); w > 1+11 {
			t.Errorf("%d writes for %d skips over 10s, want one a second at most", w, n)
		}
		time.Sleep(skipEvery)
		synctest.Wait()
		check(t, parse(t, path, "fast"), []want{{"every_skips_total", "locked", n}})
		w := f.writeCount()
		time.Sleep(time.Hour)
		synctest.Wait()
		if got := f.writeCount(); got != w {
			t.Errorf("%d writes in an hour with nothing to tell", got-w)
		}
		f.Close()
	})
}

// A skip held back is written by Close, at stop, and by the next run.
func TestHeldSkipsWritten(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "fast.prom")
		f := New(path, "fast", nil)
		f.Began(record(), next)
		f.Skipped("store", 1, next)
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		check(t, parse(t, path, "fast"), []want{{"every_skips_total", "store", 1}})

		f = New(path, "fast", nil)
		f.Began(record(), next)
		f.Skipped("store", 1, next)
		f.Started(runner.Run{Record: record(), Next: next})
		check(t, parse(t, path, "fast"), []want{{"every_skips_total", "store", 1}})
		f.Close()
	})
}

// tempFiles lists what is in dir beside the file.
func tempFiles(t *testing.T, dir, keep string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var left []string
	for _, e := range entries {
		if e.Name() != keep {
			left = append(left, e.Name())
		}
	}
	return left
}

func TestNoTemporaryFilesLeft(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "backup.prom")
	f := New(path, "backup", nil)
	f.Began(record(), next)
	for i := range 100 {
		rec := record()
		rec.Runs = 43 + i
		f.Finished(runner.Run{Start: lastRun, End: lastEnd, Record: rec, Next: next})
	}
	if left := tempFiles(t, dir, "backup.prom"); len(left) > 0 {
		t.Errorf("left after 100 writes: %q", left)
	}
	check(t, parse(t, path, "backup"), []want{{"every_runs_total", "", 142}})

	// A write that fails after its temporary file is made: a directory put
	// where the file goes, which rename(2) cannot replace either.
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(path, 0o755); err != nil {
		t.Fatal(err)
	}
	f.Finished(runner.Run{Start: lastRun, End: lastEnd, Record: record(), Next: next})
	if err := f.Close(); err == nil {
		t.Fatal("a write over a directory did not fail")
	}
	if left := tempFiles(t, dir, "backup.prom"); len(left) > 0 {
		t.Errorf("left after a failed write: %q", left)
	}
}

// The file is 0644, for node_exporter's user, whatever every's umask.
func TestModeWhateverTheUmask(t *testing.T) {
	old := syscall.Umask(0o077) // process-wide: no test here runs in parallel
	defer syscall.Umask(old)
	path := filepath.Join(t.TempDir(), "backup.prom")
	f := New(path, "backup", nil)
	f.Began(record(), next)
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode() != Mode {
		t.Errorf("mode %v under umask 077, want %v", fi.Mode(), Mode)
	}
}

// A metrics file of another user's (a stale one, or one planted in a shared
// textfile directory, mode 0666) is replaced, never written in place: the
// file there is then this user's, mode Mode, and what the other user holds
// open is not changed.
func TestAnotherUsersFileReplaced(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("chown needs root")
	}
	path := filepath.Join(t.TempDir(), "backup.prom")
	old := Render(Job{"backup", &Snapshot{Record: state.Record{Runs: 1}}})
	if err := os.WriteFile(path, old, 0o666); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o666); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(path, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	held, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	if err := Check(path); err != nil {
		t.Fatal(err)
	}
	f := New(path, "backup", nil)
	f.Began(record(), next)
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st := fi.Sys().(*syscall.Stat_t); st.Uid != 0 || fi.Mode() != Mode {
		t.Errorf("the file is uid %d, mode %v; want this user's (0), %v", st.Uid, fi.Mode(), Mode)
	}
	if b, _ := io.ReadAll(held); !bytes.Equal(b, old) {
		t.Errorf("the other user's file was written in place: %.60q", b)
	}
}

// A link at the path is neither followed nor replaced: the write fails, and
// the link and what it points to stay as they were.
func TestWriteRefusesALink(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "passwd")
	if err := os.WriteFile(target, []byte("root:x:0:0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "backup.prom")
	if err := os.Symlink(target, path); err != nil {
		t.Fatal(err)
	}
	f := New(path, "backup", nil)
	f.Began(record(), next)
	if err := f.Close(); !errors.Is(err, regular.ErrNotRegular) {
		t.Errorf("write over a link: %v, want ErrNotRegular", err)
	}
	if fi, err := os.Lstat(path); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		t.Errorf("the link was replaced: %v, %v", fi.Mode(), err)
	}
	if b, _ := os.ReadFile(target); string(b) != "root:x:0:0\n" {
		t.Errorf("the link's target was written: %q", b)
	}
}

func TestCheck(t *testing.T) {
	dir := t.TempDir()
	regularFile := filepath.Join(dir, "old.prom")
	if err := os.WriteFile(regularFile, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.prom")
	if err := os.Symlink(regularFile, link); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(dir, "sub.prom")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo.prom")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	ours := filepath.Join(dir, "ours.prom")
	if err := os.WriteFile(ours, Render(Job{"backup", &Snapshot{Record: record()}}), 0o644); err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(dir, "backup.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\necho backup\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	stateRecord := filepath.Join(dir, "backup.json")
	if err := os.WriteFile(stateRecord, []byte(`{"version": 1, "name": "backup", "runs": 42}`), 0o600); err != nil {
		t.Fatal(err)
	}
	exporter := filepath.Join(dir, "node.prom")
	if err := os.WriteFile(exporter, []byte("# HELP node_thing A thing.\nnode_thing 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, path string
		ok         bool
		is         error // what the error must be, when not ok
	}{
		{"new file", filepath.Join(dir, "new.prom"), true, nil},
		{"empty file", regularFile, true, nil},
		{"every's metrics", ours, true, nil},
		{"a script", script, false, ErrNotMetrics},
		{"a state record", stateRecord, false, ErrNotMetrics},
		{"another exporter's metrics", exporter, false, ErrNotMetrics},
		{"missing directory", filepath.Join(dir, "nope", "x.prom"), false, fs.ErrNotExist},
		{"directory is a file", filepath.Join(regularFile, "x.prom"), false, syscall.ENOTDIR},
		{"symbolic link", link, false, regular.ErrNotRegular},
		{"directory", sub, false, regular.ErrNotRegular},
		{"fifo", fifo, false, regular.ErrNotRegular},
		{"empty", "", false, nil},
		{"trailing slash", dir + "/", false, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := Check(tc.path)
			switch {
			case tc.ok && err != nil:
				t.Errorf("Check(%q): %v", tc.path, err)
			case !tc.ok && err == nil:
				t.Errorf("Check(%q) = nil, want an error", tc.path)
			case !tc.ok && tc.is != nil && !errors.Is(err, tc.is):
				t.Errorf("Check(%q) = %v, want one that is %v", tc.path, err, tc.is)
			}
		})
	}
	if left := tempFiles(t, dir, ""); len(left) != 8 {
		t.Errorf("Check left files behind: %q", left)
	}
	if b, _ := os.ReadFile(script); string(b) != "#!/bin/sh\necho backup\n" {
		t.Errorf("the script changed: %q", b)
	}
}

// A file put at the path while every runs, by someone else, is replaced only
// if it is a metrics file: a script copied there is refused (the write
// fails, the script is whole), another every's exposition is replaced.
func TestWriteReplacesOnlyMetrics(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "backup.prom")
	f := New(path, "backup", nil)
	defer f.Close()
	f.Began(record(), next)
	if f.lastErr != nil {
		t.Fatal(f.lastErr)
	}
	run := runner.Run{Start: lastRun, End: lastEnd, Record: record(), Next: next}
	f.Started(run)
	if f.lastErr != nil {
		t.Fatalf("every's own file, written again: %v", f.lastErr)
	}
	const script = "#!/bin/sh\necho backup\n"
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	f.Finished(run)
	if !errors.Is(f.lastErr, ErrNotMetrics) {
		t.Errorf("a write over a script: %v, want ErrNotMetrics", f.lastErr)
	}
	if b, _ := os.ReadFile(path); string(b) != script {
		t.Errorf("the script was replaced: %.60q", b)
	}
	other := filepath.Join(dir, "other.prom")
	if err := os.WriteFile(other, Render(Job{"backup", &Snapshot{Record: record()}}), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(other, path); err != nil {
		t.Fatal(err)
	}
	f.Finished(run)
	if f.lastErr != nil {
		t.Errorf("a write over another every's metrics: %v", f.lastErr)
	}
	check(t, parse(t, path, "backup"), []want{{"every_runs_total", "", 42}})
}

// Check removes the temporary files of writers that died, and leaves those of
// writers alive.
func TestCheckRemovesLeftovers(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "backup.prom")
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	deadTemp := filepath.Join(dir, tempPrefix(path)+strconv.Itoa(dead.Process.Pid)+"-123")
	liveTemp := filepath.Join(dir, tempPrefix(path)+strconv.Itoa(os.Getppid())+"-456")
	other := filepath.Join(dir, ".other.prom.tmp-"+strconv.Itoa(dead.Process.Pid)+"-789")
	// Our pid: an earlier process's (old), or another container's in flight
	// (just made).
	ownOld := filepath.Join(dir, tempPrefix(path)+strconv.Itoa(os.Getpid())+"-1")
	ownNew := filepath.Join(dir, tempPrefix(path)+strconv.Itoa(os.Getpid())+"-2")
	for _, p := range []string{deadTemp, liveTemp, other, ownOld, ownNew} {
		if err := os.WriteFile(p, nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	old := time.Now().Add(-time.Minute)
	if err := os.Chtimes(ownOld, old, old); err != nil {
		t.Fatal(err)
	}
	if err := Check(path); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{deadTemp, ownOld} {
		if _, err := os.Stat(p); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s, a dead writer's temporary file, is still there: %v", filepath.Base(p), err)
		}
	}
	for _, p := range []string{liveTemp, other, ownNew} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s was removed: %v", filepath.Base(p), err)
		}
	}
}

// A file that cannot be written is logged when it starts, summarised once a
// minute, and logged when it ends: not a line per run at 10ms slots.
func TestWriteErrorsLoggedOncePerOutage(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var log bytes.Buffer
		logger := slog.New(slog.NewTextHandler(&log, nil))
		path := filepath.Join(t.TempDir(), "backup.prom")
		if err := os.Mkdir(path, 0o755); err != nil {
			t.Fatal(err)
		}
		f := New(path, "backup", logger)
		f.Began(record(), next)
		run := runner.Run{Start: lastRun, End: lastEnd, Record: record(), Next: next}
		for range 3000 { // 30s of runs at 10ms slots
			f.Started(run)
			f.Finished(run)
			time.Sleep(10 * time.Millisecond)
		}
		lines := strings.Split(strings.TrimSpace(log.String()), "\n")
		if len(lines) != 1 || !strings.Contains(lines[0], "event=metrics") || !strings.Contains(lines[0], "level=ERROR") {
			t.Fatalf("after 30s of failed writes, the log is:\n%s\nwant one error line", log.String())
		}
		for range 4000 { // 40s more: past the minute
			f.Finished(run)
			time.Sleep(10 * time.Millisecond)
		}
		lines = strings.Split(strings.TrimSpace(log.String()), "\n")
		if len(lines) != 2 || !strings.Contains(lines[1], "repeated=true") || !strings.Contains(lines[1], "count=") {
			t.Fatalf("after 70s of failed writes, the log is:\n%s\nwant the error and one summary", log.String())
		}
		if err := os.Remove(path); err != nil {
			t.Fatal(err)
		}
		f.Finished(run)
		f.Finished(run)
		lines = strings.Split(strings.TrimSpace(log.String()), "\n")
		if len(lines) != 3 || !strings.Contains(lines[2], "ended=true") || !strings.Contains(lines[2], "total=10001") {
			t.Fatalf("after the file was written again, the log is:\n%s\nwant the end, with the total", log.String())
		}
		check(t, parse(t, path, "backup"), []want{{"every_runs_total", "", 42}})
		f.Close()
	})
}

func TestSeconds(t *testing.T) {
	for _, tc := range []struct {
		d    time.Duration
		want string
	}{
		{0, "0"},
		{time.Second, "1"},
		{1500 * time.Millisecond, "1.5"},
		{time.Nanosecond, "0.000000001"},
		{-500 * time.Millisecond, "-0.5"},
		{-1500 * time.Millisecond, "-1.5"},
		{-2 * time.Second, "-2"},
		{math.MaxInt64, "9223372036.854775807"},
		{math.MinInt64, "-9223372036.854775808"},
	} {
		if got := duration(tc.d); got != tc.want {
			t.Errorf("duration(%v) = %q, want %q", tc.d, got, tc.want)
		}
		if got, err := strconv.ParseFloat(tc.want, 64); err != nil || math.Abs(got-tc.d.Seconds()) > 1e-9*math.Max(1, math.Abs(got)) {
			t.Errorf("%q parses to %v (%v), want %v", tc.want, got, err, tc.d.Seconds())
		}
	}
	for _, tc := range []struct {
		t    time.Time
		want string
	}{
		{time.Time{}, "0"},
		{time.Unix(0, 0), "0"},
		{time.Unix(1796034690, 412000), "1796034690.000412"},
		{time.Unix(-2, 250_000_000), "-1.75"},
	} {
		if got := timestamp(tc.t); got != tc.want {
			t.Errorf("timestamp(%v) = %q, want %q", tc.t, got, tc.want)
		}
	}
}

// Render of several jobs (every --listen's /metrics) is one exposition that
// Prometheus' parser takes: each family once, with each job's samples, the
// job told apart by its label; a job's own skip reasons are its own.
func TestRenderManyJobs(t *testing.T) {
	a := &Snapshot{}
	a.Began(record(), next)
	a.Skipped("lock", 2, next)
	b := &Snapshot{}
	b.Began(state.Record{Version: 1, Name: "new", Schedule: "1h", Anchor: slot, Runs: 3}, next)
	b.Started(runner.Run{Record: state.Record{Runs: 4, Running: true}, Next: next})
	hostile := "we\"ird\\job\n<x>"
	text := Render(Job{"backup", a}, Job{hostile, b})
	p := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(text))
	if err != nil {
		t.Fatalf("the text parser refuses the exposition: %v\n%s", err, text)
	}
	if len(fams) != len(names) {
		t.Errorf("%d families, want %d", len(fams), len(names))
	}
	if n := strings.Count(string(text), "# TYPE every_runs_total "); n != 1 {
		t.Errorf("every_runs_total's TYPE %d times, want once", n)
	}
	// sample is the value of name{job, reason}.
	sample := func(name, job, reason string) (float64, bool) {
		for _, m := range fams[name].GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["job"] == job && labels["reason"] == reason {
				if m.Counter != nil {
					return m.GetCounter().GetValue(), true
				}
				return m.GetGauge().GetValue(), true
			}
		}
		return 0, false
	}
	for _, name := range names {
		for _, job := range []string{"backup", hostile} {
			reason := ""
			if name == "every_skips_total" {
				reason = "locked"
			}
			if _, ok := sample(name, job, reason); !ok {
				t.Errorf("no %s{job=%q}", name, job)
			}
		}
	}
	for _, w := range []struct {
		name, job, reason string
		v                 float64
	}{
		{"every_runs_total", "backup", "", 42},
		{"every_runs_total", hostile, "", 4},
		{"every_running", "backup", "", 0},
		{"every_running", hostile, "", 1},
		{"every_skips_total", "backup", "lock", 2},
		{"every_skips_total", "backup", "overrun", 5},
	} {
		if got, _ := sample(w.name, w.job, w.reason); got != w.v {
			t.Errorf("%s{job=%q,reason=%q} = %v, want %v", w.name, w.job, w.reason, got, w.v)
		}
	}
	if _, ok := sample("every_skips_total", hostile, "lock"); ok {
		t.Errorf("the second job has the first's skip reason lock")
	}
	if Render() != nil {
		t.Errorf("Render of no jobs = %q, want nothing", Render())
	}
}

// A Snapshot's Clone shares nothing with it: /metrics renders a clone while
// the loop goes on telling the job's Snapshot.
func TestSnapshotClone(t *testing.T) {
	s := &Snapshot{}
	s.Began(record(), next)
	s.Record.Command = []string{"backup", "--full"}
	s.Skipped("locked", 1, next)
	c := s.Clone()
	s.Skipped("locked", 1, next)
	s.Record.Command[1] = "--quick"
	if c.Skips["locked"] != 1 || c.Record.Command[1] != "--full" {
		t.Errorf("the clone changed with the snapshot: skips %v, command %q", c.Skips, c.Record.Command)
	}
}
