package runner

import (
	"testing"
	"time"

	"github.com/everycli/every/schedule"
)

// movingClock is a Clock whose readings a test sets: the wall clock, its
// offset from the monotonic clock (a step moves it), and the time spent
// suspended.
type movingClock struct {
	wall              time.Time
	offset, suspended time.Duration
}

func (c *movingClock) Now() time.Time                         { return c.wall }
func (c *movingClock) Offset() time.Duration                  { return c.offset }
func (c *movingClock) Suspended() time.Duration               { return c.suspended }
func (*movingClock) Wall(time.Time) (<-chan bool, func())     { return nil, func() {} }
func (*movingClock) Boot(time.Duration) (<-chan bool, func()) { return nil, func() {} }

// TestTimeline: a step of the wall clock moves a grid's timeline with it
// (the slots keep their pace), not a calendar's; a suspend passes time on
// both and is counted, never taken for a step; labels are wall-clock times.
func TestTimeline(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	calendar, err := schedule.Parse("*/5 * * * *", schedule.Options{Zone: time.UTC})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name  string
		sched schedule.Schedule
		// move changes the clock after the start.
		move      func(c *movingClock)
		wantStep  time.Duration
		wantNow   time.Time // on the timeline
		wantLabel time.Time // of wantNow
		wantSeen  clockEvents
	}{
		{"nothing", grid("10s"), func(c *movingClock) { c.wall = c.wall.Add(time.Second) },
			0, t0.Add(time.Second), t0.Add(time.Second), clockEvents{}},
		{"grid, set forward", grid("10s"), func(c *movingClock) { c.wall, c.offset = c.wall.Add(time.Hour), time.Hour },
			time.Hour, t0, t0.Add(time.Hour), clockEvents{steps: 1}},
		{"grid, set back", grid("10s"), func(c *movingClock) { c.wall, c.offset = c.wall.Add(-time.Hour), -time.Hour },
			-time.Hour, t0, t0.Add(-time.Hour), clockEvents{steps: 1}},
		{"grid, step under the least", grid("10s"), func(c *movingClock) {
			c.wall, c.offset = c.wall.Add(clockStepMin/2), clockStepMin/2
		}, 0, t0.Add(clockStepMin / 2), t0.Add(clockStepMin / 2), clockEvents{}},
		{"grid, suspend", grid("10s"), func(c *movingClock) {
			// A suspend moves the wall clock ahead of the monotonic one by
			// as much as it lasted: no step.
			c.wall, c.offset, c.suspended = c.wall.Add(time.Hour), time.Hour, time.Hour
		}, 0, t0.Add(time.Hour), t0.Add(time.Hour), clockEvents{suspends: 1}},
		{"grid, suspend and step", grid("10s"), func(c *movingClock) {
			c.wall, c.offset, c.suspended = c.wall.Add(3*time.Hour), 3*time.Hour, time.Hour
		}, 2 * time.Hour, t0.Add(time.Hour), t0.Add(3 * time.Hour), clockEvents{suspends: 1, steps: 1}},
		{"calendar, set forward", calendar, func(c *movingClock) { c.wall, c.offset = c.wall.Add(time.Hour), time.Hour },
			time.Hour, t0.Add(time.Hour), t0.Add(time.Hour), clockEvents{steps: 1}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := &movingClock{wall: t0}
			tl := newTimeline(c, tt.sched)
			tl.setGrid(t0)
			tl.markSlot()
			tt.move(c)
			now, step := tl.now()
			if step != tt.wantStep || !now.Equal(tt.wantNow) || !tl.label(now).Equal(tt.wantLabel) || tl.since() != tt.wantSeen {
				t.Fatalf("now %v (label %v), step %v, seen %+v; want %v (label %v), step %v, seen %+v",
					now, tl.label(now), step, tl.since(), tt.wantNow, tt.wantLabel, tt.wantStep, tt.wantSeen)
			}
			if !tl.unlabel(tl.label(now)).Equal(now) {
				t.Fatalf("unlabel(label(%v)) = %v", now, tl.unlabel(tl.label(now)))
			}
			// Seen once: reading again finds no new step.
			if _, again := tl.now(); again != 0 {
				t.Fatalf("the same step seen twice: %v", again)
			}
			tl.markSlot()
			if tl.since() != (clockEvents{}) {
				t.Fatalf("since %+v right after markSlot", tl.since())
			}
		})
	}
}

// TestTimelineGridKeepsItsSlots: after a step, a grid's slots are where
// they were on the timeline; labelled, they follow the wall clock.
func TestTimelineGridKeepsItsSlots(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	c := &movingClock{wall: t0.Add(3 * time.Second)}
	tl := newTimeline(c, grid("10s"))
	tl.setGrid(t0)
	c.wall, c.offset = c.wall.Add(-time.Minute), -time.Minute
	now, _ := tl.now()
	if next := tl.slots.Next(now); !next.Equal(t0.Add(10 * time.Second)) {
		t.Fatalf("next slot %v after a step back, want %v: the grid moved", next, t0.Add(10*time.Second))
	}
	if next := tl.labelled().Next(tl.label(now)); !next.Equal(t0.Add(10*time.Second - time.Minute)) {
		t.Fatalf("labelled next slot %v, want the wall clock's %v", next, t0.Add(10*time.Second-time.Minute))
	}
}
