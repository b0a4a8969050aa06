package status

import (
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/everycli/every/internal/ui"
)

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

// nameText is a job's name as the listing shows it: with its directory
// when another job of the listing has the same name (two state
// directories, or two units' subdirectories, each with a job of that
// name), so that each line says which job it is. count is how many jobs
// of the listing have each name.
func nameText(j jobStatus, count map[string]int) string {
	if count[j.Name] > 1 && j.StateDir != "" {
		return shown(j.Name) + " (in " + escaped(j.StateDir) + ")"
	}
	return shown(j.Name)
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

// resultText is a job's last result and its exit code, or the result
// alone when the code is not known (a run cut short): never a code that
// is not the run's.
func resultText(j jobStatus) string {
	switch {
	case j.LastResult == "":
		return "-"
	case j.LastExitCode == nil:
		return shown(j.LastResult)
	}
	return fmt.Sprintf("%s (%d)", shown(j.LastResult), *j.LastExitCode)
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
func escaped(s string) string { return ui.Escape(s) }

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
