package scripttest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/everycli/every/internal/catch"
)

// Main runs a package's tests with the real programs on PATH, for tests
// that run every as a user does, outside a script: every, built from this
// module (with -race when the tests are), and job and exitstatus, this
// package's helpers, run from the test binary. Call it from TestMain.
func Main(m *testing.M) { MainIn(m, "") }

// MainIn is Main with the tests run in dir (relative to the package's
// directory; "" for that): for tests that read the repository's files by
// their paths from its root. The helpers run where they are started.
func MainIn(m *testing.M, dir string) {
	// The tests and their helpers keep the signals' defaults: package
	// catch, linked into packages that import job, caught them at start.
	catch.Release()
	testscript.Main(withEvery{m, dir}, map[string]func(){"job": JobMain, "exitstatus": ExitStatusMain})
}

// withEvery builds every into a directory of its own on PATH before the
// tests run, and removes it after.
type withEvery struct {
	m   *testing.M
	dir string // to run the tests in; "": where they are
}

func (w withEvery) Run() int {
	if w.dir != "" {
		if err := os.Chdir(w.dir); err != nil {
			fmt.Fprintf(os.Stderr, "scripttest: %v\n", err)
			return 1
		}
	}
	dir, err := os.MkdirTemp("", "every-bin-")
	if err != nil {
		fmt.Fprintf(os.Stderr, "scripttest: %v\n", err)
		return 1
	}
	defer os.RemoveAll(dir)
	args := []string{"build", "-o", filepath.Join(dir, "every")}
	if RaceBuild() {
		args = append(args, "-race")
	}
	if out, err := exec.Command("go", append(args, "github.com/everycli/every")...).CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "scripttest: go build every: %v\n%s", err, out)
		return 1
	}
	if err := os.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH")); err != nil {
		fmt.Fprintf(os.Stderr, "scripttest: %v\n", err)
		return 1
	}
	return w.m.Run()
}

// RaceBuild reports whether the test binary was built with -race.
func RaceBuild() bool {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return false
	}
	for _, s := range info.Settings {
		if s.Key == "-race" {
			return s.Value == "true"
		}
	}
	return false
}
