package schedule

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"
	_ "time/tzdata" // the zones below must exist even where the system has no zone database
)

// at parses an RFC 3339 instant written in a test table; every expected slot
// in this package's tests is written this way, as a literal.
func at(t testing.TB, s string) time.Time {
	t.Helper()
	v, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t.Fatalf("bad instant %q in the test table: %v", s, err)
	}
	return v
}

// zone loads an IANA zone or fails the test.
func zone(t testing.TB, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	if err != nil {
		t.Fatalf("zone %q: %v", name, err)
	}
	return loc
}

// mustParse parses a schedule or fails the test.
func mustParse(t testing.TB, s string, o Options) Schedule {
	t.Helper()
	sc, err := Parse(s, o)
	if err != nil {
		t.Fatalf("Parse(%q, %+v): %v", s, o, err)
	}
	if sc == nil {
		t.Fatalf("Parse(%q, %+v) = nil, nil", s, o)
	}
	return sc
}

// nextN returns the n slots after from, each strictly after the one before.
func nextN(s Schedule, from time.Time, n int) []time.Time {
	out := make([]time.Time, 0, n)
	for range n {
		from = s.Next(from)
		out = append(out, from)
	}
	return out
}

// sameInstants reports whether two lists hold the same instants in order.
func sameInstants(a, b []time.Time) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !a[i].Equal(b[i]) {
			return false
		}
	}
	return true
}

// utcList prints instants in UTC, for failure messages.
func utcList(ts []time.Time) string {
	var b strings.Builder
	for i, v := range ts {
		if i > 0 {
			b.WriteString(" ")
		}
		b.WriteString(v.UTC().Format(time.RFC3339Nano))
	}
	return b.String()
}

// parseFrom is the fixed instant of the parser tables: Wednesday 2026-05-13,
// 10:17:23 UTC. Weekdays used below, by hand from it: Thu 14, Fri 15, Sat
// 16, Sun 17, Mon 18, Mon 25 May; Mon 1 Jun; Wed 1 Jul; Sat 1 Aug; Tue 1
// Sep; Thu 1 Oct 2026 (May 1 is a Friday; +31 days = +3 weekdays, +30 = +2).
const parseFrom = "2026-05-13T10:17:23Z"

func TestParseValid(t *testing.T) {
	kolkata := zone(t, "Asia/Kolkata")
	newYork := zone(t, "America/New_York")
	tests := []struct {
		in   string
		o    Options
		want []string // the next slots after parseFrom
	}{
		{"*/5 * * * *", Options{}, []string{"2026-05-13T10:20:00Z", "2026-05-13T10:25:00Z", "2026-05-13T10:30:00Z"}},
		{"* * * * *", Options{}, []string{"2026-05-13T10:18:00Z", "2026-05-13T10:19:00Z"}},
		{"*/10 * * * * *", Options{}, []string{"2026-05-13T10:17:30Z", "2026-05-13T10:17:40Z", "2026-05-13T10:17:50Z", "2026-05-13T10:18:00Z"}},
		{"0 30 9 * * *", Options{}, []string{"2026-05-14T09:30:00Z", "2026-05-15T09:30:00Z"}},
		{"0 9 * * mon-fri", Options{}, []string{"2026-05-14T09:00:00Z", "2026-05-15T09:00:00Z", "2026-05-18T09:00:00Z"}},
		{"0 9 * * MON-Fri", Options{}, []string{"2026-05-14T09:00:00Z", "2026-05-15T09:00:00Z", "2026-05-18T09:00:00Z"}},
		{"0 9 * * 1-5", Options{}, []string{"2026-05-14T09:00:00Z", "2026-05-15T09:00:00Z", "2026-05-18T09:00:00Z"}},
		{"30 4 1,15 * *", Options{}, []string{"2026-05-15T04:30:00Z", "2026-06-01T04:30:00Z", "2026-06-15T04:30:00Z"}},
		// A leap day is valid; it fires in leap years only.
		{"0 0 29 2 *", Options{}, []string{"2028-02-29T00:00:00Z", "2032-02-29T00:00:00Z", "2036-02-29T00:00:00Z"}},
		// POSIX: both days restricted, a day matching either runs; 31 Feb
		// never matches, so this is every Monday of February (1 Feb 2027 is
		// a Monday: 1 Jan 2027 is a Friday, +31 days).
		{"0 0 31 2 mon", Options{}, []string{"2027-02-01T00:00:00Z", "2027-02-08T00:00:00Z", "2027-02-15T00:00:00Z"}},
		{"0 0 1-7 * mon", Options{}, []string{"2026-05-18T00:00:00Z", "2026-05-25T00:00:00Z", "2026-06-01T00:00:00Z", "2026-06-02T00:00:00Z"}},
		// "*/2" starts with '*': both must match (odd days that are
		// Mondays: 25 May, 1 Jun, 15 Jun), not either (robfig would say 15 May).
		{"0 0 */2 * mon", Options{}, []string{"2026-05-25T00:00:00Z", "2026-06-01T00:00:00Z", "2026-06-15T00:00:00Z"}},
		// The same with the '*' in day-of-week: the 1st on a Sun/Tue/Thu/Sat.
		{"0 0 1 * */2", Options{}, []string{"2026-08-01T00:00:00Z", "2026-09-01T00:00:00Z", "2026-10-01T00:00:00Z"}},
		{"0 12 * JAN,jul *", Options{}, []string{"2026-07-01T12:00:00Z", "2026-07-02T12:00:00Z"}},
		{"0 0 1 jan-Mar *", Options{}, []string{"2027-01-01T00:00:00Z", "2027-02-01T00:00:00Z", "2027-03-01T00:00:00Z", "2028-01-01T00:00:00Z"}},
		// Sunday is 0 or 7.
		{"0 0 * * 0", Options{}, []string{"2026-05-17T00:00:00Z", "2026-05-24T00:00:00Z"}},
		{"0 0 * * 7", Options{}, []string{"2026-05-17T00:00:00Z", "2026-05-24T00:00:00Z"}},
		{"0 0 * * sun", Options{}, []string{"2026-05-17T00:00:00Z", "2026-05-24T00:00:00Z"}},
		{"0 0 * * 5-7", Options{}, []string{"2026-05-15T00:00:00Z", "2026-05-16T00:00:00Z", "2026-05-17T00:00:00Z", "2026-05-22T00:00:00Z"}},
		// A range that ends in Sunday ends the week, as cronie reads X-sun
		// as X-7 (not sun-sat, all week).
		{"0 0 * * sat-sun", Options{}, []string{"2026-05-16T00:00:00Z", "2026-05-17T00:00:00Z", "2026-05-23T00:00:00Z"}},
		{"0 0 * * fri-SUN", Options{}, []string{"2026-05-15T00:00:00Z", "2026-05-16T00:00:00Z", "2026-05-17T00:00:00Z", "2026-05-22T00:00:00Z"}},
		{"0 0 * * 5-0", Options{}, []string{"2026-05-15T00:00:00Z", "2026-05-16T00:00:00Z", "2026-05-17T00:00:00Z", "2026-05-22T00:00:00Z"}},
		{"0 0 * * 6-0/1", Options{}, []string{"2026-05-16T00:00:00Z", "2026-05-17T00:00:00Z", "2026-05-23T00:00:00Z"}},
		{"0 0 * * 0-0", Options{}, []string{"2026-05-17T00:00:00Z", "2026-05-24T00:00:00Z"}},
		// Steps: N/S is N-max/S.
		{"5/20 * * * *", Options{}, []string{"2026-05-13T10:25:00Z", "2026-05-13T10:45:00Z", "2026-05-13T11:05:00Z"}},
		{"1-30/10 * * * *", Options{}, []string{"2026-05-13T10:21:00Z", "2026-05-13T11:01:00Z", "2026-05-13T11:11:00Z"}},
		{"0,30 */6 * * *", Options{}, []string{"2026-05-13T12:00:00Z", "2026-05-13T12:30:00Z", "2026-05-13T18:00:00Z"}},
		{"@yearly", Options{}, []string{"2027-01-01T00:00:00Z", "2028-01-01T00:00:00Z"}},
		{"@annually", Options{}, []string{"2027-01-01T00:00:00Z", "2028-01-01T00:00:00Z"}},
		{"@monthly", Options{}, []string{"2026-06-01T00:00:00Z", "2026-07-01T00:00:00Z"}},
		{"@weekly", Options{}, []string{"2026-05-17T00:00:00Z", "2026-05-24T00:00:00Z"}},
		{"@daily", Options{}, []string{"2026-05-14T00:00:00Z", "2026-05-15T00:00:00Z"}},
		{"@midnight", Options{}, []string{"2026-05-14T00:00:00Z", "2026-05-15T00:00:00Z"}},
		{"@hourly", Options{}, []string{"2026-05-13T11:00:00Z", "2026-05-13T12:00:00Z"}},
		// Zones: 09:00 IST (+05:30) is 03:30Z; a prefix wins over --tz.
		{"CRON_TZ=Asia/Kolkata 0 9 * * *", Options{}, []string{"2026-05-14T03:30:00Z", "2026-05-15T03:30:00Z"}},
		{"TZ=Asia/Kolkata 0 9 * * *", Options{}, []string{"2026-05-14T03:30:00Z", "2026-05-15T03:30:00Z"}},
		{"0 9 * * *", Options{Zone: kolkata}, []string{"2026-05-14T03:30:00Z", "2026-05-15T03:30:00Z"}},
		{"CRON_TZ=UTC 0 9 * * *", Options{Zone: kolkata}, []string{"2026-05-14T09:00:00Z", "2026-05-15T09:00:00Z"}},
		// 09:00 EDT (-4) is 13:00Z.
		{"CRON_TZ=America/New_York 0 9 * * *", Options{Zone: kolkata}, []string{"2026-05-13T13:00:00Z", "2026-05-14T13:00:00Z"}},
		// Durations: a grid from the Unix epoch, whatever the zone (10:17:23
		// is second 37043 of the day, a day is 960 × 90s; 412 × 90 = 37080).
		{"90s", Options{Zone: newYork}, []string{"2026-05-13T10:18:00Z", "2026-05-13T10:19:30Z", "2026-05-13T10:21:00Z"}},
		{"@every 90s", Options{}, []string{"2026-05-13T10:18:00Z", "2026-05-13T10:19:30Z"}},
		{"1d", Options{Zone: newYork}, []string{"2026-05-14T00:00:00Z", "2026-05-15T00:00:00Z"}},
		// Aligned: on the local clock.
		{"15m", Options{Align: true, Zone: time.UTC}, []string{"2026-05-13T10:30:00Z", "2026-05-13T10:45:00Z", "2026-05-13T11:00:00Z"}},
		{"250ms", Options{Align: true, Zone: time.UTC}, []string{"2026-05-13T10:17:23.25Z", "2026-05-13T10:17:23.5Z"}},
		{"1d", Options{Align: true, Zone: newYork}, []string{"2026-05-14T04:00:00Z", "2026-05-15T04:00:00Z"}},
		{"1h", Options{Align: true, Zone: kolkata}, []string{"2026-05-13T10:30:00Z", "2026-05-13T11:30:00Z"}},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			o := tc.o
			if o.Zone == nil && !strings.Contains(tc.in, "TZ=") {
				o.Zone = time.UTC
			}
			s := mustParse(t, tc.in, o)
			var want []time.Time
			for _, w := range tc.want {
				want = append(want, at(t, w))
			}
			if got := nextN(s, at(t, parseFrom), len(want)); !sameInstants(got, want) {
				t.Errorf("Parse(%q).Next... from %s\n got  %s\n want %s", tc.in, parseFrom, utcList(got), utcList(want))
			}
			if o.Align {
				return // the text of an aligned schedule is for people ("15m0s --align --tz UTC")
			}
			// The canonical text parses back to the same schedule.
			back, err := Parse(s.String(), o)
			if err != nil {
				t.Fatalf("String() = %q does not parse back: %v", s.String(), err)
			}
			if got := nextN(back, at(t, parseFrom), len(want)); !sameInstants(got, want) {
				t.Errorf("String() = %q parses back to other slots: %s", s.String(), utcList(got))
			}
		})
	}
}

// TestParseDurationKinds pins which kind of Schedule a duration becomes.
func TestParseDurationKinds(t *testing.T) {
	s := mustParse(t, "90s", Options{})
	g, ok := s.(Grid)
	if !ok {
		t.Fatalf("Parse(90s) is a %T, want Grid", s)
	}
	if !g.Anchor.Equal(time.Unix(0, 0)) || g.Interval != 90*time.Second {
		t.Errorf("Parse(90s) = %+v, want anchor at the epoch and interval 90s", g)
	}
	for _, in := range []string{"15m", "1h", "6h", "1d", "@every 15m"} {
		s := mustParse(t, in, Options{Align: true, Zone: time.UTC})
		c, ok := s.(*Calendar)
		if !ok {
			t.Errorf("Parse(%q, align) is a %T, want *Calendar", in, s)
			continue
		}
		if c.Location() != time.UTC {
			t.Errorf("Parse(%q, align, UTC).Location() = %v", in, c.Location())
		}
	}
	c, ok := mustParse(t, "0 0 * * *", Options{}).(*Calendar)
	if !ok {
		t.Fatal("a cron expression is not a *Calendar")
	}
	if c.Location() != time.Local {
		t.Errorf("no zone: Location() = %v, want time.Local", c.Location())
	}
	c = mustParse(t, "CRON_TZ=Asia/Kolkata 0 0 * * *", Options{Zone: time.UTC}).(*Calendar)
	if c.Location().String() != "Asia/Kolkata" {
		t.Errorf("CRON_TZ prefix: Location() = %v, want Asia/Kolkata (it wins over --tz)", c.Location())
	}
}

func TestParseInvalid(t *testing.T) {
	tests := []struct {
		in    string
		o     Options
		field string // what the message must name (any of |-separated)
		value string // the bad value it must quote (any of |-separated)
	}{
		{"", Options{}, "", ""},
		{"   ", Options{}, "", ""},
		{"* * * *", Options{}, "field", "4"},
		{"0 0 0 1 1 * 2026 *", Options{}, "field", "8"},
		{"61 * * * *", Options{}, "minute", "61"},
		{"* 24 * * *", Options{}, "hour", "24"},
		{"* * 0 * *", Options{}, "day-of-month", "0"},
		{"* * 32 * *", Options{}, "day-of-month", "32"},
		{"* * * 13 *", Options{}, "month", "13"},
		{"* * * 0 *", Options{}, "month", "0"},
		{"* * * * 8", Options{}, "day-of-week", "8"},
		{"60 * * * * *", Options{}, "second", "60"},
		{"0 60 * * * *", Options{}, "minute", "60"},
		{"*/0 * * * *", Options{}, "minute", "*/0|step 0"},
		{"0 0 1-31/0 * *", Options{}, "day-of-month", "1-31/0|step 0"},
		{"5-1 * * * *", Options{}, "minute", "5-1"},
		{"0 0 * dec-jan *", Options{}, "month", "dec-jan"},
		{"0 0 * foo *", Options{}, "month", "foo"},
		{"0 0 * * funday", Options{}, "day-of-week", "funday"},
		{"0 0 * * jan", Options{}, "day-of-week", "jan"},
		{"0 0 * mon *", Options{}, "month", "mon"},
		{"1-2-3 * * * *", Options{}, "minute", "1-2-3"},
		{"*/5/5 * * * *", Options{}, "minute", "*/5/5"},
		{"-1 * * * *", Options{}, "minute", "-1"},
		{"1, * * * *", Options{}, "minute", "1,"},
		{"a * * * *", Options{}, "minute", "a"},
		{"99999999999999999999 * * * *", Options{}, "minute", "99999999999999999999"},
		{"@reboot", Options{}, "", "@reboot"},
		{"@fortnightly", Options{}, "", "@fortnightly"},
		{"@every", Options{}, "", "@every"},
		{"@every 0s", Options{}, "", "0s"},
		{"@every -1s", Options{}, "", "-1s"},
		{"CRON_TZ=Mars/Olympus 0 0 * * *", Options{}, "zone", "Mars/Olympus"},
		{"TZ=Mars/Olympus 0 0 * * *", Options{}, "zone", "Mars/Olympus"},
		{"CRON_TZ= 0 0 * * *", Options{}, "", "CRON_TZ"},
		{"CRON_TZ=UTC", Options{}, "", ""},
		{"0 0 30 2 *", Options{}, "day-of-month", "30"},
		{"0 0 30-31 feb *", Options{}, "day-of-month", "30"},
		{"0 0 31 4,6,9,11 *", Options{}, "day-of-month", "31"},
		{"0 0 31 apr *", Options{}, "day-of-month", "31"},
		{"7m", Options{Align: true}, "--align", "7m"},
		{"25h", Options{Align: true}, "--align", "25h"},
		{"48h", Options{Align: true}, "--align", "48h"},
		{"0", Options{}, "", "0"},
		{"500us", Options{}, "", "500us"},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			s, err := Parse(tc.in, tc.o)
			if err == nil {
				t.Fatalf("Parse(%q, %+v) = %v, want an error", tc.in, tc.o, s)
			}
			if s != nil {
				t.Errorf("Parse(%q) returned a schedule (%#v) with its error; want nil", tc.in, s)
			}
			msg := err.Error()
			if strings.Contains(msg, "\n") {
				t.Errorf("error is not one line: %q", msg)
			}
			if !containsAny(msg, tc.field) {
				t.Errorf("error %q does not name the field %q", msg, tc.field)
			}
			if !containsAny(msg, tc.value) {
				t.Errorf("error %q does not name the bad value %q", msg, tc.value)
			}
		})
	}
}

// TestParseHints pins the hints of bad expressions that a reader would
// otherwise misread: each must keep the meaning the writer had in mind.
func TestParseHints(t *testing.T) {
	tests := []struct{ in, want string }{
		// A reversed range, read round the end of the field.
		{"0 0 * * fri-tue", `day-of-week: "fri-tue": a range must go up; to wrap around, write fri-sun,mon-tue`},
		{"0 0 * * 5-2", `write 5-7,1-2`},
		{"0 0 * * sat-mon", `write sat-sun,mon`},
		{"50-10 * * * *", `minute: "50-10": a range must go up; to wrap around, write 50-59,0-10`},
		{"0 22-2 * * *", `write 22-23,0-2`},
		{"0 0 25-5 * *", `write 25-31,1-5`},
		{"0 0 * dec-jan *", `write dec,jan`},
		{"0 0 * 11-feb *", `write 11-12,1-feb`},
		// A value never starts with a minus.
		{"-1 * * * *", `minute: "-1": values are 0-59, never negative`},
		{"0 -5 * * *", `hour: "-5": values are 0-23, never negative`},
		// A sixth field of years: 6 fields are seconds first; years come
		// seventh, after the seconds.
		{"0 0 1 1 * 2027", `day-of-week: "2027" is not a day of the week (0-7 or sun-sat): 6 fields put seconds first (second minute hour day-of-month month day-of-week); a year comes only seventh, after them: for a minute first, write "0 0 0 1 1 * 2027"`},
		{"30 2 15 6 * 2026-2030", `"2026-2030" is not a day of the week (0-7 or sun-sat): 6 fields put seconds first`},
		{"0 0 1 1 * 2027,2028", `write "0 0 0 1 1 * 2027,2028"`},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			_, err := Parse(tc.in, Options{Zone: time.UTC})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Parse(%q) error = %v, want one containing %q", tc.in, err, tc.want)
			}
		})
	}
	// The 7 fields the hint writes parse.
	for _, in := range []string{"0 0 1 1 * 2027", "30 2 15 6 * 2026-2030", "0 0 1 1 * 2027,2028"} {
		_, err := Parse(in, Options{Zone: time.UTC})
		_, fix, _ := strings.Cut(fmt.Sprint(err), "write ")
		if fix, err := strconv.Unquote(strings.TrimSuffix(fix, " ")); err != nil || len(strings.Fields(fix)) != 7 {
			t.Errorf("Parse(%q): the hint's 7 fields %q are not quoted (%v)", in, fix, err)
		} else if _, err := Parse(fix, Options{Zone: time.UTC}); err != nil {
			t.Errorf("Parse(%q): the hint's 7 fields %q do not parse: %v", in, fix, err)
		}
	}
	// A day of the week out of range that is no year keeps the plain message.
	if _, err := Parse("0 0 1 1 * 8", Options{}); err == nil || strings.Contains(err.Error(), "year") {
		t.Errorf("Parse(0 0 1 1 * 8) error = %v, want one without a word of years", err)
	}
	if _, err := Parse("0 0 1 1 2027", Options{}); err == nil || strings.Contains(err.Error(), "year") {
		t.Errorf("Parse(0 0 1 1 2027) error = %v, want one without a word of years (5 fields)", err)
	}
}

// containsAny reports whether s contains one of the |-separated alternatives
// (an empty want is always met).
func containsAny(s, want string) bool {
	if want == "" {
		return true
	}
	for alt := range strings.SplitSeq(want, "|") {
		if strings.Contains(s, alt) {
			return true
		}
	}
	return false
}

func TestPeriodAndCount(t *testing.T) {
	s := mustParse(t, "*/5 * * * *", Options{Zone: time.UTC})
	from := at(t, parseFrom)
	// Next is 10:20, the one after 10:25: 7m37s after 10:17:23.
	if got, want := s.Period(from), 7*time.Minute+37*time.Second; got != want {
		t.Errorf("Period(*/5, %s) = %v, want %v", parseFrom, got, want)
	}
	day := at(t, "2026-05-13T00:00:00Z")
	tests := []struct {
		from, to time.Time
		max      int64
		want     int64
	}{
		{day, day.Add(24 * time.Hour), 1000, 288},
		{day, day.Add(24 * time.Hour), 10, 10},   // capped
		{day, day.Add(5 * time.Minute), 1000, 1}, // from counts, to does not
		{day, day.Add(5*time.Minute + 1), 1000, 2},
		{day.Add(1), day.Add(5 * time.Minute), 1000, 0},
		{day, day, 1000, 0},
		{day.Add(time.Hour), day, 1000, 0}, // backwards: nothing
	}
	for _, tc := range tests {
		if got := Count(s, tc.from, tc.to, tc.max); got != tc.want {
			t.Errorf("Count(*/5, %s, %s, %d) = %d, want %d", tc.from.Format(time.RFC3339Nano), tc.to.Format(time.RFC3339Nano), tc.max, got, tc.want)
		}
	}
	// A grid counts the same way: [from, to).
	g := mustParse(t, "90s", Options{})
	epoch := time.Unix(0, 0)
	for _, tc := range []struct {
		from, to time.Time
		want     int64
	}{
		{epoch, epoch.Add(90 * time.Second), 1},
		{epoch.Add(1), epoch.Add(90 * time.Second), 0},
		{epoch.Add(1), epoch.Add(90*time.Second + 1), 1},
		{epoch, epoch.Add(900 * time.Second), 10},
		{epoch.Add(-1), epoch, 0},
		{epoch.Add(-1), epoch.Add(1), 1},
	} {
		if got := Count(g, tc.from, tc.to, 1000); got != tc.want {
			t.Errorf("Count(90s, %s, %s) = %d, want %d", fmtT(tc.from), fmtT(tc.to), got, tc.want)
		}
	}
	// A sparse schedule: one leap day in [2026, 2033), two in [2026, 2033]... 2028 and 2032.
	leap := mustParse(t, "0 0 29 2 *", Options{Zone: time.UTC})
	if got := Count(leap, at(t, "2026-01-01T00:00:00Z"), at(t, "2033-01-01T00:00:00Z"), 100); got != 2 {
		t.Errorf("Count(0 0 29 2 *, 2026..2033) = %d, want 2", got)
	}
}

// TestSparse checks expressions that fire rarely: Next and Prev find slots
// years away. Weekdays (checked with date(1)): 1 Feb is a Monday in 1999,
// 2010, 2016, 2021, 2027, 2038; 29 Feb is a Sunday in 2004, 2032 and 2060;
// 2100 is no leap year.
func TestSparse(t *testing.T) {
	tests := []struct {
		sched, zone, from, next, prev string
	}{
		// Day-of-month starts with '*': 1 Feb (*/30 is 1 and 31) AND a Monday.
		{"0 0 */30 2 mon", "UTC", "2000-01-01T00:00:00Z", "2010-02-01T00:00:00Z", "1999-02-01T00:00:00Z"},
		{"0 0 */30 2 mon", "UTC", "2009-01-01T00:00:00Z", "2010-02-01T00:00:00Z", "1999-02-01T00:00:00Z"},
		{"0 0 */30 2 mon", "UTC", "2027-02-02T00:00:00Z", "2038-02-01T00:00:00Z", "2027-02-01T00:00:00Z"},
		// 00:00 EST is 05:00Z.
		{"0 0 */30 2 mon", "America/New_York", "2001-01-01T00:00:00Z", "2010-02-01T05:00:00Z", "1999-02-01T05:00:00Z"},
		// Day-of-week starts with '*' (*/7 is Sunday): 29 Feb AND a Sunday.
		{"0 0 29 2 */7", "UTC", "2004-03-01T00:00:00Z", "2032-02-29T00:00:00Z", "2004-02-29T00:00:00Z"},
		{"0 0 29 2 */7", "UTC", "2031-01-01T00:00:00Z", "2032-02-29T00:00:00Z", "2004-02-29T00:00:00Z"},
		{"0 0 29 2 */7", "UTC", "2032-02-29T00:00:01Z", "2060-02-29T00:00:00Z", "2032-02-29T00:00:00Z"},
		// Across 2100, which has no 29 February.
		{"0 0 29 2 *", "UTC", "2097-03-01T00:00:00Z", "2104-02-29T00:00:00Z", "2096-02-29T00:00:00Z"},
	}
	for _, tc := range tests {
		s := mustParse(t, tc.sched, Options{Zone: zone(t, tc.zone)})
		from := at(t, tc.from)
		if got := s.Next(from); !got.Equal(at(t, tc.next)) {
			t.Errorf("%q in %s: Next(%s) = %s, want %s", tc.sched, tc.zone, tc.from, fmtT(got), tc.next)
		}
		if got := s.Prev(from); !got.Equal(at(t, tc.prev)) {
			t.Errorf("%q in %s: Prev(%s) = %s, want %s", tc.sched, tc.zone, tc.from, fmtT(got), tc.prev)
		}
	}
}

// TestExtremeInstants checks that far instants (year 1, before the zones'
// standard times, after their explicit transitions, year 9999) still give a
// Next after and a Prev at or before them, quickly.
func TestExtremeInstants(t *testing.T) {
	ny := zone(t, "America/New_York")
	for _, in := range []string{"*/5 * * * *", "30 2 * * *", "0 0 29 2 *", "0 0 */30 2 mon", "15m"} {
		s := mustParse(t, in, Options{Zone: ny, Align: !strings.Contains(in, " ")})
		for _, from := range []time.Time{{}, time.Date(1800, 1, 1, 0, 0, 0, 0, time.UTC),
			time.Date(2200, 3, 1, 0, 0, 0, 0, time.UTC), time.Date(9999, 12, 31, 23, 0, 0, 0, time.UTC)} {
			start := time.Now()
			next, prev := s.Next(from), s.Prev(from)
			if took := time.Since(start); took > parseBound {
				t.Errorf("%q at %s: Next and Prev took %v", in, fmtT(from), took)
			}
			if !next.After(from) || prev.After(from) {
				t.Errorf("%q at %s: Next = %s, Prev = %s", in, fmtT(from), fmtT(next), fmtT(prev))
			}
		}
	}
}

// propertyZones are the zones of the property tests: no DST, whole-hour,
// half-hour and 30-minute DST, midnight transitions (Santiago), a skipped
// day (Apia, 2011-12-30) and a 2-hour DST (Troll).
var propertyZones = []string{"UTC", "America/New_York", "Europe/Berlin", "Australia/Lord_Howe",
	"Asia/Kolkata", "America/Santiago", "Pacific/Apia", "Antarctica/Troll"}

// transitions returns the instants in [from, to) where loc's offset
// changes, found with the time package alone (hourly scan, then bisection).
func transitions(loc *time.Location, from, to time.Time) []time.Time {
	var out []time.Time
	_, off := from.In(loc).Zone()
	for a := from; a.Before(to); a = a.Add(time.Hour) {
		b := a.Add(time.Hour)
		if _, o := b.In(loc).Zone(); o != off {
			lo, hi := a, b // offset(lo) == off, offset(hi) != off
			for hi.Sub(lo) > time.Second {
				mid := lo.Add(hi.Sub(lo) / 2).Truncate(time.Second)
				if _, m := mid.In(loc).Zone(); m == off {
					lo = mid
				} else {
					hi = mid
				}
			}
			out = append(out, hi)
			off = o
		}
	}
	return out
}

// randomInstant is an instant in 2000..2040, often with nanoseconds, often
// on a whole minute (where slots are).
func randomInstant(r *rand.Rand) time.Time {
	lo := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC).Unix()
	hi := time.Date(2040, 1, 1, 0, 0, 0, 0, time.UTC).Unix()
	v := time.Unix(lo+r.Int64N(hi-lo), 0).UTC()
	switch r.IntN(4) {
	case 0:
		return v.Truncate(time.Minute)
	case 1:
		return v.Add(time.Duration(r.Int64N(int64(time.Second))))
	}
	return v
}

// TestProperties checks the laws every schedule obeys, over random
// expressions, zones and instants (anywhere in 2000..2040 and within 3h of
// each zone's transitions).
func TestProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	nExpr := 30
	if testing.Short() {
		nExpr = 15
	}
	for _, zn := range propertyZones {
		loc := zone(t, zn)
		near := transitions(loc, time.Date(2010, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2029, 1, 1, 0, 0, 0, 0, time.UTC))
		if zn != "UTC" && zn != "Asia/Kolkata" && len(near) == 0 {
			t.Fatalf("%s: no transitions found in 2010..2028", zn)
		}
		checked := 0
		for range nExpr {
			g := genExpr(r, false)
			text, align := g.text, false
			if r.IntN(6) == 0 {
				text, align = randomAligned(r), true
			}
			sc, err := Parse(text, Options{Zone: loc, Align: align})
			if err != nil {
				if g.fires() && text == g.text {
					t.Errorf("Parse(%q): %v, but it fires", text, err)
				}
				continue
			}
			if text == g.text && !g.fires() {
				t.Errorf("Parse(%q) succeeded, but it can never fire", text)
			}
			for i := range 8 {
				var from time.Time
				if i%2 == 0 || len(near) == 0 {
					from = randomInstant(r)
				} else {
					from = near[r.IntN(len(near))].Add(time.Duration(r.Int64N(int64(6*time.Hour))) - 3*time.Hour)
				}
				checkLaws(t, text, zn, sc, from, r)
				checked++
			}
		}
		if checked < nExpr {
			t.Errorf("%s: only %d instants checked", zn, checked)
		}
	}
}

// checkLaws checks one schedule at one instant.
func checkLaws(t *testing.T, text, zn string, s Schedule, from time.Time, r *rand.Rand) {
	t.Helper()
	f := func(format string, args ...any) {
		t.Helper()
		t.Errorf("%q in %s from %s: %s", text, zn, from.UTC().Format(time.RFC3339Nano), fmt.Sprintf(format, args...))
	}
	next := s.Next(from)
	prev := s.Prev(from)
	switch {
	case !next.After(from):
		f("Next = %s, not after", fmtT(next))
		return
	case prev.After(from):
		f("Prev = %s, after", fmtT(prev))
		return
	case !s.Next(prev).After(from):
		f("Next(Prev) = %s, not after (Prev %s)", fmtT(s.Next(prev)), fmtT(prev))
	case !s.Prev(next).Equal(next):
		f("Prev(Next) = %s, want Next %s", fmtT(s.Prev(next)), fmtT(next))
	case !s.Prev(prev).Equal(prev):
		f("Prev(Prev) = %s, want Prev %s: Prev is not a slot", fmtT(s.Prev(prev)), fmtT(prev))
	case !s.Next(prev.Add(-1)).Equal(prev):
		f("Next(Prev - 1ns) = %s, want Prev %s: Prev is not a slot", fmtT(s.Next(prev.Add(-1))), fmtT(prev))
	case Count(s, prev, next.Add(1), 10) != 2 || Count(s, prev.Add(1), next, 10) != 0:
		f("Count(Prev, Next+1ns) = %d, want 2; Count(Prev+1ns, Next) = %d, want 0 (Prev %s, Next %s)",
			Count(s, prev, next.Add(1), 10), Count(s, prev.Add(1), next, 10), fmtT(prev), fmtT(next))
	case !s.Prev(next.Add(-1)).Equal(prev) && !next.Add(-1).Before(prev):
		f("Prev(Next-1ns) = %s, want Prev %s: a slot between them", fmtT(s.Prev(next.Add(-1))), fmtT(prev))
	}
	// Next is the same from anywhere in [from, Next).
	for _, u := range []time.Time{next.Add(-1), from.Add(time.Duration(r.Int64N(int64(next.Sub(from)))))} {
		if got := s.Next(u); !got.Equal(next) {
			f("Next(%s) = %s, but Next = %s", fmtT(u), fmtT(got), fmtT(next))
		}
	}
	// A walk: strictly increasing.
	cur := next
	for i := range 25 {
		n := s.Next(cur)
		if !n.After(cur) {
			f("walk step %d: Next(%s) = %s", i, fmtT(cur), fmtT(n))
			return
		}
		if p := s.Prev(n.Add(-1)); !p.Equal(cur) {
			f("walk step %d: Prev(%s - 1ns) = %s, want %s", i, fmtT(n), fmtT(p), fmtT(cur))
			return
		}
		cur = n
	}
}

// randomAligned is an aligned interval that divides 24h (or one that does not).
func randomAligned(r *rand.Rand) string {
	all := []string{"250ms", "1s", "90s", "5m", "15m", "30m", "45m", "1h", "90m", "2h", "3h", "6h", "8h", "12h", "1d", "7m"}
	return all[r.IntN(len(all))]
}

func fmtT(v time.Time) string { return v.UTC().Format(time.RFC3339Nano) }
