package runner

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// Go's timers run on CLOCK_MONOTONIC: they neither follow a step of the wall
// clock nor count the time the system spends suspended. Calendar slots are
// wall-clock instants, and a grid of plain durations must count suspend
// too, so the loop waits on timerfds instead: one on CLOCK_REALTIME that the
// kernel also wakes when the clock is set (as systemd's calendar timers do),
// and one on CLOCK_BOOTTIME, which keeps counting through a suspend. Reads go
// through the runtime's poller, so a waiting timer costs no thread.

// armWall arms a one-shot wake-up at the wall-clock instant at. Its channel
// receives exactly one value: false when the wall clock reaches at (at once
// if at has passed, including when it passed during a suspend), or true when
// the wall clock was set (stepped by anyone, or moved by a resume from
// suspend, which the kernel reports the same way) before that: the caller
// then reads the clock again and re-arms. stop releases the timer: once it
// returns, nothing more is sent (a value sent before stays in the buffer);
// it may be called more than once, and after the channel fired.
//
// The kernel counts a set against the clock as it was at the call, so the
// caller should compute at from a fresh reading of the clock.
func armWall(at time.Time) (<-chan bool, func(), error) {
	value, err := unix.TimeToTimespec(at)
	if err != nil {
		return nil, nil, fmt.Errorf("arm a wake-up at %s: out of range for this system's clock: %w", at, err)
	}
	if value.Sec < 0 || (value.Sec == 0 && value.Nsec == 0) {
		// Before 1970 the kernel refuses the time, and a zero one would
		// disarm the timer: any past time fires at once, 1ns past the epoch
		// does so too.
		value = unix.Timespec{Nsec: 1}
	}
	return armTimerfd(unix.CLOCK_REALTIME, unix.TFD_TIMER_ABSTIME|unix.TFD_TIMER_CANCEL_ON_SET, value)
}

// armBoot arms a one-shot wake-up for when CLOCK_BOOTTIME has advanced by d
// from now: time spent suspended counts, unlike for Go's timers. Its channel
// receives exactly one value, false, when due (at once when d <= 0); stop is
// as for armWall.
func armBoot(d time.Duration) (<-chan bool, func(), error) {
	if d <= 0 {
		d = 1 // a zero value would disarm the timer
	}
	return armTimerfd(unix.CLOCK_BOOTTIME, 0, unix.NsecToTimespec(d.Nanoseconds()))
}

// armTimerfd arms a one-shot wake-up on clock: on the clock's long-lived
// timerfd when it is free (the loop's case: one wait at a time), else on a
// timerfd of its own. Its channel receives once: false when it expired, true
// when the clock was set.
func armTimerfd(clock, flags int, value unix.Timespec) (<-chan bool, func(), error) {
	if t := sharedTimer(clock); t != nil {
		if c, stop, ok, err := t.arm(flags, value); ok {
			return c, stop, err
		}
	}
	return armOwnTimerfd(clock, flags, value)
}

// A timerfd and a goroutine per wait cost a timerfd_create, two epoll_ctl,
// a close and a goroutine each time. The loop waits for one slot at a time,
// so each clock keeps one timerfd, re-armed for each wait, and one goroutine
// that reads it through the poller for as long as every runs.
var (
	wallTimer = &reusedTimer{clock: unix.CLOCK_REALTIME}
	bootTimer = &reusedTimer{clock: unix.CLOCK_BOOTTIME}
)

// sharedTimer is the long-lived timer of clock, nil for another clock.
func sharedTimer(clock int) *reusedTimer {
	switch clock {
	case unix.CLOCK_REALTIME:
		return wallTimer
	case unix.CLOCK_BOOTTIME:
		return bootTimer
	}
	return nil
}

// reusedTimer is one clock's long-lived timerfd, armed for one wait at a
// time.
type reusedTimer struct {
	clock int
	mu    sync.Mutex
	f     *os.File // the timerfd, nil until the first wait
	fd    int
	busy  bool      // armed for a wait whose stop has not been called
	c     chan bool // where the armed wait's wake-up goes; nil: none is due
}

// arm arms the timer for one wait, as armTimerfd. ok is false when the timer
// is busy with another wait or cannot be created: the caller then uses a
// timerfd of its own.
func (t *reusedTimer) arm(flags int, value unix.Timespec) (c <-chan bool, stop func(), ok bool, err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.busy {
		return nil, nil, false, nil
	}
	if t.f == nil {
		fd, err := unix.TimerfdCreate(t.clock, unix.TFD_CLOEXEC|unix.TFD_NONBLOCK)
		if err != nil {
			return nil, nil, false, nil
		}
		t.fd, t.f = fd, os.NewFile(uintptr(fd), "timerfd")
		go t.read(t.f)
	}
	ch := make(chan bool, 1)
	// Arming resets the timer's count of expiries and its record of clock
	// sets: nothing of an earlier wait is left to be read, but for a read
	// already under way, which read sorts out.
	err = unix.TimerfdSettime(t.fd, flags, &unix.ItimerSpec{Value: value}, nil)
	switch {
	case errors.Is(err, unix.ECANCELED):
		// The clock was set while the timer was being armed.
		ch <- true
		return ch, func() {}, true, nil
	case err != nil:
		return nil, nil, true, fmt.Errorf("arm a timer on clock %d for %d.%09ds: %w", t.clock, value.Sec, value.Nsec, err)
	}
	t.busy, t.c = true, ch
	var once sync.Once
	stop = func() {
		once.Do(func() {
			t.mu.Lock()
			defer t.mu.Unlock()
			if t.c == ch {
				// Not fired: disarm, so that it never fires for a later wait.
				_ = unix.TimerfdSettime(t.fd, 0, &unix.ItimerSpec{}, nil)
				t.c = nil
			}
			t.busy = false
		})
	}
	return ch, stop, true, nil
}

// read reads the timer for as long as every runs, and hands each wake-up to
// the wait armed then, under the lock: a wait that has stopped gets nothing.
// A read can complete for a wait that has just stopped, after the next one
// was armed: an expiry is passed on only if the timer is disarmed now, that
// is, if the armed wait's own expiry has come too. (A clock set meant for
// the wait before is passed on: "look at the clock again" is always a safe
// answer.)
func (t *reusedTimer) read(f *os.File) {
	var ticks [8]byte
	for {
		_, err := f.Read(ticks[:])
		t.mu.Lock()
		if t.c != nil {
			switch {
			case err == nil:
				var cur unix.ItimerSpec
				if gerr := unix.TimerfdGettime(t.fd, &cur); gerr != nil || cur.Value == (unix.Timespec{}) {
					t.c <- false
					t.c = nil
				}
			default:
				// ECANCELED: the clock was set. Nothing else is expected
				// of a timerfd read, and "look at the clock again" is the
				// safe answer to it too.
				t.c <- true
				t.c = nil
			}
		}
		if err != nil && !errors.Is(err, unix.ECANCELED) {
			// Not expected of a timerfd: give it up; the next wait makes a
			// new one rather than have this goroutine spin.
			f.Close()
			if t.f == f {
				t.f = nil
			}
			t.mu.Unlock()
			return
		}
		t.mu.Unlock()
	}
}

// armOwnTimerfd arms a one-shot timerfd of its own on clock and hands it to
// a goroutine that waits for it through the poller and sends once: false
// when it expired, true when the read was cancelled because the clock was
// set.
func armOwnTimerfd(clock, flags int, value unix.Timespec) (<-chan bool, func(), error) {
	fd, err := unix.TimerfdCreate(clock, unix.TFD_CLOEXEC|unix.TFD_NONBLOCK)
	if err != nil {
		return nil, nil, fmt.Errorf("create a timer on clock %d: %w", clock, err)
	}
	c := make(chan bool, 1)
	err = unix.TimerfdSettime(fd, flags, &unix.ItimerSpec{Value: value}, nil)
	if errors.Is(err, unix.ECANCELED) {
		// The clock was set while the timer was being armed.
		unix.Close(fd)
		c <- true
		return c, func() {}, nil
	}
	if err != nil {
		unix.Close(fd)
		return nil, nil, fmt.Errorf("arm a timer on clock %d for %d.%09ds: %w", clock, value.Sec, value.Nsec, err)
	}
	f := os.NewFile(uintptr(fd), "timerfd")
	done := make(chan struct{})
	go func() {
		defer close(done)
		var ticks [8]byte
		_, err := f.Read(ticks[:])
		switch {
		case err == nil:
			c <- false
		case errors.Is(err, os.ErrClosed):
			// Stopped: nobody is waiting.
		default:
			// ECANCELED: the clock was set. Nothing else is expected of
			// a timerfd read, and "look at the clock again" is the safe
			// answer to it too.
			c <- true
		}
	}()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			// Close wakes the blocked Read and returns once the fd is
			// really closed; done then says the goroutine is gone.
			f.Close()
			<-done
		})
	}
	return c, stop, nil
}

// suspendedMax is the largest suspended() reading yet: see there.
var suspendedMax atomic.Int64

// suspended returns how long this system has spent suspended since boot:
// CLOCK_BOOTTIME - CLOCK_MONOTONIC. The loop compares two readings to learn
// how long it slept through a suspend. The two clocks cannot be read at the
// same instant: reading MONOTONIC second makes each reading a lower bound
// (by the microsecond between the reads), and the largest reading so far is
// returned, so that readings never go down (the kernel's own offset only
// grows).
func suspended() time.Duration {
	var boot, mono unix.Timespec
	if unix.ClockGettime(unix.CLOCK_BOOTTIME, &boot) != nil ||
		unix.ClockGettime(unix.CLOCK_MONOTONIC, &mono) != nil {
		return time.Duration(suspendedMax.Load())
	}
	d := boot.Nano() - mono.Nano()
	for {
		hi := suspendedMax.Load()
		if d <= hi {
			return time.Duration(hi)
		}
		if suspendedMax.CompareAndSwap(hi, d) {
			return time.Duration(d)
		}
	}
}

// clockStepMin is the smallest change of the wall clock against the
// monotonic one (Clock.Offset), or of the time suspended, that the loop
// takes for a step or a suspend. Linux slews both clocks alike, so their
// difference moves only when the clock is set or the system resumes; a
// reading's error is well under a microsecond.
const clockStepMin = time.Millisecond
