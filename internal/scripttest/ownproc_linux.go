package scripttest

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/rogpeppe/go-internal/testscript"
	"golang.org/x/sys/unix"
)

// signalOwn sends sig to pid only if it is a process of this script: one
// whose working directory is the script's work directory or below it, where
// every, its jobs and all they start run. A pid read from a file may be that
// of a process that has ended, and pids are reused (32768 of them by
// default, and the suite forks fast): unchecked, a stale pid file signals a
// stranger, the test binary of another package as well as anyone. The check
// and the signal go through one pidfd, so a process that takes the pid after
// the check never gets the signal. A process that has ended but is not
// reaped yet gets it as kill(2) would give it (to no effect).
func signalOwn(ts *testscript.TestScript, pid int, sig syscall.Signal) error {
	if pid <= 0 {
		return fmt.Errorf("pid %d is not a process", pid)
	}
	fd, err := unix.PidfdOpen(pid, 0)
	if errors.Is(err, unix.ENOSYS) {
		// Before Linux 5.3: the check, then kill(2), with the small race
		// between them that a pidfd closes.
		if err := ownedBy(ts, pid); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return syscall.Kill(pid, sig)
	}
	if err != nil {
		return fmt.Errorf("process %d: %w", pid, err)
	}
	defer unix.Close(fd)
	// The pidfd holds the process that had the pid when it was opened. If
	// that one ends before the check, the check may read another's /proc;
	// the signal, sent through the pidfd, then reaches no one (ESRCH).
	if err := ownedBy(ts, pid); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return unix.PidfdSendSignal(fd, sig, nil, 0)
}

// ownedBy returns nil if the working directory of pid is the script's work
// directory or below it, an error wrapping errNotOurs if it is elsewhere,
// and one wrapping fs.ErrNotExist if the process has ended (a zombie has no
// working directory).
func ownedBy(ts *testscript.TestScript, pid int) error {
	cwd, err := os.Readlink("/proc/" + strconv.Itoa(pid) + "/cwd")
	if err != nil {
		return fmt.Errorf("process %d: %w", pid, err)
	}
	for _, dir := range workDirs(ts) {
		if cwd == dir || strings.HasPrefix(cwd, dir+string(filepath.Separator)) {
			return nil
		}
	}
	return fmt.Errorf("process %d runs in %s, outside $WORK: %w", pid, cwd, errNotOurs)
}

// workDirs is $WORK as given and with its links resolved, as /proc shows
// working directories.
func workDirs(ts *testscript.TestScript) []string {
	work := ts.Getenv("WORK")
	dirs := []string{work}
	if real, err := filepath.EvalSymlinks(work); err == nil && real != work {
		dirs = append(dirs, real)
	}
	return dirs
}

// signalOwnGroup sends sig to each member of process group pgid that is a
// process of this script (see signalOwn). kill(-pgid) would reach whatever
// group has that id by then: once all of a group's members are gone, its id
// is a pid like any other, free for reuse.
func signalOwnGroup(ts *testscript.TestScript, pgid int, sig syscall.Signal) {
	names, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, name := range names {
		b, err := os.ReadFile(name)
		if err != nil {
			continue
		}
		// After the command name, in parentheses: state, ppid, pgrp.
		f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
		if len(f) < 3 || f[2] != strconv.Itoa(pgid) {
			continue
		}
		if pid, err := strconv.Atoi(filepath.Base(filepath.Dir(name))); err == nil {
			_ = signalOwn(ts, pid, sig)
		}
	}
}
