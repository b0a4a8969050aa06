package runner

import (
	"math"
	"runtime"
	"time"
)

// Clock is how the loop waits for its slots and learns of suspends.
type Clock interface {
	// Now returns the current time.
	Now() time.Time
	// Wall arms a wake-up at the wall-clock time at. The channel receives
	// once: false when at is reached, true as soon as the wall clock is set
	// (stepped) before that. stop releases it.
	Wall(at time.Time) (c <-chan bool, stop func())
	// Boot arms a wake-up after d of time in which a suspend counts.
	Boot(d time.Duration) (c <-chan bool, stop func())
	// Suspended returns the time the system has spent suspended since boot.
	Suspended() time.Duration
	// Offset returns how far the wall clock is ahead of the monotonic clock,
	// from an origin of the Clock's own: it changes when the wall clock is
	// set (stepped), and by the time slept at a resume from suspend (which
	// Suspended tells apart), and with nothing else.
	Offset() time.Duration
}

// systemClock is the system's clocks: timerfds on CLOCK_REALTIME (cancelled
// when the clock is set) and CLOCK_BOOTTIME where there are, Go timers where
// they cannot be had.
type systemClock struct{}

func (systemClock) Wall(at time.Time) (<-chan bool, func()) {
	if c, stop, err := armWall(at); err == nil {
		return c, stop
	}
	return goClock{}.Wall(at)
}

func (systemClock) Boot(d time.Duration) (<-chan bool, func()) {
	if c, stop, err := armBoot(d); err == nil {
		return c, stop
	}
	return goClock{}.Boot(d)
}

func (systemClock) Now() time.Time { return time.Now() }

// Precise reports that the wake-ups come on time, not up to a millisecond
// late: they are timerfds on Linux (a timerfd that cannot be had falls back
// to a Go timer, up to a millisecond late, which the loop tolerates).
func (systemClock) Precise() bool { return runtime.GOOS == "linux" }

func (systemClock) Suspended() time.Duration { return suspended() }

func (systemClock) Offset() time.Duration { return wallOffset() }

// offsetOrigin is the origin of wallOffset's readings.
var offsetOrigin = time.Now()

// wallOffset returns how far the wall clock is ahead of the monotonic clock,
// from offsetOrigin. Go reads the wall clock first, then the monotonic one:
// a reading is a little low (by the time between the two reads, which a
// preemption can make long), so the highest of three is taken.
func wallOffset() time.Duration {
	best := time.Duration(math.MinInt64)
	for range 3 {
		now := time.Now()
		best = max(best, now.Round(0).Sub(offsetOrigin.Round(0))-now.Sub(offsetOrigin))
	}
	return best
}

// goClock waits on Go timers: the monotonic clock, which stands still in a
// suspend and does not see the wall clock set. Tests on a fake clock use it.
type goClock struct{}

// GoTimers returns a Clock on Go's timers, for the tests of other packages
// that run loops under testing/synctest's fake clock.
func GoTimers() Clock { return goClock{} }

func (goClock) Wall(at time.Time) (<-chan bool, func()) { return goClock{}.Boot(time.Until(at)) }

func (goClock) Boot(d time.Duration) (<-chan bool, func()) {
	c := make(chan bool, 1)
	t := time.AfterFunc(d, func() { c <- false })
	return c, func() { t.Stop() }
}

func (goClock) Now() time.Time { return time.Now() }

func (goClock) Suspended() time.Duration { return 0 }

func (goClock) Offset() time.Duration { return 0 }
