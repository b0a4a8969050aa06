package runner

// This file finds the command: the PATH of its environment (a jobs file's
// PATH= line; else every's own) looked up once and reused while it stays
// an executable file, and what cannot be run told apart (126, 127), a
// script without #! handed to /bin/sh as a shell would.

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

// paths caches where the PATH look-ups of command names led (by PATH and
// name: the jobs of a file may each have their own PATH), so that a run
// does not stat the command in each directory of the PATH: a cached path
// is used while it is still an executable file (one access(2)), and looked
// up again once it is not. (A command newly installed in an earlier
// directory of the PATH is therefore not seen while the one found first
// stays.)
var paths struct {
	sync.Mutex
	m map[string]string
}

// command is exec.Command for argv, with argv[0] looked up in env's PATH
// (see LookPath), the look-up cached.
func command(argv, env []string) *exec.Cmd {
	name := argv[0]
	if strings.Contains(name, "/") {
		return exec.Command(name, argv[1:]...)
	}
	key := searchPath(env) + "\x00" + name
	paths.Lock()
	cached, ok := paths.m[key]
	paths.Unlock()
	if ok && unix.Access(cached, unix.X_OK) == nil && regularFile(cached) {
		return commandAt(cached, argv)
	}
	path, err := LookPath(name, env)
	var cmd *exec.Cmd
	if err != nil {
		cmd = &exec.Cmd{Path: name, Args: argv, Err: err}
	} else {
		cmd = commandAt(path, argv)
	}
	paths.Lock()
	if err == nil && filepath.IsAbs(path) {
		if paths.m == nil {
			paths.m = map[string]string{}
		}
		paths.m[key] = path
	} else {
		delete(paths.m, key)
	}
	paths.Unlock()
	return cmd
}

// commandAt is exec.Command of the executable path, found for argv[0],
// which the command still sees as its name.
func commandAt(path string, argv []string) *exec.Cmd {
	cmd := exec.Command(path, argv[1:]...)
	cmd.Args[0] = argv[0]
	return cmd
}

// searchPath is the PATH a command of environment env is looked up in: its
// own (a jobs file's PATH= line), as the shell that runs a crontab line
// looks it up; every's own where env has none (nil: every's environment).
func searchPath(env []string) string {
	if v, ok := environLookup(env, "PATH"); ok {
		return v
	}
	return os.Getenv("PATH")
}

// environLookup returns the value of key in env, the last one given, as a
// process sees it, and whether env has it.
func environLookup(env []string, key string) (string, bool) {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], key+"="); ok {
			return v, true
		}
	}
	return "", false
}

// LookPath finds the command name as execvp(3) does, in the PATH of the
// environment env it will run with (see searchPath), as the start-up check
// and each run find it: exec.LookPath in that PATH, except that a name that
// is in the PATH but cannot be executed there (a directory, a file without
// the x bit) is not "not found" (127) but "permission denied" or "is a
// directory" (126), as timeout(1) and execvp(3) report it.
func LookPath(name string, env []string) (string, error) {
	if strings.Contains(name, "/") {
		return exec.LookPath(name)
	}
	dirs := searchPath(env)
	for _, dir := range filepath.SplitList(dirs) {
		if dir == "" {
			dir = "." // as the shell reads an empty element
		}
		path := filepath.Join(dir, name)
		if executable(path) {
			if !filepath.IsAbs(path) {
				// As exec.LookPath: never a command of the working
				// directory by a relative PATH element.
				return path, &exec.Error{Name: name, Err: exec.ErrDot}
			}
			return path, nil
		}
	}
	return "", notRunnable(name, dirs, &exec.Error{Name: name, Err: exec.ErrNotFound})
}

// executable reports whether path is a file this process may execute, as
// exec.LookPath decides it.
func executable(path string) bool {
	st, err := os.Stat(path)
	if err != nil || st.IsDir() {
		return false
	}
	err = unix.Faccessat(unix.AT_FDCWD, path, unix.X_OK, unix.AT_EACCESS)
	if errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EPERM) {
		return st.Mode()&0o111 != 0
	}
	return err == nil
}

// notRunnable is why name, not found as an executable in the PATH dirs,
// cannot be run: the first match there that is no executable file, or else
// notFound.
func notRunnable(name, dirs string, notFound error) error {
	for _, dir := range filepath.SplitList(dirs) {
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
