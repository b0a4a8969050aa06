package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

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
	NextSlot            *time.Time `json:"next_slot"`
	ConsecutiveFailures int        `json:"consecutive_failures"`
	Running             bool       `json:"running"`
	PID                 int        `json:"pid,omitempty"`
	Host                string     `json:"host,omitempty"`
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
	case ss.warnAge > 0 && ss.maxAge > 0 && ss.warnAge > ss.maxAge:
		return ss, usagef("bad --warn-age %v: longer than --max-age %v; the warning comes first", ss.warnAge, ss.maxAge)
	}
	return ss, nil
}

// status is every status: the jobs of a state directory or of a fleet's
// Redis, one line each. It exits 1 when any listed job's last run did not
// succeed, or a job cannot be read.
func status(ss statusSettings, stdout, stderr io.Writer) int {
	names := ss.names
	var (
		dir     string
		records []*state.Record
		code    int
	)
	if raw := ss.store; raw != "" {
		f, err := openFleet(raw)
		if err != nil {
			report(stderr, err)
			return exitUsage
		}
		dir = f.server
		if records, code, err = fleetRecords(f, names, stderr); err != nil {
			report(stderr, fmt.Errorf("cannot list jobs in redis at %s: %v", f.server, err))
			return 1
		}
	} else {
		var err error
		if dir, err = stateDir(ss.stateDir); err != nil {
			report(stderr, err)
			return exitUsage
		}
		records, code = readRecords(dir, names, time.Now(), stderr)
	}
	host, _ := os.Hostname()
	now := time.Now()
	jobs := make([]jobStatus, 0, len(records))
	for _, rec := range records {
		// An absurd record (a hostile or damaged one) is reported, not shown.
		var period time.Duration // 0 if not known
		if s, err := recorded(rec.Schedule); err == nil {
			period = periodOf(s, now)
		}
		if err := rec.Sane(now, period); err != nil {
			report(stderr, fmt.Errorf("state of job %q cannot be used: %v", rec.Name, err))
			code = 1
			continue
		}
		j := describeJob(rec, host, now)
		if j.LastResult != "" && j.LastResult != string(runner.Success) {
			code = 1
		}
		jobs = append(jobs, j)
	}
	if ss.json {
		b, _ := json.MarshalIndent(jobs, "", "  ")
		fmt.Fprintf(stdout, "%s\n", b)
		return code
	}
	if len(jobs) == 0 {
		if code == 0 {
			fmt.Fprintf(stdout, "no jobs in %s\n", dir)
		}
		return code
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tSCHEDULE\tLAST RUN\tRESULT\tDURATION\tNEXT\tFAILURES\tRUNNING")
	for _, j := range jobs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%d\t%s\n", j.Name, j.Schedule, lastRunText(j, now),
			resultText(j), durationText(j), nextText(j, now), j.ConsecutiveFailures, runningText(j, host))
	}
	tw.Flush()
	return code
}

// readRecords reads the records of dir, or of the named jobs only. A
// directory that cannot be read, a name without a record, or a record that
// cannot be read or used (not a regular file, corrupt, absurd) is reported
// and makes the status 1. Nothing here can block: entries that are not
// regular files are never opened.
func readRecords(dir string, names []string, now time.Time, stderr io.Writer) ([]*state.Record, int) {
	fi, err := os.Stat(dir)
	if err == nil && !fi.IsDir() {
		err = errors.New("not a directory")
	}
	if err != nil {
		report(stderr, fmt.Errorf("cannot list jobs in state directory %q: %v; check --state-dir", dir, unwrapPath(err)))
		return nil, 1
	}
	code := 0
	if len(names) == 0 {
		entries, err := os.ReadDir(dir)
		if err != nil {
			report(stderr, fmt.Errorf("cannot list jobs in state directory %q: %v", dir, unwrapPath(err)))
			return nil, 1
		}
		for _, e := range entries {
			if name, ok := strings.CutSuffix(e.Name(), ".json"); ok && !strings.HasPrefix(name, ".") {
				names = append(names, name)
			}
		}
	}
	slices.Sort(names)
	var records []*state.Record
	for _, name := range names {
		path := filepath.Join(dir, name+".json")
		rec, err := state.File{Path: path}.Read(now)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			report(stderr, fmt.Errorf("no state for job %q in %s: %v", name, dir, unwrapPath(err)))
			code = 1
		case err != nil:
			report(stderr, fmt.Errorf("cannot read state of job %q: %v", name, err))
			code = 1
		default:
			records = append(records, rec)
		}
	}
	return records, code
}

// fleetRecords reads the records of a fleet's Redis, or of the named jobs.
func fleetRecords(f *fleet, names []string, stderr io.Writer) ([]*state.Record, int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	all, err := state.Redis{Client: f.client, Server: f.server}.List(ctx, f.prefix+"*:state")
	if err != nil {
		return nil, 0, err
	}
	slices.SortFunc(all, func(a, b *state.Record) int { return strings.Compare(a.Name, b.Name) })
	if len(names) == 0 {
		return all, 0, nil
	}
	code := 0
	var records []*state.Record
	for _, name := range names {
		i := slices.IndexFunc(all, func(r *state.Record) bool { return r.Name == name })
		if i < 0 {
			report(stderr, fmt.Errorf("no state for job %q in redis at %s", name, f.server))
			code = 1
			continue
		}
		records = append(records, all[i])
	}
	return records, code, nil
}

func describeJob(rec *state.Record, host string, now time.Time) jobStatus {
	j := jobStatus{
		Name:                rec.Name,
		Schedule:            rec.Schedule,
		LastResult:          rec.LastResult,
		LastExitCode:        rec.LastExitCode,
		ConsecutiveFailures: rec.ConsecutiveFailures,
	}
	if !rec.LastRun.IsZero() {
		t := rec.LastRun.UTC()
		age := now.Sub(t).Seconds()
		j.LastRun, j.AgeSeconds = &t, &age
	}
	if !rec.Running && !rec.LastEnd.IsZero() && !rec.LastEnd.Before(rec.LastRun) {
		d := rec.LastEnd.Sub(rec.LastRun).Milliseconds()
		j.DurationMS = &d
	}
	if s, err := recorded(rec.Schedule); err == nil {
		if g, ok := s.(schedule.Grid); ok {
			s = schedule.Grid{Anchor: rec.Anchor, Interval: g.Interval}
		}
		next := s.Next(now)
		if cal, ok := s.(*schedule.Calendar); ok {
			next = next.In(cal.Location())
		} else {
			next = next.UTC()
		}
		j.NextSlot = &next
	}
	if rec.Running {
		// The record says running; on this host, the process can be checked.
		j.Running = rec.Host != host || pid.Alive(rec.PID)
		j.PID, j.Host = rec.PID, rec.Host
	}
	return j
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
	return fmt.Sprintf("%s (%d)", j.LastResult, j.LastExitCode)
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
		return fmt.Sprintf("yes, pid %d on %s", j.PID, j.Host)
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
