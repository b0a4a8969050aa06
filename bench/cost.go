package main

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// A wrapper is a process that runs the job on a schedule: every, a
// reference or a peer. Its command runs jobArgv every interval and writes
// its log to its stderr.
type wrapper struct {
	name    string
	peer    bool // a peer, against whose cost every's is judged
	every   bool // every itself: its log has late_ms, and the goals apply
	command func(interval time.Duration, jobArgv []string, dir string) *exec.Cmd
	min     time.Duration // the shortest interval it supports
}

// wrappers are the rows of section 8: every twice, the minimal Go exec loop,
// and the peers that were given.
func wrappers(cfg *config, pingURL string) []wrapper {
	ws := []wrapper{
		{name: "every (lock + state on)", every: true, command: func(iv time.Duration, job []string, dir string) *exec.Cmd {
			return exec.Command(cfg.every, append([]string{iv.String(), "--state-dir", dir, "--name", "cost", "--"}, job...)...)
		}},
		{name: "every --no-lock --no-state", every: true, command: func(iv time.Duration, job []string, dir string) *exec.Cmd {
			return exec.Command(cfg.every, append([]string{iv.String(), "--no-lock", "--no-state", "--name", "cost", "--"}, job...)...)
		}},
		{name: "minimal Go exec loop (bench/minloop)", command: func(iv time.Duration, job []string, dir string) *exec.Cmd {
			return exec.Command(cfg.minloop, append([]string{iv.String(), "0"}, job...)...)
		}},
		{name: "Go exec loop + every's state writes, synced once a second (bench/minloop -state)", command: func(iv time.Duration, job []string, dir string) *exec.Cmd {
			return exec.Command(cfg.minloop, append([]string{"-state", filepath.Join(dir, "state.json"), iv.String(), "0"}, job...)...)
		}},
	}
	if cfg.supercronic != "" {
		ws = append(ws, wrapper{name: cfg.supercronicName, peer: true, min: time.Second,
			command: func(iv time.Duration, job []string, dir string) *exec.Cmd {
				// Seven fields, the first seconds and the last years: every second.
				tab := filepath.Join(dir, "crontab")
				check(os.WriteFile(tab, []byte("*/1 * * * * * * "+strings.Join(job, " ")+"\n"), 0o644))
				return exec.Command(cfg.supercronic, tab)
			}})
	}
	if cfg.runitor != "" {
		ws = append(ws, wrapper{name: "runitor", peer: true, command: func(iv time.Duration, job []string, dir string) *exec.Cmd {
			return exec.Command(cfg.runitor, append([]string{"-api-url", pingURL, "-uuid", "5bf66975-d4c7-4bf5-bcc8-b8d8a82ea278",
				"-no-start-ping", "-every", iv.String(), "--"}, job...)...)
		}})
	}
	return ws
}

// A costRun is one wrapper at one interval, measured between two samples
// of /proc taken between runs.
type costRun struct {
	w        wrapper
	interval time.Duration
	periods  int

	runs     int
	from, to procSample
	late     stats // every's own late_ms
	err      error
	onSample func(i int) // if set, called right after sample i (0, 1) of /proc
}

func (r *costRun) cpuPerRun() time.Duration { return (r.to.cpu - r.from.cpu) / time.Duration(r.runs) }
func (r *costRun) switchesPerRun() float64 {
	return float64(r.to.switches-r.from.switches) / float64(r.runs)
}

// measure starts the wrapper with the job bench/stamp (which appends its
// start to a file, so the runs between the samples are counted, not
// assumed), lets two runs pass, samples /proc half an interval after a run
// started, waits for periods more runs, and samples again. The job is done
// in well under half an interval, so neither sample falls inside a run.
func (r *costRun) measure(cfg *config, dir string) {
	if r.err = os.MkdirAll(dir, 0o700); r.err != nil {
		return
	}
	stamps := filepath.Join(dir, "stamps")
	cmd := r.w.command(r.interval, []string{cfg.stamp, "-f", stamps}, dir)
	if r.err = startLogged(cmd, filepath.Join(dir, "log")); r.err != nil {
		return
	}
	defer stopGroup(cmd)
	bound := time.Duration(r.periods+20)*r.interval*3 + 30*time.Second
	if r.err = waitLines(stamps, 2, bound); r.err != nil {
		return
	}
	time.Sleep(r.interval / 2)
	r.from, r.err = sampleProc(cmd.Process.Pid)
	if r.err != nil {
		return
	}
	if r.onSample != nil {
		r.onSample(0)
	}
	n0 := countLines(stamps)
	if r.err = waitLines(stamps, n0+r.periods, bound); r.err != nil {
		return
	}
	time.Sleep(r.interval / 2)
	if r.to, r.err = sampleProc(cmd.Process.Pid); r.err != nil {
		return
	}
	if r.onSample != nil {
		r.onSample(1)
	}
	r.runs = countLines(stamps) - n0
	if r.w.every {
		r.late = lateFromLog(filepath.Join(dir, "log"))
	}
}

// startLogged starts cmd in a process group of its own (stopGroup ends it),
// its stdout and stderr to the file log.
func startLogged(cmd *exec.Cmd, log string) error {
	f, err := os.Create(log)
	if err != nil {
		return err
	}
	defer f.Close() // the command has its own copy once started
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	return cmd.Start()
}

// stopGroup ends a process group started with Setpgid: SIGTERM, then
// SIGKILL after 5s, and reaps the leader.
func stopGroup(cmd *exec.Cmd) {
	syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
	}
}

func countLines(path string) int {
	b, _ := os.ReadFile(path)
	return strings.Count(string(b), "\n")
}

// runCosts measures runs side by side, each started 37ms after the one
// before so that their slots do not line up.
func runCosts(cfg *config, runs []*costRun, prefix string) {
	var wg sync.WaitGroup
	for i, r := range runs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			time.Sleep(time.Duration(i) * 37 * time.Millisecond)
			r.measure(cfg, filepath.Join(cfg.dir, fmt.Sprintf("%s-%d", prefix, i)))
		}()
	}
	wg.Wait()
}

// The goals of issue 22, for every's own cost per run (lock and state on),
// and issue 12's for scale.
const (
	goalCPU1s       = 1300 * time.Microsecond // at 1 s slots
	goalCPU100ms    = time.Millisecond        // at 100 ms slots
	goalSwitches1s  = 30
	goalSwitches100 = 25
	goalRSSKiB      = 9 * 1024 // steady, at 1 s slots
	goalLateMedian  = 300 * time.Microsecond
	goalLateP99     = 1500 * time.Microsecond
	goalOneShot     = 1.25 // one-shot wall time ÷ flock -n L timeout 10 true
	goalScaleRSSKiB = 6 * 1024
)

// goalsAt returns the CPU and switches per run that issue 22 allows at
// slots of d.
func goalsAt(d time.Duration) (time.Duration, float64) {
	if d < time.Second {
		return goalCPU100ms, goalSwitches100
	}
	return goalCPU1s, goalSwitches1s
}

// costSideBySide is section 8: what each run costs the wrapper process
// itself, every beside the minimal Go loop and the peers, all at once.
func costSideBySide(cfg *config) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
	}))
	defer srv.Close()
	var runs []*costRun
	for _, iv := range []struct {
		d       time.Duration
		periods int
	}{{time.Second, pick(cfg.quick, 15, 60)}, {100 * time.Millisecond, pick(cfg.quick, 100, 300)}} {
		for _, w := range wrappers(cfg, srv.URL) {
			if iv.d < w.min {
				continue
			}
			runs = append(runs, &costRun{w: w, interval: iv.d, periods: iv.periods})
		}
	}
	runCosts(cfg, runs, "cost")

	var b strings.Builder
	fmt.Fprintf(&b, "All rows at once, the same job (bench/stamp, which appends its start to a file: the runs are counted), "+
		"each wrapper at its defaults with its log to a file. The wrapper process only, its children excluded: "+
		"CPU per run from schedstat summed over its threads, context switches per run summed over /proc/PID/task/*/status "+
		"(voluntary + involuntary), both as the difference of two samples taken between runs, divided by the runs counted "+
		"between them; RSS is VmRSS at the second sample. Own slot to exec from every's log (late_ms). ")
	if cfg.supercronic == "" {
		b.WriteString("No peers in this run (-peers adds supercronic, -runitor PATH runitor). ")
	} else {
		b.WriteString("supercronic: a seven-field crontab `*/1 * * * * * *` (seconds first; it has no shorter slot), its job through sh -c. ")
	}
	if cfg.runitor != "" {
		b.WriteString("runitor: -every, pinging a local HTTP server at each run's end (its purpose; -no-start-ping). ")
	}
	b.WriteString("The row `Go exec loop + every's state writes, synced once a second` is the minimal loop keeping a state file as every " +
		"keeps its own (docs/DESIGN.md, Durability), in the shape of its writes, and nothing else: at each run's start and end an atomic write, not synced " +
		"(a temporary file in the same directory, made ahead, once the command has started and after the run's end, then exchanged " +
		"with the record by renameat2 RENAME_EXCHANGE, the replaced record removed when the next temporary file is made: off the path " +
		"from a slot to its exec, and no ext4 auto_da_alloc flush as a rename over the record starts), and after a run's end, when a second has passed since the last sync, and at exit, a sync " +
		"(fdatasync of the record, a hard link of it renamed over its synced copy, fsync of the directory): at 1s slots every run's end, " +
		"at 100ms every tenth. The floor of that promise's cost in Go. ")
	fmt.Fprintf(&b, "Verdicts for every against issue 22's goals: CPU ≤ %s ms at 1s slots and ≤ %s ms at 100ms, and ≤ the cheapest peer's "+
		"at the same slots; ≤ %d switches at 1s and ≤ %d at 100ms; RSS ≤ %s MiB at 1s; slot to exec median ≤ %s ms and p99 ≤ %s ms. "+
		"CPU in ms.\n\n", ms(goalCPU1s), ms(goalCPU100ms), goalSwitches1s, goalSwitches100, mib(goalRSSKiB), ms(goalLateMedian), ms(goalLateP99))
	fmt.Fprintln(&b, "| wrapper | slots | runs | CPU/run | switches/run | RSS (MiB) | own slot to exec, median / p99 | "+
		"CPU goal | CPU ≤ cheapest peer | switches goal | RSS ≤ 9 MiB | slot to exec |")
	fmt.Fprintln(&b, "| --- | --- | ---: | ---: | ---: | ---: | ---: | --- | --- | --- | --- | --- |")
	for _, r := range runs {
		if r.err != nil || r.runs == 0 {
			fmt.Fprintf(&b, "| %s | %s | failed: %v |||||||||| \n", r.w.name, r.interval, r.err)
			continue
		}
		var peer *costRun
		for _, o := range runs {
			if o.interval == r.interval && o.err == nil && o.runs > 0 && o.w.peer && (peer == nil || o.cpuPerRun() < peer.cpuPerRun()) {
				peer = o
			}
		}
		cpu := r.cpuPerRun()
		own, verdicts := "-", "- | - | - | - | -"
		if r.w.every {
			own = ms(r.late.median) + " / " + ms(r.late.p99)
			peerV := "no peer"
			if peer != nil {
				peerV = fmt.Sprintf("%s (%.2f× %s)", yes(cpu <= peer.cpuPerRun()), ratio(cpu, peer.cpuPerRun()), peer.w.name)
			}
			goalCPU, goalSwitches := goalsAt(r.interval)
			rssV := "-"
			if r.interval >= time.Second {
				rssV = yes(r.to.rssKiB <= goalRSSKiB)
			}
			verdicts = fmt.Sprintf("%s (≤ %s) | %s | %s (≤ %.0f) | %s | %s", yes(cpu <= goalCPU), ms(goalCPU), peerV,
				yes(r.switchesPerRun() <= goalSwitches), goalSwitches, rssV,
				yes(r.late.n > 0 && r.late.median <= goalLateMedian && r.late.p99 <= goalLateP99))
		}
		fmt.Fprintf(&b, "| %s | %s | %d | %s | %.1f | %s | %s | %s |\n", r.w.name, r.interval, r.runs, ms(cpu),
			r.switchesPerRun(), mib(r.to.rssKiB), own, verdicts)
	}
	return b.String()
}

func yes(ok bool) string {
	if ok {
		return "yes"
	}
	return "**no**"
}

func ratio(a, b time.Duration) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}
