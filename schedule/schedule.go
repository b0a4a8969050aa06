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

// Schedule is a set of slot times, with what the loop needs of it: whether
// it follows the wall clock, its period and shortest gap, its start on an
// anchor, how a DST change shaped a slot, and the text the state records
// of it. Callers never ask which kind it is (a Grid or a *Calendar): what
// differs is a method here.
type Schedule interface {
	// Next returns the earliest slot strictly after t: never t itself, so a
	// loop that waits for Next(last) never runs twice at once. A schedule
	// that fires no more after t (a cron expression whose years are past)
	// returns a time a century after t.
	Next(t time.Time) time.Time
	// Prev returns the latest slot at or before t; the zero time when there
	// is none (a cron expression whose years all come after t).
	Prev(t time.Time) time.Time
	// String returns the schedule in canonical form.
	String() string
	// Recorded returns the schedule as the state records it: as the user
	// wrote it, with --align and --tz when given (ParseRecorded reads it
	// back). Two records are of one schedule when these are equal.
	Recorded() string
	// WallClock reports whether the slots are readings of a zone's wall
	// clock (a cron expression, an aligned duration), which follow its
	// steps; otherwise they are a grid kept on the monotonic clock, whose
	// pace no step of the wall clock changes.
	WallClock() bool
	// Anchored returns the schedule on anchor: a grid's slots from there. A
	// wall-clock schedule has no anchor: it returns itself.
	Anchored(anchor time.Time) Schedule
	// First returns the first slot of a fresh start at anchor: a grid
	// starts at once, on its anchor; a wall-clock schedule waits for its
	// next slot, as cron does.
	First(anchor time.Time) time.Time
	// Period returns a generous span of one period from t: a grid's
	// interval, a wall-clock schedule's span to the slot after the next.
	Period(t time.Time) time.Duration
	// MinGap returns the shortest time between two of the next slots after
	// t ("0,1 * * * *": a minute), the span --jitter must stay within.
	MinGap(t time.Time) time.Duration
	// Location returns the zone of the schedule's wall clock; nil for a
	// grid, whose slots are in no zone.
	Location() *time.Location
	// Shift says whether slot was moved or chosen by a DST change; a grid's
	// never is.
	Shift(slot time.Time) Shift
	// Change says how a DST change shaped slot, for people; a grid's never
	// is: the zero Change.
	Change(slot time.Time) Change
}

// Grid is the set of slot times anchor + k*interval for every integer k.
// Slot times derived from an anchor that carries a monotonic clock reading carry
// one too, so waiting for them is immune to wall-clock steps.
type Grid struct {
	Anchor   time.Time
	Interval time.Duration
	// text is the schedule as the user wrote it ("90s", "@every 90s"), as
	// recorded; empty: the interval.
	text string
}

// String returns the interval.
func (g Grid) String() string { return g.Interval.String() }

// Recorded returns the duration as the user wrote it, or the interval.
func (g Grid) Recorded() string {
	if g.text != "" {
		return g.text
	}
	return g.Interval.String()
}

// WallClock is false: a grid keeps its pace on the monotonic clock.
func (Grid) WallClock() bool { return false }

// Anchored returns the grid on anchor.
func (g Grid) Anchored(anchor time.Time) Schedule {
	g.Anchor = anchor
	return g
}

// First returns the anchor: a grid's first slot.
func (g Grid) First(anchor time.Time) time.Time { return anchor }

// Period returns the interval.
func (g Grid) Period(time.Time) time.Duration { return g.Interval }

// MinGap returns the interval.
func (g Grid) MinGap(time.Time) time.Duration { return g.Interval }

// Location returns nil: a grid is on no zone's wall clock.
func (Grid) Location() *time.Location { return nil }

// Shift returns NoShift: no DST change moves a slot of a grid.
func (Grid) Shift(time.Time) Shift { return NoShift }

// Change returns the zero Change: no DST change shapes a slot of a grid.
func (Grid) Change(time.Time) Change { return Change{} }

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

// minGapSlots is how many of the next gaps MinGap looks at.
const minGapSlots = 32

// minGap returns the shortest of the next gaps of s after t.
func minGap(s Schedule, t time.Time) time.Duration {
	t = s.Next(t)
	shortest := time.Duration(math.MaxInt64)
	for range minGapSlots {
		next := s.Next(t)
		shortest, t = min(shortest, next.Sub(t)), next
	}
	return shortest
}
