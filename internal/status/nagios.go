package status

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/everycli/every/internal/jobfiles"
)

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
func nagiosCheck(l listing, ss Settings, now time.Time, stdout io.Writer) int {
	items, perf, oldest, succeeded := nagiosJudged(l, ss, now)
	worst := healthy
	for _, it := range items {
		if it.h.worse(worst) {
			worst = it.h
		}
	}
	var text string
	switch {
	case len(items) > 0:
		text = nagiosText(items)
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

// nagiosItem is a job that is not OK, or a problem, for --nagios's text.
type nagiosItem struct {
	h    health
	name string
	text string
}

// nagiosJudged judges each job and problem of l: the items that are not
// OK, the performance data of the jobs that succeeded once, the oldest of
// their ages, and how many they are.
func nagiosJudged(l listing, ss Settings, now time.Time) (items []nagiosItem, perf []perfItem, oldest time.Duration, succeeded int) {
	for _, p := range l.problems {
		if p.name == "" {
			items = append(items, nagiosItem{unknown, "", p.err.Error()})
		} else {
			items = append(items, nagiosItem{unknown, p.name, "job " + shown(p.name) + ": " + p.what})
		}
	}
	warn := ""
	if ss.WarnAge > 0 {
		warn = seconds(ss.WarnAge)
	}
	for _, j := range l.jobs {
		h, why := judge(j, ss, now)
		if h != healthy {
			items = append(items, nagiosItem{h, j.Name, "job " + shown(j.Name) + ": " + strings.Join(why, ", ")})
		}
		if j.LastSuccess == nil {
			continue // no age to give: the text says "never succeeded"
		}
		succeeded++
		a := age(j, now)
		oldest = max(oldest, a)
		perf = append(perf, perfItem{h, a, j.Name,
			fmt.Sprintf("%s=%ss;%s;%s;0", perfLabel(j.Name), seconds(a), warn, seconds(ss.MaxAge))})
	}
	return items, perf, oldest, succeeded
}

// nagiosText names the items, worst first, within nagiosTextMax: each cut
// to nagiosItemMax, and how many more there are where they stop.
func nagiosText(items []nagiosItem) string {
	slices.SortStableFunc(items, func(a, b nagiosItem) int {
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
	return b.String()
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

// Unknown prints the --nagios line of an error that leaves nothing
// to judge: a usage error, a bad value, no state directory.
func Unknown(w io.Writer, err error) {
	fmt.Fprintf(w, "EVERY UNKNOWN: %s\n", strings.ReplaceAll(cut(escaped(err.Error()), nagiosTextMax), "|", "/"))
}

// perfLabel is a job's performance data label: NAME_age, in single quotes
// when the name is no valid job name (a hand-written record's), with what
// the format cannot hold ('=', quotes, '|') made '_'.
func perfLabel(name string) string {
	if jobfiles.CheckName(name) == nil {
		return name + "_age"
	}
	return "'" + strings.Map(func(r rune) rune {
		if r == '=' || r == '\'' || r == '|' {
			return '_'
		}
		return r
	}, shown(name)) + "_age'"
}
