package metrics

// This file renders a snapshot in Prometheus' text format.

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// family is one metric of the file.
type family struct {
	name, typ, help string
	samples         []sample
}

type sample struct {
	reason string // the reason label, for skips
	value  string
}

// render returns the exposition of the snapshot.
func render(job string, s *snapshot) []byte {
	r := &s.rec
	one := func(v string) []sample { return []sample{{value: v}} }
	running := "0"
	if s.running {
		running = "1"
	}
	var skips []sample
	for _, reason := range Reasons {
		n := s.skips[reason]
		if reason == "overrun" {
			n = r.Skipped + s.overrun
		}
		skips = append(skips, sample{reason, strconv.Itoa(n)})
	}
	var others []string
	for reason := range s.skips {
		if !slices.Contains(Reasons, reason) {
			others = append(others, reason)
		}
	}
	slices.Sort(others)
	for _, reason := range others {
		skips = append(skips, sample{reason, strconv.Itoa(s.skips[reason])})
	}
	families := []family{
		{"every_runs_total", "counter", "Runs started, from the job's state (they survive restarts).", one(strconv.Itoa(r.Runs))},
		{"every_failures_total", "counter", "Runs that failed, from the job's state.", one(strconv.Itoa(r.Failures))},
		{"every_skips_total", "counter", "Slots skipped, by reason: overrun from the job's state, the others since every started.", skips},
		{"every_last_run_timestamp_seconds", "gauge", "When the last run started, in Unix seconds; 0: never.", one(timestamp(r.LastRun))},
		{"every_last_success_timestamp_seconds", "gauge", "When the last successful run started, in Unix seconds; 0: never.", one(timestamp(r.LastSuccess))},
		{"every_next_run_timestamp_seconds", "gauge", "The slot waited for next, in Unix seconds; 0: none.", one(timestamp(s.next))},
		{"every_last_duration_seconds", "gauge", "How long the last finished run took, its retries included.", one(duration(s.duration))},
		{"every_last_exit_code", "gauge", "The exit code of the last finished run (124: timeout, 128+n: signal n).", one(strconv.Itoa(s.exitCode))},
		{"every_last_lateness_seconds", "gauge", "How late after its slot the last finished run started.", one(duration(s.late))},
		{"every_consecutive_failures", "gauge", "Runs failed in a row, up to the last finished run.", one(strconv.Itoa(r.ConsecutiveFailures))},
		{"every_running", "gauge", "1 while a run is in progress, else 0.", one(running)},
	}
	var b strings.Builder
	labels := `{job="` + escape(job) + `"`
	for _, fam := range families {
		fmt.Fprintf(&b, "# HELP %s %s\n# TYPE %s %s\n", fam.name, fam.help, fam.name, fam.typ)
		for _, smp := range fam.samples {
			b.WriteString(fam.name)
			b.WriteString(labels)
			if smp.reason != "" {
				b.WriteString(`,reason="` + escape(smp.reason) + `"`)
			}
			b.WriteString("} " + smp.value + "\n")
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
