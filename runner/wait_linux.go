package runner

import (
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// awaitExit returns once registered child pid has exited, without reaping
// it, so that exec.Cmd.Wait then returns at once. The reaper, woken by the
// SIGCHLD of the exit, sees the child among the zombies and says so: a
// goroutine parked on a channel costs nothing, while one blocked in wait4
// keeps the runtime's monitor thread waking dozens of times a second for the
// whole run, and a pidfd of its own costs five system calls and a wake-up of
// the poller on top of the SIGCHLD that comes anyway. It reports whether it
// saw the exit: until Wait, the process is a zombie whose pid (and process
// group id) cannot be reused. For a pid that is not a registered child it
// returns false at once, and Wait blocks as usual.
func awaitExit(pid int) bool {
	exited := procs.exited(pid)
	if exited == nil {
		return false
	}
	<-exited
	return true
}

// earlyWake is how long before a slot the Go timer wakes the loop, for
// sleepUntil to take it from there: Go's timers ride the poller's
// millisecond timeouts and wake up to a millisecond late.
const earlyWake = 2 * time.Millisecond

// sleepUntil sleeps until t, with clock_nanosleep to an absolute time on the
// monotonic clock (the clock Go's monotonic readings use): microseconds
// late, not a millisecond. It is used for the last earlyWake before a slot
// only, so it never holds up a stop for long.
func sleepUntil(t time.Time) {
	d := time.Until(t)
	if d <= 0 {
		return
	}
	var now unix.Timespec
	if unix.ClockGettime(unix.CLOCK_MONOTONIC, &now) != nil {
		time.Sleep(d)
		return
	}
	deadline := unix.NsecToTimespec(now.Nano() + d.Nanoseconds())
	for {
		err := unix.ClockNanosleep(unix.CLOCK_MONOTONIC, unix.TIMER_ABSTIME, &deadline, nil)
		if err != syscall.EINTR {
			return
		}
	}
}
