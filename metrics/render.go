package metrics

// This file renders snapshots in Prometheus' text format.

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// family is one metric of the exposition.
type family struct {
	name, typ, help string
}

// families are the metrics of the exposition, in its order (docs/GUIDE.md,
// Prometheus metrics (--metrics-file)).
var families = []family{
	{"every_runs_total", "counter", "Runs started, from the job's state (they survive restarts)."},
	{"every_failures_total", "counter", "Runs that failed, from the job's state."},
	{"every_skips_total", "counter", "Slots skipped, by reason: overrun from the job's state, the others since every started."},
	{"every_last_run_timestamp_seconds", "gauge", "When the last run started, in Unix seconds; 0: never."},
	{"every_last_success_timestamp_seconds", "gauge", "When the last successful run started, in Unix seconds; 0: never."},
	{"every_next_run_timestamp_seconds", "gauge", "The slot waited for next, in Unix seconds; 0: none."},
	{"every_last_duration_seconds", "gauge", "How long the last finished run took, its retries included."},
	{"every_last_exit_code", "gauge", "The exit code of the last finished run (124: timeout, 128+n: signal n)."},
	{"every_last_lateness_seconds", "gauge", "How late after its slot the last finished run started."},
	{"every_consecutive_failures", "gauge", "Runs failed in a row, up to the last finished run."},
	{"every_running", "gauge", "1 while a run is in progress, else 0."},
}

type sample struct {
	reason string // the reason label, for skips
	value  string
}

// samples returns a job's samples, family by family (in the order of
// families).
func samples(s *Snapshot) [][]sample {
	r := &s.Record
	one := func(v string) []sample { return []sample{{value: v}} }
	running := "0"
	if s.Running {
		running = "1"
	}
	var skips []sample
	for _, reason := range Reasons {
		n := s.Skips[reason]
		if reason == "overrun" {
			n = r.Skipped + s.Overrun
		}
		skips = append(skips, sample{reason, strconv.Itoa(n)})
	}
	var others []string
	for reason := range s.Skips {
		if !slices.Contains(Reasons, reason) {
			others = append(others, reason)
		}
	}
	slices.Sort(others)
	for _, reason := range others {
		skips = append(skips, sample{reason, strconv.Itoa(s.Skips[reason])})
	}
	return [][]sample{
		one(strconv.Itoa(r.Runs)),
		one(strconv.Itoa(r.Failures)),
		skips,
		one(timestamp(r.LastRun)),
		one(timestamp(r.LastSuccess)),
		one(timestamp(s.Next)),
		one(duration(s.Duration)),
		one(strconv.Itoa(s.ExitCode)),
		one(duration(s.Late)),
		one(strconv.Itoa(r.ConsecutiveFailures)),
		one(running),
	}
}

// Render returns the Prometheus text exposition of the jobs: each metric's
// help and type once, then its samples for each job in the order given,
// each labelled job="NAME" (the names are the caller's to keep apart), with
// no timestamps. It is the one rendering of every's metrics: the metrics
// file's (one job) and every --listen's /metrics (all its jobs). No jobs is
// an empty exposition.
func Render(jobs ...Job) []byte {
	if len(jobs) == 0 {
		return nil
	}
	all := make([][][]sample, len(jobs))
	for i, j := range jobs {
		all[i] = samples(j.Snapshot)
	}
	var b strings.Builder
	for f, fam := range families {
		fmt.Fprintf(&b, "# HELP %s %s\n# TYPE %s %s\n", fam.name, fam.help, fam.name, fam.typ)
		for i, j := range jobs {
			labels := `{job="` + escape(j.Name) + `"`
			for _, smp := range all[i][f] {
				b.WriteString(fam.name)
				b.WriteString(labels)
				if smp.reason != "" {
					b.WriteString(`,reason="` + escape(smp.reason) + `"`)
				}
				b.WriteString("} " + smp.value + "\n")
			}
		}
	}
	return []byte(b.String())
}

// labelEscaper escapes what the text format escapes in a label value.
var labelEscaper = strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)

// escape escapes a label value as the text format wants: backslash, double
// quote and newline. Bytes that are not UTF-8 are replaced: the format is
// UTF-8.
func escape(v string) string {
	if !utf8.ValidString(v) {
		v = strings.ToValidUTF8(v, "\uFFFD")
	}
	return labelEscaper.Replace(v)
}

// timestamp is t in Unix seconds, exactly to the nanosecond; 0 for the zero
// time.
func timestamp(t time.Time) string {
	if t.IsZero() {
		return "0"
	}
	return seconds(t.Unix(), int64(t.Nanosecond()))
}

// duration is d in seconds, exactly to the nanosecond.
func duration(d time.Duration) string {
	sec, nsec := int64(d/time.Second), int64(d%time.Second)
	if nsec < 0 {
		sec, nsec = sec-1, nsec+int64(time.Second)
	}
	return seconds(sec, nsec)
}

// seconds formats sec + nsec/1e9 (0 <= nsec < 1e9) as a decimal, with no
// trailing zeros and none of the rounding of a float64 (whose 53 bits hold
// today's Unix time to a few hundred nanoseconds only).
func seconds(sec, nsec int64) string {
	neg := sec < 0
	if neg && nsec > 0 {
		sec, nsec = sec+1, int64(time.Second)-nsec // -2 + 0.25 is -(1 + 0.75)
	}
	u := uint64(sec)
	if neg {
		u = -u
	}
	s := strconv.FormatUint(u, 10)
	if nsec != 0 {
		s += "." + strings.TrimRight(fmt.Sprintf("%09d", nsec), "0")
	}
	if neg {
		s = "-" + s
	}
	return s
}
