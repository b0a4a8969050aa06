package runner

import (
	"math"
	"testing"
	"time"

	"github.com/everycli/every/schedule"
	"github.com/everycli/every/state"
)

func TestPlanStart(t *testing.T) {
	anchor := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	iv := 90 * time.Second
	slot := func(k int) time.Time { return anchor.Add(time.Duration(k) * iv) }
	rec := func(lastSlot int, running bool) *state.Record {
		return &state.Record{Version: 1, Schedule: "90s", Anchor: anchor, LastSlot: slot(lastSlot), Running: running}
	}
	tests := []struct {
		name        string
		rec         *state.Record
		now         time.Time
		delay       time.Duration
		policy      CatchUp
		max         int
		interrupted bool
		want        Start
	}{
		{
			name: "fresh: first slot at once",
			now:  anchor,
			want: Start{Anchor: anchor, Due: anchor, Why: Fresh},
		},
		{
			name:  "fresh with --delay",
			now:   anchor,
			delay: 5 * time.Second,
			want:  Start{Anchor: anchor.Add(5 * time.Second), Due: anchor.Add(5 * time.Second), Why: Fresh},
		},
		{
			name: "within a period: keep the phase",
			rec:  rec(20, false),
			now:  slot(20).Add(30 * time.Second),
			want: Start{Anchor: anchor, Due: slot(21), Why: Resumed},
		},
		{
			name:  "within a period, --delay is for fresh starts only",
			rec:   rec(20, false),
			now:   slot(20).Add(30 * time.Second),
			delay: time.Hour,
			want:  Start{Anchor: anchor, Due: slot(21), Why: Resumed},
		},
		{
			name: "exactly on the next slot: it is missed, and run",
			rec:  rec(20, false),
			now:  slot(21),
			want: Start{Anchor: anchor, Runs: []time.Time{slot(21)}, Due: slot(22), Missed: 1, Why: Resumed},
		},
		{
			name:   "4 missed, once: the latest, now",
			rec:    rec(20, false),
			now:    slot(24).Add(10 * time.Second),
			policy: CatchUpOnce,
			want:   Start{Anchor: anchor, Runs: []time.Time{slot(24)}, Due: slot(25), Missed: 4, Why: Resumed},
		},
		{
			name:   "4 missed, none: wait for the next",
			rec:    rec(20, false),
			now:    slot(24).Add(10 * time.Second),
			policy: CatchUpNone,
			want:   Start{Anchor: anchor, Due: slot(25), Missed: 4, Why: Resumed},
		},
		{
			name:   "4 missed, all: each, oldest first",
			rec:    rec(20, false),
			now:    slot(24).Add(10 * time.Second),
			policy: CatchUpAll,
			max:    10,
			want:   Start{Anchor: anchor, Runs: []time.Time{slot(21), slot(22), slot(23), slot(24)}, Due: slot(25), Missed: 4, Why: Resumed},
		},
		{
			name:   "400 missed, all, max 3: the newest 3",
			rec:    rec(20, false),
			now:    slot(420).Add(time.Second),
			policy: CatchUpAll,
			max:    3,
			want:   Start{Anchor: anchor, Runs: []time.Time{slot(418), slot(419), slot(420)}, Due: slot(421), Missed: 400, Why: Resumed},
		},
		{
			name:   "all with max 0 runs nothing",
			rec:    rec(20, false),
			now:    slot(22).Add(time.Second),
			policy: CatchUpAll,
			want:   Start{Anchor: anchor, Due: slot(23), Missed: 2, Why: Resumed},
		},
		{
			name:        "interrupted in this period: its slot is missed",
			rec:         rec(20, true),
			now:         slot(20).Add(30 * time.Second),
			interrupted: true,
			want:        Start{Anchor: anchor, Runs: []time.Time{slot(20)}, Due: slot(21), Missed: 1, Why: Resumed},
		},
		{
			name:        "interrupted long ago, all: its slot and the ones since",
			rec:         rec(20, true),
			now:         slot(22).Add(30 * time.Second),
			policy:      CatchUpAll,
			max:         10,
			interrupted: true,
			want:        Start{Anchor: anchor, Runs: []time.Time{slot(20), slot(21), slot(22)}, Due: slot(23), Missed: 3, Why: Resumed},
		},
		{
			name: "running, but its holder is alive: not missed",
			rec:  rec(20, true),
			now:  slot(20).Add(30 * time.Second),
			want: Start{Anchor: anchor, Due: slot(21), Why: Resumed},
		},
		{
			name:  "schedule changed: a new grid, as fresh",
			rec:   &state.Record{Version: 1, Schedule: "1h", Anchor: anchor, LastSlot: anchor},
			now:   slot(30),
			delay: time.Second,
			want:  Start{Anchor: slot(30).Add(time.Second), Due: slot(30).Add(time.Second), Why: ScheduleChanged},
		},
		{
			// SPEC 9: a clock set back is not corruption. The recorded slot
			// counts as run (no catch-up), and a new grid starts from now:
			// neither the gap run nor the old time waited for.
			name: "clock set back an hour: a new grid from now",
			rec:  rec(100, false),
			now:  slot(100).Add(-time.Hour),
			want: Start{Anchor: slot(100).Add(-time.Hour), Due: slot(100).Add(-time.Hour).Add(iv), Why: ClockMovedBack, Ahead: time.Hour},
		},
		{
			name: "clock set back less than a period: the first slot after the one recorded",
			rec:  rec(100, false),
			now:  slot(100).Add(-10 * time.Second),
			want: Start{Anchor: slot(100).Add(-10 * time.Second), Due: slot(100).Add(80 * time.Second), Why: ClockMovedBack, Ahead: 10 * time.Second},
		},
		{
			name: "a run cut short in the future: its slot counts as run, nothing caught up",
			rec:  rec(100, true), interrupted: true, policy: CatchUpAll, max: 10,
			now:  slot(100).Add(-time.Hour),
			want: Start{Anchor: slot(100).Add(-time.Hour), Due: slot(100).Add(-time.Hour).Add(iv), Why: ClockMovedBack, Ahead: time.Hour},
		},
		{
			name: "its last end ahead only: by as much",
			rec: &state.Record{Version: 1, Schedule: "90s", Anchor: anchor, LastSlot: slot(100),
				LastEnd: slot(100).Add(time.Hour)},
			now:  slot(100).Add(time.Minute),
			want: Start{Anchor: slot(100).Add(time.Minute), Due: slot(100).Add(time.Minute + iv), Why: ClockMovedBack, Ahead: 59 * time.Minute},
		},
		{
			name: "an anchor in the year 2900, out of a duration's reach: from now",
			rec:  &state.Record{Version: 1, Schedule: "90s", Anchor: time.Date(2900, 1, 1, 0, 0, 0, 0, time.UTC), Runs: 7},
			now:  slot(3),
			want: Start{Anchor: slot(3), Due: slot(4), Why: ClockMovedBack, Ahead: time.Duration(math.MaxInt64)},
		},
		{
			name: "record with no run yet: from the anchor",
			rec:  &state.Record{Version: 1, Schedule: "90s", Anchor: anchor},
			now:  slot(2).Add(time.Second),
			want: Start{Anchor: anchor, Runs: []time.Time{slot(2)}, Due: slot(3), Missed: 3, Why: Resumed},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := PlanStart(StartInput{Record: tt.rec, Schedule: grid("90s"), Now: tt.now, Delay: tt.delay,
				Policy: tt.policy, Max: tt.max, Interrupted: tt.interrupted})
			if !got.Anchor.Equal(tt.want.Anchor) || !got.Due.Equal(tt.want.Due) || got.Missed != tt.want.Missed ||
				got.Why != tt.want.Why || got.Ahead != tt.want.Ahead || len(got.Runs) != len(tt.want.Runs) {
				t.Fatalf("PlanStart =\n %+v\nwant\n %+v", got, tt.want)
			}
			for i := range got.Runs {
				if !got.Runs[i].Equal(tt.want.Runs[i]) {
					t.Fatalf("run %d at %v, want %v", i, got.Runs[i], tt.want.Runs[i])
				}
			}
		})
	}
}

func TestRanAlready(t *testing.T) {
	anchor := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	iv := 10 * time.Second
	rec := &state.Record{LastSlot: anchor.Add(50 * time.Second)}
	tests := []struct {
		name        string
		interrupted bool
		slot, now   time.Duration
		want        bool
	}{
		{"the slot itself, run by another", false, 50 * time.Second, 50*time.Second + time.Millisecond, true},
		{"an older slot", false, 40 * time.Second, 50 * time.Second, true},
		{"the next slot", false, 60 * time.Second, 60 * time.Second, false},
		{"another host's clock a little behind", false, 50 * time.Second, 49 * time.Second, true},
		{"clock set back a period or more", false, 0, 40 * time.Second, false},
		{"the slot of a run cut short", true, 50 * time.Second, 51 * time.Second, false},
		{"the slot before a run cut short", true, 40 * time.Second, 51 * time.Second, true},
	}
	for _, tt := range tests {
		if got := ranAlready(rec, tt.interrupted, anchor.Add(tt.slot), anchor.Add(tt.now), schedule.Grid{Anchor: anchor, Interval: iv}); got != tt.want {
			t.Errorf("%s: Done = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestParseCatchUp(t *testing.T) {
	for in, want := range map[string]CatchUp{"once": CatchUpOnce, "none": CatchUpNone, "all": CatchUpAll} {
		if got, err := ParseCatchUp(in); err != nil || got != want || got.String() != in {
			t.Errorf("ParseCatchUp(%q) = %v, %v", in, got, err)
		}
	}
	if _, err := ParseCatchUp("some"); err == nil {
		t.Error("ParseCatchUp(some) succeeded")
	}
}

func TestPlanStartOneShot(t *testing.T) {
	anchor := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	iv := 5 * time.Minute
	slot := func(k int) time.Time { return anchor.Add(time.Duration(k) * iv) }
	rec := func(last int, running bool) *state.Record {
		return &state.Record{Version: 1, Schedule: "5m", Anchor: anchor, LastSlot: slot(last), Running: running}
	}
	for _, tt := range []struct {
		name        string
		rec         *state.Record
		now         time.Time
		delay       time.Duration
		policy      CatchUp
		interrupted bool
		want        Start
	}{
		{name: "fresh: at once", now: anchor, want: Start{Anchor: anchor, Due: anchor, At: anchor, Why: Fresh}},
		{name: "fresh, --delay", now: anchor, delay: time.Minute,
			want: Start{Anchor: slot(0).Add(time.Minute), Due: slot(0).Add(time.Minute), At: slot(0).Add(time.Minute), Why: Fresh}},
		{name: "1s before the next slot: waits for it", rec: rec(3, false), now: slot(5).Add(-time.Second),
			want: Start{Anchor: anchor, Due: slot(5), Missed: 1, Why: Resumed}},
		{name: "1.1s before: the latest slot at once", rec: rec(3, false), now: slot(5).Add(-1100 * time.Millisecond),
			want: Start{Anchor: anchor, Due: slot(4), At: slot(5).Add(-1100 * time.Millisecond), Missed: 1, Why: Resumed}},
		{name: "latest slot run: done", rec: rec(4, false), now: slot(4).Add(time.Minute),
			want: Start{Anchor: anchor, Due: slot(5), Done: true, Ran: slot(4), Why: Resumed}},
		{name: "latest slot running: left to the lock", rec: rec(4, true), now: slot(4).Add(time.Minute),
			want: Start{Anchor: anchor, Due: slot(4), At: slot(4).Add(time.Minute), Why: Resumed}},
		{name: "latest slot cut short: at once", rec: rec(4, true), now: slot(4).Add(time.Minute), interrupted: true,
			want: Start{Anchor: anchor, Due: slot(4), At: slot(4).Add(time.Minute), Missed: 1, Why: Resumed}},
		{name: "--catch-up none: waits, as a loop", rec: rec(3, false), now: slot(4).Add(time.Minute), policy: CatchUpNone,
			want: Start{Anchor: anchor, Due: slot(5), Missed: 1, Why: Resumed}},
		{name: "all: the latest only", rec: rec(1, false), now: slot(4).Add(time.Minute), policy: CatchUpAll,
			want: Start{Anchor: anchor, Due: slot(4), At: slot(4).Add(time.Minute), Missed: 3, Why: Resumed}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := PlanStart(StartInput{Record: tt.rec, Schedule: grid("5m"), Now: tt.now, Delay: tt.delay, Policy: tt.policy,
				Max: 10, Interrupted: tt.interrupted, OneShot: true})
			if !got.Anchor.Equal(tt.want.Anchor) || !got.Due.Equal(tt.want.Due) || !got.At.Equal(tt.want.At) || got.Done != tt.want.Done ||
				!got.Ran.Equal(tt.want.Ran) || got.Missed != tt.want.Missed || got.Why != tt.want.Why || len(got.Runs) != 0 {
				t.Fatalf("PlanStart =\n %+v\nwant\n %+v", got, tt.want)
			}
		})
	}
}

// A one-shot of a cron expression whose years are to come has no slot
// before now: it waits for its first, as a loop does, and never runs for a
// slot of the year 1.
func TestPlanStartOneShotBeforeTheFirstYear(t *testing.T) {
	s, err := schedule.Parse("0 0 0 1 1 * 2030", schedule.Options{Zone: time.UTC})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 12, 5, 12, 0, 0, 0, time.UTC)
	first := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	got := PlanStart(StartInput{Schedule: s, Now: now, Policy: CatchUpOnce, OneShot: true})
	if !got.Due.Equal(first) || !got.At.IsZero() || len(got.Runs) != 0 || got.Done {
		t.Fatalf("PlanStart = %+v, want to wait for %v", got, first)
	}
}

// A run asked for by hand before a cron expression's first year books the
// moment it was asked for, not a slot of the year 1.
func TestManualRunBeforeTheFirstYear(t *testing.T) {
	s, err := schedule.Parse("0 0 0 1 1 * 2030", schedule.Options{Zone: time.UTC})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 12, 5, 12, 0, 0, 0, time.UTC)
	cfg := Config{Name: "job", Command: []string{"job"}, Schedule: s, Clock: fixedClock{now}}
	l := &loop{cfg: cfg, time: newTimeline(cfg.Clock, s)}
	l.time.setGrid(now)
	if r := l.book(now, now, true); !r.LastSlot.Equal(now) {
		t.Fatalf("manual run booked slot %v, want %v", r.LastSlot, now)
	}
}

// every jobs' @reboot starts anew at each start, whatever its record says:
// one run at once, though the record shows the grid's one slot run.
func TestPlanStartAnew(t *testing.T) {
	now := time.Date(2026, 12, 5, 12, 0, 0, 0, time.UTC)
	s := schedule.Reboot()
	rec := &state.Record{Version: state.Version, Schedule: schedule.RebootText, Anchor: now.Add(-time.Hour), LastSlot: now.Add(-time.Hour), Runs: 1}
	for _, anew := range []bool{false, true} {
		got := PlanStart(StartInput{Record: rec, Schedule: s, Now: now, OneShot: true, Anew: anew})
		runsNow := got.At.Equal(now) || got.Due.Equal(now) && got.Anchor.Equal(now)
		if runsNow != anew {
			t.Errorf("anew %v: plan %+v; want a run at once only when anew", anew, got)
		}
	}
}
