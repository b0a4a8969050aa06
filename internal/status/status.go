// Package status is every status: the jobs of a state directory or of a
// fleet's Redis listed (list.go), judged against --max-age and --nagios
// (health.go, nagios.go), and shown as text or JSON, escaped (text.go).
package status

import (
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/everycli/every/internal/fleet"
	"github.com/everycli/every/internal/ui"
	"github.com/everycli/every/runner"
)

// jobStatus is one line of every status, and one object of its --json.
type jobStatus struct {
	Name                string     `json:"name"`
	Schedule            string     `json:"schedule"`
	LastRun             *time.Time `json:"last_run"`
	AgeSeconds          *float64   `json:"age_seconds"`
	LastResult          string     `json:"last_result"`
	LastExitCode        *int       `json:"last_exit_code"` // null: not known (a run cut short)
	DurationMS          *int64     `json:"duration_ms"`
	NextSlot            *time.Time `json:"next_slot,omitempty"`  // only when active
	FirstSlot           *time.Time `json:"first_slot,omitempty"` // only before the first run
	LastSuccess         *time.Time `json:"last_success"`
	ConsecutiveFailures int        `json:"consecutive_failures"`
	Active              bool       `json:"active"` // an every for the job is alive
	Running             bool       `json:"running"`
	PID                 int        `json:"pid,omitempty"`
	Host                string     `json:"host,omitempty"`
	StateDir            string     `json:"state_dir,omitempty"` // the directory of its files; none for a fleet's job
	// Alive are the everys of a fleet's job alive on its hosts, as the
	// store knows them (fleet/presence.go).
	Alive []fleet.Alive `json:"alive,omitempty"`

	pending bool // no state yet: its every is alive, its first run to come
}

// Settings is an every status command line, parsed.
type Settings struct {
	StateDirs       []string // --state-dir, each time given; none, and no --store: the default directory
	Store           string   // --store
	JSON            bool
	Names           []string
	MaxAge, WarnAge time.Duration // --max-age, --warn-age; 0: not given
	AllowInactive   bool
	Nagios          bool
}

// Run is every status: the jobs of a state directory or of a fleet's
// Redis, one line each. It exits 1 when any listed job's last run did not
// succeed, or a job cannot be read. With --max-age it is a liveness check
// instead (maxAgeCheck), and with --nagios a monitoring plugin (nagiosCheck).
func Run(ss Settings, stdout, stderr io.Writer) int {
	now := time.Now()
	l, err := list(ss, now)
	if err != nil {
		ui.Report(stderr, err)
		if ss.Nagios {
			Unknown(stdout, err)
			return ExitUnknown
		}
		return ui.ExitUsage
	}
	for _, p := range l.problems {
		// Its words may come from the directory (a file's name): escaped.
		fmt.Fprintf(stderr, "every: %s\n", escaped(p.err.Error()))
	}
	switch {
	case ss.Nagios:
		return nagiosCheck(l, ss, now, stdout)
	case ss.MaxAge > 0:
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
	if ss.JSON {
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
	count := map[string]int{}
	for _, j := range l.jobs {
		count[j.Name]++
	}
	for _, j := range l.jobs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%d\t%s\t%s\n", nameText(j, count), shown(j.Schedule), lastRunText(j, now),
			resultText(j), durationText(j), nextText(j, now), j.ConsecutiveFailures, yesNo(j.Active), runningText(j, l.host))
	}
	tw.Flush()
	return code
}

// listing is what every status found: the jobs it could read, and the
// problems it met on the way, each an error line and exit 1 (or UNKNOWN).
type listing struct {
	where    string // the state directories read, or the store, for messages
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
