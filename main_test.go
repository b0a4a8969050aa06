package main

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"every":      func() { main() },
		"job":        jobMain,
		"exitstatus": exitStatusMain,
	})
}

func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		RequireExplicitExec: true,
		Cmds:                scriptCommands(),
		Condition: func(cond string) (bool, error) {
			switch cond {
			case "redis":
				return redisCondition()
			case "tmpfs":
				return tmpfsCondition()
			case "pidns":
				return pidnsCondition()
			}
			return false, fmt.Errorf("unknown condition %q", cond)
		},
		Setup: func(env *testscript.Env) error {
			// A state home of the script's own, whatever the machine's is.
			env.Setenv("XDG_STATE_HOME", filepath.Join(env.WorkDir, ".state"))
			// Under -race, each process would otherwise sleep a second at exit.
			env.Setenv("GORACE", "atexit_sleep_ms=0")
			return nil
		},
	})
}

// scriptCommands lists every command the scripts may use besides
// testscript's own; each is documented where it is defined. Each one either
// gives "!" a meaning (its doc says which) or refuses it.
func scriptCommands() map[string]func(ts *testscript.TestScript, neg bool, args []string) {
	return map[string]func(ts *testscript.TestScript, neg bool, args []string){
		// Waiting and signalling (helpers_test.go).
		"waitfile":  waitFileCmd,
		"waitlines": waitLinesCmd,
		"waitlog":   waitLogCmd,
		"signal":    signalCmd,
		"gone":      goneCmd,
		// Process trees (proc_test.go).
		"dead":       deadCmd,
		"cleanup":    cleanupCmd,
		"findpid1":   findPid1Cmd,
		"nsorphan":   nsOrphanCmd,
		"nochildren": noChildrenCmd,
		// Paths that are not regular files, records too big (files_test.go).
		"mkfifo":    mkfifoCmd,
		"mkdevice":  mkdeviceCmd,
		"bigrecord": bigRecordCmd,
		// Full disks and timing (safety_test.go).
		"tmpfs":        tmpfsCmd,
		"fill":         fillCmd,
		"runsincrease": runsIncrease,
		"within":       within,
		// Redis and fleets (fleet_test.go, partition_test.go, storedown_test.go).
		"redis":      redisCmd,
		"checkfence": checkFence,
		"partition":  partition,
		"blackhole":  blackhole,
		"refused":    refused,
		"storedown":  storedown,
		// Stress (stress_test.go).
		"checkslots": checkSlots,
		"torture":    torture,
		"killruns":   killRuns, // durable_kill_test.go
		// Calendar schedules against the wall clock (cal_test.go).
		"stamp":     stampCmd,
		"waitclock": waitClockCmd,
		"logstamp":  logStampCmd,
		"slotcheck": slotCheckCmd,
		// SIGSTOP and SIGCONT (clock_script_test.go).
		"stopped": stoppedCmd,
		// healthchecks.io pings (ping_script_test.go).
		"pingserver": pingServerCmd,
		// Help, usage and completion (cli_script_test.go).
		"example": exampleCmd,
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
			want: invocation{status: true, opts: []string{"--json", "--state-dir", "d"}, names: []string{"a", "b"}},
		},
		{
			name: "status: options before it too",
			args: []string{"--state-dir", "d", "status", "a"},
			want: invocation{status: true, opts: []string{"--state-dir", "d"}, names: []string{"a"}},
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

func TestJobName(t *testing.T) {
	tests := []struct {
		argv []string
		want string
	}{
		// printf './sync-ledger.sh\0--full' | sha256sum | cut -c1-8
		{[]string{"./sync-ledger.sh", "--full"}, "sync-ledger.sh-69eaee19"},
		{[]string{"/usr/bin/date"}, "date-45cd0e43"},
		{[]string{"my job!"}, "my_job_-3f856358"},
		// printf ./.hidden | sha256sum
		{[]string{"./.hidden"}, "hidden-454ba35e"}, // a name starts with a letter or digit
		{[]string{"/usr/bin/..."}, "job-28ea8a67"}, // nothing left: "job"
	}
	for _, tt := range tests {
		if got := jobName(tt.argv); got != tt.want {
			t.Errorf("jobName(%q) = %q, want %q", tt.argv, got, tt.want)
		}
		if err := checkName(jobName(tt.argv)); err != nil {
			t.Errorf("jobName(%q) is not a valid name: %v", tt.argv, err)
		}
	}
	if long := jobName([]string{strings.Repeat("x", 300)}); len(long) != maxName {
		t.Errorf("a 300-byte command makes a %d-byte name, want %d", len(long), maxName)
	}
	if jobName([]string{"a", "b"}) == jobName([]string{"a b"}) {
		t.Error("argv [a b] and [a b] as one word share a name")
	}
}

func TestMainIsTheOnlyExit(t *testing.T) {
	// Guard against the urfave/cli default ExitErrHandler coming back: a usage
	// error must come back from run as a status, not exit the test binary.
	code, sig := run([]string{"1s", "--retries", "x", "--", "true"}, os.Stderr)
	if code != exitUsage || sig != nil {
		t.Fatalf("run = %d, %v; want %d", code, sig, exitUsage)
	}
}
