package scripttest

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/everycli/every/internal/testutil"
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
	exclusive := fs.String("exclusive", "", "hold a flock(2) of `FILE` while alive (the kernel frees it at death, however it comes); finding it taken, append \"overlap\" to FILE.overlaps")
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
	if *exclusive != "" {
		// Its own open file, close-on-exec: no other process shares it.
		f, err := os.OpenFile(*exclusive, os.O_CREATE|os.O_RDONLY, 0o600)
		if err != nil {
			fatalf("%v", err)
		}
		if unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB) != nil {
			appendLine(*exclusive+".overlaps", "overlap at run "+os.Getenv("EVERY_RUN"))
		}
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

func fatalf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, format+"\n", args...)
	os.Exit(99)
}
