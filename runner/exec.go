package runner

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Attempt is one execution of the command, as the loop hands it to an ExecFunc.
type Attempt struct {
	Argv  []string
	Env   []string
	Stdin bool
	// Signal goes to the process group when the attempt's context ends (timeout,
	// lost lock); KillAfter later whatever is left gets SIGKILL.
	Signal    syscall.Signal
	KillAfter time.Duration
	// Signals carries the signals the loop passes on: SIGINT and SIGTERM stop the
	// attempt (a second one kills at once), any other is only forwarded.
	Signals <-chan os.Signal
	// Kill, once closed, has whatever is left of the attempt killed at once
	// with SIGKILL, whatever KillAfter says: the run's lease is about to
	// expire, and the command must be dead before another holder can start.
	Kill   <-chan struct{}
	Logger *slog.Logger
	// Output, when set, takes the command's stdout and stderr through pipes:
	// each read is kept in it and, unless Hold, written on at once to
	// every's own stdout or stderr. Without it the command writes to every's
	// descriptors themselves.
	Output *Tail
	Hold   bool
	// warnings, the loop's, summarise the warnings Exec logs across its
	// runs; nil: each is logged as if it were the first.
	warnings *execWarnings
	// started, if set, is closed once the command is started (or failed
	// to): the loop's path from slot to exec is over.
	started chan<- struct{}
}

// ExecFunc runs one attempt to its end. When ctx ends, the attempt is stopped as
// on timeout; context.Cause(ctx) says why.
type ExecFunc func(ctx context.Context, a Attempt) Result

// escapeeTick is how often a stopping attempt looks for escapees newly
// re-parented to every (the children of one that just died), to pass the
// stop signal on to them too.
const escapeeTick = 20 * time.Millisecond

// Exec runs an attempt as a real process. The child gets a process group of its
// own, so that a timeout or a stop reaches everything it started, and a terminal's
// Ctrl-C reaches only every, which then decides what the child gets. What
// leaves the group (setsid, a double fork) is re-parented to every, a child
// subreaper, and gets the same signals as the group: Exec returns once the
// command's whole tree is dead and reaped, as far as every can reach it.
// With a.Output, the command's stdout and stderr are pipes that every drains
// to their end before Exec returns (output.go); without it, the command
// writes to every's own descriptors: a terminal stays a terminal.
func Exec(ctx context.Context, a Attempt) Result {
	procs.enable()
	cmd := command(a.Argv)
	cmd.Env = a.Env
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr // *os.File: passed straight through, no copying
	var out *output
	if a.Output != nil {
		var err error
		if out, err = pipeOutput(cmd, a.Output, a.Hold, a.Logger); err != nil {
			return Result{Outcome: Failure, ExitCode: StartErrorCode(err), Err: err}
		}
	}
	if a.Stdin {
		cmd.Stdin = os.Stdin
	} else if null, err := devNull(); err == nil {
		cmd.Stdin = null // else exec.Cmd opens /dev/null itself
	}
	cmd.SysProcAttr = sysProcAttr()
	esc, err := procs.start(cmd)
	if errors.Is(err, syscall.ENOEXEC) && !binary(cmd.Path) {
		cmd = viaShell(cmd)
		esc, err = procs.start(cmd)
	}
	if a.started != nil {
		close(a.started)
	}
	if out != nil {
		out.start(err == nil)
	}
	if err != nil {
		return Result{Outcome: Failure, ExitCode: StartErrorCode(err), Err: err}
	}
	pgid := cmd.Process.Pid
	esc.pgid = pgid
	waited := make(chan error, 1)
	go func() {
		exited := awaitExit(pgid)
		// The leader is gone; sweep whatever it left behind in its group,
		// while its pid, the group's id, cannot be reused: it is not reaped yet.
		if exited {
			_ = syscall.Kill(-pgid, syscall.SIGKILL)
		}
		err := cmd.Wait()
		if !exited {
			_ = syscall.Kill(-pgid, syscall.SIGKILL)
		}
		procs.forget(pgid)
		waited <- err
	}()

	sv := &supervisor{a: a, cmd: cmd, pgid: pgid, esc: esc, outcome: Success, warn: a.warnings}
	if sv.warn == nil {
		sv.warn = &execWarnings{}
	}
	res := sv.supervise(ctx, waited)
	if out != nil {
		// The tree is dead and swept: the pipes' ends come at once, but for
		// what is still in them.
		out.wait()
	}
	return res
}

// devNull is /dev/null for reading, opened once: the stdin of every command
// run without --stdin (exec.Cmd would open and close it for each run).
// It is opened with open(2) directly: os.Open would try to register the
// device with the poller, and fail.
var devNull = sync.OnceValues(func() (*os.File, error) {
	fd, err := unix.Open(os.DevNull, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: os.DevNull, Err: err}
	}
	return os.NewFile(uintptr(fd), os.DevNull), nil
})

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

// supervisor watches one running attempt: it passes signals on, stops the
// command on timeout, on a stop signal or when the lock is lost, and kills
// what is left after the grace.
type supervisor struct {
	a       Attempt
	cmd     *exec.Cmd
	pgid    int
	esc     *escapees
	outcome Outcome
	level   syscall.Signal // what escapees get: the stop signal, then SIGKILL
	grace   *time.Timer    // from the stop signal to SIGKILL
	graceC  <-chan time.Time
	tick    *time.Ticker // escapees that appear while stopping get the signal too
	warn    *execWarnings
	killed  bool // the grace ran out: SIGKILL went to what was left
}

// supervise runs until the command's leader has ended, then sweeps what it
// left behind and returns the attempt's result.
func (s *supervisor) supervise(ctx context.Context, waited <-chan error) Result {
	defer s.stopTimers()
	ctxDone, kill := ctx.Done(), s.a.Kill
	for {
		select {
		case err := <-waited:
			s.stopTimers()
			s.sweep()
			s.endWarnings()
			return classify(s.cmd, err, s.outcome)
		case <-ctxDone:
			ctxDone = nil
			s.ended(ctx)
		case sig := <-s.a.Signals:
			s.signalled(sig)
		case <-kill:
			kill = nil
			if s.outcome == Success {
				// The lease expires before its loss reached ctx: same cause.
				s.outcome = LostLock
			}
			s.a.Logger.Warn("killing the process group", "event", EventKill, "pgid", s.pgid, "reason", ReasonLeaseExpiring)
			s.send(syscall.SIGKILL)
		case <-s.graceC:
			s.graceC = nil
			s.killed = true
			logRepeated(s.a.Logger, &s.warn.graceKill, "grace", 1, slog.LevelWarn, "killing the process group",
				"event", EventKill, "pgid", s.pgid, "reason", ReasonKillAfter, "after_ms", s.a.KillAfter.Milliseconds())
			s.send(syscall.SIGKILL)
		case <-s.ticks():
			s.esc.signal(s.level)
		}
	}
}

// ended stops the command when the attempt's context ends: its timeout, or
// the lock lost.
func (s *supervisor) ended(ctx context.Context) {
	switch {
	case s.outcome == Interrupted:
	case errors.Is(context.Cause(ctx), ErrLostLock):
		// Not a timeout: the loop has logged the loss, a safety event
		// logged each time.
		s.outcome = LostLock
		s.a.Logger.Warn("attempt stopped", "event", EventLockError, "reason", string(s.outcome), "signal", SignalName(s.a.Signal), "pgid", s.pgid)
	default:
		s.outcome = Timeout
		logRepeated(s.a.Logger, &s.warn.timedOut, "timeout", 1, slog.LevelWarn, "attempt stopped",
			"event", EventTimeout, "reason", string(s.outcome), "signal", SignalName(s.a.Signal), "pgid", s.pgid)
	}
	s.stop(s.a.Signal)
}

// signalled passes a signal every got on: a stop signal stops the command
// (a second kills it), any other goes to its group.
func (s *supervisor) signalled(sig os.Signal) {
	sg, _ := sig.(syscall.Signal)
	switch {
	case !isStop(sg):
		_ = syscall.Kill(-s.pgid, sg)
	case s.outcome == Interrupted:
		s.a.Logger.Warn("killing the process group", "event", EventKill, "pgid", s.pgid, "reason", ReasonSecondSignal)
		s.send(syscall.SIGKILL)
	default:
		s.outcome = Interrupted
		s.stop(sg)
	}
}

// send signals the group and the escapees.
func (s *supervisor) send(sig syscall.Signal) {
	_ = syscall.Kill(-s.pgid, sig)
	if s.level != syscall.SIGKILL {
		s.level = sig
	}
	s.esc.signal(s.level)
	if s.tick == nil {
		s.tick = time.NewTicker(escapeeTick)
	}
}

// stop sends the stop signal and starts the grace before SIGKILL.
// --kill-after 0 is no SIGKILL at all, as timeout -k 0.
func (s *supervisor) stop(sig syscall.Signal) {
	s.send(sig)
	if s.grace == nil && s.a.KillAfter > 0 {
		s.grace = time.NewTimer(s.a.KillAfter)
		s.graceC = s.grace.C
	}
}

// sweep kills whatever left the group, as in a systemd service's control
// group once its main process has exited.
// Processes left behind at every run are summarised: count is how many
// were killed since the last line.
func (s *supervisor) sweep() {
	n, survive := s.esc.kill()
	switch {
	case survive > 0:
		s.a.Logger.Error("processes the command left behind survive SIGKILL", "event", EventKill, "count", survive, "after_ms", sweepBound.Milliseconds())
	case n > 0 && s.level == 0:
		logRepeated(s.a.Logger, &s.warn.leftBehind, "left_behind", n, slog.LevelWarn, "killed processes the command left behind",
			"event", EventKill, "reason", ReasonLeftBehind)
	case n == 0:
		logEnded(s.a.Logger, &s.warn.leftBehind, false, "the command leaves no processes behind again", "event", EventKill, "reason", ReasonLeftBehind)
	}
}

// endWarnings ends the summaries of the warnings this attempt did not give:
// it ended within its timeout, or without needing SIGKILL after the grace.
func (s *supervisor) endWarnings() {
	if s.outcome != Timeout {
		logEnded(s.a.Logger, &s.warn.timedOut, false, "attempts end within their timeout again", "event", EventTimeout, "reason", ReasonTimeout)
	}
	if !s.killed {
		logEnded(s.a.Logger, &s.warn.graceKill, false, "stopped attempts end within --kill-after again", "event", EventKill, "reason", ReasonKillAfter)
	}
}

func (s *supervisor) stopTimers() {
	if s.grace != nil {
		s.grace.Stop()
	}
	if s.tick != nil {
		s.tick.Stop()
	}
}

// ticks is the escapee ticker's channel, or nil without one.
func (s *supervisor) ticks() <-chan time.Time {
	if s.tick == nil {
		return nil
	}
	return s.tick.C
}

// classify turns the end of a process into a Result. An attempt stopped by
// every keeps that outcome whatever the child then did.
func classify(cmd *exec.Cmd, err error, outcome Outcome) Result {
	r := Result{Outcome: outcome}
	ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus)
	switch {
	case !ok:
		r.ExitCode, r.Err = 70, err
	case ws.Signaled():
		r.Signal = ws.Signal()
		r.ExitCode = 128 + int(ws.Signal())
	default:
		r.ExitCode = ws.ExitStatus()
	}
	switch {
	case outcome == Timeout:
		r.ExitCode = 124 // as timeout(1) reports it
	case outcome != Success:
	case r.ExitCode != 0 || r.Signal != 0:
		r.Outcome = Failure
	}
	return r
}

// StartErrorCode maps a failure to find or start a command to the shell's code:
// 127 when it does not exist, 126 when it cannot be executed.
func StartErrorCode(err error) int {
	if errors.Is(err, exec.ErrNotFound) || errors.Is(err, fs.ErrNotExist) {
		return 127
	}
	return 126
}

// sweepBound is how long every keeps killing escapees after its command
// ended: a process stuck in the kernel (state D) may take a while to die.
const sweepBound = 3 * time.Second
