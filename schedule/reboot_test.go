package schedule

import (
	"testing"
	"time"
)

func TestReboot(t *testing.T) {
	s := Reboot()
	start := time.Date(2026, 3, 8, 2, 30, 0, 0, time.UTC)
	g := s.Anchored(start)
	switch {
	case g.Recorded() != RebootText:
		t.Errorf("Recorded = %q, want %q", g.Recorded(), RebootText)
	case !g.First(start).Equal(start):
		t.Errorf("First(start) = %v, want the start", g.First(start))
	case g.Next(start).Sub(start) < 99*365*24*time.Hour:
		t.Errorf("Next(start) = %v: a second slot within a century", g.Next(start))
	case g.WallClock() || g.Location() != nil:
		t.Error("@reboot follows a wall clock")
	}
	if _, over := Over(g, start); over {
		t.Error("Over: @reboot has no slot to come")
	}
	// Only a jobs file gives @reboot a meaning.
	if _, err := Parse(RebootText, Options{}); err == nil {
		t.Errorf("Parse(%q) takes it", RebootText)
	}
}
