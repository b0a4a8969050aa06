package status

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/everycli/every/runner"
)

// ExitUnknown is the exit status of --nagios's UNKNOWN, the
// monitoring-plugins' 3.
const ExitUnknown = int(unknown)

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
func judge(j jobStatus, ss Settings, now time.Time) (health, []string) {
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
		case waited > ss.MaxAge:
			to(critical, "not run yet, "+firstSlotOlder(waited, ss.MaxAge))
		case ss.Nagios && ss.WarnAge > 0 && waited > ss.WarnAge:
			to(warning, "not run yet, "+firstSlotOlder(waited, ss.WarnAge))
		}
	case j.LastSuccess == nil:
		to(critical, "never succeeded")
	case age(j, now) > ss.MaxAge:
		to(critical, olderThan(age(j, now), ss.MaxAge))
	case ss.Nagios && ss.WarnAge > 0 && age(j, now) > ss.WarnAge:
		to(warning, olderThan(age(j, now), ss.WarnAge))
	}
	if ss.Nagios && j.LastResult != "" && j.LastResult != string(runner.Success) {
		to(critical, "last run "+resultText(j))
	}
	if !j.Active && !ss.AllowInactive {
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
func maxAgeCheck(l listing, ss Settings, now time.Time, stdout io.Writer) int {
	code := 0
	for _, p := range l.problems {
		code = 1
		if p.name != "" {
			fmt.Fprintf(stdout, "job %s: %s\n", shown(p.name), p.what)
		}
	}
	count := map[string]int{}
	for _, j := range l.jobs {
		count[j.Name]++
	}
	for _, j := range l.jobs {
		if h, why := judge(j, ss, now); h != healthy {
			code = 1
			fmt.Fprintf(stdout, "job %s: %s\n", nameText(j, count), strings.Join(why, "; "))
		}
	}
	if len(l.jobs) == 0 {
		// Not a pass: a probe must not pass for jobs it cannot see. The
		// line names where it looked (a directory it could not read has its
		// own error line; a NAME not found, its line above).
		if l.where != "" && !slices.ContainsFunc(l.problems, func(p problem) bool { return p.name != "" }) {
			fmt.Fprintf(stdout, "no jobs in %s\n", escaped(l.where))
		}
		code = 1
	}
	return code
}
