package main

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Section 12: every jobs, many jobs in one process, beside supercronic
// running the same jobs, against issue 30's bars. Each scheduler process
// runs n copies of the job bench/stamp, each job writing its starts (and
// the slot every gave it) to a file of its own, so that runs are counted
// and each start's lateness is known, not assumed.

// The bars of issue 30 for every jobs at 100 jobs of 1 s, lock and state
// on: the scheduler process's RSS and its own CPU per run.
const (
	goalJobsRSSKiB = 16 * 1024
	goalJobsCPU    = 900 * time.Microsecond
)

// A jobsKind is a scheduler and the form of the lines it reads.
type jobsKind int

const (
	everyLines  jobsKind = iota // every jobs, `every 1s --name jN -- stamp ...` lines
	everyCron                   // every jobs, the crontab lines supercronic reads
	supercronic                 // supercronic, those crontab lines
	everyBare                   // every jobs, every lines, with neither lock nor state (as supercronic keeps)
)

func (k jobsKind) label(cfg *config) string {
	switch k {
	case everyLines:
		return "every jobs, every lines"
	case everyCron:
		return "every jobs, crontab lines"
	case everyBare:
		return "every jobs, every lines, no lock or state"
	}
	return cfg.supercronicName
}

func (k jobsKind) every() bool { return k != supercronic }

// jobsKinds are the kinds this run can measure: supercronic's only when
// it was found.
func jobsKinds(cfg *config) []jobsKind {
	ks := []jobsKind{everyLines, everyCron}
	if cfg.supercronic != "" {
		ks = append(ks, supercronic)
	}
	return ks
}

// mainKinds are the kinds of the runs of 100 jobs: jobsKinds and every
// without lock and state, which tells what those cost.
func mainKinds(cfg *config) []jobsKind {
	return slices.Insert(jobsKinds(cfg), 1, everyBare)
}

// scheduleWord is the interval as a jobs file's every line writes it.
func scheduleWord(iv time.Duration) string {
	if iv%time.Minute == 0 {
		return fmt.Sprintf("%dm", iv/time.Minute)
	}
	return fmt.Sprintf("%ds", iv/time.Second)
}

// cronFor is the crontab schedule of one run every interval: seven fields
// (seconds first, a year last, as supercronic reads seven) for seconds,
// POSIX cron's five for a minute.
func cronFor(iv time.Duration) string {
	if iv == time.Minute {
		return "* * * * *"
	}
	return fmt.Sprintf("*/%d * * * * * *", iv/time.Second)
}

func stampFile(dir string, i int) string { return filepath.Join(dir, "stamps", fmt.Sprintf("j%d", i)) }

// writeJobs writes the jobs file of n jobs of kind, each the job bench/stamp
// writing to a file of its own, every's state and locks in dir/state.
func writeJobs(cfg *config, kind jobsKind, n int, iv time.Duration, dir string) (string, error) {
	for _, d := range []string{"stamps", "state"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o700); err != nil {
			return "", err
		}
	}
	var b strings.Builder
	if kind.every() {
		fmt.Fprintf(&b, "EVERY_STATE_DIR=%s\n", filepath.Join(dir, "state"))
	}
	if kind == everyBare {
		b.WriteString("EVERY_NO_LOCK=true\nEVERY_NO_STATE=true\n")
	}
	for i := range n {
		job := cfg.stamp + " -f " + stampFile(dir, i)
		if kind == everyLines || kind == everyBare {
			fmt.Fprintf(&b, "every %s --name j%d -- %s\n", scheduleWord(iv), i, job)
		} else {
			fmt.Fprintf(&b, "%s %s\n", cronFor(iv), job)
		}
	}
	file := filepath.Join(dir, "jobs.tab")
	return file, os.WriteFile(file, []byte(b.String()), 0o644)
}

// jobsCommand is the scheduler of kind reading file.
func jobsCommand(cfg *config, kind jobsKind, file string, debug bool) *exec.Cmd {
	if kind.every() {
		return exec.Command(cfg.every, "jobs", file)
	}
	if debug { // its only line per job at start ("job will run next at")
		return exec.Command(cfg.supercronic, "-debug", file)
	}
	return exec.Command(cfg.supercronic, file)
}

// A start is one line of bench/stamp: when the job started and the slot
// every gave it (EVERY_SLOT), 0 for supercronic, which gives none.
type start struct{ at, slot int64 }

func readStarts(path string, iv time.Duration) []start {
	b, _ := os.ReadFile(path)
	var out []start
	for line := range strings.Lines(string(b)) {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		at, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			continue
		}
		s := start{at: at}
		if len(f) > 1 {
			if t, err := time.Parse(time.RFC3339Nano, f[1]); err == nil {
				s.slot = t.UnixNano()
			}
		}
		if s.slot == 0 {
			// A cron slot is a whole second or minute: the last before the start.
			s.slot = at - at%int64(iv)
		}
		out = append(out, s)
	}
	return out
}

// startsOf reads the starts of jobs 0..n-1 under dir.
func startsOf(dir string, n int, iv time.Duration) [][]start {
	all := make([][]start, n)
	for i := range n {
		all[i] = readStarts(stampFile(dir, i), iv)
	}
	return all
}

// waitStarts waits until each of the n jobs under dir has started k times.
func waitStarts(dir string, n, k int, bound time.Duration) error {
	deadline := time.Now().Add(bound)
	next := 0 // the jobs before it have started k times
	for time.Now().Before(deadline) {
		for next < n && countLines(stampFile(dir, next)) >= k {
			next++
		}
		if next == n {
			return nil
		}
		time.Sleep(200 * time.Millisecond)
	}
	return fmt.Errorf("%s: job %d of %d did not start %d times within %s", dir, next, n, k, bound)
}

// quietPhase is where in the interval the starts are fewest: the middle of
// the widest gap between the phases of the jobs' last starts, so that a
// sample of /proc taken there falls between runs.
func quietPhase(all [][]start, iv time.Duration) time.Duration {
	var ph []int64
	for _, ss := range all {
		if len(ss) > 0 {
			ph = append(ph, ss[len(ss)-1].at%int64(iv))
		}
	}
	if len(ph) == 0 {
		return iv / 2
	}
	slices.Sort(ph)
	gap, at := ph[0]+int64(iv)-ph[len(ph)-1], ph[len(ph)-1] // the gap across the interval's end
	for i := 1; i < len(ph); i++ {
		if g := ph[i] - ph[i-1]; g > gap {
			gap, at = g, ph[i-1]
		}
	}
	return time.Duration((at + gap/2) % int64(iv))
}

// sleepToPhase sleeps until the next wall-clock instant at phase within iv.
func sleepToPhase(phase, iv time.Duration) {
	now := time.Now().UnixNano()
	t := now - now%int64(iv) + int64(phase)
	for t <= now+int64(50*time.Millisecond) {
		t += int64(iv)
	}
	time.Sleep(time.Duration(t - now))
}

// A grid is what the starts of some jobs tell, in a window of wall time.
type grid struct {
	runs            int
	late            stats         // start − slot, over all the starts in the window
	worstMedian     time.Duration // the median of the job whose median is largest
	missed, doubled int           // slots with no start or two, from each job's second start to its last
}

func analyzeStarts(all [][]start, iv time.Duration, from, to time.Time) grid {
	var g grid
	var late []time.Duration
	lo, hi := from.UnixNano(), to.UnixNano()
	for _, ss := range all {
		var mine []time.Duration
		for _, s := range ss {
			if s.at >= lo && s.at < hi {
				mine = append(mine, time.Duration(s.at-s.slot))
			}
		}
		g.runs += len(mine)
		late = append(late, mine...)
		if m := summarize(mine).median; m > g.worstMedian {
			g.worstMedian = m
		}
		// Missed and doubled over the whole run but the first start (which
		// a fresh start of a duration makes at once).
		if len(ss) < 3 {
			continue
		}
		slots := map[int64]int{}
		for _, s := range ss[1:] {
			slots[int64(math.Round(float64(s.slot-ss[1].slot)/float64(iv)))]++
		}
		last := int64(math.Round(float64(ss[len(ss)-1].slot-ss[1].slot) / float64(iv)))
		g.missed += int(last+1) - len(slots)
		g.doubled += len(ss) - 1 - len(slots)
	}
	g.late = summarize(late)
	return g
}

// ownLate is every's own late_ms (slot to exec) of the runs its log at path
// says started in [from, to).
func ownLate(path string, from, to time.Time) stats {
	f, err := os.Open(path)
	if err != nil {
		return stats{}
	}
	defer f.Close()
	var ds []time.Duration
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		m := lateMS.FindStringSubmatch(line)
		if m == nil || !strings.HasPrefix(line, "time=") {
			continue
		}
		ts, _, _ := strings.Cut(strings.TrimPrefix(line, "time="), " ")
		t, err := time.Parse(time.RFC3339Nano, ts)
		if err != nil || t.Before(from) || !t.Before(to) {
			continue
		}
		v, _ := strconv.ParseFloat(m[1], 64)
		ds = append(ds, time.Duration(v*1e6))
	}
	return summarize(ds)
}

// A jobsRun is one scheduler process running n jobs of one interval,
// measured between two samples of /proc a window apart, both taken at the
// quiet phase of the jobs' starts.
type jobsRun struct {
	kind   jobsKind
	n      int
	iv     time.Duration
	window time.Duration
	solo   bool // a standalone every of the same job beside it, measured alike

	from, to     procSample
	tFrom, tTo   time.Time
	grid         grid
	own          stats // every's own slot to exec
	soloFrom     procSample
	soloTo       procSample
	soloGrid     grid
	soloOwn      stats
	err          error
	soloErr      error
	startedAfter time.Duration // from exec to every job's second start
}

func (r *jobsRun) cpuPerRun() time.Duration {
	if r.grid.runs == 0 {
		return 0
	}
	return (r.to.cpu - r.from.cpu) / time.Duration(r.grid.runs)
}

// cpuPerSecond is the process's CPU per second of the window.
func (r *jobsRun) cpuPerSecond() time.Duration {
	return time.Duration(float64(r.to.cpu-r.from.cpu) / r.tTo.Sub(r.tFrom).Seconds())
}

func (r *jobsRun) soloCPUPerRun() time.Duration {
	if r.soloGrid.runs == 0 {
		return 0
	}
	return (r.soloTo.cpu - r.soloFrom.cpu) / time.Duration(r.soloGrid.runs)
}

func (r *jobsRun) measure(cfg *config, dir string) {
	file, err := writeJobs(cfg, r.kind, r.n, r.iv, dir)
	if r.err = err; err != nil {
		return
	}
	cmd := jobsCommand(cfg, r.kind, file, false)
	t0 := time.Now()
	if r.err = startLogged(cmd, filepath.Join(dir, "log")); r.err != nil {
		return
	}
	defer stopGroup(cmd)
	soloDir := filepath.Join(dir, "solo")
	var solo *exec.Cmd
	if r.solo {
		check(os.MkdirAll(soloDir, 0o700))
		solo = exec.Command(cfg.every, scheduleWord(r.iv), "--state-dir", soloDir, "--name", "solo", "--", cfg.stamp, "-f", stampFile(soloDir, 0))
		check(os.MkdirAll(filepath.Dir(stampFile(soloDir, 0)), 0o700))
		if r.soloErr = startLogged(solo, filepath.Join(soloDir, "log")); r.soloErr != nil {
			solo = nil
		} else {
			defer stopGroup(solo)
		}
	}
	bound := 30*time.Second + time.Duration(r.n)*50*time.Millisecond + 3*r.iv
	if r.err = waitStarts(dir, r.n, 2, bound); r.err != nil {
		return
	}
	r.startedAfter = time.Since(t0)
	sleepToPhase(quietPhase(startsOf(dir, r.n, r.iv), r.iv), r.iv)
	r.tFrom = time.Now()
	if r.from, r.err = sampleProc(cmd.Process.Pid); r.err != nil {
		return
	}
	if solo != nil {
		r.soloFrom, r.soloErr = sampleProc(solo.Process.Pid)
	}
	time.Sleep(r.window - time.Since(r.tFrom))
	r.tTo = time.Now()
	if r.to, r.err = sampleProc(cmd.Process.Pid); r.err != nil {
		return
	}
	if solo != nil && r.soloErr == nil {
		r.soloTo, r.soloErr = sampleProc(solo.Process.Pid)
	}
	// Starts that began before the sample were recorded by the time the
	// next slot's would be: wait half an interval for the files to settle.
	time.Sleep(r.iv / 2)
	r.grid = analyzeStarts(startsOf(dir, r.n, r.iv), r.iv, r.tFrom, r.tTo)
	if r.kind.every() {
		r.own = ownLate(filepath.Join(dir, "log"), r.tFrom, r.tTo)
	}
	if solo != nil && r.soloErr == nil {
		r.soloGrid = analyzeStarts(startsOf(soloDir, 1, r.iv), r.iv, r.tFrom, r.tTo)
		r.soloOwn = ownLate(filepath.Join(soloDir, "log"), r.tFrom, r.tTo)
	}
}

// A minuteRun is a scheduler with many jobs at one-minute slots: how soon
// it is ready, what it costs idle, and the slot that runs them all.
type minuteRun struct {
	kind jobsKind
	n    int
	idle time.Duration // the window after the slot

	readyFirst, readyAll []time.Duration // exec to the first job's ready line, to the last's
	readyRSS             []int64         // VmRSS when all were ready

	slotEnd, post   procSample // after the slot's runs, a window later
	preAt, before   procSample // right after start (all ready), just before the slot
	tPre, tBefore   time.Time
	tSlotEnd, tPost time.Time
	slot            time.Time
	burst           grid
	lastStart       time.Duration // the slot to its last start
	finished        time.Duration // the slot to the log's last end of a run
	err             error
}

// readyMarker is the line a scheduler writes per job once it waits for the
// job's first slot: every's event=ready, supercronic's debug line.
func readyMarker(k jobsKind) string {
	if k.every() {
		return "event=ready"
	}
	return "job will run next at"
}

// finishMarker is the line a scheduler logs at the end of each run.
func finishMarker(k jobsKind) string {
	if k.every() {
		return "event=finish"
	}
	return "job succeeded"
}

// timeToReady starts the scheduler with n jobs at one-minute slots and
// times, from just before its exec, the arrival of the first and of the
// n-th ready line on its stderr (a pipe read as it comes); then stops it.
func (m *minuteRun) timeToReady(cfg *config, dir string) error {
	file, err := writeJobs(cfg, m.kind, m.n, time.Minute, dir)
	if err != nil {
		return err
	}
	cmd := jobsCommand(cfg, m.kind, file, true)
	rd, wr, err := os.Pipe()
	if err != nil {
		return err
	}
	defer rd.Close()
	cmd.Stderr = wr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	marker := readyMarker(m.kind)
	type mark struct{ first, all time.Duration }
	ready := make(chan mark, 1)
	t0 := time.Now()
	if err := cmd.Start(); err != nil {
		wr.Close()
		return err
	}
	wr.Close()
	go func() {
		var mk mark
		n := 0
		sc := bufio.NewScanner(rd)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			if !strings.Contains(sc.Text(), marker) {
				continue
			}
			n++
			if n == 1 {
				mk.first = time.Since(t0)
			}
			if n == m.n {
				mk.all = time.Since(t0)
				ready <- mk
			}
		}
		_, _ = io.Copy(io.Discard, rd)
	}()
	defer stopGroup(cmd)
	select {
	case mk := <-ready:
		m.readyFirst = append(m.readyFirst, mk.first)
		m.readyAll = append(m.readyAll, mk.all)
		s, _ := sampleProc(cmd.Process.Pid)
		m.readyRSS = append(m.readyRSS, s.rssKiB)
		return nil
	case <-time.After(60 * time.Second):
		return fmt.Errorf("%s: %d ready lines not seen within 60s", m.kind.label(cfg), m.n)
	}
}

// nextSecond is the next wall-clock time at second sec of a minute.
func nextSecond(sec int) time.Time {
	now := time.Now()
	t := now.Truncate(time.Minute).Add(time.Duration(sec) * time.Second)
	if !t.After(now) {
		t = t.Add(time.Minute)
	}
	return t
}

// measure starts the scheduler at second 25 of a minute, samples it once
// all its jobs are ready (every: its event=ready lines; supercronic, which
// says nothing per job at its defaults: 5 s after its start) and at :58
// (idle before its first slot), lets the slot at :00 start every job,
// samples it when they all have started (at :12 at the earliest) and again
// a window later, before the next slot.
func (m *minuteRun) measure(cfg *config, dir string) {
	file, err := writeJobs(cfg, m.kind, m.n, time.Minute, dir)
	if m.err = err; err != nil {
		return
	}
	at := nextSecond(25)
	time.Sleep(time.Until(at))
	cmd := jobsCommand(cfg, m.kind, file, false)
	log := filepath.Join(dir, "log")
	if m.err = startLogged(cmd, log); m.err != nil {
		return
	}
	defer stopGroup(cmd)
	m.slot = at.Truncate(time.Minute).Add(time.Minute)
	sample := func(at time.Time, s *procSample, t *time.Time) bool {
		time.Sleep(time.Until(at))
		*t = time.Now()
		*s, m.err = sampleProc(cmd.Process.Pid)
		return m.err == nil
	}
	readyAt := at.Add(5 * time.Second)
	if m.kind.every() {
		for {
			b, _ := os.ReadFile(log)
			if strings.Count(string(b), readyMarker(m.kind)) >= m.n {
				readyAt = time.Now().Add(time.Second)
				break
			}
			if time.Until(m.slot) < 10*time.Second {
				m.err = fmt.Errorf("%d jobs not ready 10s before the slot", m.n)
				return
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	if !sample(readyAt, &m.preAt, &m.tPre) || !sample(m.slot.Add(-2*time.Second), &m.before, &m.tBefore) {
		return
	}
	if m.err = waitStarts(dir, m.n, 1, 50*time.Second); m.err != nil {
		return
	}
	// The runs' ends, and every's syncs after them (within a second).
	for time.Until(m.slot.Add(40*time.Second)) > 0 {
		b, _ := os.ReadFile(log)
		if strings.Count(string(b), finishMarker(m.kind)) >= m.n {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	m.finished = time.Since(m.slot)
	end := m.slot.Add(12 * time.Second)
	if t := time.Now().Add(2 * time.Second); t.After(end) {
		end = t
	}
	if !sample(end, &m.slotEnd, &m.tSlotEnd) {
		return
	}
	postAt := m.tSlotEnd.Add(m.idle)
	if next := m.slot.Add(time.Minute - 2*time.Second); postAt.After(next) {
		postAt = next // the window ends before the next slot
	}
	if !sample(postAt, &m.post, &m.tPost) {
		return
	}
	all := startsOf(dir, m.n, time.Minute)
	m.burst = analyzeStarts(all, time.Minute, m.slot, m.slot.Add(time.Minute))
	for _, ss := range all {
		for _, s := range ss {
			m.lastStart = max(m.lastStart, time.Duration(s.at-m.slot.UnixNano()))
		}
	}
}

// manyJobs is section 12.
func manyJobs(cfg *config) string {
	window := pick(cfg.quick, 20*time.Second, 60*time.Second)
	growWindow := pick(cfg.quick, 10*time.Second, 30*time.Second)
	idle := pick(cfg.quick, 20*time.Second, 30*time.Second)
	readyReps := pick(cfg.quick, 2, 5)
	reps := pick(cfg.quick, 1, 3)
	kinds := jobsKinds(cfg)
	seq := 0
	dirFor := func(what string) string {
		seq++
		return filepath.Join(cfg.dir, fmt.Sprintf("jobs-%d-%s", seq, what))
	}
	load := loadSpan{first: loadAverage()}
	progress := func(format string, args ...any) {
		load.see(loadAverage())
		fmt.Fprintf(os.Stderr, "bench: 12: "+format+"\n", args...)
	}

	// 1 and 4: 100 jobs at 1 s, a standalone every 1s beside every jobs;
	// the schedulers taking turns, reps times.
	main := map[jobsKind][]*jobsRun{}
	for rep := range reps {
		for _, k := range mainKinds(cfg) {
			r := &jobsRun{kind: k, n: 100, iv: time.Second, window: window, solo: k == everyLines}
			progress("%s, 100 jobs at 1s for %s (%d of %d)", k.label(cfg), window, rep+1, reps)
			r.measure(cfg, dirFor("100"))
			main[k] = append(main[k], r)
		}
	}
	// 2: growth.
	grow := map[jobsKind]map[int]*jobsRun{}
	for _, k := range kinds {
		grow[k] = map[int]*jobsRun{}
	}
	for _, k := range kinds {
		grow[k][100] = medianRun(main[k])
	}
	sizes := []int{1, 10, 100, 300}
	for _, n := range sizes {
		if n == 100 {
			continue
		}
		for _, k := range kinds {
			r := &jobsRun{kind: k, n: n, iv: time.Second, window: growWindow}
			progress("%s, %d jobs at 1s for %s", k.label(cfg), n, growWindow)
			r.measure(cfg, dirFor(strconv.Itoa(n)))
			grow[k][n] = r
		}
	}
	// 3: 1,000 jobs at one-minute slots.
	var minutes []*minuteRun
	for _, k := range kinds {
		if k == everyLines {
			continue // a duration runs at once: the crontab lines wait for their first slot alike
		}
		minutes = append(minutes, &minuteRun{kind: k, n: 1000, idle: idle})
	}
	for i, m := range minutes {
		progress("%s, 1000 jobs at 1m: the slot and %s idle (starts at second 25)", m.kind.label(cfg), idle)
		m.measure(cfg, dirFor("1000"))
		if i == 0 {
			// Between the two slots: the times to ready, taking turns.
			for rep := range readyReps {
				for _, m := range minutes {
					if s := time.Now().Second(); s > 40 {
						time.Sleep(time.Until(nextSecond(1)))
					}
					if m.err != nil {
						continue
					}
					progress("%s, 1000 jobs: time to ready (%d of %d)", m.kind.label(cfg), rep+1, readyReps)
					if err := m.timeToReady(cfg, dirFor("ready")); err != nil {
						m.err = err
					}
				}
			}
		}
	}
	load.see(loadAverage())
	return load.String() + jobsReport(cfg, main, grow, sizes, minutes, reps, readyReps, window, growWindow)
}

// loadAverage is the machine's load average over the last minute, or -1.
func loadAverage() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return -1
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return -1
	}
	v, err := strconv.ParseFloat(f[0], 64)
	if err != nil {
		return -1
	}
	return v
}

// A loadSpan is the load average at a section's start, its highest seen
// (at each step), and at its end: how much else ran on the machine.
type loadSpan struct{ first, high, last float64 }

func (l *loadSpan) see(v float64) { l.high, l.last = max(l.high, v), v }

func (l loadSpan) String() string {
	if l.first < 0 || l.last < 0 {
		return ""
	}
	return fmt.Sprintf("Load average of the machine (1 minute, /proc/loadavg; %d CPUs): %.1f at the start, %.1f at the end, "+
		"%.1f at the highest seen between the steps.\n\n", runtime.NumCPU(), l.first, l.last, max(l.high, l.first))
}

// medianRun is the run whose CPU per run is the median of those that
// succeeded, or nil.
func medianRun(rs []*jobsRun) *jobsRun {
	var ok []*jobsRun
	for _, r := range rs {
		if r.err == nil && r.grid.runs > 0 {
			ok = append(ok, r)
		}
	}
	if len(ok) == 0 {
		return nil
	}
	slices.SortFunc(ok, func(a, b *jobsRun) int { return int(a.cpuPerRun() - b.cpuPerRun()) })
	return ok[len(ok)/2]
}

// A jobsSummary is the medians of a scheduler's repetitions, metric by
// metric.
type jobsSummary struct {
	reps, failed                        int
	runs                                int // over all repetitions
	over                                time.Duration
	cpu, cpuMin, cpuMax, cpuS           time.Duration
	switches                            float64
	threads, rssFrom, rssTo, peak       int64
	late, p99, max, worst, own, ownP99  time.Duration
	missed, doubled                     int // over all repetitions
	soloCPU, soloCPUS, soloOwn, soloP99 time.Duration
	soloLate, soloLateP99, soloMax      time.Duration
	soloSwitches                        float64
	soloRuns, soloMissed                int
	soloRSSFrom, soloRSSTo, soloPeak    int64
	soloThreads                         int64
	err                                 error
}

func summarizeRuns(rs []*jobsRun) jobsSummary {
	var s jobsSummary
	var cpu, cpuS, late, p99, mx, worst, own, ownP99 []time.Duration
	var sw, soloSw []float64
	var threads, from, to, peak []int64
	var soloCPU, soloCPUS, soloOwn, soloOwnP99, soloLate, soloP99, soloMax []time.Duration
	var soloFrom, soloTo, soloPeak, soloThreads []int64
	for _, r := range rs {
		s.reps++
		if r.err != nil || r.grid.runs == 0 {
			s.failed++
			s.err = r.err
			continue
		}
		s.runs += r.grid.runs
		s.over = r.tTo.Sub(r.tFrom).Round(time.Second)
		cpu, cpuS = append(cpu, r.cpuPerRun()), append(cpuS, r.cpuPerSecond())
		sw = append(sw, float64(r.to.switches-r.from.switches)/float64(r.grid.runs))
		threads, from, to, peak = append(threads, r.to.threads), append(from, r.from.rssKiB), append(to, r.to.rssKiB), append(peak, r.to.peakKiB)
		late, p99, mx, worst = append(late, r.grid.late.median), append(p99, r.grid.late.p99), append(mx, r.grid.late.max), append(worst, r.grid.worstMedian)
		if r.own.n > 0 {
			own, ownP99 = append(own, r.own.median), append(ownP99, r.own.p99)
		}
		s.missed += r.grid.missed
		s.doubled += r.grid.doubled
		if r.solo && r.soloErr == nil && r.soloGrid.runs > 0 {
			s.soloRuns += r.soloGrid.runs
			s.soloMissed += r.soloGrid.missed
			soloCPU = append(soloCPU, r.soloCPUPerRun())
			soloCPUS = append(soloCPUS, time.Duration(float64(r.soloTo.cpu-r.soloFrom.cpu)/r.tTo.Sub(r.tFrom).Seconds()))
			soloSw = append(soloSw, float64(r.soloTo.switches-r.soloFrom.switches)/float64(r.soloGrid.runs))
			soloFrom, soloTo, soloPeak = append(soloFrom, r.soloFrom.rssKiB), append(soloTo, r.soloTo.rssKiB), append(soloPeak, r.soloTo.peakKiB)
			soloThreads = append(soloThreads, r.soloTo.threads)
			soloLate, soloP99, soloMax = append(soloLate, r.soloGrid.late.median), append(soloP99, r.soloGrid.late.p99), append(soloMax, r.soloGrid.late.max)
			if r.soloOwn.n > 0 {
				soloOwn, soloOwnP99 = append(soloOwn, r.soloOwn.median), append(soloOwnP99, r.soloOwn.p99)
			}
		}
	}
	med := func(xs []time.Duration) time.Duration { return summarize(xs).median }
	cs := summarize(cpu)
	s.cpu, s.cpuMin, s.cpuMax, s.cpuS = cs.median, cs.min, cs.max, med(cpuS)
	s.switches, s.threads = median(sw), median(threads)
	s.rssFrom, s.rssTo, s.peak = median(from), median(to), median(peak)
	s.late, s.p99, s.max, s.worst, s.own, s.ownP99 = med(late), med(p99), med(mx), med(worst), med(own), med(ownP99)
	s.soloCPU, s.soloCPUS, s.soloSwitches = med(soloCPU), med(soloCPUS), median(soloSw)
	s.soloRSSFrom, s.soloRSSTo, s.soloPeak, s.soloThreads = median(soloFrom), median(soloTo), median(soloPeak), median(soloThreads)
	s.soloLate, s.soloLateP99, s.soloMax, s.soloOwn, s.soloP99 = med(soloLate), med(soloP99), med(soloMax), med(soloOwn), med(soloOwnP99)
	return s
}

func jobsReport(cfg *config, main map[jobsKind][]*jobsRun, grow map[jobsKind]map[int]*jobsRun, sizes []int, minutes []*minuteRun,
	reps, readyReps int, window, growWindow time.Duration) string {
	var b strings.Builder
	if cfg.quick {
		fmt.Fprintf(&b, "**Quick mode: shorter windows** (%s at 100 jobs, %s for the growth; the full run takes 60 s and 30 s).\n\n",
			window, growWindow)
	}
	fmt.Fprintf(&b, "`every jobs FILE` running many jobs in one process, beside supercronic running the same jobs, "+
		"one scheduler at a time (`bench/run -only 12`; supercronic from $SUPERCRONIC, else PATH, else `-peers`, "+
		"which installs %s with go install into a temporary GOBIN). Each job is bench/stamp writing its start (and "+
		"EVERY_SLOT) to a file of its own, so the runs are counted, not assumed. Three forms of one set of jobs: "+
		"**every lines** (`every 1s --name jN -- stamp -f FILE`: executed directly, each on its own grid from its "+
		"first start; the loops start together, so the slots fall within a few hundred ms of each other, not on the "+
		"whole second), **crontab lines** read by every jobs "+
		"(`*/1 * * * * * * stamp -f FILE`: seven fields, seconds first and a year last, run by /bin/sh -c, all on "+
		"the whole second), and **supercronic** reading that crontab (at its defaults, which keep no lock and no "+
		"state); at 100 jobs also every lines with neither lock nor state (`EVERY_NO_LOCK=true`, `EVERY_NO_STATE=true` "+
		"above them), which tells what those two cost. every otherwise at its defaults, lock and state on, its state in a directory of the harness "+
		"(`EVERY_STATE_DIR=` at the file's top), its log and supercronic's to a file. The scheduler process only, "+
		"its children excluded: CPU from /proc/PID/task/*/schedstat, the difference of two samples taken at the "+
		"quiet point of the jobs' starts (the middle of the widest gap between them in the second), a whole number "+
		"of seconds apart, divided by the starts stamped between them; RSS is VmRSS at the two samples, peak is "+
		"VmHWM at the second.\n\n", supercronicVersion)
	if cfg.supercronic == "" {
		b.WriteString("**supercronic not found: its rows are left out.** Set SUPERCRONIC to its binary, put it on PATH, " +
			"or run with -peers.\n\n")
	}

	// 1.
	fmt.Fprintf(&b, "### 100 jobs at 1 s slots\n\nThe schedulers take turns, %d times each, over %s each; each figure is "+
		"the median of the repetitions' (CPU per run with their range), the runs their sum. A standalone `every 1s` of "+
		"the same job runs beside every jobs' every lines, measured alike. Bars (issue 30) for every jobs: RSS ≤ %s MiB "+
		"(at the end and at its peak) and CPU ≤ %s ms a run. Times in ms.\n\n", reps, window, mib(goalJobsRSSKiB), ms(goalJobsCPU))
	fmt.Fprintln(&b, "| scheduler | jobs | over | repetitions | runs | CPU/run, median (min-max) | CPU/s | switches/run | threads | RSS start (MiB) | RSS end (MiB) | peak (MiB) | RSS ≤ 16 MiB | CPU ≤ 0.9 ms |")
	fmt.Fprintln(&b, "| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- |")
	sums := map[jobsKind]jobsSummary{}
	for _, k := range mainKinds(cfg) {
		sm := summarizeRuns(main[k])
		sums[k] = sm
		if sm.failed == sm.reps {
			fmt.Fprintf(&b, "| %s | 100 | failed: %v ||||||||||||\n", k.label(cfg), sm.err)
			continue
		}
		rssV, cpuV := "-", "-"
		if k.every() && k != everyBare {
			rssV = yes(sm.rssTo <= goalJobsRSSKiB && sm.peak <= goalJobsRSSKiB)
			cpuV = yes(sm.cpu <= goalJobsCPU)
		}
		fmt.Fprintf(&b, "| %s | 100 | %s | %d | %d | %s (%s-%s) | %s | %.1f | %d | %s | %s | %s | %s | %s |\n", k.label(cfg), sm.over,
			sm.reps-sm.failed, sm.runs, ms(sm.cpu), ms(sm.cpuMin), ms(sm.cpuMax), ms(sm.cpuS), sm.switches, sm.threads,
			mib(sm.rssFrom), mib(sm.rssTo), mib(sm.peak), rssV, cpuV)
		if sm.soloRuns > 0 {
			fmt.Fprintf(&b, "| standalone `every 1s` beside it (one job) | 1 | %s | %d | %d | %s | %s | %.1f | %d | %s | %s | %s | - | - |\n",
				sm.over, sm.reps-sm.failed, sm.soloRuns, ms(sm.soloCPU), ms(sm.soloCPUS), sm.soloSwitches, sm.soloThreads,
				mib(sm.soloRSSFrom), mib(sm.soloRSSTo), mib(sm.soloPeak))
		}
	}
	b.WriteString("\n")

	// 4.
	fmt.Fprintf(&b, "### Lateness of the starts, 100 jobs at 1 s\n\nThe same runs. Lateness is each start (bench/stamp's "+
		"first instruction, so the child's fork, exec and Go start-up are in it, and for crontab lines /bin/sh's too) "+
		"against its slot: EVERY_SLOT for every, the whole second for supercronic; over every start of every job in "+
		"the window, and the median of the job whose median is largest (medians over the repetitions). Own slot to "+
		"exec is every's late_ms, from its log. Missed and doubled count slots with no start or two, over each job's "+
		"run from its second start, summed over the repetitions. "+
		"Section 1 measures a standalone every's lateness otherwise (against a grid fitted to the starts, the exec "+
		"cost taken out). Times in ms.\n\n")
	fmt.Fprintln(&b, "| scheduler | jobs | starts | median | p99 | max | worst job's median | own slot to exec, median / p99 | missed | doubled |")
	fmt.Fprintln(&b, "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
	for _, k := range mainKinds(cfg) {
		sm := sums[k]
		if sm.failed == sm.reps {
			continue
		}
		own := "-"
		if k.every() {
			own = ms(sm.own) + " / " + ms(sm.ownP99)
		}
		fmt.Fprintf(&b, "| %s | 100 | %d | %s | %s | %s | %s | %s | %d | %d |\n", k.label(cfg), sm.runs, ms(sm.late), ms(sm.p99),
			ms(sm.max), ms(sm.worst), own, sm.missed, sm.doubled)
		if sm.soloRuns > 0 {
			fmt.Fprintf(&b, "| standalone `every 1s` beside it | 1 | %d | %s | %s | %s | %s | %s / %s | %d | - |\n", sm.soloRuns,
				ms(sm.soloLate), ms(sm.soloLateP99), ms(sm.soloMax), ms(sm.soloLate), ms(sm.soloOwn), ms(sm.soloP99), sm.soloMissed)
		}
	}
	b.WriteString("\n")

	// 2.
	fmt.Fprintf(&b, "### Growth with the number of jobs, at 1 s\n\nEach size over %s (100 jobs: the runs above, over %s), "+
		"one scheduler at a time. Per job added: the slope from 1 job to %d, of RSS at the end and of CPU per second "+
		"(a job is one run a second, so the CPU a job adds is what its run costs). CPU in ms.\n\n",
		growWindow, window, sizes[len(sizes)-1])
	fmt.Fprintln(&b, "| scheduler | jobs | runs | CPU/run | CPU/s | threads | RSS start (MiB) | RSS end (MiB) | peak (MiB) |")
	fmt.Fprintln(&b, "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
	var slopes []string
	for _, k := range jobsKinds(cfg) {
		for _, n := range sizes {
			r := grow[k][n]
			if r == nil || r.err != nil || r.grid.runs == 0 {
				var err error
				if r != nil {
					err = r.err
				}
				fmt.Fprintf(&b, "| %s | %d | failed: %v |||||||\n", k.label(cfg), n, err)
				continue
			}
			fmt.Fprintf(&b, "| %s | %d | %d | %s | %s | %d | %s | %s | %s |\n", k.label(cfg), n, r.grid.runs, ms(r.cpuPerRun()),
				ms(r.cpuPerSecond()), r.to.threads, mib(r.from.rssKiB), mib(r.to.rssKiB), mib(r.to.peakKiB))
		}
		lo, hi := grow[k][sizes[0]], grow[k][sizes[len(sizes)-1]]
		if lo != nil && hi != nil && lo.err == nil && hi.err == nil && lo.grid.runs > 0 && hi.grid.runs > 0 {
			dn := float64(hi.n - lo.n)
			slopes = append(slopes, fmt.Sprintf("%s: %.1f KiB of RSS and %s ms of CPU a second per job added",
				k.label(cfg), float64(hi.to.rssKiB-lo.to.rssKiB)/dn, ms(time.Duration(float64(hi.cpuPerSecond()-lo.cpuPerSecond())/dn))))
		}
	}
	if len(slopes) > 0 {
		fmt.Fprintf(&b, "\nPer job added, 1 to %d jobs: %s.\n", sizes[len(sizes)-1], strings.Join(slopes, "; "))
	}
	b.WriteString("\n")

	// 3.
	if len(minutes) > 0 {
		m0 := minutes[0]
		fmt.Fprintf(&b, "### %d jobs at one-minute slots\n\nThe crontab lines `* * * * * stamp -f FILE` (every lines of a "+
			"duration would all run at once at the start), read by each scheduler. **Ready**: from just before the "+
			"scheduler's exec to the arrival, on its stderr (a pipe the harness reads as it comes), of the first and "+
			"of the %d-th line saying a job waits for its first slot: every's `event=ready` (one a job, at its "+
			"defaults), supercronic's `job will run next at` (one a job, at -debug only: it says nothing per job "+
			"otherwise); %d starts each, taking turns, medians (and the slowest), RSS when all were ready. "+
			"**Idle**: the scheduler started at second 25 of a minute, sampled a second after all its jobs are ready "+
			"(every: its log's event=ready lines; supercronic, silent at its defaults: 5 s after its start) and at :58, "+
			"idle before its first slot; the slot at :00 starts every job (the burst: the scheduler's own CPU per "+
			"start, each start's lateness against :00, the last start and the log's last end of a run); sampled "+
			"again 2 s after that end (at :12 at the earliest) and %s later or at :58, idle after a slot. "+
			"CPU in ms.\n\n", m0.n, m0.n, readyReps, m0.idle)
		fmt.Fprintln(&b, "| scheduler | jobs | ready: first, median (ms) | ready: all, median (ms) | ready: all, slowest (ms) | RSS ready (MiB) | "+
			"idle before the slot: CPU (ms) / s | switches / s | idle after a slot: CPU (ms) / s | switches / s | RSS idle, after a slot (MiB) | peak (MiB) |")
		fmt.Fprintln(&b, "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
		for _, m := range minutes {
			if m.err != nil && len(m.readyAll) == 0 {
				fmt.Fprintf(&b, "| %s | %d | failed: %v ||||||||||\n", m.kind.label(cfg), m.n, m.err)
				continue
			}
			preS, postS := m.tBefore.Sub(m.tPre).Seconds(), m.tPost.Sub(m.tSlotEnd).Seconds()
			fmt.Fprintf(&b, "| %s | %d | %s | %s | %s | %s | %s over %.0f s | %.1f | %s over %.0f s | %.1f | %s | %s |\n",
				m.kind.label(cfg), m.n, ms(summarize(m.readyFirst).median), ms(summarize(m.readyAll).median),
				ms(summarize(m.readyAll).max), mib(median(m.readyRSS)),
				ms(m.before.cpu-m.preAt.cpu), preS, float64(m.before.switches-m.preAt.switches)/preS,
				ms(m.post.cpu-m.slotEnd.cpu), postS, float64(m.post.switches-m.slotEnd.switches)/postS,
				mib(m.post.rssKiB), mib(m.post.peakKiB))
		}
		fmt.Fprintln(&b, "\nThe slot at :00 that starts them all:")
		fmt.Fprintln(&b, "\n| scheduler | starts | CPU/start (ms) | lateness median (ms) | p99 (ms) | last start after :00 (ms) | last end after :00 (ms) |")
		fmt.Fprintln(&b, "| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
		for _, m := range minutes {
			if m.err != nil || m.burst.runs == 0 {
				fmt.Fprintf(&b, "| %s | failed: %v ||||||\n", m.kind.label(cfg), m.err)
				continue
			}
			fmt.Fprintf(&b, "| %s | %d | %s | %s | %s | %s | %s |\n", m.kind.label(cfg), m.burst.runs,
				ms((m.slotEnd.cpu-m.before.cpu)/time.Duration(m.burst.runs)), ms(m.burst.late.median), ms(m.burst.late.p99),
				ms(m.lastStart), ms(m.finished))
		}
	}
	b.WriteString("\n" + jobsReading(cfg, sums, grow, sizes, minutes))
	return b.String()
}

// jobsReading is the section's reading, from its figures: the bars, every
// against supercronic, the growth, the lateness and the one-minute jobs.
func jobsReading(cfg *config, sums map[jobsKind]jobsSummary, grow map[jobsKind]map[int]*jobsRun, sizes []int, minutes []*minuteRun) string {
	var b strings.Builder
	b.WriteString("### Reading\n\n")
	sc, haveSC := sums[supercronic]
	haveSC = haveSC && sc.failed < sc.reps
	for _, k := range []jobsKind{everyLines, everyCron} {
		sm, ok := sums[k]
		if !ok || sm.failed == sm.reps {
			continue
		}
		fmt.Fprintf(&b, "- %s, 100 jobs at 1 s: CPU %s ms a run, bar %s ms: %s", k.label(cfg), ms(sm.cpu), ms(goalJobsCPU),
			holds(sm.cpu <= goalJobsCPU))
		if haveSC {
			fmt.Fprintf(&b, " (%.2f× %s's %s ms, which keeps no lock or state)", ratio(sm.cpu, sc.cpu), cfg.supercronicName, ms(sc.cpu))
		}
		fmt.Fprintf(&b, "; RSS %s MiB at the end, %s at its peak, bar %s MiB: %s", mib(sm.rssTo), mib(sm.peak), mib(goalJobsRSSKiB),
			holds(sm.rssTo <= goalJobsRSSKiB && sm.peak <= goalJobsRSSKiB))
		if haveSC {
			fmt.Fprintf(&b, " (supercronic %s, peak %s)", mib(sc.rssTo), mib(sc.peak))
		}
		b.WriteString(".\n")
	}
	if sm, ok := sums[everyBare]; ok && sm.failed < sm.reps {
		fmt.Fprintf(&b, "- Without lock and state (`EVERY_NO_LOCK`, `EVERY_NO_STATE`), as supercronic runs: %s ms a run", ms(sm.cpu))
		if haveSC {
			fmt.Fprintf(&b, ", %.2f× supercronic's", ratio(sm.cpu, sc.cpu))
		}
		if l := sums[everyLines]; l.failed < l.reps && l.cpu > 0 {
			fmt.Fprintf(&b, ": the lock and the state are %.0f%% of a run with them", 100*(1-float64(sm.cpu)/float64(l.cpu)))
		}
		fmt.Fprintf(&b, "; RSS %s MiB at the end.\n", mib(sm.rssTo))
	}
	if sm := sums[everyLines]; sm.soloRuns > 0 {
		fmt.Fprintf(&b, "- Lateness, start against slot: every jobs' every lines %s ms median and %s ms p99, the standalone `every 1s` "+
			"beside it %s and %s; every's own slot to exec %s / %s against %s / %s.\n", ms(sm.late), ms(sm.p99), ms(sm.soloLate),
			ms(sm.soloLateP99), ms(sm.own), ms(sm.ownP99), ms(sm.soloOwn), ms(sm.soloP99))
	}
	for _, k := range jobsKinds(cfg) {
		lo, hi := grow[k][sizes[0]], grow[k][sizes[len(sizes)-1]]
		if lo == nil || hi == nil || lo.err != nil || hi.err != nil || lo.grid.runs == 0 || hi.grid.runs == 0 {
			continue
		}
		fmt.Fprintf(&b, "- %s from %d job to %d: RSS %s → %s MiB, CPU a run %s → %s ms.\n", k.label(cfg), lo.n, hi.n,
			mib(lo.to.rssKiB), mib(hi.to.rssKiB), ms(lo.cpuPerRun()), ms(hi.cpuPerRun()))
	}
	for _, m := range minutes {
		if len(m.readyAll) == 0 {
			continue
		}
		fmt.Fprintf(&b, "- %s, %d jobs at 1m: all ready %s ms after exec (median); idle after a slot %s ms of CPU a second.\n",
			m.kind.label(cfg), m.n, ms(summarize(m.readyAll).median),
			ms(time.Duration(float64(m.post.cpu-m.slotEnd.cpu)/max(m.tPost.Sub(m.tSlotEnd).Seconds(), 1))))
	}
	b.WriteString("\nWhere the CPU and the memory go, with what would lower them: bench/PROFILE.md, rounds 5 and 6.\n")
	return b.String()
}

func holds(ok bool) string {
	if ok {
		return "holds"
	}
	return "**does not hold**"
}
