package main

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// A timing case: one scheduler at one interval with one kind of job.
type timingCase struct {
	scheduler string
	interval  time.Duration
	periods   int
	busy      float64 // the job's share of the interval

	late      stats
	drift     time.Duration // per period
	total     time.Duration // drift over the whole run
	runs      int
	missed    int
	doubled   int
	startCost procSample // every's, after its first run
	endCost   procSample // every's, after the last
	everyLate stats      // every's own late_ms: slot to exec
	args      []string   // the option's value, for the operations rows
	err       error
}

// costCases keeps the timing cases of every for the cost section.
var costCases []*timingCase

func timing(cfg *config) string {
	var cases []*timingCase
	for _, iv := range []struct {
		d       time.Duration
		periods int
	}{{time.Second, pick(cfg.quick, 20, 120)}, {100 * time.Millisecond, pick(cfg.quick, 100, 300)}} {
		for _, busy := range []float64{0, 0.3} {
			for _, s := range append([]string{"every", "shell loop"}, keys(cfg.extra)...) {
				cases = append(cases, &timingCase{scheduler: s, interval: iv.d, periods: iv.periods, busy: busy})
			}
		}
	}
	// All at once: each sleeps nearly all the time, and the run takes as
	// long as the longest case instead of the sum.
	// Each starts 37ms after the one before, so that their grids do not
	// line up and eight forks do not race for two cores at the same instant.
	var wg sync.WaitGroup
	for i, c := range cases {
		wg.Add(1)
		go func() {
			defer wg.Done()
			time.Sleep(time.Duration(i) * 37 * time.Millisecond)
			c.err = runTiming(cfg, c, filepath.Join(cfg.dir, fmt.Sprintf("timing-%d", i)))
		}()
	}
	wg.Wait()

	var b strings.Builder
	fmt.Fprintf(&b, "A job that appends its start time to a file (bench/stamp), or that also sleeps 30%% of the interval. "+
		"Lateness is each start against the ideal grid, start i at t0 + i*interval, with t0 the earliest the starts allow "+
		"(so the least late start is on time, and the exec cost all starts pay alike is not lateness); "+
		"drift is the lateness gained per period, total drift from the first start to the last. "+
		"Missed and doubled count grid slots with no start or with two. Times in ms.\n\n")
	fmt.Fprintln(&b, "| scheduler | interval | job | runs | median | p99 | max | drift/period | total drift | missed | doubled |")
	fmt.Fprintln(&b, "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
	for _, c := range cases {
		job := c.jobLabel()
		if c.err != nil {
			fmt.Fprintf(&b, "| %s | %s | %s | failed: %v |||||||| \n", c.scheduler, c.interval, job, c.err)
			continue
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %d | %s | %s | %s | %s | %s | %d | %d |\n", c.scheduler, c.interval, job, c.runs,
			ms(c.late.median), ms(c.late.p99), ms(c.late.max), ms(c.drift), ms(c.total), c.missed, c.doubled)
		if c.scheduler == "every" {
			costCases = append(costCases, c)
		}
	}
	return b.String()
}

// calendarTiming measures calendar schedules against the duration grid, a
// pair at a time, side by side: calendar slots fall on whole seconds, and
// several calendar jobs together would all fork at the same instant on two
// cores, which measures the machine, not every.
func calendarTiming(cfg *config) string {
	pairs := []struct {
		calendar string
		interval time.Duration
		periods  int
	}{
		{"every --align", time.Second, pick(cfg.quick, 20, 60)},
		{"every cron", time.Second, pick(cfg.quick, 20, 60)},
		{"every --align", 100 * time.Millisecond, pick(cfg.quick, 100, 300)},
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Each calendar schedule runs beside a plain duration grid of the same interval (every 1s, every 100ms), "+
		"the pairs one after another, with the job of section 1 (instant). `every --align` waits on the wall clock "+
		"(a timerfd on CLOCK_REALTIME), `every cron` is `* * * * * *`; lateness as in section 1, and every's own "+
		"late_ms (slot to exec, from its log). Times in ms.\n\n")
	fmt.Fprintln(&b, "| scheduler | interval | runs | median | p99 | max | drift/period | missed | doubled | own slot to exec, median / p99 |")
	fmt.Fprintln(&b, "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
	for i, p := range pairs {
		cases := []*timingCase{
			{scheduler: "every", interval: p.interval, periods: p.periods},
			{scheduler: p.calendar, interval: p.interval, periods: p.periods},
		}
		runSideBySide(cfg, cases, fmt.Sprintf("calendar-%d", i))
		for _, c := range cases {
			if c.err != nil {
				fmt.Fprintf(&b, "| %s | %s | failed: %v ||||||| \n", c.scheduler, c.interval, c.err)
				continue
			}
			fmt.Fprintf(&b, "| %s | %s | %d | %s | %s | %s | %s | %d | %d | %s / %s |\n", c.scheduler, c.interval, c.runs,
				ms(c.late.median), ms(c.late.p99), ms(c.late.max), ms(c.drift), c.missed, c.doubled,
				ms(c.everyLate.median), ms(c.everyLate.p99))
		}
	}
	return b.String()
}

// runSideBySide runs timing cases at the same time, each in its own
// directory under cfg.dir named after prefix.
func runSideBySide(cfg *config, cases []*timingCase, prefix string) {
	var wg sync.WaitGroup
	for j, c := range cases {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.err = runTiming(cfg, c, filepath.Join(cfg.dir, fmt.Sprintf("%s-%d", prefix, j)))
		}()
	}
	wg.Wait()
}

// opsTiming measures the operations features beside a plain run, a pair at
// a time: --ping to a local HTTP server (healthchecks.io protocol; the
// server answers at once) and --quiet-success (the output through pipes).
// Neither may add to a run's lateness.
func opsTiming(cfg *config) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
	}))
	defer srv.Close()
	periods := pick(cfg.quick, 20, 60)
	pairs := []*timingCase{
		{scheduler: "every --ping", interval: time.Second, periods: periods, args: []string{srv.URL + "/0f3c-check"}},
		{scheduler: "every --quiet-success", interval: time.Second, periods: periods},
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Each feature runs beside a plain `every 1s` (the job of section 1, instant), the pairs one after "+
		"another: `--ping` to a local HTTP server that answers at once (a ping at each run's end; no start ping "+
		"below a minute), `--quiet-success` (the output through pipes, held). Lateness as in section 1, and every's "+
		"own late_ms. Times in ms.\n\n")
	fmt.Fprintln(&b, "| scheduler | interval | runs | median | p99 | max | missed | doubled | own slot to exec, median / p99 |")
	fmt.Fprintln(&b, "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
	for i, c := range pairs {
		cases := []*timingCase{{scheduler: "every", interval: c.interval, periods: c.periods}, c}
		runSideBySide(cfg, cases, fmt.Sprintf("ops-%d", i))
		for _, c := range cases {
			if c.err != nil {
				fmt.Fprintf(&b, "| %s | %s | failed: %v |||||| \n", c.scheduler, c.interval, c.err)
				continue
			}
			own := "- (no log: -q)"
			if c.everyLate.n > 0 {
				own = ms(c.everyLate.median) + " / " + ms(c.everyLate.p99)
			}
			fmt.Fprintf(&b, "| %s | %s | %d | %s | %s | %s | %d | %d | %s |\n", c.scheduler, c.interval, c.runs,
				ms(c.late.median), ms(c.late.p99), ms(c.late.max), c.missed, c.doubled, own)
		}
	}
	return b.String()
}

func (c *timingCase) jobLabel() string {
	if c.busy > 0 {
		return fmt.Sprintf("%.0f%% of interval", c.busy*100)
	}
	return "instant"
}

func pick[T any](quick bool, q, full T) T {
	if quick {
		return q
	}
	return full
}

func keys(m map[string]string) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	return ks
}

func runTiming(cfg *config, c *timingCase, dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	out := filepath.Join(dir, "stamps")
	jobArgv := []string{cfg.stamp, "-f", out}
	if c.busy > 0 {
		jobArgv = append(jobArgv, "-sleep", time.Duration(c.busy*float64(c.interval)).String())
	}
	job := strings.Join(jobArgv, " ")
	secs := strconv.FormatFloat(c.interval.Seconds(), 'f', -1, 64)
	var cmd *exec.Cmd
	switch c.scheduler {
	case "every":
		cmd = exec.Command(cfg.every, append([]string{c.interval.String(), "--state-dir", dir, "--"}, jobArgv...)...)
	case "every --align":
		// On the wall clock: a timerfd on CLOCK_REALTIME, not the monotonic grid.
		cmd = exec.Command(cfg.every, append([]string{c.interval.String(), "--align", "--state-dir", dir, "--"}, jobArgv...)...)
	case "every --ping", "every --quiet-success":
		cmd = exec.Command(cfg.every, append([]string{c.interval.String(), "--state-dir", dir, strings.TrimPrefix(c.scheduler, "every ")}, c.args...)...)
		cmd.Args = append(cmd.Args, append([]string{"--"}, jobArgv...)...)
	case "every cron":
		cmd = exec.Command(cfg.every, append([]string{"* * * * * *", "--state-dir", dir, "--"}, jobArgv...)...)
	case "shell loop":
		cmd = exec.Command("sh", "-c", "while true; do "+job+"; sleep "+secs+"; done")
	default:
		tmpl := strings.NewReplacer("{interval}", secs, "{job}", job).Replace(cfg.extra[c.scheduler])
		cmd = exec.Command("sh", "-c", tmpl)
	}
	logFile, err := os.Create(filepath.Join(dir, "log"))
	if err != nil {
		return err
	}
	defer logFile.Close()
	cmd.Stderr = logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return err
	}
	defer stopGroup(cmd)
	bound := time.Duration(c.periods+20) * c.interval * 2
	if err := waitLines(out, 1, bound); err != nil {
		return err
	}
	// Let the first run end before the first sample.
	time.Sleep(time.Duration((c.busy + 0.5) * float64(c.interval)))
	c.startCost, _ = sampleProc(cmd.Process.Pid)
	if err := waitLines(out, c.periods, bound); err != nil {
		return err
	}
	time.Sleep(time.Duration((c.busy + 0.5) * float64(c.interval)))
	c.endCost, _ = sampleProc(cmd.Process.Pid)
	c.analyze(out)
	if strings.HasPrefix(c.scheduler, "every") {
		c.everyLate = lateFromLog(filepath.Join(dir, "log"))
	}
	return nil
}

func waitLines(path string, n int, bound time.Duration) error {
	deadline := time.Now().Add(bound)
	for time.Now().Before(deadline) {
		if b, err := os.ReadFile(path); err == nil && strings.Count(string(b), "\n") >= n {
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Errorf("%s: %d lines not reached within %s", path, n, bound)
}

func (c *timingCase) analyze(path string) {
	f, err := os.Open(path)
	if err != nil {
		c.err = err
		return
	}
	defer f.Close()
	var starts []int64
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 {
			continue
		}
		n, err := strconv.ParseInt(fields[0], 10, 64)
		if err == nil {
			starts = append(starts, n)
		}
	}
	if len(starts) > c.periods {
		starts = starts[:c.periods]
	}
	c.runs = len(starts)
	iv := float64(c.interval)
	// The ideal grid is start i at t0 + i*interval, with t0 as early as the
	// starts allow: the least late start is on time, and a cost that every
	// start pays alike (exec) is not lateness.
	t0 := starts[0]
	for i, t := range starts {
		t0 = min(t0, t-int64(i)*int64(c.interval))
	}
	var late []time.Duration
	seen := map[int64]int{}
	for i, t := range starts {
		late = append(late, time.Duration(t-t0-int64(i)*int64(c.interval)))
		seen[int64(math.Round(float64(t-starts[0])/iv))]++
	}
	c.late = summarize(late)
	c.total = late[len(late)-1] - late[0]
	if len(late) > 1 {
		c.drift = c.total / time.Duration(len(late)-1)
	}
	last := int64(math.Round(float64(starts[len(starts)-1]-starts[0]) / iv))
	c.missed = int(last+1) - len(seen)
	for _, n := range seen {
		c.doubled += n - 1
	}
}

var lateMS = regexp.MustCompile(`late_ms=([0-9.]+)`)

// lateFromLog reads every's own late_ms, slot to exec, from its log.
func lateFromLog(path string) stats {
	b, err := os.ReadFile(path)
	if err != nil {
		return stats{}
	}
	var ds []time.Duration
	for _, m := range lateMS.FindAllStringSubmatch(string(b), -1) {
		v, _ := strconv.ParseFloat(m[1], 64)
		ds = append(ds, time.Duration(v*1e6))
	}
	return summarize(ds)
}

// costNote is section 2, from the every cases of section 1.
func costNote() string {
	var b strings.Builder
	fmt.Fprintf(&b, "The every process alone (its children excluded), sampled from /proc after its first run and after its last, "+
		"during the runs of section 1. CPU from schedstat, context switches summed over its threads. Slot to exec is every's "+
		"own late_ms, from its log; goal (issue 12): median ≤ %s ms and p99 ≤ %s ms at 1s and 100ms slots.\n\n", ms(goalLateMedian), ms(goalLateP99))
	fmt.Fprintln(&b, "| interval | job | periods | CPU total (ms) | CPU/period (ms) | switches/period | RSS start (MiB) | RSS end (MiB) | peak RSS (MiB) | slot to exec, median / p99 (ms) | slot to exec goal |")
	fmt.Fprintln(&b, "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |")
	for _, c := range costCases {
		job := c.jobLabel()
		periods := c.periods - 1
		cpu := c.endCost.cpu - c.startCost.cpu
		sw := c.endCost.switches - c.startCost.switches
		fmt.Fprintf(&b, "| %s | %s | %d | %s | %s | %.1f | %s | %s | %s | %s / %s | %s |\n", c.interval, job, periods,
			ms(cpu), ms(cpu/time.Duration(periods)), float64(sw)/float64(periods),
			mib(c.startCost.rssKiB), mib(c.endCost.rssKiB), mib(c.endCost.peakKiB), ms(c.everyLate.median), ms(c.everyLate.p99),
			yes(c.everyLate.n > 0 && c.everyLate.median <= goalLateMedian && c.everyLate.p99 <= goalLateP99))
	}
	return b.String()
}
