package cli

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/everycli/every/runner"
	"github.com/everycli/every/schedule"
)

// The command inherits every's environment less every variable every reads
// as an option (of a run, of every status, of every next) and the outputs
// of an outer every: each flag's variable, as the EVERY_<NAME> rule names
// it, is dropped, and the SPEC's examples with them; the rest is kept.
func TestChildEnvDropsEveryOption(t *testing.T) {
	keep := []string{"PATH=/usr/bin:/bin", "HOME=/home/u", "EVERY_USERS_OWN=1", "EVERYTHING=x", "EVERY=1",
		"EVERY_N=5", "EVERY_FROM=now"} // every next's -n and --from read no variable
	var environ []string
	for _, flags := range [][]cli.Flag{runFlags, statusFlags, nextFlags} {
		for _, f := range flags {
			e, ok := f.(interface{ GetEnvVars() []string })
			if !ok || len(e.GetEnvVars()) == 0 {
				continue
			}
			name := f.Names()[0]
			if want := []string{envName(name)}; !slices.Equal(e.GetEnvVars(), want) {
				t.Errorf("--%s reads %q, want %q", name, e.GetEnvVars(), want)
			}
			environ = append(environ, envName(name)+"=1")
		}
	}
	// SPEC sections 1, 10 and 13, by hand: the floor.
	for _, v := range []string{"EVERY_PING", "EVERY_ON_FAILURE", "EVERY_ON_SUCCESS", "EVERY_ON_RECOVER",
		"EVERY_METRICS_FILE", "EVERY_TIMEOUT", "EVERY_KILL_AFTER", "EVERY_STATE", "EVERY_LOCK", "EVERY_STATE_DIR",
		"EVERY_STORE", "EVERY_NAME", "EVERY_RUN", "EVERY_ATTEMPT", "EVERY_SLOT", "EVERY_LAST_SUCCESS",
		"EVERY_FENCING_TOKEN", "EVERY_RESULT", "EVERY_EXIT_CODE", "EVERY_SIGNAL", "EVERY_DURATION_MS",
		"EVERY_ATTEMPTS", "EVERY_CONSECUTIVE_FAILURES", "EVERY_OUTPUT", "EVERY_MAX_AGE", "EVERY_JSON"} {
		environ = append(environ, v+"=outer")
	}
	environ = append(environ, keep...)
	if got := childEnv(environ); !slices.Equal(got, keep) {
		t.Errorf("the command's environment is\n%q\nwant\n%q", got, keep)
	}
}

// The variables are worked out from the flags: a flag added tomorrow has its
// variable dropped, with no list to update.
func TestChildEnvDropsANewFlagsVariable(t *testing.T) {
	environ := []string{"EVERY_BRAND_NEW=outer", "EVERY_SWITCH=1", "PATH=/bin"}
	flags := append(slices.Clone(runFlags), stringFlag(catMonitor, "brand-new", "", "a new option"), boolFlag(catMonitor, "switch", "a new switch"))
	if got := withoutInputs(environ, flags); !slices.Equal(got, []string{"PATH=/bin"}) {
		t.Errorf("with the new flags, the command's environment is %q, want only PATH", got)
	}
	if got := withoutInputs(environ, runFlags); !slices.Equal(got, environ) {
		t.Errorf("without them, it is %q, want all three kept", got)
	}
}

// What the loop sets for the command and for its hooks is what childEnv
// drops when inherited: a variable the runner comes to set, and that
// outputVars or hookVars leave out, would reach a nested every's command
// from the outer job.
func TestOutputVarsAreTheRunnersOwn(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir()) // where the hook's EVERY_OUTPUT goes
	var envs [][]string
	exec := func(_ context.Context, a runner.Attempt) runner.Result {
		envs = append(envs, a.Env)
		if a.Argv[0] == "sh" {
			return runner.Result{Outcome: runner.Success}
		}
		return runner.Result{Outcome: runner.Failure, ExitCode: 3}
	}
	hook := "true"
	exit := runner.Loop(context.Background(), runner.Config{
		Name: "job", Command: []string{"job"}, Schedule: schedule.Grid{Interval: 10 * time.Millisecond},
		MaxRuns: 1, Signal: 15, KillAfter: time.Second, OutputTail: 10000, Exec: exec,
		Hooks:  runner.Hooks{OnFailure: hook, OnSuccess: hook, OnRecover: hook, Timeout: time.Second},
		Logger: slog.New(slog.DiscardHandler), Env: []string{"PATH=/bin"},
	})
	if exit.Reason != runner.MaxRuns {
		t.Fatalf("loop ended by %v, want MaxRuns", exit.Reason)
	}
	if len(envs) != 2 {
		t.Fatalf("%d attempts and hooks ran, want the command and its failure hook", len(envs))
	}
	for i, env := range envs {
		for _, kv := range env {
			k, _, _ := strings.Cut(kv, "=")
			if k != "PATH" && !slices.Contains(outputVars, k) && !slices.Contains(hookVars, k) {
				t.Errorf("%s sets %s, which neither outputVars nor hookVars lists", []string{"the command", "the hook"}[i], k)
			}
		}
	}
	if got := childEnv(envs[1]); !slices.Equal(got, []string{"PATH=/bin"}) {
		t.Errorf("a hook's environment passed on to a nested every's command: %q, want only PATH", got)
	}
}
