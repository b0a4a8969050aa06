package jobsfile

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aptible/supercronic/crontab"

	"github.com/everycli/every/schedule"
)

// This file reads crontabs from the wild (testdata/wild, whose README says
// where each comes from) as every jobs reads them, and shows each line to
// read as supercronic reads it, with its own parser as the oracle: the same
// command, shell and next slots; or, where every reads it otherwise, why
// (wildDiffers): cron's reading where cronexpr's differs, or a refusal of
// docs/GUIDE.md ("Many jobs: every jobs").

var update = flag.Bool("update", false, "rewrite testdata/wild/*.want from what every reads")

// wildFrom is the instant the next slots are counted from: a Saturday, the
// day before the United States' clocks spring forward.
var wildFrom = time.Date(2026, 3, 7, 12, 0, 0, 0, time.UTC)

// wildSlots is how many next slots are compared and shown.
const wildSlots = 4

// wildConfig is the world the files are read in: the users of a system
// crontab's column, and no command of theirs on PATH.
var wildConfig = Config{
	IsOption:  func(string) bool { return false },
	IsUser:    func(name string) bool { return slices.Contains([]string{"root", "paul", "joe"}, name) },
	IsCommand: func(string, string) bool { return false },
	Path:      "/usr/bin:/bin",
}

// wildDiffers are the lines (FILE:LINE) that every reads otherwise than
// supercronic, and why. A line that reads the same must not be here; one
// that reads otherwise must be.
var wildDiffers = map[string]string{
	"supercronic-crontab-test.tab:8":  "SHELL per section, as cronie: /bin/sh above SHELL=some; supercronic's is the file's last, some",
	"supercronic-crontab-test.tab:9":  "SHELL per section, as cronie: /bin/sh above SHELL=some; supercronic's is the file's last, some",
	"supercronic-crontab-test.tab:13": "6 fields, refused: supercronic takes the sixth for a year (the message's \"0 * * * * * *\" as 7 fields)",
	"supercronic-crontab-test.tab:23": "FOO=' is no setting to cron (its quote is never closed), and refused; supercronic takes it for FOO=\"'\"",

	"supercronic-issues.tab:5": "*/60 minutes: cron (cronie) takes it, minute 0 of each hour; supercronic refuses it (its #92)",
	"supercronic-issues.tab:7": "*/60 minutes: cron (cronie) takes it, minute 0 of hours 8 to 21; supercronic refuses it (its #39)",
	"supercronic-issues.tab:9": "CRON_TZ per section, as cronie: this line is above any, in the local zone; supercronic's is the file's last, America/Chicago, for the lines above it too (its #80)",

	"cronie-crontab5.tab:20": "the user column of /etc/cron.d, refused; supercronic runs the command \"root\"",

	"cronie-contrib.tab:7":  "the user column of /etc/crontab, refused; supercronic runs the command \"root\"",
	"cronie-contrib.tab:14": "the user column, refused; supercronic runs the command \"root\"",
	"cronie-contrib.tab:15": "the user column, refused; supercronic runs the command \"root\"",
	"cronie-contrib.tab:16": "the user column, refused; supercronic runs the command \"root\"",

	"debian-crontab.tab:18": "the user column of /etc/crontab, refused; supercronic runs the command \"root\"",
	"debian-crontab.tab:19": "the user column, refused; supercronic runs the command \"root\"",
	"debian-crontab.tab:20": "the user column, refused; supercronic runs the command \"root\"",
	"debian-crontab.tab:21": "the user column, refused; supercronic runs the command \"root\"",
}

// wildNotCron are the lines that cron (cronie) reads otherwise than every
// by design, and why: a '%' in the command, which cronie makes a newline
// and the command's stdin after the first, and every, as supercronic,
// passes to the shell as it is (docs/GUIDE.md, Many jobs: every jobs). Every
// job line with a '%' must be here.
var wildNotCron = map[string]string{
	"cronie-crontab5.tab:14": "cronie mails joe the text after the first %, as lines; every runs the line as it is",
}

// wildCron are cron's (cronie's) next slots of lines supercronic does not
// read as cron does, worked out by hand from crontab(5).
var wildCron = map[string][]string{
	// */60 in minutes is 0 (a step's values start at the range's first).
	"supercronic-issues.tab:5": {"2026-03-07T13:00:00Z", "2026-03-07T14:00:00Z", "2026-03-07T15:00:00Z", "2026-03-07T16:00:00Z"},
	"supercronic-issues.tab:7": {"2026-03-07T13:00:00Z", "2026-03-07T14:00:00Z", "2026-03-07T15:00:00Z", "2026-03-07T16:00:00Z"},
	// Above any CRON_TZ: the local zone's 07:00 (the tests' local zone is
	// UTC); supercronic's is Chicago's, below.
	"supercronic-issues.tab:9": {"2026-03-08T07:00:00Z", "2026-03-09T07:00:00Z", "2026-03-10T07:00:00Z", "2026-03-11T07:00:00Z"},
}

// scLine is what supercronic reads of a line.
type scLine struct {
	job   *crontab.Job
	shell string
	zone  *time.Location
	err   error
}

// supercronicReads reads file as supercronic does: each line on its own
// (its parser stops at the first bad line), and the settings it takes for
// all of them from the file less its bad lines (supercronic's environment,
// shell and zone are the file's last).
func supercronicReads(t *testing.T, text string) map[int]scLine {
	t.Helper()
	lines := strings.Split(text, "\n")
	var good []string
	per := map[int]scLine{}
	for i, l := range lines {
		c, err := crontab.ParseCrontab(strings.NewReader(l + "\n"))
		if err != nil {
			per[i+1] = scLine{err: err}
			continue
		}
		good = append(good, l)
		if len(c.Jobs) == 1 {
			per[i+1] = scLine{job: c.Jobs[0]}
		}
	}
	whole, err := crontab.ParseCrontab(strings.NewReader(strings.Join(good, "\n")))
	if err != nil {
		t.Fatalf("supercronic reads the file's good lines together: %v", err)
	}
	for n, l := range per {
		if l.job != nil {
			l.shell, l.zone = whole.Context.Shell, whole.Context.Timezone
			if l.zone == time.Local {
				l.zone = time.UTC // the tests' local zone
			}
			per[n] = l
		}
	}
	return per
}

// slots are the next wildSlots slots of next after wildFrom, asked in loc.
func slots(next func(time.Time) time.Time, loc *time.Location) []time.Time {
	var out []time.Time
	t := wildFrom
	for range wildSlots {
		t = next(t.In(loc))
		out = append(out, t)
	}
	return out
}

// sameInstants reports whether a and b are the same instants.
func sameInstants(a, b []time.Time) bool {
	return slices.EqualFunc(a, b, time.Time.Equal)
}

// formatted are times in RFC 3339, in loc.
func formatted(ts []time.Time, loc *time.Location) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.In(loc).Format(time.RFC3339)
	}
	return out
}

// ourSlots are the next slots of a crontab line, as every reads it: in its
// section's zone, else in the tests' local zone, UTC.
func ourSlots(t *testing.T, e Entry) ([]time.Time, *time.Location) {
	t.Helper()
	loc := time.UTC
	if e.Zone != "" {
		var err error
		if loc, err = schedule.LoadZone(e.Zone); err != nil {
			t.Fatal(err)
		}
	}
	s, err := schedule.Parse(e.Cron.Schedule, schedule.Options{Zone: loc})
	if err != nil {
		t.Fatalf("line %d: %v", e.Line, err)
	}
	return slots(s.Next, loc), loc
}

func TestWildCrontabs(t *testing.T) {
	paths, err := filepath.Glob("testdata/wild/*.tab")
	if err != nil || len(paths) < 7 {
		t.Fatalf("testdata/wild: %d files, %v", len(paths), err)
	}
	seen := map[string]bool{}
	for _, path := range paths {
		t.Run(filepath.Base(path), func(t *testing.T) {
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			name := filepath.Base(path)
			read, err := Parse(name, data, wildConfig)
			errs := map[int]string{}
			if err != nil {
				for _, e := range err.(Errors) {
					errs[e.Line] = e.Err.Error()
				}
			}
			warnings := map[int]string{}
			for _, w := range read.Warnings {
				warnings[w.Line] = w.Err.Error()
			}
			entries := map[int]Entry{}
			for _, e := range read.Entries {
				entries[e.Line] = e
			}
			sc := supercronicReads(t, string(data))

			var report strings.Builder
			for n := 1; n <= strings.Count(string(data), "\n")+1; n++ {
				where := fmt.Sprintf("%s:%d", name, n)
				e, isJob := entries[n]
				s, scJob := sc[n]
				scJob = scJob && s.job != nil
				differs := ""
				switch {
				case isJob:
					got, loc := ourSlots(t, e)
					fmt.Fprintf(&report, "%d job %q zone=%s shell=%s name=%s next=%s command=%q\n", n, e.Cron.Schedule, loc, e.Cron.Shell, e.Cron.Name, strings.Join(formatted(got, loc), ","), e.Cron.Command)
					switch {
					case !scJob:
						differs = "supercronic refuses it: " + fmt.Sprint(s.err)
					case s.job.Command != e.Cron.Command:
						differs = fmt.Sprintf("supercronic's command is %q", s.job.Command)
					case s.shell != e.Cron.Shell:
						differs = fmt.Sprintf("supercronic's shell is %q", s.shell)
					case !sameInstants(slots(s.job.Expression.Next, s.zone), got):
						differs = fmt.Sprintf("supercronic's next slots are %q", formatted(slots(s.job.Expression.Next, s.zone), s.zone))
					}
					if _, listed := wildNotCron[where]; listed != strings.Contains(e.Cron.Command, "%") {
						t.Errorf("%s: a %% in the command is %v, and wildNotCron lists the line: %v", where, !listed, listed)
					}
					if want, ok := wildCron[where]; ok && !slices.Equal(formatted(got, loc), want) {
						t.Errorf("%s: next slots %q, cron's are %q", where, formatted(got, loc), want)
					}
				case errs[n] != "":
					fmt.Fprintf(&report, "%d error %s\n", n, errs[n])
					switch {
					case scJob:
						differs = fmt.Sprintf("supercronic runs %q at %q", s.job.Command, s.job.Schedule)
					case s.err == nil:
						differs = "supercronic takes it for a setting"
					}
				case scJob:
					t.Errorf("%s: supercronic runs %q, every reads no job", where, s.job.Command)
				}
				if warnings[n] != "" {
					fmt.Fprintf(&report, "%d warning %s\n", n, warnings[n])
				}
				why, listed := wildDiffers[where]
				seen[where] = listed
				switch {
				case differs != "" && !listed:
					t.Errorf("%s: every reads it otherwise than supercronic (%s), and wildDiffers does not say why", where, differs)
				case differs == "" && listed:
					t.Errorf("%s: every reads it as supercronic does; wildDiffers says otherwise: %s", where, why)
				}
			}

			want := strings.TrimSuffix(path, ".tab") + ".want"
			if *update {
				if err := os.WriteFile(want, []byte(report.String()), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			golden, err := os.ReadFile(want)
			if err != nil {
				t.Fatalf("%v; write it with go test -run TestWildCrontabs ./internal/jobsfile -update", err)
			}
			if string(golden) != report.String() {
				t.Errorf("every reads %s otherwise than %s says:\n%s", name, want, report.String())
			}
		})
	}
	for where := range wildDiffers {
		if _, ok := seen[where]; !ok {
			t.Errorf("wildDiffers names %s, which no file has", where)
		}
	}
}
