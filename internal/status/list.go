package status

import (
	"context"
	"fmt"
	"io/fs"
	"math"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/everycli/every/internal/fleet"
	"github.com/everycli/every/internal/jobfiles"
	"github.com/everycli/every/internal/pid"
	"github.com/everycli/every/runner"
	"github.com/everycli/every/schedule"
	"github.com/everycli/every/state"
)

// list reads the jobs of the state directory or the fleet's Redis, or the
// named ones. Its error is a usage error (a bad --store URL); what it
// cannot read is among its problems.
func list(ss Settings, now time.Time) (listing, error) {
	var l listing
	l.host, _ = os.Hostname()
	var (
		found []foundJob
		// active tells whether an every is alive for a job, and for a
		// fleet's job, which (none for a local one: its marker tells).
		active func(foundJob) (bool, []fleet.Alive, error)
	)
	if raw := ss.Store; raw != "" {
		f, err := fleet.Open(raw)
		if err != nil {
			return l, err
		}
		// One deadline for all the store's answers, retried within it
		// through a leader election (fleet.go).
		ctx, cancel := context.WithTimeout(context.Background(), storeWait)
		defer cancel()
		l.where = f.Server()
		records, problems, err := fleetRecords(ctx, f, ss.Names)
		l.problems = problems
		if err != nil {
			l.problems = append(l.problems, problem{err: fmt.Errorf("cannot list jobs in %s at %s: %v", f.Kind(), f.Server(), err)})
		}
		for _, rec := range records {
			found = append(found, foundJob{rec: rec})
		}
		active = func(j foundJob) (bool, []fleet.Alive, error) { return fleetActive(ctx, f, j.rec.Name) }
	} else {
		dirs, err := stateDirs(ss.StateDirs)
		if err != nil {
			return l, err
		}
		var read []string
		found, read, l.problems = readDirs(dirs, ss.Names, now)
		l.where = strings.Join(read, ", ")
		active = func(j foundJob) (bool, []fleet.Alive, error) {
			// The marker beside the file the record came from, whatever the
			// job's name; and only one of the state's owner.
			on, _, err := jobfiles.ProbeActive(jobfiles.MarkerPath(j.path), func(uid uint32) bool { return uid == j.uid })
			return on, nil, err
		}
	}
	for _, f := range found {
		if f.rec == nil {
			j := describePending(f.key, f.mark)
			j.StateDir = f.dir
			l.jobs = append(l.jobs, j)
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
		on, alive, err := active(f)
		if err != nil {
			l.problems = append(l.problems, problem{rec.Name, "cannot tell whether an every runs for it",
				fmt.Errorf("cannot tell whether job %q is active: %v", rec.Name, err)})
			continue
		}
		j := describeJob(rec, l.host, now, on)
		j.StateDir, j.Alive = f.dir, alive
		l.jobs = append(l.jobs, j)
	}
	return l, nil
}

// foundJob is a job every status found: its record and the file it came
// from, or, for a job whose every is alive but has not run it yet (no
// state), what its marker says.
type foundJob struct {
	key  string        // NAME of NAME.json: what every status NAME looks for
	dir  string        // the directory of its files
	rec  *state.Record // nil: no state yet (mark says what there is)
	path string        // the state file; its marker is beside it
	uid  uint32        // the state file's owner, the one its marker must have
	mark jobfiles.MarkerInfo
}

// ownerOf is the owner of a file; none (an impossible uid) where the
// system does not say.
func ownerOf(fi fs.FileInfo) uint32 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return st.Uid
	}
	return math.MaxUint32
}

// describeJob is what every status shows of a record; active is whether an
// every holds the job's marker (or, in a fleet, its lock).
func describeJob(rec *state.Record, host string, now time.Time, active bool) jobStatus {
	j := jobStatus{
		Name:                rec.Name,
		Schedule:            rec.Schedule,
		LastResult:          rec.LastResult,
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
	ended := !rec.LastEnd.IsZero() && !rec.LastEnd.Before(rec.LastRun)
	if !rec.Running && ended {
		d := rec.LastEnd.Sub(rec.LastRun).Milliseconds()
		j.DurationMS = &d
	}
	if knownExitCode(rec, ended) {
		c := rec.LastExitCode
		j.LastExitCode = &c
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

// knownExitCode reports whether a record's last exit code is its last
// run's: not when that run was cut short (every killed mid-run, found by
// the next every, which books it interrupted): its end was never written,
// and the code left in the record is an older run's.
func knownExitCode(rec *state.Record, ended bool) bool {
	return rec.LastResult != "" && !(rec.LastResult == string(runner.Interrupted) && !ended)
}

// describePending is what every status shows of a job that has no state
// yet, whose every is alive (it holds the marker): its name, schedule and
// slots as the marker says, the name of its file when the marker says
// nothing (an older every's, or a write under way).
func describePending(key string, m jobfiles.MarkerInfo) jobStatus {
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
