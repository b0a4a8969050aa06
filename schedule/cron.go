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
	names    []string      // names[i] spells min+i
	long     []string      // long[i] spells min+i too: the full English name (cronexpr's)
	spell    string        // the names, for messages
	unit     time.Duration // the time one value of the field is, for the hint of a random value
}

// The years of a seventh field: cronexpr's.
const firstYear, lastYear = 1970, 2099

var (
	secondField = field{name: "second", max: 59, unit: time.Second}
	minuteField = field{name: "minute", max: 59, unit: time.Minute}
	hourField   = field{name: "hour", max: 23, unit: time.Hour}
	domField    = field{name: "day-of-month", min: 1, max: 31}
	monthField  = field{name: "month", min: 1, max: 12,
		names: []string{"jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"},
		long: []string{"january", "february", "march", "april", "may", "june", "july", "august", "september",
			"october", "november", "december"},
		spell: "jan-dec"}
	// Sunday is 0 or 7.
	dowField = field{name: "day-of-week", max: 7,
		names: []string{"sun", "mon", "tue", "wed", "thu", "fri", "sat", "sun"},
		long:  []string{"sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"},
		spell: "sun-sat"}
	yearField = field{name: "year", min: firstYear, max: lastYear}
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
	// domStar and dowStar say the field starts with '*' (or '?', which is
	// '*' there): then a day must match both day fields; when neither
	// does, it matches either (POSIX, cronie).
	domStar, dowStar bool
	// terms are the day fields' terms whose days depend on the month
	// (cronexpr's L, W and #); nil when there are none.
	terms *monthTerms
	// years are the years of a seventh field; nil: every year.
	years *yearSet
	// everyDay says the day fields match every day of every month.
	everyDay bool
}

// monthTerms are the terms of the day fields whose days depend on the month:
// cronexpr's extensions (docs/GUIDE.md, Cron expressions). Their days count as
// the field's own for the rule of the two day fields.
type monthTerms struct {
	last        bool     // L in day-of-month: the last day
	lastWeekday bool     // LW: the last weekday (Monday to Friday)
	nearest     uint64   // 15W (bit 15): the weekday nearest the 15th, within the month
	lastDow     uint8    // 5L in day-of-week (bit 5): the last Friday
	nth         [7]uint8 // 5#2 (bit 2 of nth[5]): the second Friday
}

func (t *monthTerms) empty() bool { return *t == monthTerms{} }

// yearSet is a set of years of firstYear..lastYear: bit y-firstYear.
type yearSet [3]uint64

func (s *yearSet) add(y int) { s[(y-firstYear)/64] |= 1 << ((y - firstYear) % 64) }

func (s *yearSet) has(y int) bool {
	return y >= firstYear && y <= lastYear && s[(y-firstYear)/64]&(1<<((y-firstYear)%64)) != 0
}

// next returns the least year of s at or after y.
func (s *yearSet) next(y int) (int, bool) {
	for y = max(y, firstYear); y <= lastYear; y++ {
		if s.has(y) {
			return y, true
		}
	}
	return 0, false
}

// prev returns the greatest year of s at or before y.
func (s *yearSet) prev(y int) (int, bool) {
	for y = min(y, lastYear); y >= firstYear; y-- {
		if s.has(y) {
			return y, true
		}
	}
	return 0, false
}

// cronError is a bad cron expression: the field and what is wrong with it.
type cronError struct {
	field string
	msg   string
}

func (e *cronError) Error() string { return e.field + ": " + e.msg }

// parseCron parses the fields of a cron expression: 5, 6 with seconds first, or
// 7 with seconds first and a year last (cronexpr's; docs/GUIDE.md, Cron
// expressions). wildcard says the minute or hour field starts with '*'
// (cronie's rule for DST: such a job runs at every real instant that matches).
func parseCron(fields []string) (c *cron, wildcard bool, err error) {
	n := len(fields)
	if n < 5 || n > 7 {
		return nil, false, fmt.Errorf("has %d fields; a cron expression has 5 (minute hour day-of-month month day-of-week), 6 (seconds first) or 7 (seconds first, a year last)", n)
	}
	c = &cron{sec: 1} // 5 fields: on second 0
	written := fields
	if n >= 6 {
		if c.sec, err = parseField(fields[0], secondField, nil); err != nil {
			return nil, false, err
		}
		fields = fields[1:]
	}
	year := "*"
	if n == 7 {
		year = fields[5]
		if c.years, err = parseYears(year); err != nil {
			return nil, false, err
		}
		fields = fields[:5]
	}
	terms := &monthTerms{}
	specs := []struct {
		set   *uint64
		f     field
		terms *monthTerms
	}{{&c.min, minuteField, nil}, {&c.hour, hourField, nil}, {&c.dom, domField, terms}, {&c.month, monthField, nil}, {&c.dow, dowField, terms}}
	for i, s := range specs {
		if *s.set, err = parseField(fields[i], s.f, s.terms); err != nil {
			if n == 6 && i == 4 && looksLikeYear(fields[i]) {
				return nil, false, &cronError{field: dowField.name, msg: fmt.Sprintf("%q is not a day of the week (0-7 or sun-sat): 6 fields put seconds first (second minute hour day-of-month month day-of-week); a year comes only seventh, after them: for a minute first, write \"0 %s\"", fields[i], strings.Join(written, " "))}
			}
			return nil, false, err
		}
	}
	if c.dow&(1<<7) != 0 {
		c.dow = c.dow&^(1<<7) | 1 // Sunday as 7
	}
	if !terms.empty() {
		c.terms = terms
	}
	c.domStar = starts(fields[2])
	c.dowStar = starts(fields[4])
	const allDays, allWeekdays = 1<<32 - 2, 1<<7 - 1
	c.everyDay = c.terms == nil && c.dom == allDays && c.dow == allWeekdays
	if err := c.fires(fields[2], fields[4], year); err != nil {
		return nil, false, err
	}
	wildcard = strings.HasPrefix(fields[0], "*") || strings.HasPrefix(fields[1], "*")
	return c, wildcard, nil
}

// starts reports whether a day field starts with '*' or '?': it is not
// restricted (cronie's rule; '?' is '*' there, as in cronexpr).
func starts(s string) bool { return strings.HasPrefix(s, "*") || strings.HasPrefix(s, "?") }

// looksLikeYear reports whether a field is years, as in Quartz's seventh
// field or a cron line that ends with one: 4-digit numbers, in a list or a
// range ("2027", "2026-2030").
func looksLikeYear(s string) bool { return yearsText().MatchString(s) }

var yearsText = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^[0-9]{4}(?:-[0-9]{4})?(?:,[0-9]{4}(?:-[0-9]{4})?)*$`)
})

// parseYears parses a year field: '*' is every year, past 2099 too (as 5
// or 6 fields); anything else names years of 1970-2099, cronexpr's range.
func parseYears(s string) (*yearSet, error) {
	if s == "*" {
		return nil, nil
	}
	set := &yearSet{}
	for part := range strings.SplitSeq(s, ",") {
		lo, hi, step, err := parseRange(part, yearField)
		if err != nil {
			return nil, &cronError{field: yearField.name, msg: err.Error()}
		}
		for y := lo; y <= hi; y += step {
			set.add(y)
		}
	}
	return set, nil
}

// fires returns an error when no day can ever match: a day of the month
// that no month of the set has ("0 0 30 2 *", "0 0 30W 2 *"), or no such
// day in the years of the year field ("0 0 0 29 2 * 2027"). dom, dow and
// year are the fields as written, for the message.
func (c *cron) fires(dom, dow, year string) error {
	if !c.firesSomeYear() {
		if c.terms == nil && !c.domStar && c.dowStar {
			return &cronError{field: domField.name, msg: fmt.Sprintf("never fires: no month of the month field has day %s", setString(c.dom))}
		}
		if c.domStar {
			return &cronError{field: dowField.name, msg: fmt.Sprintf("never fires: no month of the month field has a day %q matches", dow)}
		}
		return &cronError{field: domField.name, msg: fmt.Sprintf("never fires: no month of the month field has a day %q matches", dom)}
	}
	if c.years == nil {
		return nil
	}
	for y := firstYear; y <= lastYear; y++ {
		for m := 1; m <= 12 && c.years.has(y); m++ {
			if c.month&(1<<m) != 0 && c.daysOf(y, time.Month(m)) != 0 {
				return nil
			}
		}
	}
	return &cronError{field: yearField.name, msg: fmt.Sprintf("never fires: no month of the years %q has a day that the other fields match", year)}
}

// firesSomeYear reports whether a day of some month of the set matches,
// in some year: a month's days depend on its length and the weekday it
// starts on, and every month starts on every weekday in some year (February
// with 28 days and with 29).
func (c *cron) firesSomeYear() bool {
	for m := 1; m <= 12; m++ {
		if c.month&(1<<m) == 0 {
			continue
		}
		for _, n := range []int{daysIn(time.Month(m), 2001), daysIn(time.Month(m), 2000)} {
			for first := range 7 {
				if c.days(n, first) != 0 {
					return true
				}
			}
		}
	}
	return false
}

// parseField parses one field: a comma-separated list of '*', numbers or
// names, ranges a-b, each with an optional step /n. With terms, the field
// is a day field, which also takes '?' and the terms of cronexpr's L, W
// and #, put in terms.
func parseField(s string, f field, terms *monthTerms) (uint64, error) {
	var set uint64
	for part := range strings.SplitSeq(s, ",") {
		bits, err := parseCronTerm(part, f, terms)
		if err != nil {
			return 0, &cronError{field: f.name, msg: err.Error()}
		}
		set |= bits
	}
	return set, nil
}

// parseCronTerm parses one element of a field's list.
func parseCronTerm(part string, f field, terms *monthTerms) (uint64, error) {
	if terms != nil {
		if part == "?" {
			part = "*"
		} else if done, err := terms.parse(part, f); done || err != nil {
			return 0, err
		}
	}
	lo, hi, step, err := parseRange(part, f)
	if err != nil {
		return 0, err
	}
	var set uint64
	for v := lo; v <= hi; v += step {
		set |= 1 << v
	}
	return set, nil
}

// parse parses a term of a day field that is one of cronexpr's
// extensions: L, LW and 15W in day-of-month, 5L and 5#2 in day-of-week,
// each any case. It reports whether part was one; an error is a term that
// looks like one but is not right.
func (t *monthTerms) parse(part string, f field) (bool, error) {
	if strings.ContainsAny(part, "/~") || !strings.ContainsAny(part, "LlWw#") {
		return false, nil
	}
	lower := strings.ToLower(part)
	if f.name == domField.name {
		switch {
		case lower == "l":
			t.last = true
		case lower == "lw":
			t.lastWeekday = true
		case strings.HasPrefix(lower, "l-"):
			return false, fmt.Errorf("%q: an offset from the last day is not taken (cronexpr has none): write L for the last day", part)
		case strings.HasSuffix(lower, "w") && isDigits(part[:len(part)-1]):
			d, err := value(part[:len(part)-1], f)
			if err != nil {
				return false, fmt.Errorf("%q: W follows one day of the month, as in 15W: %w", part, err)
			}
			t.nearest |= 1 << d
		case strings.HasSuffix(lower, "w") && strings.Contains(lower, "-"):
			return false, fmt.Errorf("%q: W follows one day of the month, as in 15W (a list is taken: 1W,15W), never a range", part)
		case strings.Contains(lower, "#"):
			return false, fmt.Errorf("%q: # is for the day-of-week field (5#2: the second Friday)", part)
		default:
			return false, nil
		}
		return true, nil
	}
	if day, nth, ok := strings.Cut(part, "#"); ok {
		d, err := value(day, f)
		if err != nil {
			return false, fmt.Errorf("%q: # follows one day of the week, as in 5#2: %w", part, err)
		}
		k, err := strconv.Atoi(nth)
		if err != nil || k < 1 || k > 5 || nth[0] == '+' {
			return false, fmt.Errorf("%q: the week after # is 1-5, as in 5#2 (the second Friday)", part)
		}
		t.nth[d%7] |= 1 << k
		return true, nil
	}
	if !strings.HasSuffix(lower, "l") {
		return false, nil
	}
	if len(part) == 1 {
		return false, fmt.Errorf("%q: in day-of-week, L follows a day, as in 5L (the last Friday)", part)
	}
	d, err := value(part[:len(part)-1], f)
	switch {
	case err != nil && isDigits(part[:len(part)-1]):
		return false, fmt.Errorf("%q: L follows one day of the week, as in 5L: %w", part, err)
	case err != nil:
		return false, nil // not a day and L: "jul" is a month
	}
	t.lastDow |= 1 << (d % 7)
	return true, nil
}

// parseRange parses a term of '*', a value or a range, with an optional
// step: the values lo, lo+step, ... up to hi.
func parseRange(part string, f field) (lo, hi, step int, err error) {
	if strings.Contains(part, "~") {
		return 0, 0, 0, randomValue(part, f)
	}
	rng, stepText, hasStep := strings.Cut(part, "/")
	step = 1
	if hasStep {
		n, err := strconv.Atoi(stepText)
		if err != nil || n <= 0 {
			return 0, 0, 0, fmt.Errorf("%q: the step must be a positive number", part)
		}
		step = n
	}
	lo, hi = f.min, f.max
	switch {
	case rng == "*":
		if f.name == dowField.name {
			hi = 6 // 7 is Sunday again
		}
	case rng == "":
		return 0, 0, 0, fmt.Errorf("%q: empty value", part)
	case strings.HasPrefix(rng, "?"):
		if f.name == domField.name || f.name == dowField.name {
			return 0, 0, 0, fmt.Errorf("%q: ? stands alone (it is *); a step goes after *, as in */2", part)
		}
		return 0, 0, 0, fmt.Errorf("%q: ? is only for the day fields (day-of-month, day-of-week); write *", part)
	default:
		a, b, isRange := strings.Cut(rng, "-")
		if a == "" {
			return 0, 0, 0, fmt.Errorf("%q: values are %d-%d, never negative, and a range needs both ends, as in 1-5", part, f.min, f.max)
		}
		if isRange && b == "" {
			return 0, 0, 0, fmt.Errorf("%q: a range needs both ends, as in 1-5", part)
		}
		if lo, err = value(a, f); err != nil {
			return 0, 0, 0, err
		}
		hi = lo
		switch {
		case isRange:
			if hi, err = value(b, f); err != nil {
				return 0, 0, 0, err
			}
			if f.name == dowField.name && hi == 0 && lo > 0 {
				hi = 7 // "sat-sun", "5-0": Sunday as 7 ends the week, as cronie reads it
			}
			if hi < lo {
				return 0, 0, 0, fmt.Errorf("%q: a range must go up; to wrap around, write %s", part, wrapped(a, b, f))
			}
		case hasStep:
			hi = f.max // "5/15" is "5-max/15"
		}
	}
	return lo, hi, step, nil
}

// randomValue is the error of cronie's random values ("6~15", "~"): a
// fixed value and --jitter do what they do, on every host alike.
func randomValue(part string, f field) error {
	rng, _, _ := strings.Cut(part, "/")
	a, b, _ := strings.Cut(rng, "~")
	lo, hi := f.min, f.max
	if f.name == dowField.name {
		hi = 6
	}
	if v, err := value(a, f); err == nil {
		lo = v
	}
	if v, err := value(b, f); err == nil {
		hi = v
	}
	fix := "write a fixed value, and --jitter D for a random delay of up to D after each slot"
	if f.unit != 0 && hi > lo {
		unit := map[time.Duration]string{time.Second: "s", time.Minute: "m", time.Hour: "h"}[f.unit]
		fix = fmt.Sprintf("write a fixed %s, %d, and add --jitter %d%s (a random delay of up to %d%s after each slot)", f.name, lo, hi-lo, unit, hi-lo, unit)
	}
	return fmt.Errorf("%q is cronie's random value, which every does not take: %s", part, fix)
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

// value parses a number or a name of the field: short (jan, fri) or full
// (january, friday), in any case.
func value(s string, f field) (int, error) {
	for i, n := range f.names {
		if strings.EqualFold(s, n) || strings.EqualFold(s, f.long[i]) {
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

// monthShape returns the number of days of month m of year y (proleptic
// Gregorian, as package time) and the weekday of its first day (Sunday 0),
// by arithmetic: the day search asks it once a month it looks at.
func monthShape(y int, m time.Month) (days, first int) {
	days = monthDays[m]
	if m == time.February && y%4 == 0 && (y%100 != 0 || y%400 == 0) {
		days = 29
	}
	// Days since 1970-01-01, a Thursday (H. Hinnant's days_from_civil).
	if m <= time.February {
		y--
	}
	era := y / 400
	if y < 0 && y%400 != 0 {
		era-- // floor
	}
	yoe := y - era*400
	mp := (int(m) + 9) % 12
	doy := (153*mp + 2) / 5 // the 1st of the month
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	since := era*146097 + doe - 719468
	first = ((since+4)%7 + 7) % 7
	return days, first
}

var monthDays = [13]int{0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31}

// weekDays are days 0, 7, 14, 21 and 28 as bits: a weekday's days in a
// month, shifted.
const weekDays = 1 | 1<<7 | 1<<14 | 1<<21 | 1<<28

// days returns the days the day fields match in a month of n days whose
// first day is the weekday first (Sunday 0): bit d for day d.
func (c *cron) days(n, first int) uint64 {
	inMonth := uint64(1)<<(n+1) - 2
	// The weekdays of days 1-7, rotated: bit j is the weekday of day j+1.
	rot := (c.dow>>first | c.dow<<(7-first)) & (1<<7 - 1)
	dom, dow := c.dom, rot*weekDays<<1
	if t := c.terms; t != nil {
		dom |= t.domDays(n, first)
		dow |= t.dowDays(n, first)
	}
	if c.domStar || c.dowStar {
		return dom & dow & inMonth
	}
	return (dom | dow) & inMonth
}

// daysOf returns the days the day fields match in month m of year y.
func (c *cron) daysOf(y int, m time.Month) uint64 { return c.days(monthShape(y, m)) }

// domDays returns the days of L, LW and 15W in a month of n days whose
// first day is the weekday first: the nearest weekday never crosses the
// month ("1W" on a Saturday is Monday the 3rd), and a day the month does
// not have is none (31W in April).
func (t *monthTerms) domDays(n, first int) uint64 {
	var set uint64
	if t.last {
		set |= 1 << n
	}
	if t.lastWeekday {
		set |= 1 << nearestWeekday(n, n, first)
	}
	for ws := t.nearest & (uint64(1)<<(n+1) - 1); ws != 0; ws &= ws - 1 {
		set |= 1 << nearestWeekday(bits.TrailingZeros64(ws), n, first)
	}
	return set
}

// nearestWeekday returns the weekday (Monday to Friday) nearest day d of a
// month of n days whose first day is the weekday first, within the month:
// a Saturday's is the Friday before (the Monday after for the 1st), a
// Sunday's the Monday after (the Friday before for the last day).
func nearestWeekday(d, n, first int) int {
	switch (first + d - 1) % 7 {
	case 6: // Saturday
		if d == 1 {
			return 3
		}
		return d - 1
	case 0: // Sunday
		if d == n {
			return d - 2
		}
		return d + 1
	}
	return d
}

// dowDays returns the days of 5L and 5#2 in a month of n days whose first
// day is the weekday first; 5#5 in a month with four Fridays is a day past
// its end (at most 35), which days leaves out.
func (t *monthTerms) dowDays(n, first int) uint64 {
	var set uint64
	lastWeekday := (first + n - 1) % 7
	for wd := range 7 {
		if t.lastDow&(1<<wd) != 0 {
			set |= 1 << (n - (lastWeekday-wd+7)%7)
		}
		firstDay := 1 + (wd-first+7)%7
		for ks := t.nth[wd]; ks != 0; ks &= ks - 1 {
			set |= 1 << (firstDay + 7*(bits.TrailingZeros8(ks)-1)) // past the month's end: days masks it
		}
	}
	return set
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

// monthCache holds the matching days of the month a search is in: they
// are worked out once a month it looks at, not once a reading.
type monthCache struct {
	y    int
	m    time.Month
	days uint64
}

// of returns the days of month m of year y that c matches.
func (mc *monthCache) of(c *cron, y int, m time.Month) uint64 {
	if c.everyDay {
		return 1<<32 - 2 // days past the month's end are never asked for
	}
	if mc.m != m || mc.y != y {
		*mc = monthCache{y: y, m: m, days: c.daysOf(y, m)}
	}
	return mc.days
}

// next returns the earliest matching civil time at or after w (a wall-clock
// reading, held as a UTC time).
func (c *cron) next(w time.Time) (time.Time, bool) {
	if w.Nanosecond() != 0 {
		w = w.Truncate(time.Second).Add(time.Second)
	}
	limit := w.Year() + searchYears
	var month monthCache
	for w.Year() <= limit {
		y, mo, d := w.Date()
		h, mi, s := w.Clock()
		if c.years != nil && !c.years.has(y) {
			ny, ok := c.years.next(y + 1)
			if !ok {
				return time.Time{}, false
			}
			w = time.Date(ny, 1, 1, 0, 0, 0, 0, time.UTC)
			continue
		}
		if c.month&(1<<mo) == 0 {
			if m, ok := nextBit(c.month, int(mo)+1); ok && m <= 12 {
				w = time.Date(y, time.Month(m), 1, 0, 0, 0, 0, time.UTC)
			} else {
				w = time.Date(y+1, 1, 1, 0, 0, 0, 0, time.UTC)
			}
			continue
		}
		if days := month.of(c, y, mo); days&(1<<d) == 0 {
			if n, ok := nextBit(days, d+1); ok {
				w = time.Date(y, mo, n, 0, 0, 0, 0, time.UTC)
			} else {
				w = time.Date(y, mo+1, 1, 0, 0, 0, 0, time.UTC)
			}
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
	var month monthCache
	for w.Year() >= limit {
		y, mo, d := w.Date()
		h, mi, s := w.Clock()
		if c.years != nil && !c.years.has(y) {
			py, ok := c.years.prev(y - 1)
			if !ok {
				return time.Time{}, false
			}
			w = time.Date(py, 12, 31, 23, 59, 59, 0, time.UTC)
			continue
		}
		if c.month&(1<<mo) == 0 {
			if m, ok := prevBit(c.month, int(mo)-1); ok && m >= 1 {
				w = time.Date(y, time.Month(m)+1, 1, 0, 0, -1, 0, time.UTC)
			} else {
				w = time.Date(y, 1, 1, 0, 0, -1, 0, time.UTC)
			}
			continue
		}
		if days := month.of(c, y, mo); days&(1<<d) == 0 {
			if n, ok := prevBit(days, d-1); ok && n >= 1 {
				w = time.Date(y, mo, n, 23, 59, 59, 0, time.UTC)
			} else {
				w = time.Date(y, mo, 1, 0, 0, -1, 0, time.UTC)
			}
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
