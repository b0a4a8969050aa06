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
	// Before 1970 the kernel refuses the time: sharedTimer.arm takes it as
	// 1ns past the epoch, past too, which fires at once.
	return wallTimer.arm(value.Nano())
}

// armBoot arms a one-shot wake-up for when CLOCK_BOOTTIME has advanced by d
// from now: time spent suspended counts, unlike for Go's timers. Its channel
// receives exactly one value, false, when due (at once when d <= 0); stop is
// as for armWall.
func armBoot(d time.Duration) (<-chan bool, func(), error) {
	var now unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_BOOTTIME, &now); err != nil {
		return nil, nil, fmt.Errorf("read the boot clock: %w", err)
	}
	return bootTimer.arm(now.Nano() + d.Nanoseconds()) // past: at once
}

// A timerfd and a goroutine per wait cost a timerfd_create, two epoll_ctl,
// a close and a goroutine each time, and, in a process of many loops (every
// jobs), a descriptor and a goroutine stack per loop for as long as it
// waits. So each clock has one timerfd for the process, armed for the
// earliest of the waits on it, and one goroutine that reads it through the
// poller and wakes the waits that are due: a loop that waits for one slot
// at a time re-arms it for each wait, as a timerfd of its own would be.
var (
	wallTimer = &sharedTimer{clock: unix.CLOCK_REALTIME, flags: unix.TFD_TIMER_ABSTIME | unix.TFD_TIMER_CANCEL_ON_SET}
	bootTimer = &sharedTimer{clock: unix.CLOCK_BOOTTIME, flags: unix.TFD_TIMER_ABSTIME}
)

// sharedTimer is one clock's timerfd, armed for the earliest of the waits
// on it (on the wall clock, also woken when the clock is set: every wait
// on it then looks at the clock again).
type sharedTimer struct {
	clock, flags int
	mu           sync.Mutex
	f            *os.File // the timerfd, nil until the first wait
	fd           int
	waits        map[*timerWait]struct{}
	armed        int64 // the time the timerfd is armed for, on the clock; 0: disarmed
}

// timerWait is one wait on a shared timer: due at at, on its clock; its
// wake-up goes to c, once, and it is then no longer among the waits.
type timerWait struct {
	at int64
	c  chan bool
}

// arm adds a wait due at at (nanoseconds on the timer's clock).
func (t *sharedTimer) arm(at int64) (<-chan bool, func(), error) {
	// A time at or before the clock's zero would disarm the timerfd, or be
	// refused: 1ns past it is past too, and fires at once.
	at = max(at, 1)
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.f == nil {
		fd, err := unix.TimerfdCreate(t.clock, unix.TFD_CLOEXEC|unix.TFD_NONBLOCK)
		if err != nil {
			return nil, nil, fmt.Errorf("create a timer on clock %d: %w", t.clock, err)
		}
		t.fd, t.f, t.armed = fd, os.NewFile(uintptr(fd), "timerfd"), 0
		if t.waits == nil {
			t.waits = map[*timerWait]struct{}{}
		}
		go t.read(t.f)
	}
	w := &timerWait{at: at, c: make(chan bool, 1)}
	t.waits[w] = struct{}{}
	if t.armed == 0 || at < t.armed {
		if err := t.set(at); err != nil {
			delete(t.waits, w)
			return nil, nil, fmt.Errorf("arm a timer on clock %d for %d.%09ds: %w", t.clock, at/1e9, at%1e9, err)
		}
	}
	var once sync.Once
	stop := func() {
		once.Do(func() {
			t.mu.Lock()
			defer t.mu.Unlock()
			if _, ok := t.waits[w]; ok {
				delete(t.waits, w)
				if w.at == t.armed {
					t.rearm() // not for a wait that is gone
				}
			}
		})
	}
	return w.c, stop, nil
}

// set arms the timerfd for at, under t.mu. A set of the clock seen while
// arming (ECANCELED) wakes every wait on it, with true.
func (t *sharedTimer) set(at int64) error {
	err := unix.TimerfdSettime(t.fd, t.flags, &unix.ItimerSpec{Value: unix.NsecToTimespec(at)}, nil)
	if errors.Is(err, unix.ECANCELED) {
		t.wake(func(*timerWait) bool { return true }, true)
		return t.rearm()
	}
	if err == nil {
		t.armed = at
	}
	return err
}

// rearm arms the timerfd for the earliest wait, or disarms it when there
// is none, under t.mu.
func (t *sharedTimer) rearm() error {
	var next int64
	for w := range t.waits {
		if next == 0 || w.at < next {
			next = w.at
		}
	}
	if next == 0 {
		t.armed = 0
		return unix.TimerfdSettime(t.fd, 0, &unix.ItimerSpec{}, nil)
	}
	return t.set(next)
}

// wake sends set to each wait that due says is due, and takes it from the
// waits, under t.mu.
func (t *sharedTimer) wake(due func(*timerWait) bool, set bool) {
	for w := range t.waits {
		if due(w) {
			w.c <- set
			delete(t.waits, w)
		}
	}
}

// read reads the timer for as long as every runs. At each expiry it wakes
// the waits whose time has come, by the clock read then (an expiry can be
// read after the timer was armed for another wait: only the clock says
// which are due), and arms the timer for the next. A set of the clock
// (ECANCELED) wakes every wait, with true: "look at the clock again" is the
// safe answer to anything else a read could say too.
func (t *sharedTimer) read(f *os.File) {
	var ticks [8]byte
	for {
		_, err := f.Read(ticks[:])
		t.mu.Lock()
		if err == nil {
			var now unix.Timespec
			if unix.ClockGettime(int32(t.clock), &now) == nil {
				t.wake(func(w *timerWait) bool { return w.at <= now.Nano() }, false)
			}
		} else {
			t.wake(func(*timerWait) bool { return true }, true)
		}
		if err != nil && !errors.Is(err, unix.ECANCELED) {
			// Not expected of a timerfd: give it up; the next wait makes a
			// new one rather than have this goroutine spin.
			f.Close()
			t.f, t.armed = nil, 0
			t.mu.Unlock()
			return
		}
		_ = t.rearm() // a failure: the next wait arms it again
		t.mu.Unlock()
	}
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
