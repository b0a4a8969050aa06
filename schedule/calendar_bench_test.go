package schedule

import (
	"testing"
	"time"
)

// BenchmarkNext measures one Next of typical and sparse schedules, in UTC
// and in a zone with DST (the goal: well under 10µs for typical ones). The
// instant moves forward one slot each call, as the loop's does.
func BenchmarkNext(b *testing.B) {
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		b.Fatal(err)
	}
	cases := []struct {
		sched string
		align bool
	}{
		{"*/5 * * * *", false},
		{"0 9 * * mon-fri", false},
		{"*/10 * * * * *", false},
		{"0 0 29 2 *", false},
		{"15m", true},
	}
	for _, loc := range []*time.Location{time.UTC, ny} {
		for _, c := range cases {
			b.Run(c.sched+"/"+loc.String(), func(b *testing.B) {
				s, err := Parse(c.sched, Options{Zone: loc, Align: c.align})
				if err != nil {
					b.Fatal(err)
				}
				start := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
				t := start
				for b.Loop() {
					t = s.Next(t)
					if t.Year() > 2035 { // within the zone files' explicit transitions (later, Go parses the TZ rule on each lookup)
						t = start
					}
				}
			})
		}
	}
}

// BenchmarkPrev measures one Prev, the look-up of state adoption and status.
func BenchmarkPrev(b *testing.B) {
	for _, sched := range []string{"*/5 * * * *", "0 9 * * mon-fri", "0 0 29 2 *"} {
		b.Run(sched, func(b *testing.B) {
			s, err := Parse("CRON_TZ=America/New_York "+sched, Options{})
			if err != nil {
				b.Fatal(err)
			}
			t := time.Date(2026, 3, 8, 12, 0, 0, 0, time.UTC)
			for b.Loop() {
				t = s.Prev(t).Add(-1)
				if t.Year() < 1900 {
					t = time.Date(2026, 3, 8, 12, 0, 0, 0, time.UTC)
				}
			}
		})
	}
}

// BenchmarkNextExtensions measures one Next of cronexpr's extensions, whose
// days are worked out once a month the search looks at.
func BenchmarkNextExtensions(b *testing.B) {
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		b.Fatal(err)
	}
	for _, sched := range []string{"0 0 L * *", "0 18 LW * *", "0 9 15W * *", "0 0 * * 5L", "0 0 * * 5#5", "0 0 * feb 5#5", "0 30 9 ? * MON-FRI 2026-2034"} {
		b.Run(sched, func(b *testing.B) {
			s, err := Parse(sched, Options{Zone: ny})
			if err != nil {
				b.Fatal(err)
			}
			start := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
			t := start
			for b.Loop() {
				t = s.Next(t)
				if t.Year() > 2033 {
					t = start
				}
			}
		})
	}
}
