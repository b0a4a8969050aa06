package runner

// This file finds the command: PATH looked up once and reused while it
// stays an executable file, and what cannot be run told apart (126, 127),
// a script without #! handed to /bin/sh as a shell would.

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// paths caches where the PATH look-ups of command names led, so that a run
// does not stat the command in each directory of $PATH: a cached path is
// used while it is still an executable file (one access(2)), and looked up
// again once it is not. (A command newly installed in an earlier directory
// of $PATH is therefore not seen while the one found first stays.)
var paths struct {
	sync.Mutex
	m map[string]string
}

// command is exec.Command for argv, with argv[0]'s PATH look-up cached.
func command(argv []string) *exec.Cmd {
	name := argv[0]
	if strings.Contains(name, "/") {
		return exec.Command(name, argv[1:]...)
	}
	paths.Lock()
	cached, ok := paths.m[name]
	paths.Unlock()
	if ok && unix.Access(cached, unix.X_OK) == nil && regularFile(cached) {
		cmd := exec.Command(cached, argv[1:]...)
		cmd.Args[0] = name // what the command sees as its name, as before
		return cmd
	}
	cmd := exec.Command(name, argv[1:]...)
	if errors.Is(cmd.Err, exec.ErrNotFound) {
		cmd.Err = notRunnable(name, cmd.Err)
	}
	paths.Lock()
	if cmd.Err == nil && filepath.IsAbs(cmd.Path) {
		if paths.m == nil {
			paths.m = map[string]string{}
		}
		paths.m[name] = cmd.Path
	} else {
		delete(paths.m, name)
	}
	paths.Unlock()
	return cmd
}

// LookPath finds the command name as execvp(3) does, and as the start-up
// check and each run find it: exec.LookPath, except that a name that is in
// $PATH but cannot be executed there (a directory, a file without the x
// bit) is not "not found" (127) but "permission denied" or "is a
// directory" (126), as timeout(1) and execvp(3) report it.
func LookPath(name string) (string, error) {
	path, err := exec.LookPath(name)
	if errors.Is(err, exec.ErrNotFound) {
		err = notRunnable(name, err)
	}
	return path, err
}

// notRunnable is why name, not found as an executable in $PATH, cannot be
// run: the first match there that is no executable file, or else notFound.
func notRunnable(name string, notFound error) error {
	if strings.Contains(name, "/") {
		return notFound
	}
	for _, dir := range filepath.SplitList(os.Getenv("PATH")) {
		if dir == "" {
			dir = "." // as the shell reads an empty element
		}
		st, err := os.Stat(filepath.Join(dir, name))
		switch {
		case err != nil:
		case st.IsDir():
			return &exec.Error{Name: name, Err: syscall.EISDIR}
		default:
			return &exec.Error{Name: name, Err: fs.ErrPermission}
		}
	}
	return notFound
}

// viaShell is cmd run by /bin/sh, for a file the kernel will not execute
// (ENOEXEC: a script without "#!"), as execvp(3), timeout(1) and cron run
// it: sh reads the file as a script, with the command's arguments, in the
// same process group, with the same parent-death signal and descriptors.
// The file keeps its name as sh's $0.
func viaShell(cmd *exec.Cmd) *exec.Cmd {
	script := cmd.Path
	if strings.HasPrefix(script, "-") {
		script = "./" + script // a file, never an option of sh
	}
	return &exec.Cmd{
		Path:        shell,
		Args:        append([]string{shell, script}, cmd.Args[1:]...),
		Env:         cmd.Env,
		Dir:         cmd.Dir,
		Stdin:       cmd.Stdin,
		Stdout:      cmd.Stdout,
		Stderr:      cmd.Stderr,
		ExtraFiles:  cmd.ExtraFiles,
		SysProcAttr: cmd.SysProcAttr,
	}
}

// shell runs the scripts the kernel will not execute, as execvp(3)'s
// _PATH_BSHELL.
const shell = "/bin/sh"

// binary reports whether path looks like a program rather than a script:
// a NUL byte in its first line, as bash tells them apart. Such a file (a
// program for another machine) is not handed to sh, which would try to read
// it as a script: it stays "exec format error", 126.
func binary(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false // sh says why it cannot read it
	}
	defer f.Close()
	buf := make([]byte, 80)
	n, _ := io.ReadFull(f, buf)
	line := buf[:n]
	if i := bytes.IndexByte(line, '\n'); i >= 0 {
		line = line[:i]
	}
	return bytes.IndexByte(line, 0) >= 0
}

// regularFile reports whether path is a regular file (not a directory that
// access(2) would call executable).
func regularFile(path string) bool {
	var st unix.Stat_t
	return unix.Stat(path, &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFREG
}
