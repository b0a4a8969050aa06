package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/everycli/every/state"
)

// overhead is section 3: what one run costs, one-shot as from cron, against a
// bare fork+exec of true and against flock + timeout.
func overhead(cfg *config) string {
	n := pick(cfg.quick, 40, 200)
	lock := filepath.Join(cfg.dir, "overhead.lock")
	stateDir := filepath.Join(cfg.dir, "overhead-state")
	truePath, err := exec.LookPath("true")
	check(err)
	rows := []struct {
		name string
		argv []string
	}{
		{"bare fork+exec of true", []string{truePath}},
		{"flock -n LOCK timeout 10 true", []string{"flock", "-n", lock, "timeout", "10", truePath}},
		{"minimal Go exec, one run (bench/minloop 1m 1 true)", []string{cfg.minloop, "1m", "1", truePath}},
		{"every 1m --max-runs 1 --no-state --no-lock -- true", []string{cfg.every, "1m", "--max-runs", "1", "--no-state", "--no-lock", "-q", "--", truePath}},
		{"every 1m --max-runs 1 -- true (lock and state on)", []string{cfg.every, "1m", "--max-runs", "1", "--state-dir", stateDir, "-q", "--", truePath}},
	}
	const flockRow, loopRow, everyRow = 1, 2, 4
	var b strings.Builder
	fmt.Fprintf(&b, "One-shot, as cron would run it: each command run %d times, the rows taking turns run by run so that "+
		"load falls on all alike (every with lock and state on under a new job name each time, its state absent: "+
		"a job that ran a moment ago would wait for the next minute); median wall time, and the CPU "+
		"of the whole process tree (user+system, from wait4), with what each adds over the bare exec. every's figures include "+
		"starting a Go process.\n\n", n)
	fmt.Fprintln(&b, "| command | wall median (ms) | wall p90 (ms) | adds to bare exec (ms) | CPU median (ms) | CPU added (ms) |")
	fmt.Fprintln(&b, "| --- | ---: | ---: | ---: | ---: | ---: |")
	walls := make([][]time.Duration, len(rows))
	cpus := make([][]time.Duration, len(rows))
	for k := range n {
		for i, r := range rows {
			argv := r.argv
			if i == everyRow {
				// A fresh job name each time: the state of a job that ran a
				// moment ago would hold its next run until the next minute.
				argv = append(slices.Clone(argv[:4]), append([]string{"--name", fmt.Sprintf("o%d", k)}, argv[4:]...)...)
			}
			cmd := exec.Command(argv[0], argv[1:]...)
			start := time.Now()
			if err := cmd.Run(); err != nil {
				fail("%s: %v", r.name, err)
			}
			walls[i] = append(walls[i], time.Since(start))
			ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
			cpus[i] = append(cpus[i], time.Duration(ru.Utime.Nano()+ru.Stime.Nano()))
		}
	}
	medians := make([]time.Duration, len(rows))
	var bareWall, bareCPU time.Duration
	for i, r := range rows {
		w, c := summarize(walls[i]), summarize(cpus[i])
		medians[i] = w.median
		if i == 0 {
			bareWall, bareCPU = w.median, c.median
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s |\n", r.name, ms(w.median), ms(w.p90), ms(w.median-bareWall), ms(c.median), ms(c.median-bareCPU))
	}
	fmt.Fprintf(&b, "\nWall time against flock + timeout's (median ÷ median): every one-shot, lock and state on, %.2f× "+
		"(goal, issue 22: ≤ %.2f×: %s); every --no-state --no-lock %.2f×; the minimal Go exec %.2f×.\n", ratio(medians[everyRow], medians[flockRow]),
		goalOneShot, yes(float64(medians[everyRow]) <= goalOneShot*float64(medians[flockRow])),
		ratio(medians[everyRow-1], medians[flockRow]), ratio(medians[loopRow], medians[flockRow]))

	// The state write alone, as every makes it.
	f := state.File{Path: filepath.Join(cfg.dir, "fsync", "job.json")}
	check(os.MkdirAll(filepath.Dir(f.Path), 0o700))
	rec := &state.Record{Version: 1, Name: "job", Command: []string{"true"}, Schedule: "1s", Anchor: time.Now()}
	var saves, syncs []time.Duration
	for range n {
		f.Prepare() // as every does, off the path: the next write's file made ahead
		start := time.Now()
		check(f.Save(context.Background(), rec))
		saves = append(saves, time.Since(start))
		start = time.Now()
		_, err := f.Sync()
		check(err)
		syncs = append(syncs, time.Since(start))
	}
	check(f.Close())
	s, y := summarize(saves), summarize(syncs)
	fmt.Fprintf(&b, "\nOne state write (state.File.Save: the record written to a file made ahead and exchanged with the one in place, no sync): median %s ms, p90 %s ms; "+
		"one sync (state.File.Sync: the record read back and checked, fdatasync, linked as the synced copy, fsync of the directory): median %s ms, p90 %s ms. "+
		"every writes the state twice a run, the start before the command starts; it syncs at most once a second, off the path to exec.\n", ms(s.median), ms(s.p90), ms(y.median), ms(y.p90))
	b.WriteString(inLoop(cfg, n))
	return b.String()
}
