package scripttest

import (
	"slices"
	"strconv"

	"github.com/everycli/every/internal/testutil"
	"github.com/rogpeppe/go-internal/testscript"
)

// exampleCmd runs an example of every --help, as the help prints it:
//
//	example -count N   fails unless --help has N examples
//	example K          runs the K-th (from 1), bounded by --max-runs 1
//
// "--max-runs 1" goes right after "every" (options may stand before the
// schedule), so a job runs once and every exits with its status; every
// next runs as it is. With "!", the example must fail (timeout(1)'s 124
// when it did not end within testutil.WaitBound is a failure either way).
func exampleCmd(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) == 0 || (args[0] == "-count") != (len(args) == 2) || len(args) > 2 {
		ts.Fatalf("usage: example -count N | example K")
	}
	ts.Check(ts.Exec("every", "--help"))
	examples := HelpExamples(ts.ReadFile("stdout"))
	if args[0] == "-count" {
		noNeg(ts, neg, "example -count")
		if strconv.Itoa(len(examples)) != args[1] {
			ts.Fatalf("--help has %d examples, want %s: %q", len(examples), args[1], examples)
		}
		return
	}
	k, err := strconv.Atoi(args[0])
	if err != nil || k < 1 || k > len(examples) {
		ts.Fatalf("no example %q among the %d of --help", args[0], len(examples))
	}
	argv, err := ShellWords(examples[k-1])
	ts.Check(err)
	if argv[1] != "next" {
		argv = slices.Insert(argv, 1, "--max-runs", "1")
	}
	ts.Logf("example %d: %q", k, argv)
	// Bounded all the same: an example that does not end within testutil.WaitBound
	// (a schedule that waits for its slot) fails, killed by timeout(1).
	bound := strconv.Itoa(int(testutil.WaitBound.Seconds()))
	err = ts.Exec("timeout", append([]string{"-k", "5", bound}, argv...)...)
	switch {
	case neg && err == nil:
		ts.Fatalf("example %d succeeded, want a failure", k)
	case !neg && err != nil:
		ts.Fatalf("example %d: %v", k, err)
	}
}
