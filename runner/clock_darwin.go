package runner

import (
	"time"

	"golang.org/x/sys/unix"
)

// darwin's CLOCK_MONOTONIC (mach_continuous_time) keeps counting while the
// system sleeps; CLOCK_UPTIME_RAW (mach_absolute_time, the clock of Go's
// monotonic readings and timers) stands still.

// bootNow reads the clock that counts time asleep.
func bootNow() (time.Duration, bool) {
	var ts unix.Timespec
	if unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts) != nil {
		return 0, false
	}
	return time.Duration(ts.Nano()), true
}

// sleptNow returns the time spent asleep since boot: CLOCK_MONOTONIC -
// CLOCK_UPTIME_RAW, read in that order, so a little low (see suspended).
func sleptNow() (time.Duration, bool) {
	var cont, abs unix.Timespec
	if unix.ClockGettime(unix.CLOCK_MONOTONIC, &cont) != nil ||
		unix.ClockGettime(unix.CLOCK_UPTIME_RAW, &abs) != nil {
		return 0, false
	}
	return time.Duration(cont.Nano() - abs.Nano()), true
}
