package runner

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// dayTerm matches a number of days inside a duration, such as the "1.5d" of "1.5d6h".
// No Go duration unit contains a "d", so the match cannot eat part of another unit.
var dayTerm = regexp.MustCompile(`([0-9]*\.?[0-9]+)d`)

// ParseDuration parses Go duration syntax extended with "d" for 24 hours:
// "500ms", "90s", "1m30s", "2h", "1d", "1d12h". Negative values parse; callers
// decide whether they are allowed.
func ParseDuration(s string) (time.Duration, error) {
	var convErr error
	expanded := dayTerm.ReplaceAllStringFunc(s, func(term string) string {
		days, err := strconv.ParseFloat(strings.TrimSuffix(term, "d"), 64)
		if err != nil {
			convErr = err
			return term
		}
		return strconv.FormatFloat(days*24, 'f', -1, 64) + "h"
	})
	if convErr != nil {
		return 0, fmt.Errorf("%q is not a duration", s)
	}
	d, err := time.ParseDuration(expanded)
	if err != nil {
		return 0, fmt.Errorf("%q is not a duration", s)
	}
	return d, nil
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

// Grid is the set of slot times anchor + k*interval for every integer k.
// Slot times derived from an anchor that carries a monotonic clock reading carry
// one too, so waiting for them is immune to wall-clock steps.
type Grid struct {
	Anchor   time.Time
	Interval time.Duration
}

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

// Floor returns the latest slot at or before t.
func (g Grid) Floor(t time.Time) time.Time {
	return g.Slot(g.Index(t))
}

// After returns the earliest slot strictly after t.
func (g Grid) After(t time.Time) time.Time {
	return g.Slot(g.Index(t) + 1)
}

// Between returns how many slots lie in [from, to): the slots skipped when the
// slot due at from is passed over for the one at to.
func (g Grid) Between(from, to time.Time) int64 {
	n := g.Index(to) - g.Index(from)
	if n < 0 {
		return 0
	}
	return n
}
