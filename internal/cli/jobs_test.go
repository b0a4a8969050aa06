package cli

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/everycli/every/internal/jobfiles"
	"github.com/everycli/every/internal/jobsfile"
)

// jobsDir writes files (name, content, ...) into a fresh directory and
// returns their paths.
func jobsDir(t *testing.T, files ...string) []string {
	t.Helper()
	dir := t.TempDir()
	var paths []string
	for i := 0; i < len(files); i += 2 {
		p := filepath.Join(dir, files[i])
		if err := os.WriteFile(p, []byte(files[i+1]), 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	return paths
}

// clearEveryEnv unsets every EVERY_ variable of the test's environment, so
// that a machine's own do not count.
func clearEveryEnv(t *testing.T) {
	t.Helper()
	for _, kv := range os.Environ() {
		if name, _, _ := strings.Cut(kv, "="); strings.HasPrefix(name, "EVERY_") {
			t.Setenv(name, "")
			os.Unsetenv(name)
		}
	}
}

// loadErrors returns LoadJobs's errors as lines, the directory cut off.
func loadErrors(t *testing.T, paths []string) []string {
	t.Helper()
	jobs, _, err := LoadJobs(paths)
	var errs jobsfile.Errors
	if !errors.As(err, &errs) {
		t.Fatalf("LoadJobs = %d jobs, %v; want jobsfile.Errors", len(jobs), err)
	}
	var lines []string
	for _, e := range errs {
		lines = append(lines, strings.ReplaceAll(e.Error(), filepath.Dir(paths[0])+"/", ""))
	}
	return lines
}

func TestLoadJobs(t *testing.T) {
	clearEveryEnv(t)
	t.Setenv("EVERY_RETRIES", "2")
	t.Setenv("EVERY_KILL_AFTER", "3s")
	t.Setenv("FROM_EVERY", "outer")
	paths := jobsDir(t, "jobs.tab", `# a file of jobs
every 90s --retries 5 --name sync -- ./sync.sh --full
EVERY_TIMEOUT=60s
EVERY_KILL_AFTER=
GREETING = "hello there"
FROM_EVERY=file
*/15 * * * *  curl -fsS https://user:secret@hc-ping.com/0f2c5a7e-6d61-4c6f/fail >/dev/null
every '0 3 * * *' --timeout 2h -- backup 'a b'
SHELL=/bin/bash
CRON_TZ=America/New_York
30 2 * * 1-5  report --daily
@reboot       warm-cache
@every 5m     tick
`)
	jobs, warnings, err := LoadJobs(paths)
	if err != nil {
		t.Fatal(err)
	}
	if len(warnings) != 0 {
		t.Errorf("warnings: %v", warnings)
	}
	type shown struct {
		Line                 int
		Name, Sched, Command string
		Argv, LoopCommand    []string
		Timeout, KillAfter   time.Duration
		Retries, MaxRuns     int
		Reboot               bool
		Zone                 string
		Greeting, FromEvery  string
	}
	var got []shown
	for _, j := range jobs {
		if j.Name != j.Settings.Loop.Name || j.File != paths[0] {
			t.Errorf("line %d: name %q, loop's %q, file %q", j.Line, j.Name, j.Settings.Loop.Name, j.File)
		}
		s := shown{Line: j.Line, Name: j.Name, Sched: j.Settings.Loop.Schedule.Recorded(), Command: j.Command, Argv: j.Argv,
			Timeout: j.Settings.Loop.Timeout, KillAfter: j.Settings.Loop.KillAfter, Retries: j.Settings.Loop.Retries, MaxRuns: j.Settings.Loop.MaxRuns,
			Reboot: j.Reboot, LoopCommand: j.Settings.Loop.Command}
		if loc := j.Settings.Loop.Schedule.Location(); loc != nil {
			s.Zone = loc.String()
		}
		for _, kv := range j.Settings.Loop.Env {
			if v, ok := strings.CutPrefix(kv, "GREETING="); ok {
				s.Greeting = v
			}
			if v, ok := strings.CutPrefix(kv, "FROM_EVERY="); ok {
				if s.FromEvery != "" {
					t.Errorf("line %d: FROM_EVERY twice in the environment", j.Line)
				}
				s.FromEvery = v
			}
			if strings.HasPrefix(kv, "EVERY_RETRIES=") {
				t.Errorf("line %d: every's option EVERY_RETRIES is passed on", j.Line)
			}
		}
		got = append(got, s)
	}
	curl := "curl -fsS https://user:secret@hc-ping.com/0f2c5a7e-6d61-4c6f/fail >/dev/null"
	curlName := jobfiles.CronName("curl", "*/15 * * * *", curl)
	reportName := jobfiles.CronName("report", "30 2 * * 1-5", "report --daily")
	warmName := jobfiles.CronName("warm-cache", "@reboot", "warm-cache")
	tickName := jobfiles.CronName("tick", "@every 5m", "tick")
	backupName := jobfiles.Name([]string{"backup", "a b"})
	want := []shown{
		// The line's own options over every's environment.
		{Line: 2, Name: "sync", Sched: "90s", Command: "./sync.sh --full", Argv: []string{"--retries", "5", "--name", "sync", "90s", "--", "./sync.sh", "--full"},
			LoopCommand: []string{"./sync.sh", "--full"}, KillAfter: 3 * time.Second, Retries: 5, FromEvery: "outer"},
		// The file's defaults over every's environment (an empty one drops
		// the file's own, and every's environment's stands), the file's
		// environment over every's, a crontab line's command run by sh -c,
		// a URL's secrets masked.
		{Line: 7, Name: curlName, Sched: "*/15 * * * *", Command: "curl -fsS https://***@hc-ping.com/…/fail >/dev/null",
			Argv:        []string{"--timeout=60s", "--name", curlName, "*/15 * * * *", "--", "/bin/sh", "-c", curl},
			LoopCommand: []string{"/bin/sh", "-c", curl}, Timeout: time.Minute, KillAfter: 3 * time.Second, Retries: 2, Zone: "Local",
			Greeting: "hello there", FromEvery: "file"},
		// The line's options over the file's defaults; the name a standalone
		// every gives the command.
		{Line: 8, Name: backupName, Sched: "0 3 * * *", Command: "backup 'a b'", Argv: []string{"--timeout=60s", "--timeout", "2h", "0 3 * * *", "--", "backup", "a b"},
			LoopCommand: []string{"backup", "a b"}, Timeout: 2 * time.Hour, KillAfter: 3 * time.Second, Retries: 2, Zone: "Local",
			Greeting: "hello there", FromEvery: "file"},
		// SHELL and CRON_TZ of the section.
		{Line: 11, Name: reportName, Sched: "CRON_TZ=America/New_York 30 2 * * 1-5", Command: "report --daily",
			Argv:        []string{"--timeout=60s", "--name", reportName, "CRON_TZ=America/New_York 30 2 * * 1-5", "--", "/bin/bash", "-c", "report --daily"},
			LoopCommand: []string{"/bin/bash", "-c", "report --daily"}, Timeout: time.Minute, KillAfter: 3 * time.Second, Retries: 2, Zone: "America/New_York",
			Greeting: "hello there", FromEvery: "file"},
		// @reboot: a one-shot, in no zone.
		{Line: 12, Name: warmName, Sched: "@reboot", Command: "warm-cache", Argv: []string{"--timeout=60s", "--name", warmName, "@reboot", "--", "/bin/bash", "-c", "warm-cache"},
			LoopCommand: []string{"/bin/bash", "-c", "warm-cache"}, Timeout: time.Minute, KillAfter: 3 * time.Second, Retries: 2, MaxRuns: 1, Reboot: true,
			Greeting: "hello there", FromEvery: "file"},
		{Line: 13, Name: tickName, Sched: "@every 5m", Command: "tick", Argv: []string{"--timeout=60s", "--name", tickName, "@every 5m", "--", "/bin/bash", "-c", "tick"},
			LoopCommand: []string{"/bin/bash", "-c", "tick"}, Timeout: time.Minute, KillAfter: 3 * time.Second, Retries: 2,
			Greeting: "hello there", FromEvery: "file"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("jobs:\n%+v\nwant:\n%+v", got, want)
	}
}

func TestLoadJobsErrors(t *testing.T) {
	clearEveryEnv(t)
	paths := jobsDir(t,
		"a.tab", `every 90s --retries x -- ./a
every 90s --nope -- ./b
every 90s
EVERY_JITTER=2m
EVERY_LOCK_TTL=10ms
every 90s -- ./c
*/5 * * * * ./d
EVERY_JITTER=
every status
every @reboot --max-runs 3 -- ./e
every @reboot --align -- ./f
every 0 3 * * * ./g
every 90s --name sync -- ./h
every 90s --state /tmp/s.json -- ./i
EVERY_TIMEOUT=soon
`,
		"b.tab", `@daily ./sync
every 1h --name sync -- ./j
every 1h --state /tmp/s.json -- ./k
EVERY_ALIGN=yes
CRON_TZ=Europe/Berlin
every '0 3 * * *' -- ./l
every 5 -- ./m
`)
	got := loadErrors(t, paths)
	syncA := jobfiles.CronName("./sync", "@daily", "./sync")
	_ = syncA
	want := []string{
		`a.tab:1: bad --retries "x": not a whole number`,
		`a.tab:2: unknown option --nope; see every --help`,
		`a.tab:3: missing command after schedule "90s"; try: every 90s -- COMMAND`,
		// A default that is wrong whatever the job: once, at its own line.
		`a.tab:5: bad EVERY_LOCK_TTL (line 5) "10ms": give a duration of at least 100ms, such as 30s`,
		// A default wrong for a job: at the job's line, naming the default's.
		`a.tab:6: bad EVERY_JITTER (line 4) "2m": must be shorter than the interval 90s; the jitter delays each run within its own period`,
		`a.tab:9: a job line runs a job: every SCHEDULE [OPTIONS] -- COMMAND; every's other commands, --help and --version are not jobs`,
		`a.tab:10: bad --max-runs "3": @reboot runs once; leave --max-runs out`,
		`a.tab:11: bad --align with schedule "@reboot": @reboot has no slots to align; leave out --align`,
		`a.tab:12: bad schedule: a cron expression is one argument; quote it: every '0 3 * * *' -- CMD`,
		`a.tab:15: bad EVERY_TIMEOUT (line 15) "soon": not a duration; try 500ms, 30s, 1m30s or 1d`,
		`b.tab:2: job name "sync" is also that of a.tab:13; give one of them a --name of its own (a crontab line: write it as an every line with --name)`,
		`b.tab:3: --state "/tmp/s.json" is also that of a.tab:14; two jobs in one state file would overwrite each other: give each its own, or leave --state out`,
		`b.tab:4: bad EVERY_ALIGN (line 4) "yes": not a switch value; give 1 or true to turn it on, 0 or false to turn it off`,
		`b.tab:7: bad schedule "5": a number alone is not a schedule; did you mean 5s?`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("errors:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestLoadJobsEnvironment(t *testing.T) {
	clearEveryEnv(t)
	paths := jobsDir(t, "jobs.tab", "every 90s -- ./a\nevery 1h -- ./b\n")
	// A bad option of every's own environment would be every job's: one
	// error, with no line.
	t.Setenv("EVERY_TIMEOUT", "soon")
	_, _, err := LoadJobs(paths)
	var errs jobsfile.Errors
	if err == nil || errors.As(err, &errs) || err.Error() != `bad EVERY_TIMEOUT "soon": not a duration; try 500ms, 30s, 1m30s or 1d` {
		t.Errorf("LoadJobs with EVERY_TIMEOUT=soon: %v", err)
	}
	t.Setenv("EVERY_TIMEOUT", "")
	t.Setenv("EVERY_NO_LOCK", "yes")
	if _, _, err := LoadJobs(paths); err == nil || err.Error() != `bad EVERY_NO_LOCK "yes": not a switch value; give 1 or true to turn it on, 0 or false to turn it off` {
		t.Errorf("LoadJobs with EVERY_NO_LOCK=yes: %v", err)
	}
	// A value right on its own and wrong for a job: at the job's line.
	t.Setenv("EVERY_NO_LOCK", "1")
	t.Setenv("EVERY_JITTER", "2m")
	if got, want := loadErrors(t, paths), []string{`jobs.tab:1: bad EVERY_JITTER "2m": must be shorter than the interval 90s; the jitter delays each run within its own period`}; !slices.Equal(got, want) {
		t.Errorf("errors %q, want %q", got, want)
	}
	t.Setenv("EVERY_JITTER", "")
	jobs, _, err := LoadJobs(paths)
	if err != nil || len(jobs) != 2 || !jobs[0].Settings.NoLock {
		t.Errorf("LoadJobs with EVERY_NO_LOCK=1: %d jobs, %v", len(jobs), err)
	}
}

func TestLoadJobsWarnings(t *testing.T) {
	clearEveryEnv(t)
	paths := jobsDir(t, "jobs.tab", `MAILTO=ops@example.com
CRON_TZ=Europe/Berlin
every '0 3 * * *' -- ./local
every '0 3 * * *' --tz Asia/Tokyo -- ./tokyo
every 'CRON_TZ=UTC 0 3 * * *' -- ./utc
every 90s -- ./grid
0 3 * * * ./cron
`, "more.tab", "MAILTO=root\n@daily x\n")
	_, warnings, err := LoadJobs(paths)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, w := range warnings {
		got = append(got, strings.ReplaceAll(w.Error(), filepath.Dir(paths[0])+"/", ""))
	}
	want := []string{
		`jobs.tab:1: ` + jobsfileMailto(t),
		"jobs.tab:3: CRON_TZ=Europe/Berlin above is the zone of crontab lines; this every line's schedule is in the local zone: give it --tz Europe/Berlin, or set EVERY_TZ=Europe/Berlin above it",
		`more.tab:1: ` + jobsfileMailto(t),
	}
	if !slices.Equal(got, want) {
		t.Errorf("warnings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// jobsfileMailto is the warning of a MAILTO line, as jobsfile words it.
func jobsfileMailto(t *testing.T) string {
	t.Helper()
	read, err := jobsfile.Parse("x", []byte("MAILTO=x\n"), jobsfile.Config{})
	if err != nil || len(read.Warnings) != 1 {
		t.Fatalf("no MAILTO warning: %v", err)
	}
	return read.Warnings[0].Err.Error()
}

func TestCheckJobs(t *testing.T) {
	clearEveryEnv(t)
	t.Setenv("TZ", "UTC")
	paths := jobsDir(t, "jobs.tab", `every 90s --name sync -- ./sync.sh --full 'a b'
every 1h --delay 5m --name later -- ./later
every '0 * * * *' --delay 90m --name delayed -- ./delayed
CRON_TZ=America/New_York
30 2 * * *  curl -fsS https://hc-ping.com/0f2c5a7e-6d61-4c6f-9a6a-2f3d4c5b6a7e?x=1	# tab
@reboot     ./warm
MAILTO=root
`)
	from := time.Date(2026, 3, 7, 12, 0, 0, 0, time.UTC)
	var out, errs bytes.Buffer
	if code := CheckJobs(JobsSettings{Check: true, Paths: paths, from: from}, &out, &errs); code != 0 {
		t.Fatalf("CheckJobs = %d; stderr:\n%s", code, errs.String())
	}
	curl := jobfiles.CronName("curl", "30 2 * * *", "curl -fsS https://hc-ping.com/0f2c5a7e-6d61-4c6f-9a6a-2f3d4c5b6a7e?x=1\t# tab")
	warm := jobfiles.CronName("./warm", "@reboot", "./warm")
	dir := filepath.Dir(paths[0])
	// 02:30 does not exist on 2026-03-08 in New York: 03:00, as for every next.
	want := strings.Join([]string{
		"NAME  SCHEDULE  NEXT  WHERE  COMMAND",
		"sync  90s  at start  jobs.tab:1  ./sync.sh --full 'a b'",
		"later  1h  at start+5m  jobs.tab:2  ./later",
		// A calendar's first slot after the delay, as a fresh start waits.
		"delayed  0 * * * *  2026-03-07T14:00:00Z  jobs.tab:3  ./delayed",
		curl + "  CRON_TZ=America/New_York 30 2 * * *  2026-03-08T03:00:00-04:00  jobs.tab:5  curl -fsS https://hc-ping.com/…?x=…\\t# tab",
		warm + "  @reboot  at start  jobs.tab:6  ./warm",
	}, "\n") + "\n"
	got := regexp.MustCompile(` {2,}`).ReplaceAllString(strings.ReplaceAll(out.String(), dir+"/", ""), "  ")
	if got != want {
		t.Errorf("listing:\n%s\nwant:\n%s", got, want)
	}
	if e := errs.String(); !strings.HasPrefix(e, "every: "+paths[0]+":7: warning: MAILTO is not read") || strings.Count(e, "\n") != 1 {
		t.Errorf("stderr %q, want the MAILTO warning", e)
	}

	// Bad lines: all of them on stderr, nothing listed, exit 2.
	bad := jobsDir(t, "bad.tab", "every 90s --retries x -- ./a\n*/10 * * * * * ./b\nevery 1h -- ./c\n")
	out.Reset()
	errs.Reset()
	if code := CheckJobs(JobsSettings{Check: true, Paths: bad, from: from}, &out, &errs); code != 2 {
		t.Errorf("CheckJobs of bad lines = %d, want 2", code)
	}
	lines := strings.Split(strings.TrimSuffix(errs.String(), "\n"), "\n")
	if out.Len() != 0 || len(lines) != 2 || !strings.HasPrefix(lines[0], "every: "+bad[0]+`:1: bad --retries "x"`) || !strings.HasPrefix(lines[1], "every: "+bad[0]+":2: 6 time fields") {
		t.Errorf("stdout %q, stderr:\n%s", out.String(), errs.String())
	}
}

func TestParseJobs(t *testing.T) {
	tests := []struct {
		args  []string
		check bool
		paths []string
		err   string
	}{
		{args: []string{"jobs", "--check", "a.tab", "d"}, check: true, paths: []string{"a.tab", "d"}},
		{args: []string{"jobs", "a.tab", "--check"}, check: true, paths: []string{"a.tab"}},
		{args: []string{"jobs", "--check", "--", "--odd.tab"}, check: true, paths: []string{"--odd.tab"}},
		{args: []string{"jobs", "a.tab"}, paths: []string{"a.tab"}},
		{args: []string{"jobs", "--check", "--from", "2026-03-08T00:00:00Z", "a.tab"}, check: true, paths: []string{"a.tab"}},
		{args: []string{"jobs", "--check"}, err: "every jobs needs a file of jobs, or a directory of *.tab files; try: every jobs --check jobs.tab"},
		{args: []string{"jobs", "--from", "2026-03-08T00:00:00Z", "a.tab"}, err: `bad --from "2026-03-08T00:00:00Z": it is for --check; give --check too`},
		{args: []string{"jobs", "--check", "--from", "soon", "a.tab"}, err: `bad --from "soon": give a time in RFC 3339`},
		{args: []string{"jobs", "--chek", "a.tab"}, err: "unknown option --chek; see every jobs --help"},
	}
	for _, tt := range tests {
		req, err := Parse(tt.args, io.Discard, io.Discard)
		switch {
		case tt.err != "":
			if err == nil || !strings.HasPrefix(err.Error(), tt.err) {
				t.Errorf("Parse(%q): %v, want an error %q", tt.args, err, tt.err)
			}
		case err != nil:
			t.Errorf("Parse(%q): %v", tt.args, err)
		case req.Jobs == nil || req.Jobs.Check != tt.check || !slices.Equal(req.Jobs.Paths, tt.paths) || req.Run != nil:
			t.Errorf("Parse(%q) = %+v, want check %v of %q", tt.args, req.Jobs, tt.check, tt.paths)
		}
	}
	if h := help(t, "jobs", "--help"); !strings.Contains(h, "every jobs --check [--from TIME] FILE|DIR...") || !strings.Contains(h, "--check") {
		t.Errorf("every jobs --help:\n%s", h)
	}
	if h := help(t, "help", "jobs"); !strings.Contains(h, "every jobs --check") {
		t.Errorf("every help jobs:\n%s", h)
	}
	// A standalone every has no start of its own for @reboot.
	_, err := Parse([]string{"@reboot", "--", "true"}, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), `bad schedule "@reboot": it runs a job once when every jobs starts, so it is for a jobs file`) {
		t.Errorf("every @reboot: %v", err)
	}
}
