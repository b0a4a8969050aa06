package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// scale is section 5: many jobs on one host, and many instances of one job.
func scale(cfg *config) string {
	var b strings.Builder
	jobs, window := pick(cfg.quick, 50, 200), pick(cfg.quick, 10*time.Second, 30*time.Second)
	dir := filepath.Join(cfg.dir, "scale")
	check(os.MkdirAll(dir, 0o700))
	var cmds []*exec.Cmd
	for i := range jobs {
		cmd := exec.Command(cfg.every, "1s", "--state-dir", dir, "--name", fmt.Sprintf("j%d", i), "-q", "--", "true")
		check(cmd.Start())
		cmds = append(cmds, cmd)
	}
	time.Sleep(2 * time.Second) // all started, first runs done
	before := sumProcs(cmds)
	time.Sleep(window)
	after := sumProcs(cmds)
	for _, c := range cmds {
		c.Process.Signal(syscall.SIGTERM)
	}
	for _, c := range cmds {
		c.Wait()
	}
	cpuPerMin := time.Duration(float64(after.cpu-before.cpu) * float64(time.Minute) / float64(window))
	n := int64(jobs)
	fmt.Fprintf(&b, "%d concurrent `every 1s -- true` jobs, measured over %s: total RSS %s MiB (%s MiB each), "+
		"total CPU of the every processes %s ms per minute (%s ms per job per minute). RSS is VmRSS summed over the every "+
		"processes (the executable's shared pages counted in each); what the jobs take together is their PSS, "+
		"%s MiB (%s MiB each, of which their own pages, RssAnon, %s MiB each). Goal: ≤ %s MiB each: %s by VmRSS, %s by PSS.\n\n",
		jobs, window, mib(after.rssKiB), mib(after.rssKiB/n), ms(cpuPerMin), ms(cpuPerMin/time.Duration(jobs)),
		mib(after.pssKiB), mib(after.pssKiB/n), mib(after.anonKiB/n),
		mib(goalScaleRSSKiB), yes(after.rssKiB/n <= goalScaleRSSKiB), yes(after.pssKiB/n <= goalScaleRSSKiB))

	// Eight instances contending for one job at 10ms slots.
	cdir := filepath.Join(cfg.dir, "contend")
	check(os.MkdirAll(cdir, 0o700))
	stamps, mutex := filepath.Join(cdir, "stamps"), filepath.Join(cdir, "m")
	cmds = nil
	for range 8 {
		cmd := exec.Command(cfg.every, "10ms", "--state-dir", cdir, "--name", "c", "-q", "--", cfg.stamp, "-f", stamps, "-mutex", mutex)
		check(cmd.Start())
		cmds = append(cmds, cmd)
	}
	cwin := pick(cfg.quick, 3*time.Second, 10*time.Second)
	time.Sleep(cwin)
	for _, c := range cmds {
		c.Process.Signal(syscall.SIGTERM)
	}
	for _, c := range cmds {
		c.Wait()
	}
	lines, _ := os.ReadFile(stamps)
	slots := map[string]int{}
	runs := 0
	for _, l := range strings.Split(strings.TrimSpace(string(lines)), "\n") {
		if f := strings.Fields(l); len(f) == 2 {
			slots[f[1]]++
			runs++
		}
	}
	overlaps := 0
	if b, err := os.ReadFile(mutex + ".overlaps"); err == nil {
		overlaps = strings.Count(string(b), "\n")
	}
	fmt.Fprintf(&b, "Eight instances of one job at 10ms slots for %s: %d runs (%.0f per second, of 100 slots per second), "+
		"%d slots run twice, %d overlaps.\n", cwin, runs, float64(runs)/cwin.Seconds(), runs-len(slots), overlaps)
	return b.String()
}

func sumProcs(cmds []*exec.Cmd) procSample {
	var total procSample
	for _, c := range cmds {
		s, err := sampleProc(c.Process.Pid)
		if err != nil {
			continue
		}
		total.cpu += s.cpu
		total.switches += s.switches
		total.rssKiB += s.rssKiB
		total.peakKiB += s.peakKiB
		total.anonKiB += s.anonKiB
		total.pssKiB += s.pssKiB
	}
	return total
}
