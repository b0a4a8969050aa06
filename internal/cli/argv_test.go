package cli

import (
	"reflect"
	"strings"
	"testing"
)

// TestUnquotedCron pins how a cron expression typed without quotes is
// recognised from the words the shell made of it, '*' as the names of the
// directory included.
func TestUnquotedCron(t *testing.T) {
	dir := []string{"backup.sh", "data.csv", ".hidden"}
	tests := []struct {
		name    string
		args    []string
		names   []string
		want    string // "": not recognised
		globbed bool
	}{
		{name: "empty directory, with --", args: strings.Fields("0 2 * * 0 -- cmd"), want: "0 2 * * 0"},
		{name: "empty directory, no --", args: strings.Fields("0 2 * * 0 cmd -x"), want: "0 2 * * 0"},
		{name: "steps, lists, ranges, names", args: strings.Fields("*/5 0,30 9-17 JAN-mar mon-fri/2 ./job"), want: "*/5 0,30 9-17 JAN-mar mon-fri/2"},
		{name: "option after it", args: strings.Fields("0 2 * * 0 --retries 3 -- cmd"), want: "0 2 * * 0"},
		{name: "six fields", args: strings.Fields("*/10 * * * * * -- cmd"), want: "*/10 * * * * *"},
		{name: "six fields, no --", args: strings.Fields("*/10 * * * * * ./job"), want: "*/10 * * * * *"},
		{name: "a sixth that does not parse is the command", args: strings.Fields("0 2 * * 0 99"), want: "0 2 * * 0"},
		{name: "zone prefix", args: strings.Fields("CRON_TZ=UTC 0 2 * * * -- cmd"), want: "CRON_TZ=UTC 0 2 * * *"},
		{name: "globbed", args: strings.Fields("0 2 backup.sh data.csv data.csv backup.sh 0 -- ./backup.sh"), names: dir, want: "0 2 * * 0", globbed: true},
		{name: "globbed first field", args: strings.Fields("backup.sh data.csv 3 backup.sh data.csv backup.sh data.csv backup.sh data.csv ./x"), names: dir, want: "* 3 * * *", globbed: true},
		{name: "globbed with dotglob", args: strings.Fields("0 2 .hidden backup.sh data.csv .hidden backup.sh data.csv 0 ./x"), names: dir, want: "0 2 * * 0", globbed: true},
		{name: "globbed six fields", args: strings.Fields("0 backup.sh data.csv backup.sh data.csv backup.sh data.csv backup.sh data.csv 0 ./x"), names: dir, want: "0 * * * * 0", globbed: true},
		// A directory of one file: the sixth word may be that file, the
		// command; the 5 fields win.
		{name: "one file: the command", args: strings.Fields("0 2 job job 1 job"), names: []string{"job"}, want: "0 2 * * 1", globbed: true},
		{name: "one file: before --, six", args: strings.Fields("0 2 job job 1 job -- job"), names: []string{"job"}, want: "0 2 * * 1 *", globbed: true},
		{name: "a lone name of the directory is no *", args: strings.Fields("0 2 * * 0 backup.sh"), names: dir, want: "0 2 * * 0"},
		// Not a cron expression.
		{name: "four fields", args: strings.Fields("0 2 * * -- cmd")},
		{name: "a duration", args: strings.Fields("90s 1 2 3 4 5")},
		{name: "words", args: strings.Fields("0 2 cmd * * *")},
		{name: "a three-letter word that is no name", args: strings.Fields("0 2 * * job")},
		{name: "nothing", args: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, globbed, ok := unquotedCron(tt.args, tt.names)
			if ok != (tt.want != "") || got != tt.want || globbed != tt.globbed {
				t.Errorf("unquotedCron(%q, %q) = %q, %v, %v; want %q, %v", tt.args, tt.names, got, globbed, ok, tt.want, tt.globbed)
			}
		})
	}
}

func TestIsOption(t *testing.T) {
	for a, want := range map[string]bool{
		"-q": true, "--retries": true, "--on-failure=notify-send job failed": true, "-x=a b": true,
		"-": false, "x": false, "": false, "-1 * * * *": false, "--on failure": false, "-1\t* * * *": false,
	} {
		if got := isOption(a); got != want {
			t.Errorf("isOption(%q) = %v, want %v", a, got, want)
		}
	}
}

// TestSplitEdges: every help, and arguments with spaces.
func TestSplitEdges(t *testing.T) {
	t.Chdir(t.TempDir()) // an unquoted cron's '*' would be the names here
	tests := []struct {
		name    string
		args    []string
		want    invocation
		wantErr string
	}{
		{name: "every help", args: []string{"help"}, want: invocation{opts: []string{"--help"}, help: true}},
		{name: "every help, options before", args: []string{"-q", "help"}, want: invocation{opts: []string{"-q", "--help"}, help: true}},
		{name: "every help next", args: []string{"help", "next"}, want: invocation{next: true, opts: []string{"--help"}}},
		{name: "every help status", args: []string{"help", "status"}, want: invocation{status: true, opts: []string{"--help"}}},
		{name: "a command named help", args: []string{"1s", "help"}, want: invocation{schedule: "1s", command: []string{"help"}}},
		{name: "a schedule with a leading dash", args: []string{"-1 * * * *", "--", "cmd"}, want: invocation{schedule: "-1 * * * *", command: []string{"cmd"}}},
		{name: "next: a schedule with a leading dash", args: []string{"next", "-1 * * * *"}, want: invocation{next: true, names: []string{"-1 * * * *"}}},
		{name: "a value with spaces", args: []string{"1s", "--on-failure=echo failed", "--", "cmd"}, want: invocation{schedule: "1s", opts: []string{"--on-failure=echo failed"}, command: []string{"cmd"}}},
		{name: "unquoted cron", args: strings.Fields("0 2 * * 0 -- cmd"), wantErr: "bad schedule: a cron expression is one argument; quote it: every '0 2 * * 0' -- CMD"},
		{name: "unquoted cron, no command", args: strings.Fields("*/5 * * * *"), wantErr: "bad schedule: a cron expression is one argument; quote it: every '*/5 * * * *' -- CMD"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := split(tt.args, flagArity(runFlags))
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("split(%q) error %v, want %q", tt.args, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("split(%q): %v", tt.args, err)
			}
			got.given = nil
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("split(%q) = %+v, want %+v", tt.args, got, tt.want)
			}
		})
	}
}

func TestSplit(t *testing.T) {
	arity := flagArity(runFlags)
	tests := []struct {
		name    string
		args    []string
		want    invocation
		wantErr string
	}{
		{
			name: "options after schedule, with --",
			args: []string{"90s", "--retries", "5", "--", "cmd", "-x"},
			want: invocation{opts: []string{"--retries", "5"}, schedule: "90s", command: []string{"cmd", "-x"}},
		},
		{
			name: "options before schedule",
			args: []string{"--retries", "5", "90s", "--", "cmd", "-x"},
			want: invocation{opts: []string{"--retries", "5"}, schedule: "90s", command: []string{"cmd", "-x"}},
		},
		{
			name: "no --: first positional after schedule starts the command",
			args: []string{"90s", "-q", "cmd", "--retries", "3"},
			want: invocation{opts: []string{"-q"}, schedule: "90s", command: []string{"cmd", "--retries", "3"}},
		},
		{
			name: "option=value and single dash",
			args: []string{"-retries=2", "--timeout=5s", "1s", "true"},
			want: invocation{opts: []string{"-retries=2", "--timeout=5s"}, schedule: "1s", command: []string{"true"}},
		},
		{
			name: "a value that looks like an option",
			args: []string{"1s", "--jitter", "-5s", "--", "true"},
			want: invocation{opts: []string{"--jitter", "-5s"}, schedule: "1s", command: []string{"true"}},
		},
		{
			name: "-- keeps the command verbatim",
			args: []string{"1s", "--", "--retries", "--", "x"},
			want: invocation{schedule: "1s", command: []string{"--retries", "--", "x"}},
		},
		{
			name: "help needs no schedule",
			args: []string{"--help"},
			want: invocation{opts: []string{"--help"}, help: true},
		},
		{
			name: "status: options anywhere among the names",
			args: []string{"status", "a", "--json", "b", "--state-dir", "d"},
			want: invocation{status: true, opts: []string{"--json", "--state-dir", "d"}, names: []string{"a", "b"}, stateDirs: []string{"d"}},
		},
		{
			name: "status: --state-dir each time given, both spellings",
			args: []string{"status", "--state-dir", "a", "x", "--state-dir=b", "--state-dir", "a"},
			want: invocation{status: true, opts: []string{"--state-dir", "a", "--state-dir=b", "--state-dir", "a"}, names: []string{"x"}, stateDirs: []string{"a", "b", "a"}},
		},
		{
			name: "status: options before it too",
			args: []string{"--state-dir", "d", "status", "a"},
			want: invocation{status: true, opts: []string{"--state-dir", "d"}, names: []string{"a"}, stateDirs: []string{"d"}},
		},
		{name: "status: a run option", args: []string{"status", "--retries", "1"}, wantErr: "unknown option --retries; see every status --help"},
		{name: "unknown option", args: []string{"1s", "--retry", "3", "--", "true"}, wantErr: "unknown option --retry"},
		{name: "value missing at the end", args: []string{"--retries"}, wantErr: "option --retries needs a value"},
		{name: "missing schedule", args: []string{"--retries", "1"}, wantErr: "missing schedule"},
		{name: "missing command", args: []string{"1s", "--retries", "1"}, wantErr: `missing command after schedule "1s"`},
		{name: "missing command after --", args: []string{"1s", "--"}, wantErr: "missing command"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := split(tt.args, arity)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("split(%q) error %v, want %q", tt.args, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("split(%q): %v", tt.args, err)
			}
			got.given = nil // TestSplitGiven
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("split(%q) = %+v, want %+v", tt.args, got, tt.want)
			}
		})
	}
}

// TestSplitGiven checks which options split records as given on the command
// line, by their canonical names: messages name the flag for those and the
// environment variable for the others.
func TestSplitGiven(t *testing.T) {
	got, err := split([]string{"-q", "--retries=2", "1s", "--name", "-x", "--", "true", "--timeout", "1s"}, flagArity(runFlags))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{"quiet": true, "retries": true, "name": true}
	if !reflect.DeepEqual(got.given, want) {
		t.Fatalf("given = %v, want %v", got.given, want)
	}
}
