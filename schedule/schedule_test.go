package schedule

import (
	"testing"
	"time"
)

func TestParseDuration(t *testing.T) {
	tests := []struct {
		in      string
		want    time.Duration
		wantErr bool
	}{
		{"500ms", 500 * time.Millisecond, false},
		{"30s", 30 * time.Second, false},
		{"90s", 90 * time.Second, false},
		{"1m30s", 90 * time.Second, false},
		{"2h", 2 * time.Hour, false},
		{"1d", 24 * time.Hour, false},
		{"1.5d", 36 * time.Hour, false},
		{"1d12h", 36 * time.Hour, false},
		{"2d30m", 48*time.Hour + 30*time.Minute, false},
		{"-1s", -time.Second, false},
		{"0", 0, false},
		{"", 0, true},
		{"abc", 0, true},
		{"10", 0, true},
		{"d", 0, true},
		{"1x", 0, true},
		{"1dd", 0, true},
		{"1.5.5d", 0, true}, // not 1h7m55s
		{"1.5.5h", 0, true},
		{"5.d", 120 * time.Hour, false},
		{".5d", 12 * time.Hour, false},
		{"1.1d", 26*time.Hour + 24*time.Minute, false}, // exact, no float error
		{"+2m", 2 * time.Minute, false},
		{"--1s", 0, true},
		{"1s-1s", 0, true},
		{"1d 1h", 0, true},
		{" 1s", 0, true},
		{"1e3s", 0, true},
		{"106752d", 0, true},    // past the largest duration
		{"106751d24h", 0, true}, // ditto, by addition
		{"106751d", 106751 * 24 * time.Hour, false},
		{"106750d", 106750 * 24 * time.Hour, false},
		{"9223372036854775807ns", 1<<63 - 1, false},
		{"9223372036854775808ns", 0, true},
		{"1µs", time.Microsecond, false},
	}
	for _, tt := range tests {
		got, err := ParseDuration(tt.in)
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("ParseDuration(%q) = %v, %v; want %v, error %v", tt.in, got, err, tt.want, tt.wantErr)
		}
	}
}

func TestParseInterval(t *testing.T) {
	tests := []struct {
		in      string
		want    time.Duration
		wantErr bool
	}{
		{"1ms", time.Millisecond, false},
		{"90s", 90 * time.Second, false},
		{"1d", 24 * time.Hour, false},
		{"999us", 0, true},
		{"0s", 0, true},
		{"-5s", 0, true},
		{"soon", 0, true},
	}
	for _, tt := range tests {
		got, err := ParseInterval(tt.in)
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("ParseInterval(%q) = %v, %v; want %v, error %v", tt.in, got, err, tt.want, tt.wantErr)
		}
	}
}

func TestGrid(t *testing.T) {
	anchor := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	g := Grid{Anchor: anchor, Interval: 90 * time.Second}
	at := func(d time.Duration) time.Time { return anchor.Add(d) }
	tests := []struct {
		t          time.Time
		index      int64
		floor      time.Time
		after      time.Time
		name       string
		wantBefore bool
	}{
		{name: "at anchor", t: anchor, index: 0, floor: anchor, after: at(90 * time.Second)},
		{name: "just after", t: at(time.Nanosecond), index: 0, floor: anchor, after: at(90 * time.Second)},
		{name: "just before slot 1", t: at(90*time.Second - time.Nanosecond), index: 0, floor: anchor, after: at(90 * time.Second)},
		{name: "at slot 1", t: at(90 * time.Second), index: 1, floor: at(90 * time.Second), after: at(180 * time.Second)},
		{name: "hours later", t: at(10*time.Hour + 5*time.Second), index: 400, floor: at(10 * time.Hour), after: at(10*time.Hour + 90*time.Second)},
		{name: "just before anchor", t: at(-time.Nanosecond), index: -1, floor: at(-90 * time.Second), after: anchor},
		{name: "at slot -1", t: at(-90 * time.Second), index: -1, floor: at(-90 * time.Second), after: anchor},
		{name: "between -2 and -1", t: at(-100 * time.Second), index: -2, floor: at(-180 * time.Second), after: at(-90 * time.Second)},
	}
	for _, tt := range tests {
		if got := g.Index(tt.t); got != tt.index {
			t.Errorf("%s: Index = %d, want %d", tt.name, got, tt.index)
		}
		if got := g.Prev(tt.t); !got.Equal(tt.floor) {
			t.Errorf("%s: Prev = %v, want %v", tt.name, got, tt.floor)
		}
		if got := g.Next(tt.t); !got.Equal(tt.after) {
			t.Errorf("%s: Next = %v, want %v", tt.name, got, tt.after)
		}
	}
}

func TestGridCount(t *testing.T) {
	anchor := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	g := Grid{Anchor: anchor, Interval: 10 * time.Second}
	tests := []struct {
		from, to time.Duration
		want     int64
	}{
		{10 * time.Second, 10 * time.Second, 0},
		{10 * time.Second, 20 * time.Second, 1},
		{10 * time.Second, 40 * time.Second, 3},
		{40 * time.Second, 10 * time.Second, 0},
	}
	for _, tt := range tests {
		if got := Count(g, anchor.Add(tt.from), anchor.Add(tt.to), 100); got != tt.want {
			t.Errorf("Count(+%v, +%v) = %d, want %d", tt.from, tt.to, got, tt.want)
		}
	}
}

// Every Schedule keeps the promises the loop stands on: Next is strictly
// after t (never a hot loop), Prev is at or before it, and nothing lies
// between them.
func TestScheduleContract(t *testing.T) {
	anchor := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	schedules := map[string]Schedule{
		"90s":   Grid{Anchor: anchor, Interval: 90 * time.Second},
		"1ms":   Grid{Anchor: anchor, Interval: time.Millisecond},
		"1d":    Grid{Anchor: anchor.Add(7 * time.Hour), Interval: 24 * time.Hour},
		"odd":   Grid{Anchor: anchor.Add(123456789), Interval: 7*time.Second + 3},
		"early": Grid{Anchor: time.Date(1971, 1, 1, 0, 0, 0, 0, time.UTC), Interval: time.Hour},
	}
	offsets := []time.Duration{0, 1, -1, time.Second, -time.Second, 89 * time.Second, 90 * time.Second, -90 * time.Second,
		1000 * time.Hour, -1000 * time.Hour, 12345678901}
	for name, s := range schedules {
		for _, d := range offsets {
			at := anchor.Add(d)
			next, prev := s.Next(at), s.Prev(at)
			if !next.After(at) || prev.After(at) {
				t.Errorf("%s at %v: Prev %v, Next %v; want Prev <= t < Next", name, at, prev, next)
			}
			if !s.Next(prev).Equal(next) || !s.Prev(next).Equal(next) {
				t.Errorf("%s at %v: a slot lies between Prev %v and Next %v", name, at, prev, next)
			}
		}
	}
}
