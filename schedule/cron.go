package schedule

import (
	"fmt"
	"math/bits"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
)

// A field of a cron expression: its name, its range, and the names its
// values may be spelled with.
type field struct {
	name     string
	min, max int
	names    []string // names[i] spells min+i
	spell    string   // the names, for messages
}

var (
	secondField = field{name: "second", max: 59}
	minuteField = field{name: "minute", max: 59}
	hourField   = field{name: "hour", max: 23}
	domField    = field{name: "day-of-month", min: 1, max: 31}
	monthField  = field{name: "month", min: 1, max: 12,
		names: []string{"jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"}, spell: "jan-dec"}
	// Sunday is 0 or 7.
	dowField = field{name: "day-of-week", max: 7,
		names: []string{"sun", "mon", "tue", "wed", "thu", "fri", "sat", "sun"}, spell: "sun-sat"}
)

// descriptors are the @names cron takes for whole expressions.
var descriptors = map[string]string{
	"@yearly":   "0 0 1 1 *",
	"@annually": "0 0 1 1 *",
	"@monthly":  "0 0 1 * *",
	"@weekly":   "0 0 * * 0",
	"@daily":    "0 0 * * *",
	"@midnight": "0 0 * * *",
	"@hourly":   "0 * * * *",
}

// cron is a parsed cron expression: the set of each field as bits.
type cron struct {
	sec, min, hour, dom, month, dow uint64
	// domStar and dowStar say the field starts with '*': then a day must
	// match both day fields; when neither does, it matches either (POSIX).
	domStar, dowStar bool
}

// cronError is a bad cron expression: the field and what is wrong with it.
type cronError struct {
	field string
	msg   string
}

func (e *cronError) Error() string { return e.field + ": " + e.msg }

// parseCron parses the fields of a cron expression: 5, or 6 with seconds
// first. wildcard says the minute or hour field starts with '*' (cronie's rule
// for DST: such a job runs at every real instant that matches).
func parseCron(fields []string) (c *cron, wildcard bool, err error) {
	if len(fields) != 5 && len(fields) != 6 {
		return nil, false, fmt.Errorf("has %d fields; a cron expression has 5 (minute hour day-of-month month day-of-week) or 6 (seconds first)", len(fields))
	}
	c = &cron{sec: 1} // 5 fields: on second 0
	six := len(fields) == 6
	if six {
		if c.sec, err = parseField(fields[0], secondField); err != nil {
			return nil, false, err
		}
		fields = fields[1:]
	}
	specs := []struct {
		set *uint64
		f   field
	}{{&c.min, minuteField}, {&c.hour, hourField}, {&c.dom, domField}, {&c.month, monthField}, {&c.dow, dowField}}
	for i, s := range specs {
		if *s.set, err = parseField(fields[i], s.f); err != nil {
			if six && i == 4 && looksLikeYear(fields[i]) {
				return nil, false, &cronError{field: dowField.name, msg: fmt.Sprintf("%q is not a day of the week (0-7 or sun-sat): 6 fields put seconds first (second minute hour day-of-month month day-of-week), and there is no year field; leave the year out", fields[i])}
			}
			return nil, false, err
		}
	}
	if c.dow&(1<<7) != 0 {
		c.dow = c.dow&^(1<<7) | 1 // Sunday as 7
	}
	c.domStar = strings.HasPrefix(fields[2], "*")
	c.dowStar = strings.HasPrefix(fields[4], "*")
	if err := c.fires(); err != nil {
		return nil, false, err
	}
	wildcard = strings.HasPrefix(fields[0], "*") || strings.HasPrefix(fields[1], "*")
	return c, wildcard, nil
}

// looksLikeYear reports whether a field is years, as in Quartz's seventh
// field or a cron line that ends with one: 4-digit numbers, in a list or a
// range ("2027", "2026-2030").
func looksLikeYear(s string) bool { return yearField().MatchString(s) }

var yearField = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^[0-9]{4}(?:-[0-9]{4})?(?:,[0-9]{4}(?:-[0-9]{4})?)*$`)
})

// fires returns an error when no day can ever match: a day-of-month that no
// month of the set has, with day-of-week '*' ("0 0 30 2 *").
func (c *cron) fires() error {
	if c.domStar || !c.dowStar {
		return nil // every day of the set months, or POSIX's either-or
	}
	for m := 1; m <= 12; m++ {
		days := daysIn(time.Month(m), 2000) // a leap year: February 29 counts
		if c.month&(1<<m) != 0 && c.dom&(1<<(days+1)-1) != 0 {
			return nil
		}
	}
	return &cronError{field: "day-of-month", msg: fmt.Sprintf("never fires: no month of the month field has day %s", setString(c.dom))}
}

// parseField parses one field: a comma-separated list of '*', numbers or
// names, ranges a-b, each with an optional step /n.
func parseField(s string, f field) (uint64, error) {
	var set uint64
	for part := range strings.SplitSeq(s, ",") {
		bits, err := parsePart(part, f)
		if err != nil {
			return 0, &cronError{field: f.name, msg: err.Error()}
		}
		set |= bits
	}
	return set, nil
}

// parsePart parses one element of a field's list.
func parsePart(part string, f field) (uint64, error) {
	rng, stepText, hasStep := strings.Cut(part, "/")
	step := 1
	if hasStep {
		n, err := strconv.Atoi(stepText)
		if err != nil || n <= 0 {
			return 0, fmt.Errorf("%q: the step must be a positive number", part)
		}
		step = n
	}
	lo, hi := f.min, f.max
	switch {
	case rng == "*":
		if f.name == dowField.name {
			hi = 6 // 7 is Sunday again
		}
	case rng == "":
		return 0, fmt.Errorf("%q: empty value", part)
	default:
		a, b, isRange := strings.Cut(rng, "-")
		if a == "" {
			return 0, fmt.Errorf("%q: values are %d-%d, never negative, and a range needs both ends, as in 1-5", part, f.min, f.max)
		}
		if isRange && b == "" {
			return 0, fmt.Errorf("%q: a range needs both ends, as in 1-5", part)
		}
		var err error
		if lo, err = value(a, f); err != nil {
			return 0, err
		}
		hi = lo
		switch {
		case isRange:
			if hi, err = value(b, f); err != nil {
				return 0, err
			}
			if f.name == dowField.name && hi == 0 && lo > 0 {
				hi = 7 // "sat-sun", "5-0": Sunday as 7 ends the week, as cronie reads it
			}
			if hi < lo {
				return 0, fmt.Errorf("%q: a range must go up; to wrap around, write %s", part, wrapped(a, b, f))
			}
		case hasStep:
			hi = f.max // "5/15" is "5-max/15"
		}
	}
	var set uint64
	for v := lo; v <= hi; v += step {
		set |= 1 << v
	}
	return set, nil
}

// wrapped spells the list that a reversed range a-b of f means to one who
// reads it round the end of the field ("fri-tue": fri-sun,mon-tue; "50-10":
// 50-59,0-10), in the spelling of a: names for a name, else numbers.
func wrapped(a, b string, f field) string {
	last, first := f.max, f.min
	if f.name == dowField.name {
		first = 1 // after Sunday, 7, comes Monday
	}
	spell := strconv.Itoa
	if _, err := strconv.Atoi(a); err != nil && len(f.names) > 0 {
		spell = func(v int) string { return f.names[v-f.min] }
	}
	span := func(x, y string) string {
		if strings.EqualFold(x, y) {
			return x
		}
		return x + "-" + y
	}
	return span(a, spell(last)) + "," + span(spell(first), b)
}

// value parses a number or a name of the field.
func value(s string, f field) (int, error) {
	for i, n := range f.names {
		if strings.EqualFold(s, n) {
			return f.min + i, nil
		}
	}
	n, err := strconv.Atoi(s)
	if err != nil || s == "" || s[0] == '+' || s[0] == '-' {
		if len(f.names) > 0 {
			return 0, fmt.Errorf("%q is not a number (%d-%d) or a name (%s)", s, f.min, f.max, f.spell)
		}
		return 0, fmt.Errorf("%q is not a number (%d-%d)", s, f.min, f.max)
	}
	if n < f.min || n > f.max {
		return 0, fmt.Errorf("%d is out of range %d-%d", n, f.min, f.max)
	}
	return n, nil
}

// setString spells a set of values as a list, for messages.
func setString(set uint64) string {
	var vs []string
	for set != 0 {
		v := bits.TrailingZeros64(set)
		vs = append(vs, strconv.Itoa(v))
		set &^= 1 << v
	}
	return strings.Join(vs, ",")
}

// daysIn returns the number of days of month m in year y.
func daysIn(m time.Month, y int) int {
	return time.Date(y, m+1, 0, 0, 0, 0, 0, time.UTC).Day()
}

// dayMatches reports whether the civil date of c is a day of the expression.
func (c *cron) dayMatches(t time.Time) bool {
	dom := c.dom&(1<<t.Day()) != 0
	dow := c.dow&(1<<t.Weekday()) != 0
	if c.domStar || c.dowStar {
		return dom && dow
	}
	return dom || dow
}

// nextBit returns the least member of set at or above from.
func nextBit(set uint64, from int) (int, bool) {
	if from > 63 {
		return 0, false
	}
	rest := set >> from
	if rest == 0 {
		return 0, false
	}
	return from + bits.TrailingZeros64(rest), true
}

// prevBit returns the greatest member of set at or below from.
func prevBit(set uint64, from int) (int, bool) {
	if from < 0 {
		return 0, false
	}
	rest := set << (63 - from)
	if rest == 0 {
		return 0, false
	}
	return from - bits.LeadingZeros64(rest), true
}

// searchYears bounds a search for a matching civil time: the Gregorian
// calendar repeats every 400 years, dates and weekdays alike, so an
// expression that fires at all fires within them (February 29 on a Sunday
// can be 40 years apart).
const searchYears = 400

// next returns the earliest matching civil time at or after w (a wall-clock
// reading, held as a UTC time).
func (c *cron) next(w time.Time) (time.Time, bool) {
	if w.Nanosecond() != 0 {
		w = w.Truncate(time.Second).Add(time.Second)
	}
	limit := w.Year() + searchYears
	for w.Year() <= limit {
		y, mo, d := w.Date()
		h, mi, s := w.Clock()
		if c.month&(1<<mo) == 0 {
			if m, ok := nextBit(c.month, int(mo)+1); ok && m <= 12 {
				w = time.Date(y, time.Month(m), 1, 0, 0, 0, 0, time.UTC)
			} else {
				w = time.Date(y+1, 1, 1, 0, 0, 0, 0, time.UTC)
			}
			continue
		}
		if !c.dayMatches(w) {
			w = time.Date(y, mo, d+1, 0, 0, 0, 0, time.UTC)
			continue
		}
		if c.hour&(1<<h) == 0 {
			if n, ok := nextBit(c.hour, h+1); ok && n < 24 {
				w = time.Date(y, mo, d, n, 0, 0, 0, time.UTC)
			} else {
				w = time.Date(y, mo, d+1, 0, 0, 0, 0, time.UTC)
			}
			continue
		}
		if c.min&(1<<mi) == 0 {
			if n, ok := nextBit(c.min, mi+1); ok && n < 60 {
				w = time.Date(y, mo, d, h, n, 0, 0, time.UTC)
			} else {
				w = time.Date(y, mo, d, h+1, 0, 0, 0, time.UTC)
			}
			continue
		}
		if c.sec&(1<<s) == 0 {
			if n, ok := nextBit(c.sec, s+1); ok && n < 60 {
				w = time.Date(y, mo, d, h, mi, n, 0, time.UTC)
			} else {
				w = time.Date(y, mo, d, h, mi+1, 0, 0, time.UTC)
			}
			continue
		}
		return w, true
	}
	return time.Time{}, false
}

// prev returns the latest matching civil time at or before w.
func (c *cron) prev(w time.Time) (time.Time, bool) {
	w = w.Truncate(time.Second)
	limit := w.Year() - searchYears
	for w.Year() >= limit {
		y, mo, d := w.Date()
		h, mi, s := w.Clock()
		if c.month&(1<<mo) == 0 {
			if m, ok := prevBit(c.month, int(mo)-1); ok && m >= 1 {
				w = time.Date(y, time.Month(m)+1, 1, 0, 0, -1, 0, time.UTC)
			} else {
				w = time.Date(y, 1, 1, 0, 0, -1, 0, time.UTC)
			}
			continue
		}
		if !c.dayMatches(w) {
			w = time.Date(y, mo, d, 0, 0, -1, 0, time.UTC)
			continue
		}
		if c.hour&(1<<h) == 0 {
			if n, ok := prevBit(c.hour, h-1); ok {
				w = time.Date(y, mo, d, n, 59, 59, 0, time.UTC)
			} else {
				w = time.Date(y, mo, d, 0, 0, -1, 0, time.UTC)
			}
			continue
		}
		if c.min&(1<<mi) == 0 {
			if n, ok := prevBit(c.min, mi-1); ok {
				w = time.Date(y, mo, d, h, n, 59, 0, time.UTC)
			} else {
				w = time.Date(y, mo, d, h, 0, -1, 0, time.UTC)
			}
			continue
		}
		if c.sec&(1<<s) == 0 {
			if n, ok := prevBit(c.sec, s-1); ok {
				w = time.Date(y, mo, d, h, mi, n, 0, time.UTC)
			} else {
				w = time.Date(y, mo, d, h, mi, -1, 0, time.UTC)
			}
			continue
		}
		return w, true
	}
	return time.Time{}, false
}
