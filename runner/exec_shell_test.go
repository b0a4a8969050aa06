//go:build linux

package runner

import (
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// A script without "#!" is run by /bin/sh, as execvp(3) runs it: with its
// arguments, $0 its path, in a process group of its own.
func TestExecScriptWithoutShebang(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	script := filepath.Join(dir, "no-shebang")
	// Field 5 of /proc/self/stat is the process group; sh's own pid is $$.
	body := `printf '%s|' "$0" "$@" > "` + out + `"
echo >> "` + out + `"
set -- $(cat /proc/$$/stat)
echo "$$ $5" >> "` + out + `"
`
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	r := Exec(context.Background(), Attempt{Argv: []string{script, "a b", "c"}, Signal: syscall.SIGTERM,
		Logger: slog.New(slog.DiscardHandler)})
	if r.Outcome != Success || r.Err != nil {
		t.Fatalf("result %+v, want a success", r)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	args, ids, _ := strings.Cut(strings.TrimSpace(string(b)), "\n")
	if want := script + "|a b|c|"; args != want {
		t.Errorf("the script saw %q, want %q", args, want)
	}
	f := strings.Fields(ids)
	if len(f) != 2 || f[0] != f[1] {
		t.Errorf("pid and process group %q: want a group of its own", ids)
	}
	if pid, _ := strconv.Atoi(f[0]); pid == os.Getpid() {
		t.Errorf("the script ran as this process")
	}
}

// A program the kernel will not execute (a NUL in its first line: built for
// another machine) is not read by sh as a script: it fails 126, exec format
// error.
func TestExecBinaryNotForThisMachine(t *testing.T) {
	prog := filepath.Join(t.TempDir(), "prog")
	if err := os.WriteFile(prog, []byte("\x7fELF\x02\x01\x01\x00\x00\x00echo ran\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	r := Exec(context.Background(), Attempt{Argv: []string{prog}, Logger: slog.New(slog.DiscardHandler)})
	if r.ExitCode != 126 || !errors.Is(r.Err, syscall.ENOEXEC) {
		t.Fatalf("result %+v, want 126 with exec format error", r)
	}
}

// The shell run for a script keeps what every's rules give the command:
// its process group and parent-death signal, its descriptors and
// environment; a file whose name starts with "-" is never taken for an
// option of sh.
func TestViaShell(t *testing.T) {
	attr := sysProcAttr()
	cmd := &exec.Cmd{Path: "/x/job", Args: []string{"job", "-a", "b"}, Env: []string{"A=1"}, Dir: "/d",
		Stdout: os.Stderr, SysProcAttr: attr}
	sh := viaShell(cmd)
	if sh.Path != "/bin/sh" || strings.Join(sh.Args, " ") != "/bin/sh /x/job -a b" {
		t.Errorf("viaShell runs %q %q, want /bin/sh /x/job -a b", sh.Path, sh.Args)
	}
	if sh.SysProcAttr != attr || sh.Env[0] != "A=1" || sh.Dir != "/d" || sh.Stdout != os.Stderr {
		t.Fatalf("viaShell lost the command's attributes: %+v", sh)
	}
	if !sh.SysProcAttr.Setpgid || sh.SysProcAttr.Pdeathsig != syscall.SIGKILL {
		t.Errorf("SysProcAttr %+v, want its own group and SIGKILL at every's death", sh.SysProcAttr)
	}
	if got := viaShell(&exec.Cmd{Path: "-x/job", Args: []string{"-x/job"}}).Args[1]; got != "./-x/job" {
		t.Errorf("a path starting with -: sh gets %q, want ./-x/job", got)
	}
}

// LookPath answers as execvp(3): a name in $PATH that is no executable
// file there is 126 (a directory, no x bit), not 127, which is for a name
// found nowhere.
func TestLookPath(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("PATH", dir)
	if err := os.Mkdir(filepath.Join(dir, "adir"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "noexec"), []byte("true\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	exe := writeScript(t, dir, "exe")
	tests := []struct {
		name string
		want error // nil: found
		code int
	}{
		{name: "exe"},
		{name: ".", want: syscall.EISDIR, code: 126},
		{name: "adir", want: syscall.EISDIR, code: 126},
		{name: "noexec", want: fs.ErrPermission, code: 126},
		{name: "missing", want: exec.ErrNotFound, code: 127},
		{name: dir + "/missing", want: fs.ErrNotExist, code: 127},
		{name: dir + "/adir", want: syscall.EISDIR, code: 126},
	}
	for _, tt := range tests {
		path, err := LookPath(tt.name, nil)
		if tt.want == nil {
			if err != nil || path != exe {
				t.Errorf("LookPath(%q) = %q, %v; want %q", tt.name, path, err, exe)
			}
			continue
		}
		if !errors.Is(err, tt.want) || StartErrorCode(err) != tt.code {
			t.Errorf("LookPath(%q) = %v (code %d), want %v (code %d)", tt.name, err, StartErrorCode(err), tt.want, tt.code)
		}
		// A run fails with the same code.
		cmd := command([]string{tt.name}, nil)
		err = cmd.Err
		if err == nil {
			err = cmd.Start()
		}
		if StartErrorCode(err) != tt.code {
			t.Errorf("command(%q): %v (code %d), want code %d", tt.name, err, StartErrorCode(err), tt.code)
		}
	}
}
