package schedule

import (
	"testing"
	"time"
)

// What the loop asks of a schedule, of each kind, by the same methods: its
// recorded text and that text read back, the clock it follows, its start on
// an anchor, its period and shortest gap, its zone.
func TestScheduleSeam(t *testing.T) {
	berlin, err := LoadZone("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	anchor := time.Date(2026, 6, 1, 10, 7, 30, 0, time.UTC)
	tests := []struct {
		given      string
		opts       Options
		recorded   string
		wall       bool
		first      time.Time // of a fresh start at anchor
		period     time.Duration
		minGap     time.Duration
		loc        *time.Location
		nextOfAnch time.Time // the slot after anchor, the schedule on anchor
	}{
		{given: "90s", recorded: "90s", first: anchor, period: 90 * time.Second, minGap: 90 * time.Second,
			nextOfAnch: anchor.Add(90 * time.Second)},
		// --tz moves no slot of a plain duration: not recorded.
		{given: "@every 90s", opts: Options{Zone: berlin}, recorded: "@every 90s", first: anchor, period: 90 * time.Second,
			minGap: 90 * time.Second, nextOfAnch: anchor.Add(90 * time.Second)},
		{given: "*/5 * * * *", opts: Options{Zone: time.UTC}, recorded: "*/5 * * * * --tz UTC", wall: true,
			first: anchor.Add(2*time.Minute + 30*time.Second), period: 7*time.Minute + 30*time.Second, minGap: 5 * time.Minute,
			loc: time.UTC, nextOfAnch: anchor.Add(2*time.Minute + 30*time.Second)},
		{given: "0,1 * * * *", opts: Options{Zone: time.UTC}, recorded: "0,1 * * * * --tz UTC", wall: true,
			first: time.Date(2026, 6, 1, 11, 0, 0, 0, time.UTC), period: 53*time.Minute + 30*time.Second, minGap: time.Minute,
			loc: time.UTC, nextOfAnch: time.Date(2026, 6, 1, 11, 0, 0, 0, time.UTC)},
		{given: "15m", opts: Options{Align: true, Zone: berlin}, recorded: "15m --align --tz Europe/Berlin", wall: true,
			first: time.Date(2026, 6, 1, 10, 15, 0, 0, time.UTC), period: 22*time.Minute + 30*time.Second, minGap: 15 * time.Minute,
			loc: berlin, nextOfAnch: time.Date(2026, 6, 1, 10, 15, 0, 0, time.UTC)},
		{given: "CRON_TZ=Europe/Berlin 0 3 * * *", recorded: "CRON_TZ=Europe/Berlin 0 3 * * *", wall: true,
			first: time.Date(2026, 6, 2, 1, 0, 0, 0, time.UTC), period: 38*time.Hour + 52*time.Minute + 30*time.Second,
			minGap: 24 * time.Hour, loc: berlin, nextOfAnch: time.Date(2026, 6, 2, 1, 0, 0, 0, time.UTC)},
	}
	for _, tt := range tests {
		t.Run(tt.given, func(t *testing.T) {
			s, err := Parse(tt.given, tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			if got := s.Recorded(); got != tt.recorded {
				t.Errorf("Recorded() = %q, want %q", got, tt.recorded)
			}
			back, err := ParseRecorded(s.Recorded())
			if err != nil {
				t.Fatalf("ParseRecorded(%q): %v", s.Recorded(), err)
			}
			if back.Recorded() != s.Recorded() || back.String() != s.String() {
				t.Errorf("read back as %q (%s), want %q (%s)", back.Recorded(), back, s.Recorded(), s)
			}
			if got := s.WallClock(); got != tt.wall {
				t.Errorf("WallClock() = %v, want %v", got, tt.wall)
			}
			if got := s.First(anchor); !got.Equal(tt.first) {
				t.Errorf("First(anchor) = %v, want %v", got, tt.first)
			}
			if got := s.Anchored(anchor).Next(anchor); !got.Equal(tt.nextOfAnch) {
				t.Errorf("Anchored(anchor).Next(anchor) = %v, want %v", got, tt.nextOfAnch)
			}
			if got := s.Period(anchor); got != tt.period {
				t.Errorf("Period(anchor) = %v, want %v", got, tt.period)
			}
			if got := s.MinGap(anchor); got != tt.minGap {
				t.Errorf("MinGap(anchor) = %v, want %v", got, tt.minGap)
			}
			if got := s.Location(); (got == nil) != (tt.loc == nil) || got != nil && got.String() != tt.loc.String() {
				t.Errorf("Location() = %v, want %v", got, tt.loc)
			}
		})
	}
}
