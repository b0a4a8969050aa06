package schedule

import (
	"fmt"
	"math"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
	"time"
)

// parseBound is how long one parse may take, far above what a linear parser
// needs for any input the fuzzer makes (well under a millisecond); beyond it
// something is quadratic or stuck.
const parseBound = 2 * time.Second

// durationSeeds are the schedule strings a careless or hostile user could
// type, for every duration fuzz target.
var durationSeeds = []string{
	"", "0", "-0", "+0", "00", "+", "-", ".", "..", "d", "1", "1d", "-1d", "+1d",
	"500ms", "90s", "1m30s", "2h", "1d12h", "1.5d", "1.5.5d", "1..5d", "1.5d.5d", ".5d", "5.d",
	"1µs", "1μs", "1us", "1ns", "999999ns", "1ms", "0.5ms", "1e3s", "1 s", " 1s", "1s ", "1S", "1D",
	"9223372036854775807ns", "9223372036854775808ns", "-9223372036854775808ns",
	"2562047h47m16.854775807s", "-2562047h47m16.854775808s", "2562047h47m16.854775808s",
	"106751d", "106752d", "106751d23h47m16.854775807s", "106751d23h47m16.854775808s",
	"99999999999999999999d", "0.0000000000000000000001d", "1.00000000000000000000000001h",
	"1d1d1d", "1h1h", "1m1ms", "1mss", "1hd", "1d-1h", "--1s", "+-1s", "1s\x00", "١s", "1\u00b5",
}

// FuzzParseDuration checks ParseDuration and ParseInterval on any string: no
// panic, no hang, and a result that agrees with time.ParseDuration, with
// itself printed back, and with its own sign.
func FuzzParseDuration(f *testing.F) {
	for _, s := range durationSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		start := time.Now()
		d, err := ParseDuration(s)
		iv, ierr := ParseInterval(s)
		if took := time.Since(start); took > parseBound {
			t.Fatalf("ParseDuration(%q) took %v", s, took)
		}

		// ParseInterval is ParseDuration with a floor of 1ms.
		switch {
		case (err == nil && d >= time.Millisecond) != (ierr == nil):
			t.Fatalf("ParseDuration(%q) = %v, %v but ParseInterval = %v, %v", s, d, err, iv, ierr)
		case ierr == nil && iv != d:
			t.Fatalf("ParseInterval(%q) = %v, want %v", s, iv, d)
		case ierr != nil && iv != 0:
			t.Fatalf("ParseInterval(%q) = %v with error %v", s, iv, ierr)
		}

		// A number with two points is never a duration ("1.5.5d" is not 1h7m55s).
		if err == nil && twoPoints.MatchString(s) {
			t.Fatalf("ParseDuration(%q) = %v, want an error", s, d)
		}

		// Without "d", the syntax is Go's: the same answer, the same errors.
		if !strings.Contains(s, "d") {
			want, werr := time.ParseDuration(s)
			switch {
			case werr == nil && want == math.MinInt64:
				// Not a schedule anyone uses; ParseDuration stops at -MaxInt64.
				if err == nil {
					t.Fatalf("ParseDuration(%q) = %v, want an error (below -MaxInt64)", s, d)
				}
			case (werr == nil) != (err == nil):
				t.Fatalf("ParseDuration(%q) = %v, %v; time.ParseDuration = %v, %v", s, d, err, want, werr)
			case err == nil && d != want:
				t.Fatalf("ParseDuration(%q) = %v, time.ParseDuration = %v", s, d, want)
			}
		}

		// Only days: each day is 24 hours, so "2.5d1d" is 24 times "2.5h1h".
		if onlyDays.MatchString(s) {
			h, herr := time.ParseDuration(strings.ReplaceAll(s, "d", "h"))
			inRange := herr == nil && h >= -math.MaxInt64/24 && h <= math.MaxInt64/24
			switch {
			case inRange != (err == nil):
				t.Fatalf("ParseDuration(%q) = %v, %v; in hours %v, %v", s, d, err, h, herr)
			case err == nil && d != 24*h:
				t.Fatalf("ParseDuration(%q) = %v, want 24 × %v", s, d, h)
			}
		}

		if err != nil {
			if d != 0 {
				t.Fatalf("ParseDuration(%q) = %v with error %v", s, d, err)
			}
			return
		}
		// What Go prints, ParseDuration reads back.
		if back, err := ParseDuration(d.String()); err != nil || back != d {
			t.Fatalf("ParseDuration(%q) = %v; its String %q reads back as %v, %v", s, d, d.String(), back, err)
		}
		// One sign in front, and only one.
		if s != "" && s[0] != '-' && s[0] != '+' {
			if neg, err := ParseDuration("-" + s); err != nil || neg != -d {
				t.Fatalf("ParseDuration(%q) = %v, %v; want %v", "-"+s, neg, err, -d)
			}
			if pos, err := ParseDuration("+" + s); err != nil || pos != d {
				t.Fatalf("ParseDuration(%q) = %v, %v; want %v", "+"+s, pos, err, d)
			}
		} else if _, err := ParseDuration(s[:1] + s); err == nil {
			t.Fatalf("ParseDuration(%q) succeeded: two signs", s[:1]+s)
		}
	})
}

var (
	// twoPoints is a number with two decimal points.
	twoPoints = regexp.MustCompile(`[0-9]*\.[0-9]*\.`)
	// onlyDays is a signed sum of days and nothing else.
	onlyDays = regexp.MustCompile(`^[-+]?([0-9.]+d)+$`)
)

// FuzzParseDurationSum checks that terms add up: a duration written after
// another one is their sum, whatever their units (days too), or an error if
// the sum overflows.
func FuzzParseDurationSum(f *testing.F) {
	for _, a := range []string{"1d", "1.5d", "12h", "1m", "0.5ms", "106751d", "9223372036854775807ns", "1µs"} {
		for _, b := range []string{"1d", ".5d", "1h", "30s", "1ns", "23h47m16.854775807s", "1.5.5d", "0"} {
			f.Add(a, b)
		}
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		// Whole strings only: a sign belongs in front of both, and "0" alone
		// has no unit, so it is not a term.
		if a == "0" || b == "0" || strings.HasPrefix(a, "-") || strings.HasPrefix(a, "+") ||
			strings.HasPrefix(b, "-") || strings.HasPrefix(b, "+") {
			return
		}
		da, erra := ParseDuration(a)
		db, errb := ParseDuration(b)
		if erra != nil || errb != nil {
			return
		}
		sum, err := ParseDuration(a + b)
		if da > math.MaxInt64-db {
			if err == nil {
				t.Fatalf("ParseDuration(%q) = %v, want an error: %v + %v overflows", a+b, sum, da, db)
			}
			return
		}
		if err != nil || sum != da+db {
			t.Fatalf("ParseDuration(%q) = %v, %v; want %v + %v = %v", a+b, sum, err, da, db, da+db)
		}
	})
}

// FuzzDurationString checks that every duration Go can print is read back
// as itself, as hours and as whole days.
func FuzzDurationString(f *testing.F) {
	for _, n := range []int64{0, 1, -1, 999_999, 1_000_000, int64(time.Hour), 86_400e9, 1.5 * 86_400e9,
		math.MaxInt64, math.MaxInt64 - 1, math.MinInt64 + 1, math.MinInt64, 106751 * 86_400e9} {
		f.Add(n)
	}
	f.Fuzz(func(t *testing.T, n int64) {
		d := time.Duration(n)
		got, err := ParseDuration(d.String())
		if d == math.MinInt64 {
			// Beyond -MaxInt64: an error, not a wrapped positive value.
			if err == nil {
				t.Fatalf("ParseDuration(%q) = %v, want an error", d.String(), got)
			}
			return
		}
		if err != nil || got != d {
			t.Fatalf("ParseDuration(%q) = %v, %v; want %v", d.String(), got, err, d)
		}
		if d > 0 && d%(24*time.Hour) == 0 {
			days := fmt.Sprintf("%dd", d/(24*time.Hour))
			if got, err := ParseDuration(days); err != nil || got != d {
				t.Fatalf("ParseDuration(%q) = %v, %v; want %v", days, got, err, d)
			}
		}
	})
}

// cronSeeds are schedules for FuzzParse: the SPEC's examples, every kind of
// field syntax, and the edges (never-firing days, leap days, zones, steps).
var cronSeeds = []string{
	"*/5 * * * *", "*/10 * * * * *", "0 9 * * mon-fri", "0 0 29 2 *", "0 0 30 2 *", "0 0 31 2 mon",
	"0 0 31 4,6,9,11 *", "0 0 */30 2 mon", "0 0 29 2 */7", "5/20 1-30/10 * JAN,jul 0,7", "@hourly", "@daily",
	"@every 90s", "@reboot", "CRON_TZ=America/New_York 30 2 * * *", "TZ=Australia/Lord_Howe 0 2 * * *",
	"CRON_TZ= 0 0 * * *", "CRON_TZ=Mars/Olympus * * * * *", "61 * * * *", "*/0 * * * *", "5-1 * * * *",
	"* * * *", "0 0 0 1 1 * 2026", "", "1,,2 * * * *", "1-2-3 * * * *", "*/5/5 * * * *", "-1 * * * *",
	"99999999999999999999 * * * *", "0 0 * * 7-7", "0 0 1/100 * *", "15m", "7m", "1d",
	// cronexpr's extensions (SPEC 16), and their edges.
	"0 0 L * *", "0 0 LW * *", "0 0 15W * *", "0 0 1W * *", "0 0 31W * *", "0 0 29W 2 *", "0 0 30W 2 *",
	"0 0 1,L,15W * 5L", "0 0 * * 5L", "0 0 * * 7L", "0 0 * * 5#2", "0 0 * * 5#5", "0 0 * feb 5#5", "0 0 ? * ?",
	"0 0 12 ? * MON-FRI", "0 9 * January friday", "0 0 L-3 * *", "0 0 * * 5#6", "0 0 * * L", "0 0 ?/2 * *",
	"*/2 * * * * * *", "0 30 9 ? * MON-FRI *", "0 0 0 1 1 * 2027", "0 0 0 29 2 * 2027", "0 0 0 29 2 * 2028-2040/4",
	"0 0 0 1 1 * 1969", "0 0 0 1 1 * 2100", "59 59 23 31 12 * 2099", "0 0 0 L 12 * */50", "6~15 * * * *", "~ * * * *",
	"0 0 0 1 1 * 2027,2026-2030", "CRON_TZ=Europe/Berlin 0 30 2 LW * ? 2026-2030", "0 0 * * 7#1", "0 0 * * sunday#5,7L",
}

// FuzzParse checks Parse on any string, aligned or not and in a zone with
// DST: no panic, no hang, and an accepted schedule fires: its first slot
// after 2001-01-01 is after it and within 28 years (the longest wait of a
// real expression: "0 0 29 2 */7" is 29 February on a Sunday, 2004 then
// 2032; "0 0 * feb 5#5" too), and Prev finds it again. An expression with
// a year field fires within its years: from the day before the first, by
// the end of the last. Every field of an accepted expression has the shape
// of a cron field (IsCronField), by which the jobs file counts them.
func FuzzParse(f *testing.F) {
	for _, s := range cronSeeds {
		f.Add(s, false)
		f.Add(s, true)
	}
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, s string, align bool) { checkParse(t, s, align, ny) })
}

// checkParse is FuzzParse's check of one schedule, in the zone ny.
func checkParse(t testing.TB, s string, align bool, ny *time.Location) {
	t.Helper()
	from := time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)
	start := time.Now()
	sc, err := Parse(s, Options{Zone: ny, Align: align})
	if took := time.Since(start); took > parseBound {
		t.Fatalf("Parse(%q) took %v", s, took)
	}
	if err != nil {
		if sc != nil {
			t.Fatalf("Parse(%q) = %v with error %v", s, sc, err)
		}
		if msg := err.Error(); msg == "" || strings.Contains(msg, "\n") {
			t.Fatalf("Parse(%q): error %q is not one line", s, msg)
		}
		return
	}
	fields := strings.Fields(s)
	if len(fields) > 0 && (strings.HasPrefix(fields[0], "CRON_TZ=") || strings.HasPrefix(fields[0], "TZ=")) {
		fields = fields[1:]
	}
	if n := len(fields); n >= 5 && n <= 7 {
		for _, f := range fields {
			if !IsCronField(f) {
				t.Fatalf("Parse(%q) takes the field %q, which has not the shape of one", s, f)
			}
		}
	}
	from, by := from, from.AddDate(28, 0, 1)
	if c, ok := sc.(*Calendar); ok {
		if cr, ok := c.set.(*cron); ok && cr.years != nil {
			first, _ := cr.years.next(firstYear)
			last, _ := cr.years.prev(lastYear)
			from = time.Date(first, 1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, -1)
			by = time.Date(last+1, 1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, 1)
		}
	}
	start = time.Now()
	next := sc.Next(from)
	prev := sc.Prev(next)
	if took := time.Since(start); took > parseBound {
		t.Fatalf("Parse(%q): Next and Prev took %v", s, took)
	}
	if !next.After(from) {
		t.Fatalf("Parse(%q).Next(%v) = %v, not after", s, from, next)
	}
	if next.After(by) {
		t.Fatalf("Parse(%q).Next(%v) = %v: it never fires", s, from, next)
	}
	if !prev.Equal(next) {
		t.Fatalf("Parse(%q).Prev(%v) = %v, want the slot itself", s, next, prev)
	}
}

// cronTokens are the pieces TestParseRandomCron makes fields of: the
// extended syntax, its neighbours and its mistakes.
var cronTokens = []string{"0", "1", "5", "7", "12", "15", "23", "29", "30", "31", "59", "60", "1970", "2026", "2099", "2100",
	"*", "?", "-", ",", "/", "#", "~", "L", "l", "W", "w", "LW", "mon", "FRI", "friday", "jan", "December", "sun", "7L", "5#5", "#1", "#5", "x", ""}

// TestParseRandomCron runs FuzzParse's check over random expressions made
// of the extended syntax's pieces, so that every run of the tests fuzzes a
// little, the corners of L, W, # and the years above all.
func TestParseRandomCron(t *testing.T) {
	ny := zone(t, "America/New_York")
	r := rand.New(rand.NewPCG(13, 14))
	n := 20000
	if testing.Short() {
		n = 3000
	}
	accepted := 0
	for range n {
		fields := make([]string, 5+r.IntN(3))
		for i := range fields {
			var b strings.Builder
			for range 1 + r.IntN(3)*r.IntN(3) {
				b.WriteString(cronTokens[r.IntN(len(cronTokens))])
			}
			fields[i] = b.String()
			if fields[i] == "" || r.IntN(5) < 3 {
				fields[i] = "*"
			}
		}
		s := strings.Join(fields, " ")
		if r.IntN(10) == 0 {
			s = "CRON_TZ=Europe/Berlin " + s
		}
		checkParse(t, s, false, ny)
		if _, err := Parse(s, Options{Zone: ny}); err == nil {
			accepted++
		}
	}
	if accepted < n/20 {
		t.Errorf("only %d of %d random expressions parse: the pieces make too few good ones", accepted, n)
	}
	t.Logf("%d of %d random expressions parse", accepted, n)
}
