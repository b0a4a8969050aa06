package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// stop is section 4: SIGTERM to exit while idle, and while the job runs.
func stop(cfg *config) string {
	n := pick(cfg.quick, 10, 30)
	var idle, toJob, toExit []time.Duration
	left := 0
	for i := range n {
		dir := filepath.Join(cfg.dir, fmt.Sprintf("stop-%d", i))
		check(os.MkdirAll(dir, 0o700))
		stamps := filepath.Join(dir, "stamps")

		// Idle: the first run is over, the next an hour away.
		cmd := exec.Command(cfg.every, "1h", "--state-dir", dir, "-q", "--", cfg.stamp, "-f", stamps)
		check(cmd.Start())
		check(waitLines(stamps, 1, 30*time.Second))
		waitIdle(cmd.Process.Pid)
		start := time.Now()
		check(cmd.Process.Signal(syscall.SIGTERM))
		_ = cmd.Wait()
		idle = append(idle, time.Since(start))

		// Busy: the job traps SIGTERM and writes when it came.
		term := filepath.Join(dir, "term")
		cmd = exec.Command(cfg.every, "1h", "--state-dir", dir, "--name", "busy", "-q", "--", cfg.stamp, "-f", stamps+"2", "-term", term, "-sleep", "1h")
		check(cmd.Start())
		check(waitLines(stamps+"2", 1, 30*time.Second))
		time.Sleep(20 * time.Millisecond) // the job's signal handler is in place
		start = time.Now()
		check(cmd.Process.Signal(syscall.SIGTERM))
		_ = cmd.Wait()
		toExit = append(toExit, time.Since(start))
		if b, err := os.ReadFile(term); err == nil {
			ns, _ := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
			toJob = append(toJob, time.Unix(0, ns).Sub(start))
		}
		left += leftBehind(cfg.stamp)
	}
	si, sj, se := summarize(idle), summarize(toJob), summarize(toExit)
	var b strings.Builder
	fmt.Fprintf(&b, "%d stops each. Idle: SIGTERM to exit of every. Busy: SIGTERM to every, to the job's handler running, "+
		"and to every's exit (the job exits at once on SIGTERM). Left behind: job processes alive after every exited.\n\n", n)
	fmt.Fprintln(&b, "| case | median (ms) | p90 (ms) | max (ms) |")
	fmt.Fprintln(&b, "| --- | ---: | ---: | ---: |")
	fmt.Fprintf(&b, "| idle: SIGTERM to exit | %s | %s | %s |\n", ms(si.median), ms(si.p90), ms(si.max))
	fmt.Fprintf(&b, "| busy: SIGTERM to the job signalled | %s | %s | %s |\n", ms(sj.median), ms(sj.p90), ms(sj.max))
	fmt.Fprintf(&b, "| busy: SIGTERM to exit | %s | %s | %s |\n", ms(se.median), ms(se.p90), ms(se.max))
	fmt.Fprintf(&b, "\nProcesses left behind: %d (of %d stops).\n", left, n)
	return b.String()
}

// waitIdle waits until pid has no child process left.
func waitIdle(pid int) {
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		busy := false
		tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", pid))
		for _, t := range tasks {
			if b, _ := os.ReadFile(t); len(strings.TrimSpace(string(b))) > 0 {
				busy = true
			}
		}
		if !busy {
			time.Sleep(5 * time.Millisecond) // back in its idle wait
			return
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// leftBehind counts live processes running the job binary.
func leftBehind(bin string) int {
	n := 0
	procs, _ := filepath.Glob("/proc/[0-9]*/exe")
	for _, p := range procs {
		if target, err := os.Readlink(p); err == nil && target == bin {
			stat, _ := os.ReadFile(filepath.Join(filepath.Dir(p), "stat"))
			if i := strings.LastIndexByte(string(stat), ')'); i > 0 && !strings.HasPrefix(strings.TrimSpace(string(stat[i+1:])), "Z") {
				n++
			}
		}
	}
	return n
}
