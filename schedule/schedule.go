// Package schedule owns when a job's slots are: the Schedule seam (Next,
// Prev), the duration grid, and the calendar schedules on a zone's wall
// clock (cron expressions, aligned durations) with their rules for DST.
package schedule

import (
	"fmt"
	"math"
	"regexp"
	"strings"
	"sync"
	"time"
)

// durationTerm is one term of a duration: a decimal number and its unit.
var durationTerm = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:ns|us|µs|μs|ms|s|m|h|d)`)
})

// ParseDuration parses Go duration syntax extended with "d" for 24 hours:
// "500ms", "90s", "1m30s", "2h", "1d", "1d12h". It is strict: the whole
// string must be terms of a number and a unit ("1.5.5d" is an error, not
// 1h7m55s), with one optional sign in front; "0" alone is zero. Negative
// values parse; callers decide whether they are allowed.
func ParseDuration(s string) (time.Duration, error) {
	bad := fmt.Errorf("%q is not a duration", s)
	rest, neg := s, false
	if rest != "" && (rest[0] == '-' || rest[0] == '+') {
		neg, rest = rest[0] == '-', rest[1:]
	}
	if rest == "0" {
		return 0, nil
	}
	if rest == "" {
		return 0, bad
	}
	var total time.Duration
	for rest != "" {
		term := durationTerm().FindString(rest)
		if term == "" {
			return 0, bad
		}
		rest = rest[len(term):]
		d, err := parseTerm(term)
		if err != nil || total > math.MaxInt64-d {
			return 0, bad
		}
		total += d
	}
	if neg {
		total = -total
	}
	return total, nil
}

// parseTerm parses one number and unit; a day is 24 exact hours.
func parseTerm(term string) (time.Duration, error) {
	num, isDays := strings.CutSuffix(term, "d")
	if !isDays {
		return time.ParseDuration(term)
	}
	h, err := time.ParseDuration(num + "h")
	if err != nil || h > math.MaxInt64/24 {
		return 0, fmt.Errorf("%q: out of range", term)
	}
	return h * 24, nil
}

// ParseInterval parses a schedule interval: a duration of at least one millisecond.
func ParseInterval(s string) (time.Duration, error) {
	d, err := ParseDuration(s)
	if err != nil {
		return 0, err
	}
	if d < time.Millisecond {
		return 0, fmt.Errorf("%q is shorter than 1ms", s)
	}
	return d, nil
}

// Schedule is a set of slot times.
type Schedule interface {
	// Next returns the earliest slot strictly after t: never t itself, so a
	// loop that waits for Next(last) never runs twice at once.
	Next(t time.Time) time.Time
	// Prev returns the latest slot at or before t.
	Prev(t time.Time) time.Time
	// String returns the schedule in canonical form.
	String() string
}

// Grid is the set of slot times anchor + k*interval for every integer k.
// Slot times derived from an anchor that carries a monotonic clock reading carry
// one too, so waiting for them is immune to wall-clock steps.
type Grid struct {
	Anchor   time.Time
	Interval time.Duration
}

// String returns the interval.
func (g Grid) String() string { return g.Interval.String() }

// Index returns k of the latest slot at or before t (negative before the anchor).
func (g Grid) Index(t time.Time) int64 {
	d := t.Sub(g.Anchor)
	k := int64(d / g.Interval)
	if d < 0 && d%g.Interval != 0 {
		k-- // floor, not truncation toward zero
	}
	return k
}

// Slot returns the time of slot k.
func (g Grid) Slot(k int64) time.Time {
	return g.Anchor.Add(time.Duration(k) * g.Interval)
}

// Next returns the earliest slot strictly after t.
func (g Grid) Next(t time.Time) time.Time { return g.Slot(g.Index(t) + 1) }

// Prev returns the latest slot at or before t.
func (g Grid) Prev(t time.Time) time.Time { return g.Slot(g.Index(t)) }
