package runner

import (
	"testing"
	"time"
)

func TestLookWall(t *testing.T) {
	last := time.Date(2026, 3, 29, 0, 0, 0, 0, time.UTC) // the wall clock at the last look
	at := last.Add(time.Hour)
	for _, c := range []struct {
		name       string
		wall, mono time.Duration // how far each clock moved since the last look
		want       wallLook
		wait       time.Duration
	}{
		{"far: look again after a period", recheckPeriod, recheckPeriod, wallWait, recheckPeriod},
		{"near: wait the rest", time.Hour - 3*time.Second, time.Hour - 3*time.Second, wallWait, 3 * time.Second},
		{"reached", time.Hour, time.Hour, wallDue, 0},
		{"passed", time.Hour + time.Minute, time.Hour + time.Minute, wallDue, 0},
		{"slewed within tolerance", recheckPeriod + 5*time.Millisecond, recheckPeriod, wallWait, recheckPeriod},
		{"stepped by the tolerance: not set", recheckPeriod + stepTolerance, recheckPeriod, wallWait, recheckPeriod},
		{"set forward, not past at", 30 * time.Minute, recheckPeriod, wallStepped, 0},
		{"set back", -time.Hour, recheckPeriod, wallStepped, 0},
		{"set back a second", recheckPeriod - time.Second, recheckPeriod, wallStepped, 0},
		{"slept: the wall clock went on, the monotonic one stood", 20 * time.Minute, 0, wallStepped, 0},
		{"set forward past at: due", 2 * time.Hour, recheckPeriod, wallDue, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, wait := lookWall(c.wall, c.mono, last.Add(c.wall), at)
			if got != c.want || wait != c.wait {
				t.Errorf("lookWall = %v, %v; want %v, %v", got, wait, c.want, c.wait)
			}
		})
	}
}

func TestLookBoot(t *testing.T) {
	for _, c := range []struct {
		now, due time.Duration
		fire     bool
		wait     time.Duration
	}{
		{0, time.Hour, false, recheckPeriod},
		{time.Hour - time.Second, time.Hour, false, time.Second},
		{time.Hour, time.Hour, true, 0},
		{2 * time.Hour, time.Hour, true, 0}, // a suspend passed it
	} {
		fire, wait := lookBoot(c.now, c.due)
		if fire != c.fire || wait != c.wait {
			t.Errorf("lookBoot(%v, %v) = %v, %v; want %v, %v", c.now, c.due, fire, wait, c.fire, c.wait)
		}
	}
}

func TestRaiseSuspended(t *testing.T) {
	for _, c := range []struct{ hi, d, want time.Duration }{
		{0, 0, 0},
		{0, 999 * time.Microsecond, 0}, // jitter of the reads
		{5 * time.Second, 5*time.Second + 40*time.Nanosecond, 5 * time.Second}, // a clock tick
		{5 * time.Second, 5*time.Second - time.Microsecond, 5 * time.Second},   // a low reading
		{5 * time.Second, 65 * time.Second, 65 * time.Second},                  // a minute asleep
		{0, time.Millisecond, time.Millisecond},
	} {
		if got := raiseSuspended(c.hi, c.d); got != c.want {
			t.Errorf("raiseSuspended(%v, %v) = %v, want %v", c.hi, c.d, got, c.want)
		}
	}
}
