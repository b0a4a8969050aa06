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

// inLoop measures one run of a running every: SIGUSR1 asks for a run now,
// and the job stamps when it started. The path from the signal to the job's
// start (lock, state read, fork, exec) is compared with the harness's own
// fork+exec of the same job, and with flock + timeout in front of it; the
// every process's own CPU per run comes from /proc.
func inLoop(cfg *config, n int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "\nIn a running every (the daemon case), %d runs asked for with SIGUSR1 of a job that stamps its start: "+
		"time from the request to the job's start, against the harness's own fork+exec of the job and against flock + timeout "+
		"in front of it; and the every process's own CPU per run (its children excluded).\n\n", n)
	fmt.Fprintln(&b, "| path to the job's start | median (ms) | p90 (ms) | adds to bare exec (ms) | every's CPU per run (ms) |")
	fmt.Fprintln(&b, "| --- | ---: | ---: | ---: | ---: |")

	lock := filepath.Join(cfg.dir, "inloop.lock")
	var bare time.Duration
	for i, row := range []struct {
		name string
		argv func(stamps string) []string
	}{
		{"bare fork+exec (harness)", func(s string) []string { return []string{cfg.stamp, "-f", s} }},
		{"flock -n LOCK timeout 10 (harness)", func(s string) []string {
			return []string{"flock", "-n", lock, "timeout", "10", cfg.stamp, "-f", s}
		}},
	} {
		dir := filepath.Join(cfg.dir, fmt.Sprintf("inloop-h%d", i))
		check(os.MkdirAll(dir, 0o700))
		stamps := filepath.Join(dir, "stamps")
		var ds []time.Duration
		for k := range n {
			argv := row.argv(stamps)
			start := time.Now()
			check(exec.Command(argv[0], argv[1:]...).Run())
			ds = append(ds, time.Unix(0, lastStamp(stamps, k+1)).Sub(start))
		}
		s := summarize(ds)
		if i == 0 {
			bare = s.median
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | - |\n", row.name, ms(s.median), ms(s.p90), ms(s.median-bare))
	}
	for _, row := range []struct {
		name string
		opts []string
	}{
		{"every, SIGUSR1, --no-state --no-lock", []string{"--no-state", "--no-lock"}},
		{"every, SIGUSR1, lock and state on", nil},
	} {
		dir := filepath.Join(cfg.dir, "inloop-"+strconv.Itoa(len(row.opts)))
		check(os.MkdirAll(dir, 0o700))
		stamps := filepath.Join(dir, "stamps")
		args := append([]string{"1h", "--state-dir", dir, "-q"}, row.opts...)
		cmd := exec.Command(cfg.every, append(args, "--", cfg.stamp, "-f", stamps)...)
		check(cmd.Start())
		check(waitLines(stamps, 1, 30*time.Second))
		waitIdle(cmd.Process.Pid)
		before, _ := sampleProc(cmd.Process.Pid)
		var ds []time.Duration
		for k := range n {
			start := time.Now()
			check(cmd.Process.Signal(syscall.SIGUSR1))
			check(waitLines(stamps, k+2, 30*time.Second))
			ds = append(ds, time.Unix(0, lastStamp(stamps, k+2)).Sub(start))
			waitIdle(cmd.Process.Pid)
		}
		after, _ := sampleProc(cmd.Process.Pid)
		cmd.Process.Signal(syscall.SIGTERM)
		cmd.Wait()
		s := summarize(ds)
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", row.name, ms(s.median), ms(s.p90), ms(s.median-bare), ms((after.cpu-before.cpu)/time.Duration(n)))
	}
	return b.String()
}

// lastStamp reads line k (from 1) of a stamps file: the start time in ns.
func lastStamp(path string, k int) int64 {
	b, err := os.ReadFile(path)
	check(err)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) < k {
		fail("%s has %d stamps, want %d", path, len(lines), k)
	}
	ns, err := strconv.ParseInt(strings.Fields(lines[k-1])[0], 10, 64)
	check(err)
	return ns
}
