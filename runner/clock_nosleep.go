//go:build !linux && !darwin

package runner

import "time"

// FreeBSD documents no clock that keeps counting while the system is
// suspended (its CLOCK_MONOTONIC and CLOCK_UPTIME count the time it runs):
// a grid of plain durations waits on the monotonic clock, and a suspend
// delays it by its length. A calendar schedule is on the wall
// clock, which the kernel sets again at resume: clock_other.go's looks see
// that as a step.

// bootNow reports that no clock here counts time suspended.
func bootNow() (time.Duration, bool) { return 0, false }

// sleptNow reports that no clock here tells time suspended.
func sleptNow() (time.Duration, bool) { return 0, false }
