package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// An rssRun is a wrapper left running long enough for its memory to settle:
// until a number of runs, or for a time.
type rssRun struct {
	name     string
	argv     func(job []string, dir string) []string
	interval time.Duration
	runs     int           // wait for this many runs, or
	window   time.Duration // for this long
	every    bool

	done        int
	first, last procSample
	took        time.Duration
	err         error
}

// rssSteady is section 9: every's resident memory after many runs at short
// slots, beside the minimal Go loop at the same slots.
func rssSteady(cfg *config) string {
	runs10 := pick(cfg.quick, 1000, 10000)
	window := pick(cfg.quick, 20*time.Second, 5*time.Minute)
	everyArgv := func(iv time.Duration) func([]string, string) []string {
		return func(job []string, dir string) []string {
			return append([]string{cfg.every, iv.String(), "--state-dir", dir, "--name", "rss", "--"}, job...)
		}
	}
	loopArgv := func(iv time.Duration) func([]string, string) []string {
		return func(job []string, dir string) []string {
			return append([]string{cfg.minloop, iv.String(), "0"}, job...)
		}
	}
	rows := []*rssRun{
		{name: "every (lock + state on)", every: true, interval: 10 * time.Millisecond, runs: runs10, argv: everyArgv(10 * time.Millisecond)},
		{name: "minimal Go exec loop", interval: 10 * time.Millisecond, runs: runs10, argv: loopArgv(10 * time.Millisecond)},
		{name: "every (lock + state on)", every: true, interval: 100 * time.Millisecond, window: window, argv: everyArgv(100 * time.Millisecond)},
		{name: "minimal Go exec loop", interval: 100 * time.Millisecond, window: window, argv: loopArgv(100 * time.Millisecond)},
	}
	var wg sync.WaitGroup
	for i, r := range rows {
		wg.Add(1)
		go func() {
			defer wg.Done()
			time.Sleep(time.Duration(i) * 37 * time.Millisecond)
			r.measure(cfg, filepath.Join(cfg.dir, fmt.Sprintf("rss-%d", i)))
		}()
	}
	wg.Wait()

	var b strings.Builder
	if cfg.quick {
		fmt.Fprintf(&b, "**Quick mode: much shorter than the goal's runs** (%d runs at 10ms, %s at 100ms; the full run "+
			"does 10,000 runs and 5 minutes). ", runs10, window)
	}
	fmt.Fprintf(&b, "Each wrapper runs bench/stamp (the runs are counted from its file), all rows at once, every at its "+
		"defaults with its log to a file. RSS is VmRSS of the wrapper process after its first run and at the end "+
		"(its children excluded), peak is VmHWM. Goal for every: RSS at the end ≤ %s MiB.\n\n", mib(goalRSSKiB))
	fmt.Fprintf(&b, "| wrapper | slots | runs | over | RSS after first run (MiB) | RSS at the end (MiB) | peak (MiB) | RSS ≤ %s MiB |\n", mib(goalRSSKiB))
	fmt.Fprintln(&b, "| --- | --- | ---: | --- | ---: | ---: | ---: | --- |")
	for _, r := range rows {
		if r.err != nil {
			fmt.Fprintf(&b, "| %s | %s | failed: %v |||||| \n", r.name, r.interval, r.err)
			continue
		}
		verdict := "-"
		if r.every {
			verdict = yes(r.last.rssKiB <= goalRSSKiB)
		}
		fmt.Fprintf(&b, "| %s | %s | %d | %s | %s | %s | %s | %s |\n", r.name, r.interval, r.done, r.took.Round(time.Second),
			mib(r.first.rssKiB), mib(r.last.rssKiB), mib(r.last.peakKiB), verdict)
	}
	return b.String()
}

func (r *rssRun) measure(cfg *config, dir string) {
	if r.err = os.MkdirAll(dir, 0o700); r.err != nil {
		return
	}
	stamps := filepath.Join(dir, "stamps")
	argv := r.argv([]string{cfg.stamp, "-f", stamps}, dir)
	cmd := exec.Command(argv[0], argv[1:]...)
	if r.err = startLogged(cmd, filepath.Join(dir, "log")); r.err != nil {
		return
	}
	defer stopGroup(cmd)
	start := time.Now()
	if r.err = waitLines(stamps, 1, 30*time.Second); r.err != nil {
		return
	}
	time.Sleep(r.interval / 2)
	if r.first, r.err = sampleProc(cmd.Process.Pid); r.err != nil {
		return
	}
	if r.runs > 0 {
		r.err = waitLines(stamps, r.runs, time.Duration(r.runs)*r.interval*3+30*time.Second)
	} else {
		time.Sleep(r.window - time.Since(start))
	}
	if r.err != nil {
		return
	}
	r.last, r.err = sampleProc(cmd.Process.Pid)
	r.took = time.Since(start)
	r.done = countLines(stamps)
}
