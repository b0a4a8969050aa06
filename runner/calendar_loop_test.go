package runner

import (
	"bytes"
	"context"
	"os"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/everycli/every/schedule"
	"github.com/everycli/every/state"
)

// fakeClock is the loop's clocks in a synctest bubble: the bubble's time is
// the monotonic clock; the wall clock reads it plus a step the test sets, and
// a suspend is a jump of the boot clock that the monotonic one does not see.
type fakeClock struct {
	mu        sync.Mutex
	step      time.Duration // the wall clock's lead over the bubble's
	suspended time.Duration
	armed     []armed
}

type armed struct {
	c    chan bool
	wall bool
	stop func() bool
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Now().Round(0).Add(c.step)
}

func (c *fakeClock) arm(d time.Duration, wall bool) (<-chan bool, func()) {
	ch := make(chan bool, 1)
	t := time.AfterFunc(d, func() { fire(ch, false) })
	c.mu.Lock()
	c.armed = append(c.armed, armed{ch, wall, t.Stop})
	c.mu.Unlock()
	return ch, func() { t.Stop() }
}

func (c *fakeClock) Wall(at time.Time) (<-chan bool, func())    { return c.arm(at.Sub(c.Now()), true) }
func (c *fakeClock) Boot(d time.Duration) (<-chan bool, func()) { return c.arm(d, false) }

func (c *fakeClock) Suspended() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.suspended
}

// Offset is the wall clock's lead over the monotonic clock (the bubble's):
// the steps and the suspends.
func (c *fakeClock) Offset() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.step
}

func fire(ch chan bool, set bool) {
	select {
	case ch <- set:
	default:
	}
}

// setWall steps the wall clock to t: the wall-clock waits armed hear of it at
// once, as timerfds armed with TFD_TIMER_CANCEL_ON_SET do.
func (c *fakeClock) setWall(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.step = t.Sub(time.Now().Round(0))
	for _, a := range c.armed {
		if a.wall && a.stop() {
			fire(a.c, true)
		}
	}
}

// suspend has the system sleep d: the wall and boot clocks go on, the
// monotonic one (the bubble's) does not. At the resume, the waits armed on
// the boot clock fire, as past-due CLOCK_BOOTTIME timers do, and those on the
// wall clock hear of a clock set, as timerfds with TFD_TIMER_CANCEL_ON_SET do.
func (c *fakeClock) suspend(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.step += d
	c.suspended += d
	for _, a := range c.armed {
		if a.stop() {
			fire(a.c, a.wall)
		}
	}
}

// calendarConfig is testConfig on a calendar schedule, its wall clock at start.
func calendarConfig(t *testing.T, f *fakeExec, buf *bytes.Buffer, clock *fakeClock, expr, zone string, start time.Time) Config {
	t.Helper()
	loc, err := time.LoadLocation(zone)
	if err != nil {
		t.Fatal(err)
	}
	s, err := schedule.Parse(expr, schedule.Options{Zone: loc})
	if err != nil {
		t.Fatal(err)
	}
	cfg := testConfig(f, buf, make(chan os.Signal, 1))
	cfg.Schedule = s
	cfg.Clock = clock
	cfg.SleepUntil = func(at time.Time) { time.Sleep(at.Sub(clock.Now())) }
	clock.setWall(start)
	return cfg
}

// slotsSeen returns the EVERY_SLOT of each attempt.
func (f *fakeExec) slotsSeen() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, c := range f.calls {
		out = append(out, c.env["EVERY_SLOT"])
	}
	return out
}

// startsOnWall returns the wall-clock time of each attempt's start.
func startsOnWall(f *fakeExec, clock *fakeClock) []string {
	var out []string
	for _, s := range f.starts() {
		out = append(out, s.Round(0).Add(clock.step).UTC().Format(time.RFC3339))
	}
	return out
}

func TestLoopCalendarAcrossDST(t *testing.T) {
	// Expected instants by the US rule (EST = UTC-5 until 2026-03-08 02:00
	// local, EDT = UTC-4 after; back to EST on 2026-11-01 at 02:00 EDT).
	tests := []struct {
		name, expr string
		start      string // wall clock at start
		want       []string
		dst        int // catch_up reason=dst events
	}{
		{
			name:  "fixed time in the spring gap runs at its end, once",
			expr:  "30 2 * * *",
			start: "2026-03-07T12:00:00-05:00",
			// 02:30 does not exist on the 8th: 03:00 EDT = 07:00Z. Then 02:30 EDT = 06:30Z.
			want: []string{"2026-03-08T07:00:00Z", "2026-03-09T06:30:00Z", "2026-03-10T06:30:00Z"},
			dst:  1,
		},
		{
			name:  "fixed time in the repeated hour runs once, at the first",
			expr:  "30 1 * * *",
			start: "2026-10-31T12:00:00-04:00",
			// 01:30 EDT = 05:30Z on the 1st (not 01:30 EST = 06:30Z); then 01:30 EST.
			want: []string{"2026-11-01T05:30:00Z", "2026-11-02T06:30:00Z"},
			dst:  1,
		},
		{
			name:  "hourly runs at every real hour of the fall-back day",
			expr:  "@hourly",
			start: "2026-11-01T00:30:00-04:00",
			// 01:00 EDT, 01:00 EST, 02:00 EST, 03:00 EST: an hour apart.
			want: []string{"2026-11-01T05:00:00Z", "2026-11-01T06:00:00Z", "2026-11-01T07:00:00Z", "2026-11-01T08:00:00Z"},
		},
		{
			name:  "every 15 minutes keeps its spacing through the spring gap",
			expr:  "*/15 * * * *",
			start: "2026-03-08T01:40:00-05:00",
			// 01:45 EST = 06:45Z, then 03:00 EDT = 07:00Z, 03:15 EDT.
			want: []string{"2026-03-08T06:45:00Z", "2026-03-08T07:00:00Z", "2026-03-08T07:15:00Z"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f := &fakeExec{}
				var buf bytes.Buffer
				clock := &fakeClock{}
				start, _ := time.Parse(time.RFC3339, tt.start)
				cfg := calendarConfig(t, f, &buf, clock, tt.expr, "America/New_York", start)
				cfg.MaxRuns = len(tt.want)
				if end := Loop(context.Background(), cfg); end.Reason != MaxRuns {
					t.Fatalf("end = %+v, want MaxRuns", end)
				}
				if got := f.slotsSeen(); !slices.Equal(got, tt.want) {
					t.Errorf("EVERY_SLOT %v, want %v", got, tt.want)
				}
				if got := startsOnWall(f, clock); !slices.Equal(got, tt.want) {
					t.Errorf("started at %v, want %v (on time, not at start)", got, tt.want)
				}
				dst := 0
				for _, e := range eventsNamed(logEvents(t, &buf), "catch_up") {
					if e["reason"] == "dst" {
						dst++
					}
				}
				if dst != tt.dst {
					t.Errorf("%d catch_up reason=dst events, want %d:\n%s", dst, tt.dst, buf.String())
				}
			})
		})
	}
}

func TestLoopCalendarClockStep(t *testing.T) {
	for _, tt := range []struct {
		name   string
		policy CatchUp
		step   time.Duration // from 00:00:30, while waiting for 00:01:00
		want   []string
		missed float64
	}{
		{
			name: "forward past three slots: once runs the latest, at once",
			step: 3*time.Minute + 10*time.Second, // to 00:03:40
			want: []string{"2026-06-01T00:03:00Z", "2026-06-01T00:04:00Z"}, missed: 3,
		},
		{
			name: "forward past three slots: all runs each", policy: CatchUpAll,
			step: 3*time.Minute + 10*time.Second,
			want: []string{"2026-06-01T00:01:00Z", "2026-06-01T00:02:00Z", "2026-06-01T00:03:00Z"}, missed: 3,
		},
		{
			name: "forward past three slots: none waits for the next", policy: CatchUpNone,
			step: 3*time.Minute + 10*time.Second,
			want: []string{"2026-06-01T00:04:00Z"}, missed: 3,
		},
		{
			name: "back an hour: the slot waits for its wall-clock time, run once",
			step: -time.Hour,
			want: []string{"2026-06-01T00:01:00Z", "2026-06-01T00:02:00Z"},
		},
		{
			name: "forward within the period: the slot runs at its time",
			step: 20 * time.Second, // to 00:00:50
			want: []string{"2026-06-01T00:01:00Z", "2026-06-01T00:02:00Z"},
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f := &fakeExec{}
				var buf bytes.Buffer
				clock := &fakeClock{}
				cfg := calendarConfig(t, f, &buf, clock, "* * * * *", "UTC", time.Date(2026, 6, 1, 0, 0, 30, 0, time.UTC))
				cfg.MaxRuns, cfg.CatchUp, cfg.CatchUpMax = len(tt.want), tt.policy, 10
				done := make(chan Exit)
				go func() { done <- Loop(context.Background(), cfg) }()
				time.Sleep(10 * time.Second) // the loop waits for 00:01:00
				synctest.Wait()
				if n := len(f.starts()); n != 0 {
					t.Fatalf("%d runs before the first slot", n)
				}
				clock.setWall(clock.Now().Add(tt.step))
				<-done
				if got := f.slotsSeen(); !slices.Equal(got, tt.want) {
					t.Errorf("EVERY_SLOT %v, want %v", got, tt.want)
				}
				// No slot starts before its time on the wall clock (the step
				// came before the first run, so the wall is the run's time
				// plus the step in force at the end).
				step := clock.Now().Sub(time.Now().Round(0))
				for _, c := range f.calls {
					slot, err := time.Parse(time.RFC3339, c.env["EVERY_SLOT"])
					if wall := c.at.Round(0).Add(step); err != nil || wall.Before(slot) {
						t.Errorf("slot %s started at %v on the wall clock, before it (%v)", c.env["EVERY_SLOT"], wall.UTC(), err)
					}
				}
				var caught, steps []map[string]any
				for _, e := range eventsNamed(logEvents(t, &buf), "catch_up") {
					if e["missed"] == 0.0 {
						steps = append(steps, e)
					} else {
						caught = append(caught, e)
					}
				}
				switch {
				case tt.missed == 0 && len(caught) != 0:
					t.Errorf("catch_up logged: %v", caught)
				case tt.missed > 0 && (len(caught) != 1 || caught[0]["missed"] != tt.missed || caught[0]["reason"] != "clock"):
					t.Errorf("catch_up events %v, want one with missed %v, reason clock", caught, tt.missed)
				}
				// The step itself is one warning, saying by how much.
				if len(steps) != 1 || steps[0]["level"] != "WARN" || steps[0]["reason"] != "clock" || steps[0]["step"] != tt.step.String() {
					t.Errorf("step warnings %v, want one, reason clock, step %v", steps, tt.step)
				}
			})
		})
	}
}

func TestLoopGridKeepsPhaseThroughSuspend(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// A 10s grid from 00:00:00. At +25s the system sleeps 42s: on resume
		// (wall 00:01:07) slots +30s..+60s have passed. --catch-up once runs
		// +60s at once, and the grid goes on at +70s, +80s: its phase kept
		// on the wall clock, not shifted by the 42s the monotonic clock missed.
		f := &fakeExec{}
		var buf bytes.Buffer
		clock := &fakeClock{}
		origin := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
		cfg := testConfig(f, &buf, make(chan os.Signal, 1))
		cfg.Clock = clock
		cfg.SleepUntil = func(at time.Time) { time.Sleep(at.Sub(clock.Now())) }
		cfg.MaxRuns = 6
		clock.setWall(origin)
		done := make(chan Exit)
		go func() { done <- Loop(context.Background(), cfg) }()
		time.Sleep(25 * time.Second)
		synctest.Wait()
		clock.suspend(42 * time.Second)
		<-done
		var got []string
		for _, s := range f.slotsSeen() {
			at, _ := time.Parse(time.RFC3339Nano, s)
			got = append(got, at.Sub(origin).String())
		}
		want := []string{"0s", "10s", "20s", "1m0s", "1m10s", "1m20s"}
		if !slices.Equal(got, want) {
			t.Errorf("slots at %v, want %v", got, want)
		}
		caught := eventsNamed(logEvents(t, &buf), "catch_up")
		if len(caught) != 1 || caught[0]["missed"] != 4.0 || caught[0]["reason"] != "suspend" {
			t.Errorf("catch_up events %v, want one with missed 4 (30s..60s), reason suspend", caught)
		}
	})
}

func TestPlanStartCalendar(t *testing.T) {
	cal, err := schedule.Parse("0 * * * *", schedule.Options{Zone: time.UTC})
	if err != nil {
		t.Fatal(err)
	}
	at := func(h, m int) time.Time { return time.Date(2026, 6, 1, h, m, 0, 0, time.UTC) }
	rec := func(last time.Time) *state.Record {
		return &state.Record{Version: 1, Schedule: cal.Recorded(), Anchor: at(0, 7), LastSlot: last}
	}
	tests := []struct {
		name        string
		rec         *state.Record
		now         time.Time
		policy      CatchUp
		interrupted bool
		want        Start
	}{
		{name: "fresh: waits for the first slot, as cron does", now: at(3, 20),
			want: Start{Anchor: at(3, 20), Due: at(4, 0), Why: Fresh}},
		{name: "resumed, nothing missed", rec: rec(at(3, 0)), now: at(3, 20),
			want: Start{Anchor: at(0, 7), Due: at(4, 0), Why: Resumed}},
		{name: "three missed, once", rec: rec(at(0, 0)), now: at(3, 20),
			want: Start{Anchor: at(0, 7), Runs: []time.Time{at(3, 0)}, Due: at(4, 0), Missed: 3, Why: Resumed}},
		{name: "three missed, all", rec: rec(at(0, 0)), now: at(3, 20), policy: CatchUpAll,
			want: Start{Anchor: at(0, 7), Runs: []time.Time{at(1, 0), at(2, 0), at(3, 0)}, Due: at(4, 0), Missed: 3, Why: Resumed}},
		{name: "last run cut short: its slot is missed", rec: rec(at(3, 0)), now: at(3, 20), interrupted: true,
			want: Start{Anchor: at(0, 7), Runs: []time.Time{at(3, 0)}, Due: at(4, 0), Missed: 1, Why: Resumed}},
		{name: "clock set back: no storm, no stall", rec: rec(at(9, 0)), now: at(3, 20),
			want: Start{Anchor: at(3, 20), Due: at(4, 0), Why: ClockMovedBack, Ahead: 5*time.Hour + 40*time.Minute}},
		{name: "clock set back less than a period: the next slot after now", rec: rec(at(4, 0)), now: at(3, 50),
			want: Start{Anchor: at(3, 50), Due: at(4, 0), Why: ClockMovedBack, Ahead: 10 * time.Minute}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := PlanStart(StartInput{Record: tt.rec, Schedule: cal, Now: tt.now,
				Policy: tt.policy, Max: 10, Interrupted: tt.interrupted})
			if !got.Anchor.Equal(tt.want.Anchor) || !got.Due.Equal(tt.want.Due) || got.Missed != tt.want.Missed ||
				got.Why != tt.want.Why || got.Ahead != tt.want.Ahead || !slices.EqualFunc(got.Runs, tt.want.Runs, time.Time.Equal) {
				t.Fatalf("PlanStart =\n %+v\nwant\n %+v", got, tt.want)
			}
		})
	}
}

func TestLoopCalendarSuspend(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// Waiting at 00:00:30 for 00:01:00, the system sleeps 3m10s: slots
		// 00:01 to 00:03 pass in the suspend; once runs 00:03 at the resume.
		f := &fakeExec{}
		var buf bytes.Buffer
		clock := &fakeClock{}
		cfg := calendarConfig(t, f, &buf, clock, "* * * * *", "UTC", time.Date(2026, 6, 1, 0, 0, 30, 0, time.UTC))
		cfg.MaxRuns = 2
		done := make(chan Exit)
		go func() { done <- Loop(context.Background(), cfg) }()
		time.Sleep(10 * time.Second)
		synctest.Wait()
		clock.suspend(3*time.Minute + 10*time.Second)
		<-done
		want := []string{"2026-06-01T00:03:00Z", "2026-06-01T00:04:00Z"}
		if got := f.slotsSeen(); !slices.Equal(got, want) {
			t.Errorf("EVERY_SLOT %v, want %v", got, want)
		}
		caught := eventsNamed(logEvents(t, &buf), "catch_up")
		if len(caught) != 1 || caught[0]["missed"] != 3.0 || caught[0]["reason"] != "suspend" {
			t.Errorf("catch_up events %v, want one with missed 3, reason suspend", caught)
		}
	})
}

// earlyClock is a precise fakeClock whose first wall-clock wait ends at
// once, with no clock set: a wake-up the wait did not ask for, as one after
// a step of the wall clock that the kernel did not report as a set.
type earlyClock struct {
	*fakeClock
	woke bool
}

func (c *earlyClock) Precise() bool { return true }

func (c *earlyClock) Wall(at time.Time) (<-chan bool, func()) {
	if !c.woke {
		c.woke = true
		ch := make(chan bool, 1)
		ch <- false
		return ch, func() {}
	}
	return c.fakeClock.Wall(at)
}

// TestLoopEarlyWakeWaitsAgain: woken long before its slot, the loop waits
// again on its clock, listening for signals, rather than sleeping deaf to
// them until the slot; the run is still at the slot.
func TestLoopEarlyWakeWaitsAgain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fakeExec{}
		var buf bytes.Buffer
		clock := &fakeClock{}
		cfg := calendarConfig(t, f, &buf, clock, "* * * * *", "UTC", time.Date(2026, 6, 1, 0, 0, 30, 0, time.UTC))
		cfg.Clock = &earlyClock{fakeClock: clock}
		cfg.MaxRuns = 1
		cfg.CatchUp = CatchUpNone // a one-shot that waits for its slot, as a loop does
		var deaf time.Duration
		cfg.SleepUntil = func(at time.Time) {
			d := at.Sub(clock.Now())
			deaf = max(deaf, d)
			time.Sleep(d)
		}
		Loop(context.Background(), cfg)
		if got, want := f.slotsSeen(), []string{"2026-06-01T00:01:00Z"}; !slices.Equal(got, want) {
			t.Errorf("EVERY_SLOT %v, want %v", got, want)
		}
		if deaf > time.Millisecond {
			t.Errorf("slept %v without listening for signals", deaf)
		}
	})
}
