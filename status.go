package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/urfave/cli/v2"

	"github.com/everycli/every/internal/pid"
	"github.com/everycli/every/runner"
	"github.com/everycli/every/schedule"
	"github.com/everycli/every/state"
)

// jobStatus is one line of every status, and one object of its --json.
type jobStatus struct {
	Name                string     `json:"name"`
	Schedule            string     `json:"schedule"`
	LastRun             *time.Time `json:"last_run"`
	AgeSeconds          *float64   `json:"age_seconds"`
	LastResult          string     `json:"last_result"`
	LastExitCode        int        `json:"last_exit_code"`
	DurationMS          *int64     `json:"duration_ms"`
	NextSlot            *time.Time `json:"next_slot,omitempty"`  // only when active
	FirstSlot           *time.Time `json:"first_slot,omitempty"` // only before the first run
	LastSuccess         *time.Time `json:"last_success"`
	ConsecutiveFailures int        `json:"consecutive_failures"`
	Active              bool       `json:"active"` // an every for the job is alive
	Running             bool       `json:"running"`
	PID                 int        `json:"pid,omitempty"`
	Host                string     `json:"host,omitempty"`

	pending bool // no state yet: its every is alive, its first run to come
}

// statusSettings is an every status command line, parsed.
type statusSettings struct {
	stateDir, store string
	json            bool
	names           []string
	maxAge, warnAge time.Duration // --max-age, --warn-age; 0: not given
	allowInactive   bool
	nagios          bool
}

// statusConfig checks every status's command line.
func statusConfig(c *cli.Context, inv invocation) (statusSettings, error) {
	o := &options{c: c, given: map[string]bool{}}
	ss := statusSettings{stateDir: c.String("state-dir"), store: c.String("store"), json: c.Bool("json"), names: inv.names,
		allowInactive: c.Bool("allow-inactive"), nagios: c.Bool("nagios")}
	for _, d := range []struct {
		name string
		to   *time.Duration
	}{{"max-age", &ss.maxAge}, {"warn-age", &ss.warnAge}} {
		if o.get(d.name) == "" {
			continue
		}
		if *d.to = o.duration(d.name); o.err == nil && *d.to == 0 {
			o.err = usagef("bad %s %q: give an age such as 1h", o.label(d.name), o.get(d.name))
		}
	}
	switch {
	case o.err != nil:
		return ss, o.err
	case ss.nagios && ss.maxAge == 0:
		return ss, usagef("--nagios needs --max-age, the age that is CRITICAL (and --warn-age, WARNING)")
	case ss.warnAge > 0 && !ss.nagios:
		return ss, usagef("--warn-age is for --nagios (its WARNING); --max-age alone passes or fails")
	case ss.allowInactive && ss.maxAge == 0:
		return ss, usagef("--allow-inactive is for --max-age: give the age too, as in --max-age 2h --allow-inactive")
	case ss.json && ss.maxAge > 0:
		return ss, usagef("--json and --max-age: choose one; --max-age prints a line per stale job, --json the listing")
	case ss.warnAge > 0 && ss.maxAge > 0 && ss.warnAge > ss.maxAge:
		return ss, usagef("bad --warn-age %v: longer than --max-age %v; the warning comes first", ss.warnAge, ss.maxAge)
	}
	return ss, nil
}

// status is every status: the jobs of a state directory or of a fleet's
// Redis, one line each. It exits 1 when any listed job's last run did not
// succeed, or a job cannot be read. With --max-age it is a liveness check
// instead (maxAgeCheck), and with --nagios a monitoring plugin (nagiosCheck).
func status(ss statusSettings, stdout, stderr io.Writer) int {
	now := time.Now()
	l, err := list(ss, now)
	if err != nil {
		report(stderr, err)
		if ss.nagios {
			nagiosUnknown(stdout, err)
			return int(unknown)
		}
		return exitUsage
	}
	for _, p := range l.problems {
		// Its words may come from the directory (a file's name): escaped.
		fmt.Fprintf(stderr, "every: %s\n", escaped(p.err.Error()))
	}
	switch {
	case ss.nagios:
		return nagiosCheck(l, ss, now, stdout)
	case ss.maxAge > 0:
		return maxAgeCheck(l, ss, now, stdout)
	}
	code := 0
	if len(l.problems) > 0 {
		code = 1
	}
	for _, j := range l.jobs {
		if j.LastResult != "" && j.LastResult != string(runner.Success) {
			code = 1
		}
	}
	if ss.json {
		jobs := l.jobs
		if jobs == nil {
			jobs = []jobStatus{} // an array, never null
		}
		b, _ := json.MarshalIndent(jobs, "", "  ")
		fmt.Fprintf(stdout, "%s\n", b)
		return code
	}
	if len(l.jobs) == 0 {
		if code == 0 {
			fmt.Fprintf(stdout, "no jobs in %s\n", escaped(l.where))
		}
		return code
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tSCHEDULE\tLAST RUN\tRESULT\tDURATION\tNEXT\tFAILURES\tACTIVE\tRUNNING")
	for _, j := range l.jobs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%d\t%s\t%s\n", shown(j.Name), shown(j.Schedule), lastRunText(j, now),
			resultText(j), durationText(j), nextText(j, now), j.ConsecutiveFailures, yesNo(j.Active), runningText(j, l.host))
	}
	tw.Flush()
	return code
}

// listing is what every status found: the jobs it could read, and the
// problems it met on the way, each an error line and exit 1 (or UNKNOWN).
type listing struct {
	where    string // the state directory or the Redis server, for messages
	host     string // this host's name
	jobs     []jobStatus
	problems []problem
}

// problem is a job every status could not tell about: a name with no state,
// a record that cannot be read or used, an active marker that cannot be
// probed; or, with no name, the whole listing (no state directory).
type problem struct {
	name string // "" for the listing as a whole
	what string // a few words for --max-age's line: "no state"
	err  error  // the full error line
}

// list reads the jobs of the state directory or the fleet's Redis, or the
// named ones. Its error is a usage error (a bad --store URL); what it
// cannot read is among its problems.
func list(ss statusSettings, now time.Time) (listing, error) {
	var l listing
	l.host, _ = os.Hostname()
	var (
		found  []foundJob
		active func(foundJob) (bool, error)
	)
	if raw := ss.store; raw != "" {
		f, err := openFleet(raw)
		if err != nil {
			return l, err
		}
		l.where = f.server
		records, problems, err := fleetRecords(f, ss.names)
		l.problems = problems
		if err != nil {
			l.problems = append(l.problems, problem{err: fmt.Errorf("cannot list jobs in redis at %s: %v", f.server, err)})
		}
		for _, rec := range records {
			found = append(found, foundJob{rec: rec})
		}
		active = func(j foundJob) (bool, error) { return fleetActive(f, j.rec.Name) }
	} else {
		dir, err := stateDir(ss.stateDir)
		if err != nil {
			return l, err
		}
		l.where = dir
		found, l.problems = readJobs(dir, ss.names, now)
		active = func(j foundJob) (bool, error) {
			// The marker beside the file the record came from, whatever the
			// job's name; and only one of the state's owner.
			on, _, err := probeActive(markerPath(j.path), func(uid uint32) bool { return uid == j.uid })
			return on, err
		}
	}
	for _, f := range found {
		if f.rec == nil {
			l.jobs = append(l.jobs, describePending(f.key, f.mark))
			continue
		}
		rec := f.rec
		// An absurd record (a hostile or damaged one) is reported, not shown.
		var period time.Duration // 0 if not known
		if s, err := schedule.ParseRecorded(rec.Schedule); err == nil {
			period = s.Period(now)
		}
		if err := rec.Sane(now, period); err != nil {
			l.problems = append(l.problems, problem{rec.Name, "state cannot be used",
				fmt.Errorf("state of job %q cannot be used: %v", rec.Name, err)})
			continue
		}
		on, err := active(f)
		if err != nil {
			l.problems = append(l.problems, problem{rec.Name, "cannot tell whether an every runs for it",
				fmt.Errorf("cannot tell whether job %q is active: %v", rec.Name, err)})
			continue
		}
		l.jobs = append(l.jobs, describeJob(rec, l.host, now, on))
	}
	return l, nil
}

// foundJob is a job every status found: its record and the file it came
// from, or, for a job whose every is alive but has not run it yet (no
// state), what its marker says.
type foundJob struct {
	key  string        // NAME of NAME.json: what every status NAME looks for
	rec  *state.Record // nil: no state yet (mark says what there is)
	path string        // the state file; its marker is beside it
	uid  uint32        // the state file's owner, the one its marker must have
	mark markerInfo
}

// readJobs reads the jobs of dir, or the named ones only: the records of
// NAME.json, and the jobs with no state yet whose every holds NAME.json's
// marker. A directory that cannot be read, a name without a record or a
// live every, or a record that cannot be read (not a regular file,
// corrupt) is a problem. Nothing here can block: entries that are not
// regular files are never opened.
func readJobs(dir string, names []string, now time.Time) ([]foundJob, []problem) {
	fi, err := os.Stat(dir)
	if err == nil && !fi.IsDir() {
		err = errors.New("not a directory")
	}
	if err != nil {
		return nil, []problem{{err: fmt.Errorf("cannot list jobs in state directory %q: %v; check --state-dir", dir, unwrapPath(err))}}
	}
	// A marker with no state beside it is trusted when it is this user's,
	// or the directory owner's: in a shared directory, nobody else's.
	trustPending := func(uid uint32) bool {
		return uid == uint32(os.Geteuid()) || uid == ownerOf(fi)
	}
	var (
		jobs     []foundJob
		problems []problem
	)
	if len(names) == 0 {
		entries, err := os.ReadDir(dir)
		if err != nil {
			return nil, []problem{{err: fmt.Errorf("cannot list jobs in state directory %q: %v", dir, unwrapPath(err))}}
		}
		states, markers := jobFileNames(entries)
		for _, name := range markers {
			// A marker nobody holds is left over: no job to show.
			on, info, err := probeActive(filepath.Join(dir, name+".json"+markerSuffix), trustPending)
			if err == nil && on {
				jobs = append(jobs, foundJob{key: name, mark: info})
			}
		}
		names = states
	}
	for _, name := range names {
		path := filepath.Join(dir, name+".json")
		rec, err := state.File{Path: path}.Read(now)
		if errors.Is(err, fs.ErrNotExist) {
			// No state yet: a job whose every is alive has not run.
			on, info, perr := probeActive(markerPath(path), trustPending)
			switch {
			case perr != nil:
				problems = append(problems, problem{name, "cannot tell whether an every runs for it",
					fmt.Errorf("no state for job %q in %s, and cannot tell whether it is active: %v", name, dir, perr)})
			case on:
				jobs = append(jobs, foundJob{key: name, mark: info})
			default:
				problems = append(problems, problem{name, "no state",
					fmt.Errorf("no state for job %q in %s: %v", name, dir, unwrapPath(err))})
			}
			continue
		}
		if err != nil {
			problems = append(problems, problem{name, "state cannot be read",
				fmt.Errorf("cannot read state of job %q: %v", name, err)})
			continue
		}
		j := foundJob{key: name, rec: rec, path: path, uid: math.MaxUint32}
		if fi, err := os.Lstat(path); err == nil {
			j.uid = ownerOf(fi)
		}
		jobs = append(jobs, j)
	}
	slices.SortStableFunc(jobs, func(a, b foundJob) int { return strings.Compare(a.key, b.key) })
	return jobs, problems
}

// jobFileNames are the jobs of a state directory's entries: the NAMEs of
// NAME.json (not hidden), and those of the NAME.json markers with no
// NAME.json beside them (jobs whose every has not run them yet, or
// leftovers), each sorted.
func jobFileNames(entries []fs.DirEntry) (states, markers []string) {
	present := map[string]bool{}
	for _, e := range entries {
		if name, ok := strings.CutSuffix(e.Name(), ".json"); ok && name != "" && !strings.HasPrefix(name, ".") {
			states = append(states, name)
			present[name] = true
		}
	}
	for _, e := range entries {
		if name, ok := strings.CutSuffix(e.Name(), ".json"+markerSuffix); ok && name != "" && !strings.HasPrefix(name, ".") && !present[name] {
			markers = append(markers, name)
		}
	}
	slices.Sort(states)
	slices.Sort(markers)
	return states, markers
}

// ownerOf is the owner of a file; none (an impossible uid) where the
// system does not say.
func ownerOf(fi fs.FileInfo) uint32 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return st.Uid
	}
	return math.MaxUint32
}

// fleetRecords reads the records of a fleet's Redis, or of the named jobs.
func fleetRecords(f *fleet, names []string) ([]*state.Record, []problem, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	all, err := state.Redis{Client: f.client, Server: f.server}.List(ctx, f.prefix+"*:state")
	if err != nil {
		return nil, nil, err
	}
	slices.SortFunc(all, func(a, b *state.Record) int { return strings.Compare(a.Name, b.Name) })
	if len(names) == 0 {
		return all, nil, nil
	}
	var (
		records  []*state.Record
		problems []problem
	)
	for _, name := range names {
		i := slices.IndexFunc(all, func(r *state.Record) bool { return r.Name == name })
		if i < 0 {
			problems = append(problems, problem{name, "no state", fmt.Errorf("no state for job %q in redis at %s", name, f.server)})
			continue
		}
		records = append(records, all[i])
	}
	return records, problems, nil
}

// fleetActive reports whether a fleet job's lock is held now. That is all
// Redis can tell: an idle every of a fleet leaves no trace there (the lock is
// held only for a run), so a fleet job is active only while one of its runs
// holds the lease, which its holder renews: a holder that died lets it expire
// within --lock-ttl.
func fleetActive(f *fleet, name string) (bool, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	n, err := f.client.Exists(ctx, f.lockKey(name)).Result()
	if err != nil {
		return false, fmt.Errorf("redis at %s: %w", f.server, err)
	}
	return n > 0, nil
}

// describeJob is what every status shows of a record; active is whether an
// every holds the job's marker (or, in a fleet, its lock).
func describeJob(rec *state.Record, host string, now time.Time, active bool) jobStatus {
	j := jobStatus{
		Name:                rec.Name,
		Schedule:            rec.Schedule,
		LastResult:          rec.LastResult,
		LastExitCode:        rec.LastExitCode,
		ConsecutiveFailures: rec.ConsecutiveFailures,
		Active:              active,
	}
	if !rec.LastRun.IsZero() {
		t := rec.LastRun.UTC()
		age := now.Sub(t).Seconds()
		j.LastRun, j.AgeSeconds = &t, &age
	}
	if !rec.LastSuccess.IsZero() {
		t := rec.LastSuccess.UTC()
		j.LastSuccess = &t
	}
	if !rec.Running && !rec.LastEnd.IsZero() && !rec.LastEnd.Before(rec.LastRun) {
		d := rec.LastEnd.Sub(rec.LastRun).Milliseconds()
		j.DurationMS = &d
	}
	// Only an every that is alive will run the next slot: a dead one has none.
	if s, err := schedule.ParseRecorded(rec.Schedule); err == nil && active {
		next := inZone(s.Anchored(rec.Anchor).Next(now), rec.Schedule)
		j.NextSlot = &next
	}
	if rec.Running {
		// The record says running; on this host, the process can be checked:
		// its every must be alive (a pid alone may have been reused).
		j.Running = rec.Host != host || (active && pid.Alive(rec.PID))
		j.PID, j.Host = rec.PID, rec.Host
	}
	return j
}

// describePending is what every status shows of a job that has no state
// yet, whose every is alive (it holds the marker): its name, schedule and
// slots as the marker says, the name of its file when the marker says
// nothing (an older every's, or a write under way).
func describePending(key string, m markerInfo) jobStatus {
	j := jobStatus{Name: m.Name, Schedule: m.Schedule, Active: true, pending: true}
	if j.Name == "" {
		j.Name = key
	}
	if !m.NextSlot.IsZero() {
		t := inZone(m.NextSlot, m.Schedule)
		j.NextSlot = &t
	}
	if !m.FirstSlot.IsZero() {
		t := inZone(m.FirstSlot, m.Schedule)
		j.FirstSlot = &t
	}
	return j
}

// inZone is a slot of a schedule as status shows it: in a calendar's zone,
// else in UTC.
func inZone(t time.Time, sched string) time.Time {
	if s, err := schedule.ParseRecorded(sched); err == nil && s.Location() != nil {
		return t.In(s.Location())
	}
	return t.UTC()
}

// health is a monitoring state; its value is the monitoring-plugins exit
// code.
type health int

const (
	healthy  health = 0 // OK
	warning  health = 1
	critical health = 2
	unknown  health = 3
)

func (h health) String() string {
	return [...]string{"OK", "WARNING", "CRITICAL", "UNKNOWN"}[h]
}

// worse reports whether h is worse than o: a job known to be in trouble
// (CRITICAL) outranks one that cannot be read (UNKNOWN), which may hide
// anything and so outranks one merely late (WARNING).
func (h health) worse(o health) bool { return h.rank() > o.rank() }

func (h health) rank() int { return [...]int{healthy: 0, warning: 1, unknown: 2, critical: 3}[h] }

// worstFirst orders by health, the worst first (a sort's comparison), 0 for
// the same health.
func worstFirst(a, b health) int { return cmp.Compare(b.rank(), a.rank()) }

// judge is how a job fares against --max-age (and, for --nagios,
// --warn-age and its last result): its state and why, in a few words each
// (none when it is fine).
func judge(j jobStatus, ss statusSettings, now time.Time) (health, []string) {
	h, why := healthy, []string(nil)
	to := func(s health, reason string) {
		if s.worse(h) {
			h = s
		}
		why = append(why, reason)
	}
	switch {
	case j.pending:
		// Not run yet: as late as its first slot is old. One to come, or
		// not yet known (its loop is starting), passes.
		var waited time.Duration
		if j.FirstSlot != nil {
			waited = now.Sub(*j.FirstSlot)
		}
		switch {
		case waited > ss.maxAge:
			to(critical, "not run yet, "+firstSlotOlder(waited, ss.maxAge))
		case ss.nagios && ss.warnAge > 0 && waited > ss.warnAge:
			to(warning, "not run yet, "+firstSlotOlder(waited, ss.warnAge))
		}
	case j.LastSuccess == nil:
		to(critical, "never succeeded")
	case age(j, now) > ss.maxAge:
		to(critical, olderThan(age(j, now), ss.maxAge))
	case ss.nagios && ss.warnAge > 0 && age(j, now) > ss.warnAge:
		to(warning, olderThan(age(j, now), ss.warnAge))
	}
	if ss.nagios && j.LastResult != "" && j.LastResult != string(runner.Success) {
		to(critical, fmt.Sprintf("last run %s (%d)", shown(j.LastResult), j.LastExitCode))
	}
	if !j.Active && !ss.allowInactive {
		to(critical, "no every running for it")
	}
	return h, why
}

// olderThan says that a job's last success is older than a limit, with
// the age to the millisecond where seconds would not show the difference.
func olderThan(age, limit time.Duration) string {
	a := short(age)
	if a == short(limit) {
		a = age.Round(time.Millisecond).String()
	}
	return fmt.Sprintf("last success %s ago, older than %s", a, short(limit))
}

// firstSlotOlder says that a job's first slot is older than a limit.
func firstSlotOlder(waited, limit time.Duration) string {
	return fmt.Sprintf("first slot %s ago, older than %s", short(waited), short(limit))
}

// age is how long ago a job last succeeded (never less than 0: a clock
// that went back makes a success recent, not future).
func age(j jobStatus, now time.Time) time.Duration {
	return max(0, now.Sub(*j.LastSuccess))
}

// maxAgeCheck is every status --max-age: exit 0 when each listed job
// succeeded within the age and (unless --allow-inactive) has an every
// alive, else 1 with a line for each job that does not. No job at all is a
// failure too: a probe must not pass for a job that never started.
func maxAgeCheck(l listing, ss statusSettings, now time.Time, stdout io.Writer) int {
	code := 0
	for _, p := range l.problems {
		code = 1
		if p.name != "" {
			fmt.Fprintf(stdout, "job %s: %s\n", shown(p.name), p.what)
		}
	}
	for _, j := range l.jobs {
		if h, why := judge(j, ss, now); h != healthy {
			code = 1
			fmt.Fprintf(stdout, "job %s: %s\n", shown(j.Name), strings.Join(why, "; "))
		}
	}
	if len(l.jobs) == 0 && len(l.problems) == 0 {
		fmt.Fprintf(stdout, "no jobs in %s\n", escaped(l.where))
		code = 1
	}
	return code
}

// nagiosMax is the longest line every status --nagios prints, newline
// included: under the 4 KiB of plugin output that Nagios keeps
// (MAX_PLUGIN_OUTPUT_LENGTH), however many jobs there are.
const nagiosMax = 4000

// nagiosTextMax is how much of the line the text may take, so that the
// performance data of the stale and oldest jobs keeps room.
const nagiosTextMax = 2000

// nagiosItemMax is the most one job's words may take in the text: a long
// error (a path) does not crowd out the other jobs.
const nagiosItemMax = 400

// nagiosCheck is every status --nagios: one line in the monitoring-plugins
// format, "EVERY STATE: what | perfdata", and the state as the exit code.
// The worst job decides the state; the text names each job that is not OK,
// worst first. The performance data gives each job's age of last success,
// in seconds, with --warn-age and --max-age as its thresholds. The line
// stays under nagiosMax: the text says how many jobs it leaves out, and the
// performance data keeps the jobs that are not OK, then the oldest, and
// says how many it has.
func nagiosCheck(l listing, ss statusSettings, now time.Time, stdout io.Writer) int {
	type item struct {
		h    health
		name string
		text string
	}
	var items []item
	for _, p := range l.problems {
		if p.name == "" {
			items = append(items, item{unknown, "", p.err.Error()})
		} else {
			items = append(items, item{unknown, p.name, "job " + shown(p.name) + ": " + p.what})
		}
	}
	var perf []perfItem
	var oldest time.Duration
	succeeded := 0
	warn := ""
	if ss.warnAge > 0 {
		warn = seconds(ss.warnAge)
	}
	for _, j := range l.jobs {
		h, why := judge(j, ss, now)
		if h != healthy {
			items = append(items, item{h, j.Name, "job " + shown(j.Name) + ": " + strings.Join(why, ", ")})
		}
		if j.LastSuccess == nil {
			continue // no age to give: the text says "never succeeded"
		}
		succeeded++
		a := age(j, now)
		oldest = max(oldest, a)
		perf = append(perf, perfItem{h, a, j.Name,
			fmt.Sprintf("%s=%ss;%s;%s;0", perfLabel(j.Name), seconds(a), warn, seconds(ss.maxAge))})
	}
	worst := healthy
	for _, it := range items {
		if it.h.worse(worst) {
			worst = it.h
		}
	}
	var text string
	switch {
	case len(items) > 0:
		slices.SortStableFunc(items, func(a, b item) int {
			return cmp.Or(worstFirst(a.h, b.h), strings.Compare(a.name, b.name))
		})
		var b strings.Builder
		for i, it := range items {
			t := cut(it.text, nagiosItemMax)
			more := fmt.Sprintf("; and %d more", len(items)-i)
			if i > 0 && b.Len()+2+len(t)+len(more) > nagiosTextMax {
				b.WriteString(more)
				break
			}
			if i > 0 {
				b.WriteString("; ")
			}
			b.WriteString(t)
		}
		text = b.String()
	case len(l.jobs) == 0:
		worst, text = unknown, "no jobs in "+l.where
	case succeeded == 0 && len(l.jobs) == 1:
		text = "1 job, not run yet"
	case succeeded == 0:
		text = fmt.Sprintf("%d jobs, none run yet", len(l.jobs))
	case len(l.jobs) == 1:
		text = fmt.Sprintf("1 job, last success %s ago", short(oldest))
	default:
		text = fmt.Sprintf("%d jobs, last success %s ago at most", len(l.jobs), short(oldest))
	}
	// Escaped: a name or an error's path must not break the line; and a
	// '|' in the text would start the performance data early.
	line := "EVERY " + worst.String() + ": " + strings.ReplaceAll(escaped(text), "|", "/")
	if kept := nagiosPerf(perf, len(l.jobs), nagiosMax-len(line)-len(" | ")-len("\n")); len(kept) > 0 {
		texts := make([]string, len(kept))
		for i, p := range kept {
			texts[i] = p.text
		}
		line += " | " + strings.Join(texts, " ")
	}
	fmt.Fprintln(stdout, line)
	return int(worst)
}

// perfItem is one job's performance data for --nagios, with what decides
// whether it is kept when not all of them fit.
type perfItem struct {
	h    health
	age  time.Duration
	name string
	text string
}

// nagiosPerf picks the performance data that fits in room bytes: all of
// it, in the jobs' order, when it fits; else the count of all the jobs
// listed, "jobs=N", then the jobs that are not OK, the worst first, then
// the oldest.
func nagiosPerf(perf []perfItem, jobs, room int) []perfItem {
	size := -1
	for _, p := range perf {
		size += 1 + len(p.text)
	}
	if size <= room {
		return perf
	}
	byNeed := slices.Clone(perf)
	slices.SortStableFunc(byNeed, func(a, b perfItem) int {
		return cmp.Or(worstFirst(a.h, b.h), cmp.Compare(b.age, a.age))
	})
	count := perfItem{text: fmt.Sprintf("jobs=%d;;;0", jobs)}
	kept, size := []perfItem{count}, len(count.text)
	for _, p := range byNeed {
		if size+1+len(p.text) > room {
			break
		}
		kept, size = append(kept, p), size+1+len(p.text)
	}
	return kept
}

// seconds is d in seconds for performance data: plain decimal (never the
// scientific notation some parsers reject), to the millisecond.
func seconds(d time.Duration) string {
	return strconv.FormatFloat(d.Round(time.Millisecond).Seconds(), 'f', -1, 64)
}

// short is a duration for people, to the second (or the millisecond under
// one), without the zero units time.Duration spells out: 2h3m, not 2h3m0s.
func short(d time.Duration) string {
	s := roughly(d)
	if strings.Contains(s, "m") && strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.Contains(s, "h") && strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func lastRunText(j jobStatus, now time.Time) string {
	if j.LastRun == nil {
		return "never"
	}
	return fmt.Sprintf("%s (%s ago)", j.LastRun.Format(time.RFC3339), roughly(now.Sub(*j.LastRun)))
}

func resultText(j jobStatus) string {
	if j.LastResult == "" {
		return "-"
	}
	return fmt.Sprintf("%s (%d)", shown(j.LastResult), j.LastExitCode)
}

func durationText(j jobStatus) string {
	if j.DurationMS == nil {
		return "-"
	}
	return (time.Duration(*j.DurationMS) * time.Millisecond).String()
}

func nextText(j jobStatus, now time.Time) string {
	if j.NextSlot == nil {
		return "-"
	}
	return fmt.Sprintf("%s (in %s)", j.NextSlot.Format(time.RFC3339), roughly(j.NextSlot.Sub(now)))
}

func runningText(j jobStatus, host string) string {
	switch {
	case j.Running && j.Host != "" && j.Host != host:
		return fmt.Sprintf("yes, pid %d on %s", j.PID, shown(j.Host))
	case j.Running:
		return fmt.Sprintf("yes, pid %d", j.PID)
	case j.PID != 0:
		return "no (last run cut short)"
	}
	return "no"
}

// roughly rounds a duration for people: to the second, or to the millisecond
// under one.
func roughly(d time.Duration) string {
	if d < time.Second && d > -time.Second {
		return d.Round(time.Millisecond).String()
	}
	return d.Round(time.Second).String()
}

// nagiosUnknown prints the --nagios line of an error that leaves nothing
// to judge: a usage error, a bad value, no state directory.
func nagiosUnknown(w io.Writer, err error) {
	fmt.Fprintf(w, "EVERY UNKNOWN: %s\n", strings.ReplaceAll(cut(escaped(err.Error()), nagiosTextMax), "|", "/"))
}

// nagiosAsked reports whether argv (or EVERY_NAGIOS) asks for every status
// --nagios, read without parsing it, for an argv that does not parse: a
// monitoring plugin's usage error is still its one UNKNOWN line and exit 3.
// It skips the values of the options that take one, as split does.
func nagiosAsked(args []string, getenv func(string) string) bool {
	i, arity := 0, flagArity(runFlags)
	before := false // --nagios before status: misplaced, but asked for
	for ; i < len(args) && args[i] != "status"; i++ {
		a := args[i]
		if a == "--" || len(a) < 2 || a[0] != '-' {
			return false // a run's schedule or command, not every status
		}
		name, _, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		before = before || name == "nagios"
		if arity[name] && !hasValue {
			i++
		}
	}
	if i >= len(args) {
		return false
	}
	asked, _ := strconv.ParseBool(getenv(envName("nagios")))
	asked = asked || before
	arity = flagArity(statusFlags)
	for i++; i < len(args) && args[i] != "--"; i++ {
		a := args[i]
		if len(a) < 2 || a[0] != '-' {
			continue
		}
		name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		switch {
		case name == "nagios":
			// --nagios=junk asks for the plugin too: the value is the error.
			off, err := strconv.ParseBool(value)
			asked = !hasValue || err != nil || off
		case arity[name] && !hasValue:
			i++
		}
	}
	return asked
}

// shown is a name or a field from a state file or a marker as every status
// prints it: as it is when each of its characters is printable, else quoted
// as Go quotes a string ("\x1b[2J", "a\nb"), so that no control character
// or terminal escape reaches the terminal, and a quoted name cannot pass
// for a plain one. (--json is escaped by encoding/json.)
func shown(s string) string {
	if printable(s) {
		return s
	}
	return strconv.Quote(s)
}

// printable reports whether s can be printed as it is: valid UTF-8, each rune
// printable, no quote or backslash to make it look escaped.
func printable(s string) bool {
	for _, r := range s {
		if r == utf8.RuneError || r == '"' || r == '\\' || !strconv.IsPrint(r) {
			return false
		}
	}
	return true
}

// escaped is a message that may hold words of a state directory (a file's
// name in an error) with each unprintable character escaped as Go escapes
// it in a string, and nothing else changed.
func escaped(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case !strconv.IsPrint(r):
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// cut shortens s to at most n bytes, at a character's boundary, marking
// the cut with "...".
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	end := n - len("...")
	for end > 0 && !utf8.RuneStart(s[end]) {
		end--
	}
	return s[:end] + "..."
}

// perfLabel is a job's performance data label: NAME_age, in single quotes
// when the name is no valid job name (a hand-written record's), with what
// the format cannot hold ('=', quotes, '|') made '_'.
func perfLabel(name string) string {
	if checkName(name) == nil {
		return name + "_age"
	}
	return "'" + strings.Map(func(r rune) rune {
		if r == '=' || r == '\'' || r == '|' {
			return '_'
		}
		return r
	}, shown(name)) + "_age'"
}
