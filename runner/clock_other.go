//go:build !linux

package runner

import (
	"sync"
	"time"
)

// Without timerfds, the wake-ups of clock_linux.go ride Go's timers, which
// run on the monotonic clock: it neither follows a step of the wall clock nor
// (on darwin, whose monotonic clock is mach_absolute_time, nor on FreeBSD)
// advances while the system sleeps. So a wake-up never trusts one long
// timer: it looks at the clocks every recheckPeriod at most (recheck.go),
// and hears of a step of the wall clock or of a resume that much later at
// most. Where a clock counts suspends (darwin's CLOCK_MONOTONIC), armBoot
// and suspended read it; elsewhere (FreeBSD) time suspended does not count
// for a grid of plain durations.

// armWall arms a one-shot wake-up at the wall-clock instant at. Its channel
// receives one value: false when the wall clock reaches at (at once if at has
// passed), or true when a look finds that the wall clock was set, or the
// system slept, since the previous look (recheckPeriod at most before): the
// caller then reads the clock again and re-arms. stop is as on Linux: once
// it returns nothing more is sent, and it may be called more than once.
func armWall(at time.Time) (<-chan bool, func(), error) {
	at = at.Round(0) // a wall-clock instant: its monotonic reading means nothing here
	last := time.Now()
	return armLooks(func() (fire, value bool, wait time.Duration) {
		now := time.Now()
		// Sub of two readings uses their monotonic parts; Round(0) strips
		// those, leaving the wall clock's.
		look, d := lookWall(now.Round(0).Sub(last.Round(0)), now.Sub(last), now.Round(0), at)
		last = now
		return look != wallWait, look == wallStepped, d
	})
}

// armBoot arms a one-shot wake-up d from now (at once when d <= 0), on a
// clock that counts time suspended where this system has one (bootNow), on
// the monotonic clock otherwise.
func armBoot(d time.Duration) (<-chan bool, func(), error) {
	start, ok := bootNow()
	if !ok {
		return armLooks(func() (bool, bool, time.Duration) { return true, false, 0 }, d)
	}
	due := start + d
	return armLooks(func() (fire, value bool, wait time.Duration) {
		now, ok := bootNow()
		if !ok {
			return true, false, 0 // cannot happen: it was read at arming
		}
		fire, wait = lookBoot(now, due)
		return fire, false, wait
	})
}

// armLooks calls look at once (or after first, when given), and again after
// each wait it returns, until it says fire: then it sends value, once. The
// looks run on the timer's own short-lived goroutines: nothing waits in
// between. The mutex keeps a send or a re-arm that races with stop from
// happening after stop returned (Timer.Stop does not wait for a func
// already started).
func armLooks(look func() (fire, value bool, wait time.Duration), first ...time.Duration) (<-chan bool, func(), error) {
	c := make(chan bool, 1)
	var (
		mu      sync.Mutex
		stopped bool
		t       *time.Timer
	)
	var tick func()
	tick = func() {
		mu.Lock()
		defer mu.Unlock()
		if stopped {
			return
		}
		fire, value, wait := look()
		if fire {
			stopped = true
			c <- value
			return
		}
		t = time.AfterFunc(wait, tick)
	}
	if len(first) > 0 {
		mu.Lock()
		t = time.AfterFunc(first[0], tick)
		mu.Unlock()
	} else {
		tick()
	}
	stop := func() {
		mu.Lock()
		defer mu.Unlock()
		stopped = true
		if t != nil {
			t.Stop()
		}
	}
	return c, stop, nil
}

// suspendedMax is the largest suspended() reading yet.
var (
	suspendedMu  sync.Mutex
	suspendedMax time.Duration
)

// suspended returns how long this system has spent suspended since boot, as
// far as its clocks tell (zero where they do not): readings never go down.
func suspended() time.Duration {
	d, ok := sleptNow()
	suspendedMu.Lock()
	defer suspendedMu.Unlock()
	if ok {
		suspendedMax = raiseSuspended(suspendedMax, d)
	}
	return suspendedMax
}

// earlyWake is 0: Go's timers here ride kevent's nanosecond timeouts, not
// epoll's milliseconds, and there is no finer sleep to hand over to.
const earlyWake = 0

// sleepUntil sleeps until t; with earlyWake 0 it is not called before t.
func sleepUntil(t time.Time) { time.Sleep(time.Until(t)) }

// clockStepMin is the smallest change of the wall clock against the
// monotonic one (Clock.Offset) that the loop takes for a step: here NTP
// slews the wall clock alone, and the two drift apart slowly (see
// stepTolerance).
const clockStepMin = stepTolerance
