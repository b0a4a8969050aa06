package release

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"github.com/everycli/every/internal/testutil"
)

// This file checks install.sh: what it installs, where, and that the
// system's tools find it there.

// installed is what install.sh puts under a prefix, by its source in the
// tree (the binary aside).
var installed = map[string]string{
	"docs/every.1":                    "share/man/man1/every.1",
	"completions/every.bash":          "share/bash-completion/completions/every",
	"completions/_every":              "share/zsh/site-functions/_every",
	"completions/every.fish":          "share/fish/vendor_completions.d/every.fish",
	"dist/systemd/every.conf.example": "share/doc/every/every.conf.example",
	"dist/systemd/every@.service":     "lib/systemd/system/every@.service",
}

// runInstall runs install.sh with args and env, from another directory (as
// a user may), and returns its output.
func runInstall(t *testing.T, env []string, args ...string) string {
	t.Helper()
	script, err := filepath.Abs("install.sh")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*testutil.WaitBound)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", append([]string{script}, args...)...)
	cmd.Dir = t.TempDir()
	cmd.Env = append(append(os.Environ(), "TMPDIR="+t.TempDir()), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("install.sh %q: %v\n%s", args, err, out)
	}
	return string(out)
}

// checkInstalled checks the files under root+prefix: each one the tree's,
// with its mode, and the unit's ExecStart the binary at prefix.
func checkInstalled(t *testing.T, root, prefix string) {
	t.Helper()
	bin := filepath.Join(root, prefix, "bin/every")
	if fi, err := os.Stat(bin); err != nil || fi.Mode().Perm() != 0o755 {
		t.Fatalf("binary: %v, %v; want mode 0755", fi, err)
	}
	if out, err := exec.Command(bin, "--version").Output(); err != nil || !strings.HasPrefix(string(out), "every ") {
		t.Errorf("installed every --version: %v, %q", err, out)
	}
	for src, dest := range installed {
		want, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(root, prefix, dest)
		got, err := os.ReadFile(path)
		if err != nil {
			t.Errorf("%s not installed: %v", src, err)
			continue
		}
		if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o644 {
			t.Errorf("%s: mode %v, want 0644", path, fi.Mode().Perm())
		}
		if strings.HasSuffix(src, ".service") {
			want = bytes.ReplaceAll(want, []byte("/usr/local/bin/every"), []byte(filepath.Join(prefix, "bin/every")))
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s is not %s as it should be (diff: %s)", path, src, testutil.FirstDiff(got, want))
		}
	}
	unit := unitSettings(t, filepath.Join(root, prefix, installed["dist/systemd/every@.service"]))
	exe, _, _ := strings.Cut(strings.Join(unit["Service.ExecStart"], ""), " ")
	if exe != filepath.Join(prefix, "bin/every") {
		t.Errorf("the unit's ExecStart runs %q, want the installed binary %q", exe, filepath.Join(prefix, "bin/every"))
	}
}

// TestInstall runs install.sh into a temporary prefix, as a user would
// (building the binary), then with DESTDIR as a package build does, then
// uninstalls; systemd-analyze verifies the installed unit, man renders the
// installed page and finds it from the binary's directory, and zsh and fish
// find the completions where they were put.
func TestInstall(t *testing.T) {
	if testing.Short() {
		t.Skip("builds every: not with -short")
	}
	prefix := filepath.Join(t.TempDir(), "usr", "local")
	home := t.TempDir()
	env := append(testutil.GoCaches(), "HOME="+home, "XDG_CONFIG_HOME="+home, "XDG_DATA_HOME="+home, "XDG_CACHE_HOME="+home)
	out := runInstall(t, env, "--prefix", prefix)
	if !strings.Contains(out, "building every") {
		t.Errorf("install.sh from a clone did not build every:\n%s", out)
	}
	checkInstalled(t, "", prefix)
	found := append(env, "PATH="+filepath.Join(prefix, "bin")+string(os.PathListSeparator)+os.Getenv("PATH"), "XDG_DATA_DIRS="+filepath.Join(prefix, "share"))

	t.Run("man", func(t *testing.T) {
		page := filepath.Join(prefix, installed["docs/every.1"])
		if _, err := exec.LookPath("man"); err != nil {
			testutil.SkipWithout(t, "man", "the installed page is not checked")
		}
		cmd := exec.Command("man", "-l", page)
		cmd.Env = append(os.Environ(), "MANWIDTH=80")
		rendered, err := cmd.Output()
		// Bold is overstruck: each letter, a backspace, the letter again.
		rendered = regexp.MustCompile(".\b").ReplaceAll(rendered, nil)
		if err != nil || !bytes.Contains(rendered, []byte("\nSIGNALS\n")) {
			t.Errorf("man -l %s: %v\n%.300s", page, err, rendered)
		}
		// man-db looks beside the bin directories on PATH.
		cmd = exec.Command("man", "-w", "every")
		cmd.Env = found
		where, err := cmd.Output()
		if err != nil || strings.TrimSpace(string(where)) != page {
			t.Errorf("man -w every = %q, %v; want %s", where, err, page)
		}
	})
	t.Run("systemd-analyze", func(t *testing.T) {
		verify, err := exec.LookPath("systemd-analyze")
		if err != nil {
			t.Skip("systemd-analyze not installed: the installed unit is not verified")
		}
		// An instance of the installed template, checked as systemd would
		// load it: its binary executable, its man page found.
		ctx, cancel := context.WithTimeout(context.Background(), testutil.WaitBound)
		defer cancel()
		cmd := exec.CommandContext(ctx, verify, "verify", filepath.Join(prefix, "lib/systemd/system/every@backup.service"))
		cmd.Env = found
		if out, err := cmd.CombinedOutput(); err != nil || len(out) > 0 {
			t.Errorf("systemd-analyze verify: %v\n%s", err, out)
		}
	})
	t.Run("completions", func(t *testing.T) {
		for _, tc := range []struct{ shell, script, want string }{
			{"zsh", `fpath=($1 $fpath); autoload -Uz compinit && compinit -u -D && print -r -- ${_comps[every]}`, "_every"},
			{"fish", `complete -C'every --catch-up '`, "once"},
		} {
			path, err := exec.LookPath(tc.shell)
			if err != nil {
				testutil.SkipWithout(t, tc.shell, "the installed completion is not checked")
			}
			args := []string{"-c", tc.script}
			if tc.shell == "zsh" {
				args = []string{"-f", "-c", tc.script, "zsh", filepath.Join(prefix, "share/zsh/site-functions")}
			}
			cmd := exec.Command(path, args...)
			cmd.Env = found
			out, err := cmd.CombinedOutput()
			if err != nil || !strings.Contains(string(out), tc.want) {
				t.Errorf("%s does not complete every from %s: %v\n%s", tc.shell, prefix, err, out)
			}
		}
	})
	t.Run("destdir", func(t *testing.T) {
		// A package build: files under DESTDIR, paths inside them /usr's.
		root := t.TempDir()
		out := runInstall(t, append(env, "DESTDIR="+root), "--prefix", "/usr", "--bin", filepath.Join(prefix, "bin/every"))
		if strings.Contains(out, "building") {
			t.Errorf("install.sh --bin built every anyway:\n%s", out)
		}
		checkInstalled(t, root, "/usr")
		if _, err := os.Stat(filepath.Join(root, "usr/bin/every")); err != nil {
			t.Error(err)
		}
		// --uninstall with the same options leaves no file behind.
		runInstall(t, append(env, "DESTDIR="+root), "--prefix", "/usr", "--uninstall")
		filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				t.Errorf("left after --uninstall: %s", path)
			}
			return err
		})
	})
}

// TestInstallUsage checks install.sh's refusals: one line naming the bad
// argument, exit 2, nothing installed.
func TestInstallUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--prefix", "usr/local"}, `bad directory "usr/local": give an absolute path`},
		{[]string{"--frobnicate"}, `unknown argument "--frobnicate"`},
		{[]string{"--prefix"}, "--prefix needs a value"},
		{[]string{"--prefix", t.TempDir(), "--bin", "/nonexistent/every"}, `no binary at "/nonexistent/every"`},
	} {
		cmd := exec.Command("sh", append([]string{"install.sh"}, tc.args...)...)
		cmd.Env = append(os.Environ(), "TMPDIR="+t.TempDir())
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 2 || !strings.Contains(string(out), tc.want) {
			t.Errorf("install.sh %q: %v\n%s\nwant exit 2 and %q", tc.args, err, out, tc.want)
		}
		if strings.Contains(string(out), "installed ") {
			t.Errorf("install.sh %q installed something:\n%s", tc.args, out)
		}
	}
}

// TestInstallUnwritable checks that install.sh, run by a user who cannot
// write to the prefix, says so in one line with a hint and exit 73, before
// building anything. As root, it runs install.sh as nobody.
func TestInstallUnwritable(t *testing.T) {
	dir := t.TempDir()
	// The temporary directories are the user's own 0700 ones: open them to
	// the user install.sh runs as.
	for _, d := range []string{filepath.Dir(dir), dir} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	prefix := filepath.Join(dir, "ro")
	if err := os.Mkdir(prefix, 0o555); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("sh", "install.sh", "--prefix", prefix)
	cmd.Env = append(os.Environ(), "TMPDIR="+dir)
	if os.Getuid() == 0 {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	}
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 73 || !strings.Contains(string(out), "cannot write to "+prefix+": run it with sudo, or choose --prefix") {
		t.Errorf("install.sh into a directory it cannot write: %v\n%s\nwant exit 73 and a hint", err, out)
	}
	if strings.Contains(string(out), "building") {
		t.Errorf("install.sh built every before finding it cannot install it:\n%s", out)
	}
}
