package schedule

import (
	"slices"
	"testing"
	"time"
)

// TestChange pins what Change says of the slots next to a DST change, for
// every next's notes: the readings a gap's end stands for (fixed-time
// only), and the slots of a local time that occurs twice.
func TestChange(t *testing.T) {
	tests := []struct {
		name, expr, tz string
		align          bool
		slot           string
		want           Change
		skipped        []string // want.Skipped as 15:04:05
	}{
		{name: "one time in the gap", expr: "30 2 * * *", tz: "America/New_York", slot: "2026-03-08T03:00:00-04:00", skipped: []string{"02:30:00"}},
		{name: "two times in the gap, one slot", expr: "0,30 2 * * *", tz: "America/New_York", slot: "2026-03-08T03:00:00-04:00", skipped: []string{"02:00:00", "02:30:00"}},
		{name: "the gap's end is a time of its own too", expr: "30 2,3 * * *", tz: "America/New_York", slot: "2026-03-08T03:00:00-04:00", skipped: []string{"02:30:00"}},
		{name: "a slot at its own time", expr: "30 3 * * *", tz: "America/New_York", slot: "2026-03-08T03:30:00-04:00"},
		{name: "the day after", expr: "30 2 * * *", tz: "America/New_York", slot: "2026-03-09T02:30:00-04:00"},
		{name: "half an hour's gap", expr: "0 2 * * *", tz: "Australia/Lord_Howe", slot: "2026-10-04T02:30:00+11:00", skipped: []string{"02:00:00"}},
		{name: "aligned over 1h", expr: "2h", align: true, tz: "America/New_York", slot: "2026-03-08T03:00:00-04:00", skipped: []string{"02:00:00"}},
		{name: "seconds", expr: "15 30 2 * * *", tz: "Europe/Berlin", slot: "2026-03-29T03:00:00+02:00", skipped: []string{"02:30:15"}},
		{name: "a wildcard's gap runs nothing", expr: "@hourly", tz: "America/New_York", slot: "2026-03-08T03:00:00-04:00"},
		{name: "fixed-time, twice: the first, once", expr: "30 1 * * *", tz: "America/New_York", slot: "2026-11-01T01:30:00-04:00", want: Change{Once: true}},
		{name: "wildcard, twice: the first", expr: "@hourly", tz: "America/New_York", slot: "2026-11-01T01:00:00-04:00"},
		{name: "wildcard, twice: the second", expr: "@hourly", tz: "America/New_York", slot: "2026-11-01T01:00:00-05:00", want: Change{Again: true}},
		{name: "no change near", expr: "0 9 * * *", tz: "UTC", slot: "2026-05-13T09:00:00Z"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, ok := mustParse(t, tc.expr, Options{Align: tc.align, Zone: zone(t, tc.tz)}).(*Calendar)
			if !ok {
				t.Fatalf("%q is not a calendar", tc.expr)
			}
			slot := at(t, tc.slot)
			if !c.Prev(slot).Equal(slot) {
				t.Fatalf("%s is not a slot of %q (the table is wrong)", tc.slot, tc.expr)
			}
			got := c.Change(slot)
			var skipped []string
			for _, r := range got.Skipped {
				if r.Location() != time.UTC {
					t.Errorf("a skipped reading is held in %v, want UTC", r.Location())
				}
				skipped = append(skipped, r.Format("15:04:05"))
			}
			if !slices.Equal(skipped, tc.skipped) || got.Once != tc.want.Once || got.Again != tc.want.Again {
				t.Errorf("Change(%s) of %q = skipped %q, once %v, again %v; want skipped %q, once %v, again %v",
					tc.slot, tc.expr, skipped, got.Once, got.Again, tc.skipped, tc.want.Once, tc.want.Again)
			}
		})
	}
}

// TestAt pins the instant of a local time by the fixed-time rules.
func TestAt(t *testing.T) {
	tests := []struct{ wall, tz, want string }{
		{"2026-05-13T10:17:23", "Europe/Berlin", "2026-05-13T10:17:23+02:00"},
		{"2026-01-01T00:00:00.25", "Asia/Kolkata", "2026-01-01T00:00:00.25+05:30"},
		// In a gap: its end.
		{"2026-03-08T02:30:00", "America/New_York", "2026-03-08T03:00:00-04:00"},
		{"2026-03-08T02:00:00", "America/New_York", "2026-03-08T03:00:00-04:00"},
		{"2026-10-04T02:10:00", "Australia/Lord_Howe", "2026-10-04T02:30:00+11:00"},
		// Twice: the first.
		{"2026-11-01T01:30:00", "America/New_York", "2026-11-01T01:30:00-04:00"},
		// Just outside.
		{"2026-03-08T01:59:59", "America/New_York", "2026-03-08T01:59:59-05:00"},
		{"2026-03-08T03:00:00", "America/New_York", "2026-03-08T03:00:00-04:00"},
		{"2026-11-01T02:00:00", "America/New_York", "2026-11-01T02:00:00-05:00"},
	}
	for _, tc := range tests {
		wall, err := time.Parse("2006-01-02T15:04:05", tc.wall)
		if err != nil {
			t.Fatal(err)
		}
		if got := At(wall, zone(t, tc.tz)); !got.Equal(at(t, tc.want)) {
			t.Errorf("At(%s, %s) = %s, want %s", tc.wall, tc.tz, got.Format(time.RFC3339Nano), tc.want)
		}
	}
}
