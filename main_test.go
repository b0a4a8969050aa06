package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/everycli/every/internal/catch"
	"github.com/everycli/every/internal/scripttest"
	"github.com/everycli/every/internal/ui"
	"github.com/rogpeppe/go-internal/testscript"
)

func TestMain(m *testing.M) {
	// The test binary is every (its signals caught from its start, by
	// package catch's init, as the real binary's), and the scripts' other
	// commands and the tests themselves, which keep the defaults.
	if filepath.Base(os.Args[0]) != "every" {
		catch.Release()
	}
	testscript.Main(m, map[string]func(){
		"every":      func() { scripttest.PauseStart(); main() },
		"job":        scripttest.JobMain,
		"exitstatus": scripttest.ExitStatusMain,
	})
}

func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		RequireExplicitExec: true,
		Cmds:                scripttest.Commands(),
		Condition:           scripttest.Condition,
		Setup: func(env *testscript.Env) error {
			// A state home of the script's own, whatever the machine's is.
			env.Setenv("XDG_STATE_HOME", filepath.Join(env.WorkDir, ".state"))
			// Under -race, each process would otherwise sleep a second at exit.
			env.Setenv("GORACE", "atexit_sleep_ms=0")
			return nil
		},
	})
}

func TestMainIsTheOnlyExit(t *testing.T) {
	// Guard against the urfave/cli default ExitErrHandler coming back: a usage
	// error must come back from run as a status, not exit the test binary.
	code, sig := run([]string{"1s", "--retries", "x", "--", "true"}, os.Stderr)
	if code != ui.ExitUsage || sig != nil {
		t.Fatalf("run = %d, %v; want %d", code, sig, ui.ExitUsage)
	}
}
