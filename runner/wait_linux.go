package runner

import (
	"errors"
	"os"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// awaitExit returns once process pid has exited, without reaping it, so that
// exec.Cmd.Wait then returns at once. It waits on a pidfd through the
// runtime's poller: a goroutine parked there costs nothing, while one blocked
// in wait4 keeps the runtime's monitor thread waking dozens of times a
// second for the whole run. It reports whether it saw the exit: until Wait,
// the process is a zombie whose pid (and process group id) cannot be reused.
// Where pidfds are missing (Linux < 5.3) it returns false at once, and Wait
// blocks as usual.
func awaitExit(pid int) bool {
	fd, err := unix.PidfdOpen(pid, unix.PIDFD_NONBLOCK)
	if errors.Is(err, unix.EINVAL) { // PIDFD_NONBLOCK needs Linux 5.10
		if fd, err = unix.PidfdOpen(pid, 0); err == nil {
			err = unix.SetNonblock(fd, true)
		}
	}
	if err != nil {
		return false
	}
	f := os.NewFile(uintptr(fd), "pidfd")
	defer f.Close()
	rc, err := f.SyscallConn()
	if err != nil {
		return false
	}
	exited := false
	err = rc.Read(func(uintptr) bool {
		// WNOWAIT: look, but leave the reaping to Wait.
		var info unix.Siginfo
		err := unix.Waitid(unix.P_PIDFD, fd, &info, unix.WEXITED|unix.WNOHANG|unix.WNOWAIT, nil)
		exited = err == nil && info.Signo != 0
		return err != nil || exited
	})
	return err == nil && exited
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
