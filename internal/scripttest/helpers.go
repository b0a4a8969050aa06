package scripttest

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/everycli/every/internal/testutil"
	"github.com/rogpeppe/go-internal/testscript"
	"golang.org/x/sys/unix"
)

// JobMain is the command the scripts schedule. Its flags act in a fixed order:
// pid files, signal handling, marker files, then sleep, then exit.
func JobMain() {
	fs := flag.NewFlagSet("job", flag.ExitOnError)
	pid := fs.String("pid", "", "write own pid to `FILE`")
	ppid := fs.String("ppid", "", "write the parent's pid (every's) to `FILE`")
	ignoreTerm := fs.Bool("ignore-term", false, "ignore SIGTERM and SIGINT")
	trap := fs.String("trap", "", "append the names of SIGHUP, SIGUSR2, SIGINT and SIGTERM received to `FILE`, and go on")
	env := fs.String("env", "", "write the EVERY_* environment to `FILE`")
	stdin := fs.String("stdin", "", "read stdin to its end and write what came to `FILE`")
	appendTo := fs.String("append", "", "append EVERY_RUN and EVERY_ATTEMPT as one line to `FILE`")
	touch := fs.String("touch", "", "create `FILE` once everything above is done")
	grandchild := fs.String("grandchild", "", "start a grandchild that sleeps, and write its pid to `FILE`")
	sleep := fs.Duration("sleep", 0, "sleep `D`")
	failUntil := fs.Int("fail-until", 0, "exit 1 unless EVERY_ATTEMPT is at least `N`")
	kill := fs.String("kill-self", "", "end by `SIG` sent to itself")
	code := fs.Int("exit", 0, "exit `N`")
	args := fs.String("args", "", "write the arguments after the flags to `FILE`")
	mutex := fs.String("mutex", "", "hold `DIR` (mkdir) while running; finding it taken, append \"overlap\" to DIR.overlaps")
	slots := fs.String("slots", "", "append EVERY_SLOT to `FILE`")
	fence := fs.String("fence", "", "append EVERY_FENCING_TOKEN to `FILE`")
	waitFor := fs.String("waitfor", "", "wait until `FILE` exists (at most the wait bound)")
	_ = fs.Parse(os.Args[1:])

	writeFile(*args, strings.Join(fs.Args(), " ")+"\n")
	writeFile(*pid, strconv.Itoa(os.Getpid()))
	writeFile(*ppid, strconv.Itoa(os.Getppid()))
	if *ignoreTerm {
		signal.Ignore(syscall.SIGTERM, syscall.SIGINT)
	}
	if *trap != "" {
		c := make(chan os.Signal, 8)
		signal.Notify(c, syscall.SIGHUP, syscall.SIGUSR2, syscall.SIGINT, syscall.SIGTERM)
		go func() {
			for sig := range c {
				appendLine(*trap, unix.SignalName(sig.(syscall.Signal)))
			}
		}()
	}
	if *env != "" {
		var vars []string
		for _, kv := range os.Environ() {
			if strings.HasPrefix(kv, "EVERY_") {
				vars = append(vars, kv)
			}
		}
		sort.Strings(vars)
		writeFile(*env, strings.Join(vars, "\n")+"\n")
	}
	if *stdin != "" {
		b, err := io.ReadAll(os.Stdin)
		writeFile(*stdin, fmt.Sprintf("read %d bytes, err %v: %q\n", len(b), err, b))
	}
	if *appendTo != "" {
		appendLine(*appendTo, "run "+os.Getenv("EVERY_RUN")+" attempt "+os.Getenv("EVERY_ATTEMPT"))
	}
	if *mutex != "" {
		if err := os.Mkdir(*mutex, 0o700); err != nil {
			appendLine(*mutex+".overlaps", "overlap at slot "+os.Getenv("EVERY_SLOT"))
		}
	}
	if *slots != "" {
		appendLine(*slots, os.Getenv("EVERY_SLOT"))
	}
	if *fence != "" {
		appendLine(*fence, os.Getenv("EVERY_FENCING_TOKEN"))
	}
	if *grandchild != "" {
		cmd := exec.Command("job", "-pid", *grandchild, "-ignore-term", "-sleep", "1h")
		if err := cmd.Start(); err != nil {
			fatalf("start grandchild: %v", err)
		}
		waitForFile(*grandchild)
	}
	writeFile(*touch, "")
	if *waitFor != "" && !waitForFile(*waitFor) {
		fatalf("%s did not appear within %v", *waitFor, testutil.WaitBound)
	}
	time.Sleep(*sleep)
	if *mutex != "" {
		os.Remove(*mutex) // before os.Exit, which runs no defers
	}
	if n, _ := strconv.Atoi(os.Getenv("EVERY_ATTEMPT")); n < *failUntil {
		os.Exit(1)
	}
	if *kill != "" {
		_ = syscall.Kill(os.Getpid(), unix.SignalNum("SIG"+*kill))
		time.Sleep(testutil.WaitBound)
	}
	os.Exit(*code)
}

// ExitStatusMain runs a command with the same stdio and writes how it ended,
// "exit N" or "signal NAME", to a file: testscript itself only tells success
// from failure.
// With -log FILE, the command's stderr also goes to FILE as it comes, for
// waitlog to watch.
func ExitStatusMain() {
	fs := flag.NewFlagSet("exitstatus", flag.ExitOnError)
	logFile := fs.String("log", "", "copy the command's stderr to `FILE`")
	_ = fs.Parse(os.Args[1:])
	args := fs.Args()
	if len(args) < 2 {
		fatalf("usage: exitstatus [-log FILE] STATUSFILE COMMAND [ARG...]")
	}
	cmd := exec.Command(args[1], args[2:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if *logFile != "" {
		f, err := os.Create(*logFile)
		if err != nil {
			fatalf("exitstatus: %v", err)
		}
		defer f.Close()
		cmd.Stderr = io.MultiWriter(os.Stderr, f)
	}
	// Pass stop signals on, so the command can be stopped through this wrapper.
	c := make(chan os.Signal, 8)
	signal.Notify(c, syscall.SIGINT, syscall.SIGTERM)
	if err := cmd.Start(); err != nil {
		fatalf("exitstatus: %v", err)
	}
	go func() {
		for sig := range c {
			_ = cmd.Process.Signal(sig)
		}
	}()
	err := cmd.Wait()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		fatalf("exitstatus: %v", err)
	}
	ws := cmd.ProcessState.Sys().(syscall.WaitStatus)
	status := "exit " + strconv.Itoa(ws.ExitStatus())
	if ws.Signaled() {
		status = "signal " + unix.SignalName(ws.Signal())
	}
	writeFile(args[0], status+"\n")
}

func writeFile(name, content string) {
	if name == "" {
		return
	}
	// Written aside and renamed, so a reader never sees a half-written file.
	if err := os.WriteFile(name+".tmp", []byte(content), 0o644); err != nil {
		fatalf("%v", err)
	}
	if err := os.Rename(name+".tmp", name); err != nil {
		fatalf("%v", err)
	}
}

func appendLine(name, line string) {
	f, err := os.OpenFile(name, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		fatalf("%v", err)
	}
	defer f.Close()
	if _, err := f.WriteString(line + "\n"); err != nil {
		fatalf("%v", err)
	}
}

// waitForFile waits until name exists, for at most testutil.WaitBound.
func waitForFile(name string) bool {
	return testutil.Eventually(func() bool {
		_, err := os.Stat(name)
		return err == nil
	})
}

func fatalf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, format+"\n", args...)
	os.Exit(99)
}

// ParsePid parses a pid file's content. A pid of 0 or less is an error,
// never a process: kill(2) takes 0 for the caller's process group and -1 for
// every process it may signal.
func ParsePid(content string) (int, error) {
	pid, err := strconv.Atoi(strings.TrimSpace(content))
	if err != nil {
		return 0, fmt.Errorf("parse pid: %w", err)
	}
	if pid <= 0 {
		return 0, fmt.Errorf("pid %d is not a process", pid)
	}
	return pid, nil
}

// readPid reads a pid file written by job.
func readPid(ts *testscript.TestScript, name string) int {
	pid, err := ParsePid(ts.ReadFile(name))
	if err != nil {
		ts.Fatalf("pid file %s: %v", name, err)
	}
	return pid
}

// alive reports whether pid is a process that has not ended (a zombie has).
// It fails the script for a pid of 0 or less (see ParsePid).
func alive(ts *testscript.TestScript, pid int) bool {
	if pid <= 0 {
		ts.Fatalf("alive(%d): not a process", pid)
	}
	if err := syscall.Kill(pid, 0); err != nil {
		return false
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// The state follows the parenthesised command name.
	rest := stat[strings.LastIndexByte(string(stat), ')')+1:]
	return !strings.HasPrefix(strings.TrimSpace(string(rest)), "Z")
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

// errNotOurs says a pid is that of a process the script did not start.
var errNotOurs = errors.New("not a process of this script")

// signal SIG PIDFILE: send SIG to the process whose pid is in PIDFILE, if it
// is still one of this script's (see signalOwn): never to one that took the
// pid after it ended. With !, the process must be refused as not the
// script's, and get nothing.
func signalCmd(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 {
		ts.Fatalf("usage: signal SIG PIDFILE")
	}
	sig := unix.SignalNum("SIG" + args[0])
	if sig == 0 {
		ts.Fatalf("unknown signal %s", args[0])
	}
	err := signalOwn(ts, readPid(ts, args[1]), sig)
	switch {
	case neg && err == nil:
		ts.Fatalf("signal %s %s: sent, want it refused", args[0], args[1])
	case neg && !errors.Is(err, errNotOurs):
		ts.Fatalf("signal %s %s: %v, want it refused as %v", args[0], args[1], err, errNotOurs)
	case neg:
		ts.Logf("refused: %v", err)
	case err != nil:
		ts.Fatalf("signal %s %s: %v", args[0], args[1], err)
	}
}

// gone PIDFILE...: wait until each process has ended; with !, check that
// each is still running.
func goneCmd(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) == 0 {
		ts.Fatalf("usage: gone PIDFILE...")
	}
	for _, a := range args {
		pid := readPid(ts, a)
		if neg {
			if !alive(ts, pid) {
				ts.Fatalf("process %d (%s) has ended", pid, a)
			}
			continue
		}
		if !testutil.Eventually(func() bool { return !alive(ts, pid) }) {
			ts.Fatalf("process %d (%s) still runs after %v", pid, a, testutil.WaitBound)
		}
	}
}
