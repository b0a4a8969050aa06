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
	if cmd := command([]string{name, "x"}); cmd.Path != inB || cmd.Args[0] != name || cmd.Args[1] != "x" {
		t.Fatalf("command = %q %q, want %q with argv[0] %q", cmd.Path, cmd.Args, inB, name)
	}
	// Kept: one now earlier in $PATH is not looked for (documented).
	inA := writeScript(t, a, name)
	if cmd := command([]string{name}); cmd.Path != inB {
		t.Fatalf("command = %q, want the cached %q", cmd.Path, inB)
	}
	// Gone: looked up again.
	if err := os.Remove(inB); err != nil {
		t.Fatal(err)
	}
	if cmd := command([]string{name}); cmd.Path != inA || cmd.Err != nil {
		t.Fatalf("command after its file went = %q (%v), want %q", cmd.Path, cmd.Err, inA)
	}
	// Not executable any more: looked up again, and not found.
	if err := os.Chmod(inA, 0o644); err != nil {
		t.Fatal(err)
	}
	if cmd := command([]string{name}); cmd.Err == nil {
		t.Fatalf("command of a file no longer executable = %q, want a look-up error", cmd.Path)
	}
}
