//go:build !linux

package runner

import (
	"sync"
	"time"
)

// Without timerfds, the wake-ups of clock_linux.go ride Go's timers, which
// run on the monotonic clock: a step of the wall clock is noticed only when
// the timer armed for the old reading fires (then the loop reads the clock
// again), and time spent suspended does not count.

// armWall arms a one-shot wake-up at the wall-clock instant at, as a Go
// timer for the wall-clock distance to at measured now. Its channel receives
// false once, when the timer fires; never true, as a set of the clock goes
// unnoticed until then. stop is as on Linux: once it returns nothing more is
// sent, and it may be called more than once.
func armWall(at time.Time) (<-chan bool, func(), error) {
	// Round(0) drops the monotonic reading, so the distance is measured on
	// the wall clock, as at means.
	return armGo(time.Until(at.Round(0)))
}

// armBoot arms a one-shot wake-up d from now (at once when d <= 0), as a Go
// timer: time spent suspended does not count here.
func armBoot(d time.Duration) (<-chan bool, func(), error) {
	return armGo(d)
}

// armGo sends false once after d, from the timer's own short-lived
// goroutine: nothing waits while the timer runs. The flag keeps a send that
// races with stop from landing after stop returned (Timer.Stop does not wait
// for a func already started).
func armGo(d time.Duration) (<-chan bool, func(), error) {
	c := make(chan bool, 1)
	var mu sync.Mutex
	stopped := false
	t := time.AfterFunc(d, func() {
		mu.Lock()
		defer mu.Unlock()
		if !stopped {
			c <- false
		}
	})
	stop := func() {
		mu.Lock()
		defer mu.Unlock()
		stopped = true
		t.Stop()
	}
	return c, stop, nil
}

// suspended returns 0: these systems' clocks are not read for suspend time.
func suspended() time.Duration { return 0 }
