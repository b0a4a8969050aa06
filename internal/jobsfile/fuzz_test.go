package jobsfile

import (
	"errors"
	"strings"
	"testing"
)

// FuzzParse checks that any file parses without a panic, and that every
// error, warning and job names a line of the file, each error once and
// with a message.
func FuzzParse(f *testing.F) {
	for _, seed := range []string{
		"",
		"every 90s --retries 5 -- ./sync.sh --full\n",
		"*/5 * * * * echo 'a b' % c\n",
		"*/10 * * * * * six\n0 0 9 * * MON-FRI /x\n*/2 * * * * * * ls\n",
		"CRON_TZ=Europe/Berlin\n@daily a\nCRON_TZ=\n@reboot b\n@every 90s c\n",
		"MAILTO=root\nSHELL=/bin/bash\nPATH=/bin\nEVERY_TIMEOUT=60s\nEVERY_NAME=x\nA=\"b c\"\n17 * * * * root run-parts x\n",
		"6~15 2 * * * x\nevery 1h -- echo $HOME\nevery 1h -- 'x\nA=\"x\" y\n\x00\n",
		"every '0 3 * * *' --tz \"Europe/Berlin\" -- a\\ b # c\r\n\t\n# x\nevery\n",
		"@sometimes x\n* * *\n0 0 30 2 * x\n@every\nevery \\",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		lines := strings.Count(string(data), "\n")
		if len(data) > 0 && data[len(data)-1] != '\n' {
			lines++
		}
		file, err := Parse("f.tab", data, testConfig)
		entries, warnings := file.Entries, file.Warnings
		var errs Errors
		if err != nil && !errors.As(err, &errs) {
			t.Fatalf("error %v is not Errors", err)
		}
		if err != nil && len(errs) == 0 {
			t.Fatal("an error with no line")
		}
		seen := map[int]bool{}
		for _, e := range errs {
			if e.File != "f.tab" || e.Line < 1 || e.Line > lines {
				t.Errorf("error at %s:%d, outside the file's %d lines: %v", e.File, e.Line, lines, e)
			}
			if seen[e.Line] {
				t.Errorf("two errors at line %d", e.Line)
			}
			seen[e.Line] = true
			if e.Err == nil || e.Err.Error() == "" {
				t.Errorf("line %d: an error with no message", e.Line)
			}
		}
		for _, d := range file.Defaults {
			if d.File != "f.tab" || d.Line < 1 || d.Line > lines || seen[d.Line] {
				t.Errorf("a default at line %d, outside the file's %d lines or at a bad one", d.Line, lines)
			}
		}
		for _, w := range warnings {
			if w.Line < 1 || w.Line > lines {
				t.Errorf("warning at line %d, outside the file's %d lines", w.Line, lines)
			}
		}
		for _, e := range entries {
			switch {
			case e.Line < 1 || e.Line > lines || seen[e.Line]:
				t.Errorf("a job at line %d, outside the file's %d lines or at a bad one", e.Line, lines)
			case (e.Every == nil) == (e.Cron == nil):
				t.Errorf("line %d: a job that is both or neither an every line and a crontab line", e.Line)
			case e.Every != nil && len(e.Every) == 0:
				t.Errorf("line %d: an every line with no word", e.Line)
			case e.Cron != nil && (e.Cron.Command == "" || e.Cron.Name == "" || e.Cron.Shell == ""):
				t.Errorf("line %d: a crontab line with no command, name or shell: %+v", e.Line, *e.Cron)
			}
		}
	})
}
