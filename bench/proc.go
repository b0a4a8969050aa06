package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// procSample is what /proc tells of one process, its threads summed.
type procSample struct {
	cpu      time.Duration // on-CPU time (schedstat)
	switches int64         // voluntary + involuntary context switches
	rssKiB   int64
	peakKiB  int64
	anonKiB  int64 // RssAnon: the process's own pages
	pssKiB   int64 // Pss: its pages, shared ones divided among their sharers
	threads  int64
}

func sampleProc(pid int) (procSample, error) {
	var s procSample
	tasks, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*", pid))
	if err != nil || len(tasks) == 0 {
		return s, fmt.Errorf("process %d: no tasks", pid)
	}
	for _, t := range tasks {
		b, err := os.ReadFile(t + "/schedstat")
		if err != nil {
			continue // the thread ended meanwhile
		}
		if f := strings.Fields(string(b)); len(f) > 0 {
			ns, _ := strconv.ParseInt(f[0], 10, 64)
			s.cpu += time.Duration(ns)
		}
		st := statusFields(t + "/status")
		s.switches += st["voluntary_ctxt_switches"] + st["nonvoluntary_ctxt_switches"]
	}
	st := statusFields(fmt.Sprintf("/proc/%d/status", pid))
	s.rssKiB, s.peakKiB, s.anonKiB, s.threads = st["VmRSS"], st["VmHWM"], st["RssAnon"], st["Threads"]
	s.pssKiB = statusFields(fmt.Sprintf("/proc/%d/smaps_rollup", pid))["Pss"]
	return s, nil
}

func statusFields(path string) map[string]int64 {
	m := map[string]int64{}
	b, err := os.ReadFile(path)
	if err != nil {
		return m
	}
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		if f := strings.Fields(v); len(f) > 0 {
			n, err := strconv.ParseInt(f[0], 10, 64)
			if err == nil {
				m[k] = n
			}
		}
	}
	return m
}

// stats of a sample of durations.
type stats struct {
	n                   int
	median, p99, max    time.Duration
	mean, min, p90, sum time.Duration
}

func summarize(ds []time.Duration) stats {
	if len(ds) == 0 {
		return stats{}
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	var sum time.Duration
	for _, d := range s {
		sum += d
	}
	at := func(q float64) time.Duration { return s[min(len(s)-1, int(q*float64(len(s))))] }
	return stats{n: len(s), median: at(0.5), p90: at(0.9), p99: at(0.99), max: s[len(s)-1], min: s[0],
		sum: sum, mean: sum / time.Duration(len(s))}
}

// ms formats a duration in milliseconds, to the microsecond.
func ms(d time.Duration) string {
	return strconv.FormatFloat(float64(d)/1e6, 'f', 3, 64)
}

func mib(kib int64) string {
	return strconv.FormatFloat(float64(kib)/1024, 'f', 1, 64)
}
