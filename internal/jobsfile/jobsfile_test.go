package jobsfile

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"syscall"
	"testing"
)

// testConfig is the world of the tests: the options are a few of every's,
// the users root and backup, and the commands on any PATH are those in
// commands, plus backup on /opt/bin.
var testConfig = Config{
	IsOption: func(o string) bool {
		return slices.Contains([]string{"timeout", "retry-on", "jitter", "align", "no-lock"}, o)
	},
	IsUser: func(name string) bool { return name == "root" || name == "backup" || name == "www-data" },
	IsCommand: func(name, path string) bool {
		return slices.Contains([]string{"ls", "echo", "run-parts"}, name) || name == "backup" && strings.Contains(path, "/opt/bin")
	},
	Path: "/usr/bin:/bin",
}

// parsed is an entry as the tests write it: where, and what.
type parsed struct {
	line  int
	every []string
	cron  *Cron
	env   []string
	defs  []string // OPTION=VALUE@LINE
	zone  string
}

// got is an entry as the tests compare it.
func got(e Entry) parsed {
	p := parsed{line: e.Line, every: e.Every, cron: e.Cron, env: e.Env, zone: e.Zone}
	for _, d := range e.Defaults {
		p.defs = append(p.defs, fmt.Sprintf("%s=%s@%d", d.Option, d.Value, d.Line))
	}
	return p
}

// cron is a crontab line's Cron as Parse makes it, name aside.
func cron(sched string, fields int, command string) *Cron {
	return &Cron{Schedule: sched, Fields: fields, Command: command, Shell: DefaultShell, Reboot: sched == "@reboot"}
}

func TestParse(t *testing.T) {
	tests := []struct {
		name     string
		file     string
		want     []parsed
		errs     []string // "LINE: a part of the message"
		warnings []string
		defaults []string // all of them, OPTION=VALUE@LINE
	}{
		{
			name: "comments and blank lines",
			file: "# a comment\n\n   \t\n  # an indented one\n",
		},
		{
			name: "an every line",
			file: "every 90s --retries 5 --name sync -- ./sync.sh --full\n",
			want: []parsed{{line: 1, every: []string{"90s", "--retries", "5", "--name", "sync", "--", "./sync.sh", "--full"}}},
		},
		{
			name: "an every line, quoted as sh quotes, indented, with a comment",
			file: "\n  every '0 3 * * *' --tz \"Europe/Berlin\" -- /usr/local/bin/backup a\\ b # nightly\n",
			want: []parsed{{line: 2, every: []string{"0 3 * * *", "--tz", "Europe/Berlin", "--", "/usr/local/bin/backup", "a b"}}},
		},
		{
			name: "a crontab line of 5 fields",
			file: "*/5 * * * *  flock -n /tmp/x.lock   echo 'a  b' % c%d  \n",
			want: []parsed{{line: 1, cron: cron("*/5 * * * *", 5, "flock -n /tmp/x.lock   echo 'a  b' % c%d")}},
		},
		{
			name: "tabs between the fields",
			file: "17\t*\t* * *\tls -l\n",
			want: []parsed{{line: 1, cron: cron("17 * * * *", 5, "ls -l")}},
		},
		{
			name: "7 fields: seconds first, a year last",
			file: "*/2 * * * * * * ls 2>/dev/null\n0 30 2 * * * 2030 echo once\n",
			want: []parsed{
				{line: 1, cron: cron("*/2 * * * * * *", 7, "ls 2>/dev/null")},
				{line: 2, cron: cron("0 30 2 * * * 2030", 7, "echo once")},
			},
		},
		{
			name: "cronexpr's terms in 5 fields",
			file: "0 0 L * * echo last\n0 9 ? * 5#2 echo second-friday\n",
			want: []parsed{
				{line: 1, cron: cron("0 0 L * *", 5, "echo last")},
				{line: 2, cron: cron("0 9 ? * 5#2", 5, "echo second-friday")},
			},
		},
		{
			name: "nicknames",
			file: "@daily echo a\n@HOURLY echo b\n@every 90s echo c\n@reboot echo d\n@midnight echo e\n",
			want: []parsed{
				{line: 1, cron: cron("@daily", 1, "echo a")},
				{line: 2, cron: cron("@hourly", 1, "echo b")},
				{line: 3, cron: cron("@every 90s", 2, "echo c")},
				{line: 4, cron: cron("@reboot", 1, "echo d")},
				{line: 5, cron: cron("@midnight", 1, "echo e")},
			},
		},
		{
			name: "6 fields, refused with both readings and the fixes",
			file: "*/10 * * * * * echo tick\n",
			errs: []string{`1: 6 time fields ("*/10 * * * * *")`, `1: supercronic takes the sixth for a year ("0 */10 * * * * *" as 7 fields)`,
				`1: take the first for seconds ("*/10 * * * * * *" as 7 fields)`, `1: or the 5 of POSIX cron ("*/10 * * * *")`, `1: every '*/10 * * * * *' -- CMD`},
		},
		{
			name: "6 fields, Quartz's: supercronic would run the sixth as the command",
			file: "0 0 9 * * MON-FRI /app/report.sh\n",
			errs: []string{`1: 6 time fields ("0 0 9 * * MON-FRI")`, `1: "MON-FRI" being none, reads 5 fields and runs "MON-FRI /app/report.sh"`,
				`1: ("0 0 9 * * MON-FRI *" as 7 fields)`, `1: every '0 0 9 * * MON-FRI' -- CMD`},
		},
		{
			name: "6 fields, the sixth cronexpr's term",
			file: "0 0 1 * * 6L /x\n",
			errs: []string{`1: 6 time fields ("0 0 1 * * 6L")`, `1: runs "6L /x"`},
		},
		{
			name: "6 fields and no reading at all",
			file: "99 * * * * * x\n",
			errs: []string{`1: 6 time fields`, `1: supercronic takes the sixth for a year (and finds no schedule: cron "0 99 * * * * *": minute: 99 is out of range`,
				`1: take the first for seconds (and find no schedule: cron "99 * * * * *": second: 99 is out of range 0-59); say which: write 7 fields, seconds first and a year last, or an every line`},
		},
		{
			name: "7 words of field shape that make no schedule are 6 fields",
			file: "0 0 9 * * MON-FRI 5 x\n",
			errs: []string{`1: 6 time fields ("0 0 9 * * MON-FRI")`},
		},
		{
			name: "cronie's random values, with the fix",
			file: "6~15 2 * * * x\n0 ~ * * * y\n",
			errs: []string{`1: cron "6~15 2 * * *": minute: "6~15" is cronie's random value`, `1: write a fixed minute, 6, and add --jitter 9m`, "1: above a crontab line, --jitter is an EVERY_JITTER=D line",
				`2: "~" is cronie's random value`},
		},
		{
			name: "the user column of /etc/crontab",
			file: "17 *\t* * *\troot    cd / && run-parts --report /etc/cron.hourly\n@daily www-data php /x.php\n",
			errs: []string{`1: "root" looks like /etc/crontab's user column; every jobs runs every job as its own user: drop it`, `2: "www-data" looks like /etc/crontab's user column`},
		},
		{
			name: "a user name that is a command on the file's PATH is the command",
			file: "PATH=/opt/bin:/usr/bin\n@daily backup --all\n",
			want: []parsed{{line: 2, cron: cron("@daily", 1, "backup --all"), env: []string{"PATH=/opt/bin:/usr/bin"}}},
		},
		{
			name: "...and not on every's own",
			file: "@daily backup --all\n",
			errs: []string{`1: "backup" looks like /etc/crontab's user column`},
		},
		{
			name: "lines that are no job",
			file: "oops\n* * * cmd\n*/5 * * * *\n@every\n@every 90s\n@sometimes x\n@daily\nevery\nevery 90s\n0 0 30 2 * x\n",
			// every 90s is a line for internal/cli to say has no command.
			want: []parsed{{line: 9, every: []string{"90s"}}},
			errs: []string{"1: not a job: a line is an every command line", `2: 3 time fields ("* * *"): a crontab line has 5`, `3: no command after the 5 time fields "*/5 * * * *"`,
				"4: @every needs a duration", `5: no command after "@every 90s"`, `6: "@sometimes" is no nickname: use @reboot, @yearly`, `7: no command after "@daily"`,
				"8: every with no schedule or command", `10: cron "0 0 30 2 *": day-of-month: never fires`},
		},
		{
			name: "environment lines apply below them, the last value of a name",
			file: "A=1\n@daily echo x\nB = 'two words'\nA=3\nevery 1h -- y\n",
			want: []parsed{
				{line: 2, cron: cron("@daily", 1, "echo x"), env: []string{"A=1"}},
				{line: 5, every: []string{"1h", "--", "y"}, env: []string{"B=two words", "A=3"}},
			},
		},
		{
			name: "SHELL runs the cron lines below it",
			file: "@daily echo a\nSHELL=/bin/bash\n@daily echo b\nSHELL=\n@daily echo c\n",
			want: []parsed{
				{line: 1, cron: cron("@daily", 1, "echo a")},
				{line: 3, cron: &Cron{Schedule: "@daily", Fields: 1, Command: "echo b", Shell: "/bin/bash"}, env: []string{"SHELL=/bin/bash"}},
				{line: 5, cron: cron("@daily", 1, "echo c"), env: []string{"SHELL="}},
			},
		},
		{
			name:     "EVERY_ lines set the options' defaults below them",
			file:     "EVERY_TIMEOUT=60s\n@daily a\nEVERY_RETRY_ON = '75,100-110'\nEVERY_TIMEOUT=2h\nevery 1h -- b\nEVERY_TIMEOUT=\n@daily c\n",
			defaults: []string{"timeout=60s@1", "retry-on=75,100-110@3", "timeout=2h@4"},
			want: []parsed{
				{line: 2, cron: cron("@daily", 1, "a"), defs: []string{"timeout=60s@1"}},
				{line: 5, every: []string{"1h", "--", "b"}, defs: []string{"retry-on=75,100-110@3", "timeout=2h@4"}},
				{line: 7, cron: cron("@daily", 1, "c"), defs: []string{"retry-on=75,100-110@3"}},
			},
		},
		{
			name: "EVERY_ lines that set no option",
			file: "EVERY_TIMEOTU=60s\nEVERY_NAME=x\nEVERY_timeout=1s\nEVERY_RUN=1\n@daily a\n",
			want: []parsed{{line: 5, cron: cron("@daily", 1, "a")}},
			errs: []string{"1: EVERY_TIMEOTU is no option of a job", "2: EVERY_NAME is no default: each job has a name of its own",
				"3: EVERY_timeout is no option of a job", "4: EVERY_RUN is no option of a job"},
		},
		{
			name: "CRON_TZ is per section, as cronie's",
			file: "@daily a\nCRON_TZ=Europe/Warsaw\n* * * * * b\nCRON_TZ = 'UTC'\n* * * * * c\nevery 1h -- d\nCRON_TZ=\n* * * * * e\n",
			want: []parsed{
				{line: 1, cron: cron("@daily", 1, "a")},
				{line: 3, cron: cron("* * * * *", 5, "b"), zone: "Europe/Warsaw"},
				{line: 5, cron: cron("* * * * *", 5, "c"), zone: "UTC"},
				{line: 6, every: []string{"1h", "--", "d"}, zone: "UTC"},
				{line: 8, cron: cron("* * * * *", 5, "e")},
			},
		},
		{
			name: "an unknown zone",
			file: "CRON_TZ=Mars/Olympus\n* * * * * b\nCRON_TZ=Europe/Berlin 0 2 * * * x\n",
			want: []parsed{{line: 2, cron: cron("* * * * *", 5, "b")}},
			errs: []string{`1: CRON_TZ=Mars/Olympus: zone "Mars/Olympus" is not an IANA zone name`, `3: CRON_TZ=Europe/Berlin 0 2 * * * x: zone`},
		},
		{
			name: "MAILTO: one warning a file, none for MAILTO=\"\"",
			file: "MAILTO=\"\"\n@daily a\nMAILTO=ops@example.com\nMAILTO=root\n@daily b\n",
			want: []parsed{
				{line: 2, cron: cron("@daily", 1, "a")},
				{line: 5, cron: cron("@daily", 1, "b")},
			},
			warnings: []string{"3: MAILTO is not read: every sends no mail", "3: EVERY_ON_FAILURE='mail -s", `3: "$EVERY_OUTPUT"`},
		},
		{
			name: "not quite environment lines",
			file: "A=\"x\" # a comment\nB='y\n",
			errs: []string{"1: not a NAME=value line as cron reads it: a quoted value must end the line", "2: not a NAME=value line as cron reads it: its value's quote is never closed"},
		},
		{
			name: "bad every lines",
			file: "every 1h -- echo $HOME\n\t  every 1h -- 'x\nevery 1h -- a \\\nevery 0 3 * * * ./g\nevery */10 * * * * * x\nevery 0 0 1 1 * 2030 x\nevery CRON_TZ=UTC 0 3 * * * -- x\n",
			errs: []string{`1: "$" would be expanded by a shell`, "2: a single quote at column 16 is never closed", "3: the line ends with a backslash",
				"4: bad schedule: a cron expression is one argument; quote it: every '0 3 * * *' -- CMD", "5: quote it: every '*/10 * * * * *' -- CMD",
				"6: quote it: every '0 0 1 1 *' -- CMD", "7: quote it: every 'CRON_TZ=UTC 0 3 * * *' -- CMD"},
		},
		{
			name: "a CRLF file, and a last line with no newline",
			file: "A=1\r\n@daily a\r\n@daily b",
			want: []parsed{
				{line: 2, cron: cron("@daily", 1, "a"), env: []string{"A=1"}},
				{line: 3, cron: cron("@daily", 1, "b"), env: []string{"A=1"}},
			},
		},
		{
			name: "a NUL byte",
			file: "@daily a\x00b\n",
			errs: []string{"1: a NUL byte: a jobs file is text"},
		},
		{
			name: "all the errors, each at its line, and the good lines",
			file: "@daily ok\nbad one\n\n* * * * * * six\n@daily ok2\nEVERY_NOPE=1\n",
			want: []parsed{{line: 1, cron: cron("@daily", 1, "ok")}, {line: 5, cron: cron("@daily", 1, "ok2")}},
			errs: []string{"2: not a job", "4: 6 time fields", "6: EVERY_NOPE is no option"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			file, err := Parse("jobs.tab", []byte(tt.file), testConfig)
			entries, warnings := file.Entries, file.Warnings
			var gotEntries []parsed
			for _, e := range entries {
				if e.File != "jobs.tab" {
					t.Errorf("line %d: File %q, want jobs.tab", e.Line, e.File)
				}
				if e.Cron != nil {
					if e.Cron.Name == "" {
						t.Errorf("line %d: no name", e.Line)
					}
					c := *e.Cron
					c.Name = ""
					e.Cron = &c
				}
				gotEntries = append(gotEntries, got(e))
			}
			if !reflect.DeepEqual(gotEntries, tt.want) {
				t.Errorf("entries:\n%s\nwant:\n%s", show(gotEntries), show(tt.want))
			}
			var errs Errors
			if err != nil && !errors.As(err, &errs) {
				t.Fatalf("error %v is not Errors", err)
			}
			var defaults []string
			for _, d := range file.Defaults {
				defaults = append(defaults, fmt.Sprintf("%s=%s@%d", d.Option, d.Value, d.Line))
				if d.File != "jobs.tab" {
					t.Errorf("default of line %d: File %q", d.Line, d.File)
				}
			}
			if !slices.Equal(defaults, tt.defaults) {
				t.Errorf("defaults %q, want %q", defaults, tt.defaults)
			}
			checkMessages(t, "error", errs, tt.errs)
			checkMessages(t, "warning", warnings, tt.warnings)
		})
	}
}

// show writes entries one a line, for a test's message.
func show(ps []parsed) string {
	var b strings.Builder
	for _, p := range ps {
		fmt.Fprintf(&b, "  %d every=%q env=%q defs=%q zone=%q", p.line, p.every, p.env, p.defs, p.zone)
		if p.cron != nil {
			fmt.Fprintf(&b, " cron=%+v", *p.cron)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// checkMessages checks that each of want ("LINE: part") is a part of an
// error of that line of jobs.tab, and that each error's line has one.
func checkMessages(t *testing.T, kind string, errs []*LineError, want []string) {
	t.Helper()
	lines := map[int]bool{}
	for _, w := range want {
		n, part, _ := strings.Cut(w, ": ")
		found := false
		for _, e := range errs {
			if fmt.Sprint(e.Line) == n && strings.Contains(e.Error(), part) {
				found = true
				if !strings.HasPrefix(e.Error(), "jobs.tab:"+n+": ") {
					t.Errorf("%s %q does not start with jobs.tab:%s: ", kind, e, n)
				}
			}
		}
		if !found {
			t.Errorf("no %s of line %s with %q; got:\n%v", kind, n, part, Errors(errs))
		}
		lines[atoi(n)] = true
	}
	for _, e := range errs {
		if !lines[e.Line] {
			t.Errorf("unexpected %s: %v", kind, e)
		}
	}
}

func atoi(s string) int {
	n := 0
	fmt.Sscan(s, &n)
	return n
}

// TestCronNames checks the default names of crontab lines: the command's
// first word and a hash of the schedule and command, so that one command
// on two schedules is two jobs (the every-90-minutes idiom).
func TestCronNames(t *testing.T) {
	file := "0 0-21/3 * * * cmd\n30 1-22/3 * * * cmd\n17 *\t* * *  cd / && run-parts --report /etc/cron.hourly\nCRON_TZ=UTC\n17 * * * * cd / && run-parts --report /etc/cron.hourly\n"
	read, err := Parse("jobs.tab", []byte(file), testConfig)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range read.Entries {
		names = append(names, e.Cron.Name)
	}
	// The hashes are jobfiles.CronName's (its test has them by sha256sum);
	// blanks between the fields are not the schedule's, and a zone is not
	// the job's name: a job moved to another zone is the same job.
	want := []string{"cmd-f9d140cb", "cmd-cb9c93c0", "cd-12f8dd44", "cd-12f8dd44"}
	if !slices.Equal(names, want) {
		t.Errorf("names %q, want %q", names, want)
	}
}

func TestRead(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write("d/b.tab", "@daily b\n")
	write("d/a.tab", "@daily a\n")
	write("d/c.txt", "not read\n")
	write("d/.hidden.tab", "not read\n")
	write("d/sub.tab/x.tab", "not read: a directory\n")
	write("data/e.tab", "@daily e\n")
	// A ConfigMap's mount: each file a link into ..data, itself a link.
	if err := os.Symlink("../data/e.tab", filepath.Join(dir, "d", "e.tab")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../data", filepath.Join(dir, "d", "linked.tab")); err != nil {
		t.Fatal(err)
	}
	single := write("single", "MAILTO=x\n@daily s\n")

	read, err := Read([]string{filepath.Join(dir, "d"), single}, testConfig)
	if err != nil {
		t.Fatal(err)
	}
	var where []string
	for _, e := range read.Entries {
		where = append(where, fmt.Sprintf("%s:%d %s", strings.TrimPrefix(e.File, dir+"/"), e.Line, e.Cron.Command))
	}
	if want := []string{"d/a.tab:1 a", "d/b.tab:1 b", "d/e.tab:1 e", "single:2 s"}; !slices.Equal(where, want) {
		t.Errorf("read %q, want %q", where, want)
	}
	if len(read.Warnings) != 1 || read.Warnings[0].File != single || read.Warnings[0].Line != 1 {
		t.Errorf("warnings %v, want the MAILTO of %s:1", read.Warnings, single)
	}

	// Each path that cannot be read is an error naming it, and the good
	// files are read all the same.
	write("empty/x.conf", "")
	if err := os.Symlink("nowhere", filepath.Join(dir, "d", "dangling.tab")); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	bad := write("bad.tab", "@daily ok\noops\n")
	read, err = Read([]string{filepath.Join(dir, "missing"), filepath.Join(dir, "empty"), filepath.Join(dir, "d"), fifo, bad}, testConfig)
	var errs Errors
	if !errors.As(err, &errs) {
		t.Fatalf("Read: %v, want Errors", err)
	}
	var msgs []string
	for _, e := range errs {
		msgs = append(msgs, strings.ReplaceAll(e.Error(), dir+"/", ""))
	}
	want := []string{
		"missing: no such file or directory",
		"empty: a directory with no *.tab file: put the jobs in files named *.tab, or name the file itself",
		"d/dangling.tab: no such file or directory",
		"fifo: is a FIFO, not a regular file",
		"bad.tab:2: not a job: a line is an every command line (every 90s -- CMD), a crontab line (*/5 * * * * CMD), NAME=value, or a # comment",
	}
	if !slices.Equal(msgs, want) {
		t.Errorf("errors:\n%s\nwant:\n%s", strings.Join(msgs, "\n"), strings.Join(want, "\n"))
	}
	if n := len(read.Entries); n != 4 {
		t.Errorf("%d entries of the good lines, want 4 (d's three, bad.tab's first)", n)
	}
	wantNames := []string{"missing", "empty", "d/a.tab", "d/b.tab", "d/dangling.tab", "d/e.tab", "fifo", "bad.tab"}
	var names []string
	for _, n := range read.Names {
		names = append(names, strings.TrimPrefix(n, dir+"/"))
	}
	if !slices.Equal(names, wantNames) {
		t.Errorf("names %q, want %q", names, wantNames)
	}

	if os.Geteuid() != 0 {
		unreadable := write("unreadable.tab", "@daily x\n")
		if err := os.Chmod(unreadable, 0); err != nil {
			t.Fatal(err)
		}
		_, err := Read([]string{unreadable}, testConfig)
		if err == nil || !strings.Contains(err.Error(), "unreadable.tab: permission denied") {
			t.Errorf("an unreadable file: %v", err)
		}
	}
}
