package runner

import (
	"os"
	"path/filepath"
	"testing"
)

// writeScript puts an executable script named name in dir.
func writeScript(t *testing.T, dir, name string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// A command's PATH look-up is kept while what it found is still an
// executable file, and done again once it is not: a command moved to
// another directory of $PATH is found there.
func TestCommandPathCache(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	t.Setenv("PATH", a+string(os.PathListSeparator)+b)
	const name = "every-test-cached-cmd"
	inB := writeScript(t, b, name)
	if cmd := command([]string{name, "x"}, nil); cmd.Path != inB || cmd.Args[0] != name || cmd.Args[1] != "x" {
		t.Fatalf("command = %q %q, want %q with argv[0] %q", cmd.Path, cmd.Args, inB, name)
	}
	// Kept: one now earlier in $PATH is not looked for (documented).
	inA := writeScript(t, a, name)
	if cmd := command([]string{name}, nil); cmd.Path != inB {
		t.Fatalf("command = %q, want the cached %q", cmd.Path, inB)
	}
	// Gone: looked up again.
	if err := os.Remove(inB); err != nil {
		t.Fatal(err)
	}
	if cmd := command([]string{name}, nil); cmd.Path != inA || cmd.Err != nil {
		t.Fatalf("command after its file went = %q (%v), want %q", cmd.Path, cmd.Err, inA)
	}
	// Not executable any more: looked up again, and not found.
	if err := os.Chmod(inA, 0o644); err != nil {
		t.Fatal(err)
	}
	if cmd := command([]string{name}, nil); cmd.Err == nil {
		t.Fatalf("command of a file no longer executable = %q, want a look-up error", cmd.Path)
	}
}

// A command is looked up in its environment's PATH (a jobs file's PATH=
// line), not every's own; two environments of one process with the same
// name each find their own, and one without PATH looks in every's.
func TestCommandLooksInItsEnvironmentsPath(t *testing.T) {
	own, a, b := t.TempDir(), t.TempDir(), t.TempDir()
	t.Setenv("PATH", own)
	const name = "every-test-env-cmd"
	inOwn, inA, inB := writeScript(t, own, name), writeScript(t, a, name), writeScript(t, b, name)
	for _, tc := range []struct {
		env  []string
		want string
	}{
		{[]string{"HOME=/", "PATH=" + a}, inA},
		{[]string{"PATH=" + own, "PATH=" + b}, inB}, // the last one, as the command sees it
		{[]string{"HOME=/"}, inOwn},
		{nil, inOwn},
		{[]string{"PATH=" + a}, inA}, // again: the cache is by PATH too
	} {
		if cmd := command([]string{name}, tc.env); cmd.Err != nil || cmd.Path != tc.want {
			t.Errorf("command in %q = %q (%v), want %q", tc.env, cmd.Path, cmd.Err, tc.want)
		}
		if path, err := LookPath(name, tc.env); err != nil || path != tc.want {
			t.Errorf("LookPath in %q = %q (%v), want %q", tc.env, path, err, tc.want)
		}
	}
	if _, err := LookPath(name, []string{"PATH=" + t.TempDir()}); StartErrorCode(err) != 127 {
		t.Errorf("LookPath in a PATH without it: %v (code %d), want not found (127)", err, StartErrorCode(err))
	}
}
