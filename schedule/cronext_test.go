package schedule

import (
	"strings"
	"testing"
	"time"
)

// The weekdays of the tables below, checked with Python's calendar module
// (an implementation apart from this package): 2026: 1 May Fri, 31 May
// Sun, 15 Jun Mon, 30 Jun Tue, 1 Jul Wed, 31 Jul Fri, 1 Aug Sat, 15 Aug
// Sat, 31 Aug Mon, 1 Oct Thu, 1 Nov Sun, 15 Nov Sun; 1 Jan 2027 Fri; 28 Feb
// 2027 Sun; 1 Feb 2028 Tue, 29 Feb 2028 Tue; 29 Feb 2032 Sun; 1 Feb and 29
// Feb 2036 Fri; 28 Feb 2100 Sun (2100 is no leap year).

// TestCronExtensions pins each of cronexpr's extensions (SPEC 16) on
// literal slots: from an instant, the next slots, each found again by
// Prev from just before the one after it.
func TestCronExtensions(t *testing.T) {
	tests := []struct {
		expr, from string
		want       []string
	}{
		// L: the last day of the month, 29 February in a leap year.
		{"0 0 L * *", parseFrom, []string{"2026-05-31T00:00:00Z", "2026-06-30T00:00:00Z", "2026-07-31T00:00:00Z"}},
		{"0 0 l * *", "2028-01-15T00:00:00Z", []string{"2028-01-31T00:00:00Z", "2028-02-29T00:00:00Z", "2028-03-31T00:00:00Z"}},
		{"0 0 L * *", "2100-01-15T00:00:00Z", []string{"2100-01-31T00:00:00Z", "2100-02-28T00:00:00Z", "2100-03-31T00:00:00Z"}},
		{"0 0 1,L * *", parseFrom, []string{"2026-05-31T00:00:00Z", "2026-06-01T00:00:00Z", "2026-06-30T00:00:00Z", "2026-07-01T00:00:00Z"}},
		// LW: the last weekday; 31 May 2026 and 28 Feb 2027 are Sundays.
		{"0 0 LW * *", parseFrom, []string{"2026-05-29T00:00:00Z", "2026-06-30T00:00:00Z", "2026-07-31T00:00:00Z"}},
		{"0 0 lw feb *", "2027-01-01T00:00:00Z", []string{"2027-02-26T00:00:00Z", "2028-02-29T00:00:00Z", "2029-02-28T00:00:00Z"}},
		// 15W: a Saturday's is the Friday before, a Sunday's the Monday after.
		{"0 0 15W * *", parseFrom, []string{"2026-05-15T00:00:00Z", "2026-06-15T00:00:00Z", "2026-07-15T00:00:00Z",
			"2026-08-14T00:00:00Z", "2026-09-15T00:00:00Z", "2026-10-15T00:00:00Z", "2026-11-16T00:00:00Z"}},
		// 1W never goes back into the month before: on a Saturday (1 Aug
		// 2026) it is Monday the 3rd; on a Sunday (1 Nov) Monday the 2nd.
		{"0 0 1W * *", parseFrom, []string{"2026-06-01T00:00:00Z", "2026-07-01T00:00:00Z", "2026-08-03T00:00:00Z",
			"2026-09-01T00:00:00Z", "2026-10-01T00:00:00Z", "2026-11-02T00:00:00Z"}},
		// 31W: only months that have a 31st; a Sunday 31st (the last day)
		// is the Friday before, never the 1st of the next month.
		{"0 0 31W * *", parseFrom, []string{"2026-05-29T00:00:00Z", "2026-07-31T00:00:00Z", "2026-08-31T00:00:00Z", "2026-10-30T00:00:00Z"}},
		// 29W in February: leap years only; 29 Feb 2032 is a Sunday.
		{"0 0 29W 2 *", parseFrom, []string{"2028-02-29T00:00:00Z", "2032-02-27T00:00:00Z", "2036-02-29T00:00:00Z"}},
		{"0 0 1W,15W * *", parseFrom, []string{"2026-05-15T00:00:00Z", "2026-06-01T00:00:00Z", "2026-06-15T00:00:00Z"}},
		// 5L: the last Friday; 7L the last Sunday.
		{"0 0 * * 5L", parseFrom, []string{"2026-05-29T00:00:00Z", "2026-06-26T00:00:00Z", "2026-07-31T00:00:00Z"}},
		{"0 0 * * friL", parseFrom, []string{"2026-05-29T00:00:00Z", "2026-06-26T00:00:00Z"}},
		{"0 0 * * 7L", parseFrom, []string{"2026-05-31T00:00:00Z", "2026-06-28T00:00:00Z"}},
		{"0 0 ? * 0l", parseFrom, []string{"2026-05-31T00:00:00Z", "2026-06-28T00:00:00Z"}},
		// 5#2: the second Friday (8 May is past).
		{"0 0 * * 5#2", parseFrom, []string{"2026-06-12T00:00:00Z", "2026-07-10T00:00:00Z", "2026-08-14T00:00:00Z"}},
		{"0 0 * * FRIDAY#2", parseFrom, []string{"2026-06-12T00:00:00Z", "2026-07-10T00:00:00Z"}},
		{"0 0 ? january monday#1", parseFrom, []string{"2027-01-04T00:00:00Z", "2028-01-03T00:00:00Z"}},
		// 5#5: months without a fifth Friday are skipped (June, August,
		// September 2026); in February only a leap February that starts on
		// a Friday has one (2036, then 2064).
		{"0 0 * * 5#5", parseFrom, []string{"2026-05-29T00:00:00Z", "2026-07-31T00:00:00Z", "2026-10-30T00:00:00Z"}},
		{"0 0 * feb 5#5", parseFrom, []string{"2036-02-29T00:00:00Z", "2064-02-29T00:00:00Z"}},
		// ?: '*' in the day fields, in any of the two.
		{"0 0 ? * ?", parseFrom, []string{"2026-05-14T00:00:00Z", "2026-05-15T00:00:00Z"}},
		{"0 0 12 ? * MON-FRI", parseFrom, []string{"2026-05-13T12:00:00Z", "2026-05-14T12:00:00Z", "2026-05-15T12:00:00Z", "2026-05-18T12:00:00Z"}},
		{"0 0 15 * ?", parseFrom, []string{"2026-05-15T00:00:00Z", "2026-06-15T00:00:00Z"}},
		// Full names, any case.
		{"0 9 * January friday", parseFrom, []string{"2027-01-01T09:00:00Z", "2027-01-08T09:00:00Z"}},
		{"0 9 1 SEPTEMBER-october *", parseFrom, []string{"2026-09-01T09:00:00Z", "2026-10-01T09:00:00Z", "2027-09-01T09:00:00Z"}},
		{"0 9 * * monday-Wednesday", parseFrom, []string{"2026-05-18T09:00:00Z", "2026-05-19T09:00:00Z", "2026-05-20T09:00:00Z", "2026-05-25T09:00:00Z"}},
		{"0 9 * * saturday-sunday", parseFrom, []string{"2026-05-16T09:00:00Z", "2026-05-17T09:00:00Z", "2026-05-23T09:00:00Z"}},
		// Both day fields restricted: a day of either runs (L or Mondays;
		// the last day or a fifth Friday).
		{"0 0 L * 1", parseFrom, []string{"2026-05-18T00:00:00Z", "2026-05-25T00:00:00Z", "2026-05-31T00:00:00Z", "2026-06-01T00:00:00Z", "2026-06-08T00:00:00Z"}},
		{"0 0 L * 5#5", parseFrom, []string{"2026-05-29T00:00:00Z", "2026-05-31T00:00:00Z", "2026-06-30T00:00:00Z", "2026-07-31T00:00:00Z", "2026-08-31T00:00:00Z"}},
		// One starts with '*': both must match (odd days that are last Fridays).
		{"0 0 */2 * 5L", parseFrom, []string{"2026-05-29T00:00:00Z", "2026-07-31T00:00:00Z", "2026-09-25T00:00:00Z"}},
		// 7 fields: seconds first, a year last.
		{"*/2 * * * * * *", parseFrom, []string{"2026-05-13T10:17:24Z", "2026-05-13T10:17:26Z"}},
		{"0 30 9 ? * MON-FRI *", parseFrom, []string{"2026-05-14T09:30:00Z", "2026-05-15T09:30:00Z", "2026-05-18T09:30:00Z"}},
		{"0 0 0 1 1 * 2027", parseFrom, []string{"2027-01-01T00:00:00Z"}},
		{"0 0 12 29 2 ? 2028-2040/4", "2026-01-01T00:00:00Z", []string{"2028-02-29T12:00:00Z", "2032-02-29T12:00:00Z", "2036-02-29T12:00:00Z", "2040-02-29T12:00:00Z"}},
		{"0 0 0 1 1 * */50", parseFrom, []string{"2070-01-01T00:00:00Z"}},
		{"0 0 0 1 1 * 2099", parseFrom, []string{"2099-01-01T00:00:00Z"}},
		{"0 0 0 L 12 * 2026,2030", parseFrom, []string{"2026-12-31T00:00:00Z", "2030-12-31T00:00:00Z"}},
		// The examples of testdata/script/cal_next.txtar.
		{"0 0 0 LW * ? 2026", "2026-01-01T00:00:00Z", []string{"2026-01-30T00:00:00Z", "2026-02-27T00:00:00Z", "2026-03-31T00:00:00Z"}},
		{"0 0 * * 5#5", "2026-01-01T00:00:00Z", []string{"2026-01-30T00:00:00Z", "2026-05-29T00:00:00Z"}},
		// A year of '*' is every year, past 2099 too.
		{"0 0 0 1 1 * *", "2099-06-01T00:00:00Z", []string{"2100-01-01T00:00:00Z", "2101-01-01T00:00:00Z"}},
	}
	for _, tc := range tests {
		t.Run(tc.expr, func(t *testing.T) {
			s := mustParse(t, tc.expr, Options{Zone: time.UTC})
			var want []time.Time
			for _, w := range tc.want {
				want = append(want, at(t, w))
			}
			from := at(t, tc.from)
			if got := nextN(s, from, len(want)); !sameInstants(got, want) {
				t.Fatalf("Next... from %s\n got  %s\n want %s", tc.from, utcList(got), utcList(want))
			}
			// Prev walks the same slots back.
			for i := len(want) - 1; i > 0; i-- {
				if got := s.Prev(want[i].Add(-1)); !got.Equal(want[i-1]) {
					t.Errorf("Prev(%s - 1ns) = %s, want %s", fmtT(want[i]), fmtT(got), fmtT(want[i-1]))
				}
			}
			if got := s.Prev(want[0]); !got.Equal(want[0]) {
				t.Errorf("Prev(%s) = %s, want the slot itself", fmtT(want[0]), fmtT(got))
			}
			if got := s.Prev(want[0].Add(-1)); !got.Before(from.Add(1)) {
				t.Errorf("Prev(%s - 1ns) = %s, after the instant the walk started from", fmtT(want[0]), fmtT(got))
			}
			back, err := Parse(s.String(), Options{Zone: time.UTC})
			if err != nil || !sameInstants(nextN(back, from, len(want)), want) {
				t.Errorf("String() = %q parses back to other slots (%v)", s.String(), err)
			}
		})
	}
}

// TestCronYearBounds checks a year field at its ends: before its first
// year there is no slot (Prev is the zero time), after its last one none
// either (Next is far, as for a schedule that fires no more), and the
// years are 1970-2099.
func TestCronYearBounds(t *testing.T) {
	s := mustParse(t, "0 0 0 1 1 * 2027", Options{Zone: time.UTC})
	slot := at(t, "2027-01-01T00:00:00Z")
	if got := s.Prev(at(t, parseFrom)); !got.IsZero() {
		t.Errorf("Prev before the only year = %s, want the zero time", fmtT(got))
	}
	if got := s.Prev(at(t, "2090-05-01T00:00:00Z")); !got.Equal(slot) {
		t.Errorf("Prev(2090) = %s, want %s", fmtT(got), fmtT(slot))
	}
	if got := s.Next(slot); !got.After(time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("Next after the only slot = %s, want none (a time past 2099)", fmtT(got))
	}
	first := mustParse(t, "0 0 0 1 1 * 1970", Options{Zone: time.UTC})
	if got := first.Prev(at(t, parseFrom)); !got.Equal(at(t, "1970-01-01T00:00:00Z")) {
		t.Errorf("1970: Prev = %s", fmtT(got))
	}
	if got := first.Next(at(t, "1960-01-01T00:00:00Z")); !got.Equal(at(t, "1970-01-01T00:00:00Z")) {
		t.Errorf("1970: Next(1960) = %s", fmtT(got))
	}
	last := mustParse(t, "59 59 23 31 12 * 2099", Options{Zone: time.UTC})
	if got := last.Next(at(t, parseFrom)); !got.Equal(at(t, "2099-12-31T23:59:59Z")) {
		t.Errorf("2099: Next = %s", fmtT(got))
	}
	if got := last.Prev(at(t, "2400-01-01T00:00:00Z")); !got.Equal(at(t, "2099-12-31T23:59:59Z")) {
		t.Errorf("2099: Prev(2400) = %s", fmtT(got))
	}
	// In a zone: the year is the wall clock's (00:00 on 1 Jan 2027 in
	// Kolkata is 18:30Z the day before).
	k := mustParse(t, "0 0 0 1 1 * 2027", Options{Zone: zone(t, "Asia/Kolkata")})
	if got := k.Next(at(t, parseFrom)); !got.Equal(at(t, "2026-12-31T18:30:00Z")) {
		t.Errorf("Kolkata: Next = %s", fmtT(got))
	}
}

// TestCronExtensionErrors checks the refusals of the extended syntax: each
// names the field and the value, and the fix where there is one.
func TestCronExtensionErrors(t *testing.T) {
	tests := []struct {
		in   string
		want []string // all in the message
	}{
		{"0 0 L-3 * *", []string{"day-of-month", `"L-3"`, "write L"}},
		{"0 0 1-5W * *", []string{"day-of-month", `"1-5W"`, "never a range"}},
		{"0 0 32W * *", []string{"day-of-month", `"32W"`, "32 is out of range 1-31"}},
		{"0 0 0W * *", []string{"day-of-month", `"0W"`}},
		{"0 0 5#2 * *", []string{"day-of-month", `"5#2"`, "day-of-week"}},
		{"0 0 * * 5#6", []string{"day-of-week", `"5#6"`, "1-5"}},
		{"0 0 * * 5#0", []string{"day-of-week", `"5#0"`, "1-5"}},
		{"0 0 * * 5#", []string{"day-of-week", `"5#"`}},
		{"0 0 * * 8#1", []string{"day-of-week", `"8#1"`, "8 is out of range"}},
		{"0 0 * * 1-5#2", []string{"day-of-week", `"1-5#2"`}},
		{"0 0 * * L", []string{"day-of-week", `"L"`, "5L"}},
		{"0 0 * * 8L", []string{"day-of-week", `"8L"`, "8 is out of range"}},
		{"0 0 * * julL", []string{"day-of-week", `"julL"`}},
		{"0 0 * * 5W", []string{"day-of-week", `"5W"`}},
		{"L 0 * * *", []string{"minute", `"L"`}},
		{"0 0 * L *", []string{"month", `"L"`}},
		{"? * * * *", []string{"minute", `"?"`, "only for the day fields"}},
		{"0 ? * * *", []string{"hour", `"?"`}},
		{"0 0 ?/2 * *", []string{"day-of-month", `"?/2"`, "*/2"}},
		{"0 0 * ? *", []string{"month", `"?"`}},
		{"0 0 0 * * * ?", []string{"year", `"?"`}},
		// Never fires.
		{"0 0 30W 2 *", []string{"day-of-month", "never fires", `"30W"`}},
		{"0 0 31W 4,6,9,11 *", []string{"day-of-month", "never fires"}},
		{"0 0 0 29 2 * 2027", []string{"year", "never fires", `"2027"`}},
		{"0 0 0 ? 2 5#5 2027-2030", []string{"year", "never fires", `"2027-2030"`}},
		// Years: 1970-2099, going up.
		{"0 0 0 * * * 1969", []string{"year", "1969 is out of range 1970-2099"}},
		{"0 0 0 * * * 2100", []string{"year", "2100 is out of range 1970-2099"}},
		{"0 0 0 * * * 2030-2020", []string{"year", `"2030-2020"`, "must go up"}},
		{"0 0 0 * * * 20x", []string{"year", `"20x"`}},
		{"0 0 0 * * * */0", []string{"year", "step"}},
		// cronie's random values: the value and the fix.
		{"6~15 * * * *", []string{"minute", `"6~15"`, "cronie's random value", "fixed minute, 6,", "--jitter 9m"}},
		{"0 1~3 * * *", []string{"hour", `"1~3"`, "fixed hour, 1,", "--jitter 2h"}},
		{"~ * * * *", []string{"minute", `"~"`, "fixed minute, 0,", "--jitter 59m"}},
		{"30~ * * * * *", []string{"second", `"30~"`, "fixed second, 30,", "--jitter 29s"}},
		{"0 0 1~15 * *", []string{"day-of-month", `"1~15"`, "fixed value", "--jitter"}},
		{"0 0 * * mon~fri", []string{"day-of-week", `"mon~fri"`, "--jitter"}},
		{"0 0 0 1 1 * 2026~2030", []string{"year", `"2026~2030"`, "--jitter"}},
		{"0,6~15 * * * *", []string{"minute", `"6~15"`, "--jitter 9m"}},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			s, err := Parse(tc.in, Options{Zone: time.UTC})
			if err == nil {
				t.Fatalf("Parse(%q) = %v, want an error", tc.in, s)
			}
			msg := err.Error()
			if strings.Contains(msg, "\n") {
				t.Errorf("error is not one line: %q", msg)
			}
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("Parse(%q) error %q, want it to say %q", tc.in, msg, w)
				}
			}
		})
	}
}

// TestMonthShape checks the arithmetic of month lengths and weekdays
// against package time, over years far apart, negative ones included.
func TestMonthShape(t *testing.T) {
	years := []int{-100000, -401, -400, -101, -100, -5, -4, -1, 0, 1, 9999, 10000, 123456}
	for y := 1590; y <= 2410; y++ {
		years = append(years, y)
	}
	for _, y := range years {
		for m := time.January; m <= time.December; m++ {
			days, first := monthShape(y, m)
			if want := daysIn(m, y); days != want {
				t.Fatalf("monthShape(%d, %v): %d days, want %d", y, m, days, want)
			}
			if want := int(time.Date(y, m, 1, 0, 0, 0, 0, time.UTC).Weekday()); first != want {
				t.Fatalf("monthShape(%d, %v): first day a %v, want a %v", y, m, time.Weekday(first), time.Weekday(want))
			}
		}
	}
}

// TestIsCronField pins the shape of a cron field, by which the jobs file
// counts a crontab line's time fields.
func TestIsCronField(t *testing.T) {
	yes := []string{"*", "?", "0", "59", "007", "*/5", "1-5", "1,2,3", "1-30/5", "5/15", "mon-fri", "MON-FRI",
		"Friday", "january", "JAN,jul", "SEPTEMBER-october", "L", "l", "LW", "lw", "15W", "1W,15W", "5L", "friL",
		"FRIDAYl", "5#2", "fri#2", "2026", "2026-2030", "*/2,L", "L-3", "W", "sat", "99"}
	no := []string{"", "-", ",", "/", "#", "-,/", "~", "6~15", "1~", "./x", "/usr/bin/backup", "echo", "run-parts",
		"cmd", "$HOME", "a", "x1", "@hourly", "CRON_TZ=UTC", "1.5", "janL", "root", "sh", "true", "date", "90s",
		"5m", "1h", "mon-fri;", "'*'", "*\x00", "fri-xyz", "Lundi"}
	for _, w := range yes {
		if !IsCronField(w) {
			t.Errorf("IsCronField(%q) = false, want true", w)
		}
	}
	for _, w := range no {
		if IsCronField(w) {
			t.Errorf("IsCronField(%q) = true, want false", w)
		}
	}
}
