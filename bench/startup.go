package main

import (
	"fmt"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// startup is section 10: `every --version` against a static Go hello-world,
// interleaved run by run so that load falls on both alike.
func startup(cfg *config) string {
	n := pick(cfg.quick, 50, 200)
	rows := []struct {
		name string
		argv []string
	}{
		{"static Go hello-world (bench/hello)", []string{cfg.hello}},
		{"every --version", []string{cfg.every, "--version"}},
	}
	walls := make([][]time.Duration, len(rows))
	cpus := make([][]time.Duration, len(rows))
	for range n {
		for i, r := range rows {
			cmd := exec.Command(r.argv[0], r.argv[1:]...)
			start := time.Now()
			if err := cmd.Run(); err != nil {
				fail("%s: %v", r.name, err)
			}
			walls[i] = append(walls[i], time.Since(start))
			ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
			cpus[i] = append(cpus[i], time.Duration(ru.Utime.Nano()+ru.Stime.Nano()))
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Each command run %d times, the two alternating; wall time from fork to reaped, CPU from wait4 "+
		"(user + system). Both built alike (static, CGO_ENABLED=0). Goal: every --version ≤ 1.5× the hello-world's median wall time.\n\n", n)
	fmt.Fprintln(&b, "| command | wall median (ms) | wall p90 (ms) | CPU median (ms) | wall ÷ hello-world | ≤ 1.5× |")
	fmt.Fprintln(&b, "| --- | ---: | ---: | ---: | ---: | --- |")
	base := summarize(walls[0]).median
	for i, r := range rows {
		w, c := summarize(walls[i]), summarize(cpus[i])
		verdict := "-"
		if i > 0 {
			verdict = yes(float64(w.median) <= 1.5*float64(base))
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %.2f | %s |\n", r.name, ms(w.median), ms(w.p90), ms(c.median), ratio(w.median, base), verdict)
	}
	return b.String()
}
