package schedule

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aptible/supercronic/cronexpr"
)

// This file tests cronexpr's extensions (SPEC 16) against supercronic's
// own parser: its in-tree package github.com/aptible/supercronic/cronexpr,
// a fork of gorhill/cronexpr (supercronic required github.com/krallin/cronexpr
// before it moved the fork into its tree; that module is not on the module
// proxy). The module is required at v0.2.30, whose cronexpr package is the
// same, file for file, as that of v0.2.48 (the newest as this is written),
// and whose go.mod asks for no newer Go than this module's.
//
// The expressions are generated in the syntax both take, with the same
// meaning by SPEC 16. Where the two differ by design, the generator keeps
// away, and the table tests pin our side:
//   - 6 fields: seconds first here (SPEC 2), a year last in cronexpr.
//   - Day-of-week 7 in a range ("5-7", "mon-sun"): every day to Sunday
//     here (cronie), Sundays only or an error in cronexpr; "N/S" in
//     day-of-week goes on to 7 (Sunday) here, to 6 in cronexpr.
//   - A step beyond the field's range ("*/60"): taken here as cronie takes
//     it, refused by cronexpr.
//   - '?' outside the day fields: refused here.
//   - @midnight: not in cronexpr.
//   - The rule of the two day fields: a field is restricted here unless it
//     starts with '*' or '?' (cronie), in cronexpr unless one of its terms
//     is a bare '*' or '?': "*/2" is restricted there. Expressions where
//     the two rules give another rule (either-or against both) are left
//     out and counted, as TestOracleRobfig does.
//   - DST: cronexpr works on the wall clock of the instant given; the
//     comparison is in UTC (TestOracleExtensionsDST checks zones against
//     the brute-force oracle of the DST rules instead).
//   - Years: '*' is every year here, past 2099 too; cronexpr stops after
//     2099. The instants compared are well before.

// extExpr is a generated expression of the extended syntax, with the sets
// and terms it means, worked out by the generator itself.
type extExpr struct {
	text    string
	fields  []string
	seven   bool
	sets    [3]uint64 // second, minute, hour
	month   uint64
	years   []bool // years[y-1970]; nil: every year
	dom     dayTerms
	dow     dayTerms
	ourStar [2]bool // day-of-month, day-of-week start with '*' or '?'
	bare    [2]bool // ... have a term that is a bare '*' or '?' (cronexpr's unrestricted)
}

// dayTerms are the terms of a day field: plain days of the month (or
// weekdays), and the terms that depend on the month.
type dayTerms struct {
	plain       uint64
	last        bool
	lastWeekday bool
	nearest     []int
	lastDow     []int    // weekdays
	nth         [][2]int // weekday, week
}

// ourOR and theirOR report whether a day matching either day field runs,
// by our rule and by cronexpr's.
func (e extExpr) ourOR() bool   { return !e.ourStar[0] && !e.ourStar[1] }
func (e extExpr) theirOR() bool { return !e.bare[0] && !e.bare[1] }

// day reports whether the civil date y-m-d is a day of the expression, by
// our rule, worked out day by day with package time.
func (e extExpr) day(y int, m time.Month, d int) bool {
	if e.month&(1<<m) == 0 || (e.years != nil && (y < 1970 || y > 2099 || !e.years[y-1970])) {
		return false
	}
	n := time.Date(y, m+1, 0, 0, 0, 0, 0, time.UTC).Day()
	if d > n {
		return false
	}
	weekday := func(d int) time.Weekday { return time.Date(y, m, d, 0, 0, 0, 0, time.UTC).Weekday() }
	isWorkday := func(d int) bool { return weekday(d) != time.Saturday && weekday(d) != time.Sunday }
	dom := e.dom.plain&(1<<d) != 0 || (e.dom.last && d == n)
	if e.dom.lastWeekday {
		last := n
		for !isWorkday(last) {
			last--
		}
		dom = dom || d == last
	}
	for _, target := range e.dom.nearest {
		// The weekday of the month nearest the target (no two are as near).
		best := 0
		for c := 1; c <= n && target <= n; c++ {
			if isWorkday(c) && (best == 0 || abs(c-target) < abs(best-target)) {
				best = c
			}
		}
		dom = dom || d == best
	}
	wd := int(weekday(d))
	dow := e.dow.plain&(1<<wd) != 0
	for _, l := range e.dow.lastDow {
		dow = dow || (wd == l && d+7 > n)
	}
	for _, nth := range e.dow.nth {
		dow = dow || (wd == nth[0] && (d-1)/7 == nth[1]-1)
	}
	if e.ourOR() {
		return dom || dow
	}
	return dom && dow
}

func abs(v int) int { return max(v, -v) }

// anyCase spells s in a random case.
func anyCase(r *rand.Rand, s string) string {
	switch r.IntN(3) {
	case 0:
		return strings.ToUpper(s)
	case 1:
		return strings.ToUpper(s[:1]) + s[1:]
	}
	return s
}

var (
	monthShort = []string{"jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"}
	monthLong  = []string{"january", "february", "march", "april", "may", "june", "july", "august", "september", "october", "november", "december"}
	dayShort   = []string{"sun", "mon", "tue", "wed", "thu", "fri", "sat"}
	dayLong    = []string{"sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday"}
)

// genPlain generates a field of '*', values, ranges and steps between lo
// and hi, with steps no greater than hi (cronexpr's bound), spelling a value
// v with name(v) where it gives one; "N/S" unless noFromStep. It returns
// the text, the set (bit v), and whether it starts with '*' and has a bare
// '*'.
func genPlain(r *rand.Rand, lo, hi int, starPct int, name func(int) string, noFromStep bool) (string, uint64, bool, bool) {
	spell := func(v int) string {
		if name != nil {
			if s := name(v); s != "" {
				return s
			}
		}
		return strconv.Itoa(v)
	}
	var terms []string
	var set uint64
	star, bare := false, false
	for j := range 1 + r.IntN(3)*r.IntN(2) {
		if j == 0 && r.IntN(100) < starPct {
			star = true
			if r.IntN(3) == 0 {
				s := 1 + r.IntN(max(1, (hi-lo)/2))
				terms = append(terms, "*/"+strconv.Itoa(s))
				for v := lo; v <= hi; v += s {
					set |= 1 << v
				}
			} else {
				terms, bare = append(terms, "*"), true
				for v := lo; v <= hi; v++ {
					set |= 1 << v
				}
			}
			continue
		}
		a := lo + r.IntN(hi-lo+1)
		switch k := r.IntN(6); {
		case k < 3:
			terms = append(terms, spell(a))
			set |= 1 << a
		case k < 4:
			b := a + r.IntN(hi-a+1)
			terms = append(terms, spell(a)+"-"+spell(b))
			for v := a; v <= b; v++ {
				set |= 1 << v
			}
		case k < 5 || noFromStep:
			b := a + r.IntN(hi-a+1)
			s := 1 + r.IntN(max(1, (hi-lo)/2))
			terms = append(terms, spell(a)+"-"+spell(b)+"/"+strconv.Itoa(s))
			for v := a; v <= b; v += s {
				set |= 1 << v
			}
		default:
			s := 1 + r.IntN(max(1, (hi-lo)/2))
			terms = append(terms, strconv.Itoa(a)+"/"+strconv.Itoa(s))
			for v := a; v <= hi; v += s {
				set |= 1 << v
			}
		}
	}
	return strings.Join(terms, ","), set, star, bare
}

// genPlainDay is genPlain for a day field, its leading '*' sometimes
// written '?'.
func genPlainDay(r *rand.Rand, lo, hi int, name func(int) string, wrap bool) (string, dayTerms, bool, bool) {
	text, set, star, bare := genPlain(r, lo, hi, 50, name, wrap)
	if r.IntN(4) == 0 && strings.HasPrefix(text, "*") && !strings.HasPrefix(text, "*/") {
		text = "?" + text[1:]
	}
	return text, dayTerms{plain: set}, star, bare
}

// genDom generates a day-of-month field with L, LW, 15W and '?'.
func genDom(r *rand.Rand) (string, dayTerms, bool, bool) {
	if r.IntN(4) == 0 {
		return genPlainDay(r, 1, 31, nil, false)
	}
	var t dayTerms
	var terms []string
	star, bare := false, false
	for j := range 1 + r.IntN(3)*r.IntN(2) {
		switch k := r.IntN(10); {
		case j == 0 && k == 0:
			terms, star, bare = append(terms, []string{"*", "?"}[r.IntN(2)]), true, true
			t.plain |= 1<<32 - 2
		case k < 3:
			terms, t.last = append(terms, anyCase(r, "l")), true
		case k < 5:
			terms, t.lastWeekday = append(terms, anyCase(r, "lw")), true
		case k < 9:
			d := 1 + r.IntN(31)
			if r.IntN(2) == 0 {
				d = []int{1, 2, 3, 15, 28, 29, 30, 31}[r.IntN(8)]
			}
			terms, t.nearest = append(terms, strconv.Itoa(d)+anyCase(r, "w")), append(t.nearest, d)
		default:
			d := 1 + r.IntN(31)
			terms, t.plain = append(terms, strconv.Itoa(d)), t.plain|1<<d
		}
	}
	return strings.Join(terms, ","), t, star, bare
}

// genDow generates a day-of-week field with 5L, 5#2, '?' and full names.
func genDow(r *rand.Rand) (string, dayTerms, bool, bool) {
	name := func(v int) string {
		switch r.IntN(3) {
		case 0:
			return anyCase(r, dayShort[v%7])
		case 1:
			return anyCase(r, dayLong[v%7])
		}
		return ""
	}
	if r.IntN(4) == 0 {
		// "N/S" goes on to 7 here (cronie), to 6 in cronexpr: not generated.
		return genPlainDay(r, 0, 6, name, true)
	}
	var t dayTerms
	var terms []string
	star, bare := false, false
	spell := func(v int) string {
		if s := name(v); s != "" {
			return s
		}
		return strconv.Itoa(v)
	}
	for j := range 1 + r.IntN(3)*r.IntN(2) {
		v := r.IntN(8) // 7 is Sunday
		switch k := r.IntN(10); {
		case j == 0 && k == 0:
			terms, star, bare = append(terms, []string{"*", "?"}[r.IntN(2)]), true, true
			t.plain |= 1<<7 - 1
		case k < 4:
			terms, t.lastDow = append(terms, spell(v)+anyCase(r, "l")), append(t.lastDow, v%7)
		case k < 8:
			w := 1 + r.IntN(5)
			terms, t.nth = append(terms, spell(v)+"#"+strconv.Itoa(w)), append(t.nth, [2]int{v % 7, w})
		default:
			terms, t.plain = append(terms, spell(v)), t.plain|1<<(v%7)
		}
	}
	return strings.Join(terms, ","), t, star, bare
}

// genYears generates a year field: '*', years of 2000-2060, ranges, steps.
func genYears(r *rand.Rand) (string, []bool) {
	if r.IntN(3) == 0 {
		return "*", nil
	}
	years := make([]bool, 130)
	var terms []string
	for range 1 + r.IntN(2) {
		a := 2000 + r.IntN(61)
		switch r.IntN(5) {
		case 0:
			terms = append(terms, strconv.Itoa(a))
			years[a-1970] = true
		case 1:
			b := a + r.IntN(20)
			terms = append(terms, strconv.Itoa(a)+"-"+strconv.Itoa(b))
			for y := a; y <= b; y++ {
				years[y-1970] = true
			}
		case 2:
			b, s := a+r.IntN(30), 1+r.IntN(8)
			terms = append(terms, strconv.Itoa(a)+"-"+strconv.Itoa(b)+"/"+strconv.Itoa(s))
			for y := a; y <= b; y += s {
				years[y-1970] = true
			}
		case 3:
			s := 1 + r.IntN(12)
			terms = append(terms, strconv.Itoa(a)+"/"+strconv.Itoa(s))
			for y := a; y <= 2099; y += s {
				years[y-1970] = true
			}
		default:
			s := 1 + r.IntN(12)
			terms = append(terms, "*/"+strconv.Itoa(s))
			for y := 1970; y <= 2099; y += s {
				years[y-1970] = true
			}
		}
	}
	return strings.Join(terms, ","), years
}

// genExt generates an expression of 5 or 7 fields in the syntax that both
// we and cronexpr take.
func genExt(r *rand.Rand) extExpr {
	var e extExpr
	e.seven = r.IntN(3) == 0
	var sec string
	if e.seven {
		sec, e.sets[0], _, _ = genPlain(r, 0, 59, 50, nil, false)
	} else {
		e.sets[0] = 1
	}
	var minute, hour string
	minute, e.sets[1], _, _ = genPlain(r, 0, 59, 35, nil, false)
	hour, e.sets[2], _, _ = genPlain(r, 0, 23, 35, nil, false)
	dom, domT, domStar, domBare := genDom(r)
	month, monthSet, _, _ := genPlain(r, 1, 12, 65, func(v int) string {
		switch r.IntN(3) {
		case 0:
			return anyCase(r, monthShort[v-1])
		case 1:
			return anyCase(r, monthLong[v-1])
		}
		return ""
	}, false)
	dow, dowT, dowStar, dowBare := genDow(r)
	e.month, e.dom, e.dow = monthSet, domT, dowT
	e.ourStar = [2]bool{domStar, dowStar}
	e.bare = [2]bool{domBare, dowBare}
	e.fields = []string{minute, hour, dom, month, dow}
	if e.seven {
		var year string
		year, e.years = genYears(r)
		e.fields = append(append([]string{sec}, e.fields...), year)
	}
	e.text = strings.Join(e.fields, " ")
	return e
}

// wildcard reports whether the minute or hour field starts with '*'.
func (e extExpr) wildcard() bool {
	f := e.fields
	if e.seven {
		f = f[1:]
	}
	return strings.HasPrefix(f[0], "*") || strings.HasPrefix(f[1], "*")
}

// TestOracleCronexpr compares Next with supercronic's cronexpr over random
// expressions of the extended syntax, in UTC, and whether an expression
// never fires: we refuse it, and cronexpr finds no slot in 1970-2099.
func TestOracleCronexpr(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	n := 6000
	if testing.Short() {
		n = 1000
	}
	var compared, exprs, ruleDiffers, neverBoth int
	end := time.Date(2099, 1, 1, 0, 0, 0, 0, time.UTC)
	for range n {
		e := genExt(r)
		theirs, err := cronexpr.ParseStrict(e.text)
		if err != nil {
			t.Fatalf("cronexpr refuses %q: %v (fix the generator)", e.text, err)
		}
		if e.ourOR() != e.theirOR() {
			ruleDiffers++
			continue
		}
		never := theirs.Next(time.Date(1969, 12, 31, 23, 59, 59, 0, time.UTC)).IsZero()
		ours, err := Parse(e.text, Options{Zone: time.UTC})
		switch {
		case err != nil && never && strings.Contains(err.Error(), "never fires"):
			neverBoth++
			continue
		case err != nil:
			t.Errorf("Parse(%q): %v; cronexpr takes it (never fires there: %v)", e.text, err, never)
			continue
		case never:
			t.Errorf("Parse(%q) takes it, but cronexpr finds no slot in 1970-2099", e.text)
			continue
		}
		exprs++
		from := randomInstant(r)
		for range 6 {
			want := theirs.Next(from)
			got := ours.Next(from)
			if want.IsZero() || want.After(end) {
				if !got.After(end) && !want.After(end) {
					t.Errorf("Parse(%q).Next(%s) = %s; cronexpr finds none", e.text, fmtT(from), fmtT(got))
				}
				break
			}
			if !got.Equal(want) {
				t.Errorf("Parse(%q).Next(%s) = %s, cronexpr says %s", e.text, fmtT(from), fmtT(got), fmtT(want))
				break
			}
			compared++
			from = got
			if r.IntN(3) == 0 {
				from = from.Add(time.Duration(r.Int64N(int64(40 * 24 * time.Hour))))
			}
		}
	}
	t.Logf("%d expressions, %d slots compared; %d refused by us and never firing in cronexpr; skipped %d where the day rules differ",
		exprs, compared, neverBoth, ruleDiffers)
	if compared < n {
		t.Errorf("only %d slots compared", compared)
	}
}

// TestCronexprDiffers pins, on literal instants, where we deliberately
// read an expression otherwise than cronexpr (see the top of this file),
// so that a change on either side is noticed. An empty theirs: cronexpr
// refuses the expression.
func TestCronexprDiffers(t *testing.T) {
	tests := []struct {
		expr, from, ours, theirs string
	}{
		// 6 fields: seconds first here; minutes first and a year last there.
		{"*/10 * * * * *", "2026-05-13T10:17:23Z", "2026-05-13T10:17:30Z", "2026-05-13T10:20:00Z"},
		// 0-7 is every day here (Thursday 14 May next); Sundays only there.
		{"0 0 * * 0-7", "2026-05-13T10:17:23Z", "2026-05-14T00:00:00Z", "2026-05-17T00:00:00Z"},
		{"0 0 * * mon-sun", "2026-05-13T10:17:23Z", "2026-05-14T00:00:00Z", ""},
		{"0 0 * * 6-7", "2026-05-13T10:17:23Z", "2026-05-16T00:00:00Z", ""},
		// 1/2 in day-of-week: 1,3,5,7 here (Sunday 17 May after Fri 15).
		{"0 0 * * 1/2", "2026-05-15T10:00:00Z", "2026-05-17T00:00:00Z", "2026-05-18T00:00:00Z"},
		// A step over the range: taken here (minute 0), refused there.
		{"*/60 * * * *", "2026-05-13T10:17:23Z", "2026-05-13T11:00:00Z", ""},
		// The day rule: "*/2" starts with '*', so odd days that are last
		// Fridays here (29 May); odd days or last Fridays there (15 May).
		{"0 0 */2 * 5L", "2026-05-13T10:17:23Z", "2026-05-29T00:00:00Z", "2026-05-15T00:00:00Z"},
		// A bare '*' that does not come first: restricted here (the 1st or
		// any day: every day), not there (then only Mondays count).
		{"0 0 1,* * mon", "2026-05-13T10:17:23Z", "2026-05-14T00:00:00Z", "2026-05-18T00:00:00Z"},
		// '?' in the minute field: refused here.
		{"? * * * *", "2026-05-13T10:17:23Z", "", "2026-05-13T10:18:00Z"},
		// @midnight: @daily here, refused there.
		{"@midnight", "2026-05-13T10:17:23Z", "2026-05-14T00:00:00Z", ""},
	}
	for _, tc := range tests {
		from := at(t, tc.from)
		ours, err := Parse(tc.expr, Options{Zone: time.UTC})
		switch {
		case tc.ours == "" && err == nil:
			t.Errorf("Parse(%q) takes it; want it refused", tc.expr)
		case tc.ours != "" && err != nil:
			t.Errorf("Parse(%q): %v", tc.expr, err)
		case tc.ours != "":
			if got := ours.Next(from); !got.Equal(at(t, tc.ours)) {
				t.Errorf("%q.Next(%s) = %s, want %s", tc.expr, tc.from, fmtT(got), tc.ours)
			}
		}
		theirs, err := cronexpr.ParseStrict(tc.expr)
		switch {
		case tc.theirs == "" && err == nil:
			t.Errorf("cronexpr takes %q; expected it to refuse it", tc.expr)
		case tc.theirs != "" && err != nil:
			t.Errorf("cronexpr refuses %q: %v", tc.expr, err)
		case tc.theirs != "":
			if got := theirs.Next(from); !got.Equal(at(t, tc.theirs)) {
				t.Errorf("cronexpr %q.Next(%s) = %s, expected it to say %s", tc.expr, tc.from, fmtT(got), tc.theirs)
			}
		}
	}
}

// TestExtensionDays compares the days the parser works out for each month
// with the generator's day-by-day model, over the months of many years.
func TestExtensionDays(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	n := 1500
	if testing.Short() {
		n = 300
	}
	checked := 0
	for range n {
		e := genExt(r)
		s, err := Parse(e.text, Options{Zone: time.UTC})
		if err != nil {
			continue // never fires: TestOracleCronexpr checks that
		}
		c := s.(*Calendar).set.(*cron)
		for range 12 {
			y, m := 1990+r.IntN(80), time.Month(1+r.IntN(12))
			if e.month&(1<<m) == 0 || (e.years != nil && !e.years[y-1970]) {
				continue
			}
			var want uint64
			for d := 1; d <= 31; d++ {
				if e.day(y, m, d) {
					want |= 1 << d
				}
			}
			if got := c.daysOf(y, m); got != want {
				t.Fatalf("%q in %d-%02d: days %s, want %s", e.text, y, m, setString(got), setString(want))
			}
			checked++
		}
	}
	if checked < n {
		t.Errorf("only %d months checked", checked)
	}
}

// TestOracleExtensionsDST compares Next and Shift with the brute-force
// oracle of the DST rules (oracle_test.go) for expressions of the extended
// syntax, in zones with transitions, and checks the laws of Next and Prev
// there.
func TestOracleExtensionsDST(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	rounds := 25
	if testing.Short() {
		rounds = 8
	}
	compared := 0
	for _, zn := range oracleZones {
		loc := zone(t, zn)
		near := transitions(loc, time.Date(2011, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2028, 1, 1, 0, 0, 0, 0, time.UTC))
		for range rounds {
			e := genExt(r)
			s, err := Parse(e.text, Options{Zone: loc})
			if err != nil {
				continue
			}
			var tods []time.Duration
			for h := range 24 {
				for m := range 60 {
					for sec := range 60 {
						if e.sets[2]&(1<<h) != 0 && e.sets[1]&(1<<m) != 0 && e.sets[0]&(1<<sec) != 0 {
							tods = append(tods, time.Duration(h)*time.Hour+time.Duration(m)*time.Minute+time.Duration(sec)*time.Second)
						}
					}
				}
			}
			if !e.wildcard() && len(tods) > 300 {
				continue
			}
			o := newOracle(e.wildcard(), tods, func(y int, m time.Month, d int, _ time.Weekday) bool { return e.day(y, m, d) })
			for j := range 4 {
				from := randomInstant(r)
				if j%2 == 1 && len(near) > 0 {
					from = near[r.IntN(len(near))].Add(time.Duration(r.Int64N(int64(6*time.Hour))) - 3*time.Hour)
				}
				got := s.Next(from)
				if got.Sub(from) > 70*24*time.Hour {
					continue // too far for the oracle's walk
				}
				if want := o.next(from, loc, got); !want.Equal(got) {
					t.Errorf("Parse(%q, %s).Next(%s) = %s (%s), want %s", e.text, zn, fmtT(from),
						fmtT(got), got.In(loc).Format(time.RFC3339), fmtT(want))
					continue
				}
				if sh, want := s.Shift(got), o.shift(got, loc); sh != want {
					t.Errorf("Parse(%q, %s).Shift(%s) = %v, want %v", e.text, zn, fmtT(got), sh, want)
				}
				if got.Year() < 2099 && !s.Prev(from).IsZero() { // a slot before and after: the laws hold
					checkLaws(t, e.text, zn, s, from, r)
				}
				compared++
			}
		}
	}
	if compared < 100 {
		t.Errorf("only %d comparisons", compared)
	}
}
