package testutil

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
)

// GoCaches are the go command's caches, as settings: where a command run
// with another HOME still finds the builds and modules it has (go run in a
// block of the docs, install.sh in its test).
var GoCaches = sync.OnceValue(func() []string {
	var env []string
	for _, v := range []string{"GOCACHE", "GOMODCACHE", "GOPATH"} {
		if out, err := exec.Command("go", "env", v).Output(); err == nil {
			env = append(env, v+"="+strings.TrimSpace(string(out)))
		}
	}
	return env
})

// FirstDiff shows the first line where two texts differ.
func FirstDiff(a, b []byte) string {
	al, bl := strings.Split(string(a), "\n"), strings.Split(string(b), "\n")
	for i := range max(len(al), len(bl)) {
		var x, y string
		if i < len(al) {
			x = al[i]
		}
		if i < len(bl) {
			y = bl[i]
		}
		if x != y {
			return fmt.Sprintf("line %d: committed %q, generated %q", i+1, x, y)
		}
	}
	return "none"
}

// SkipWithout skips a test whose tool is not installed, or fails it when
// EVERY_REQUIRE_SHELLS is set, as in CI, where a skip would hide a check.
func SkipWithout(t testing.TB, tool, what string) {
	t.Helper()
	if os.Getenv("EVERY_REQUIRE_SHELLS") != "" {
		t.Fatalf("%s is not installed and EVERY_REQUIRE_SHELLS is set: %s", tool, what)
	}
	t.Skipf("%s is not installed: %s", tool, what)
}
