package scripttest

import (
	"os"
	"regexp"
	"strconv"
	"strings"

	"github.com/everycli/every/internal/testutil"
	"github.com/rogpeppe/go-internal/testscript"
)

// waitForFile waits until name exists, for at most testutil.WaitBound.
func waitForFile(name string) bool {
	return testutil.Eventually(func() bool {
		_, err := os.Stat(name)
		return err == nil
	})
}

// waitfile FILE...: wait until each file exists.
func waitFileCmd(ts *testscript.TestScript, neg bool, args []string) {
	noNeg(ts, neg, "waitfile")
	if len(args) == 0 {
		ts.Fatalf("usage: waitfile FILE...")
	}
	for _, a := range args {
		if !waitForFile(ts.MkAbs(a)) {
			ts.Fatalf("%s did not appear within %v", a, testutil.WaitBound)
		}
	}
}

// waitlines FILE N: wait until FILE has at least N lines.
func waitLinesCmd(ts *testscript.TestScript, neg bool, args []string) {
	noNeg(ts, neg, "waitlines")
	if len(args) != 2 {
		ts.Fatalf("usage: waitlines FILE N")
	}
	n, err := strconv.Atoi(args[1])
	ts.Check(err)
	name := ts.MkAbs(args[0])
	if !testutil.Eventually(func() bool {
		b, _ := os.ReadFile(name)
		return strings.Count(string(b), "\n") >= n
	}) {
		ts.Fatalf("%s did not reach %d lines within %v", args[0], n, testutil.WaitBound)
	}
}

// waitlog FILE REGEXP N: wait until FILE has at least N matches of REGEXP.
func waitLogCmd(ts *testscript.TestScript, neg bool, args []string) {
	noNeg(ts, neg, "waitlog")
	if len(args) != 3 {
		ts.Fatalf("usage: waitlog FILE REGEXP N")
	}
	re, err := regexp.Compile(args[1])
	ts.Check(err)
	n, err := strconv.Atoi(args[2])
	ts.Check(err)
	name := ts.MkAbs(args[0])
	if !testutil.Eventually(func() bool {
		b, _ := os.ReadFile(name)
		return len(re.FindAllIndex(b, -1)) >= n
	}) {
		ts.Fatalf("%s did not get %d lines matching %s within %v", args[0], n, args[1], testutil.WaitBound)
	}
}
