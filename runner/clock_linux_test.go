package runner

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/everycli/every/internal/testutil"
	"golang.org/x/sys/unix"
)

// waitFire waits (within waitBound) for c's one value and the wall-clock
// time it arrived.
func waitFire(t *testing.T, c <-chan bool) (bool, time.Time) {
	t.Helper()
	v, ok := testutil.Receive(c)
	if !ok {
		t.Fatalf("no wake-up within %v", waitBound)
	}
	return v, time.Now()
}

// A wake-up on the wall clock comes with false, and never before its time;
// one in the past comes at once, including at the epoch itself (a zero
// timerfd value would disarm the timer) and before it (which the kernel
// refuses).
func TestArmWallFires(t *testing.T) {
	for _, tc := range []struct {
		name string
		at   func(now time.Time) time.Time
	}{
		{"future", func(now time.Time) time.Time { return now.Add(50 * time.Millisecond) }},
		{"past", func(now time.Time) time.Time { return now.Add(-time.Hour) }},
		{"epoch", func(time.Time) time.Time { return time.Unix(0, 0) }},
		{"before epoch", func(time.Time) time.Time { return time.Time{} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Round(0): wall-clock readings, compared on the wall clock.
			at := tc.at(time.Now().Round(0))
			c, stop, err := armWall(at)
			if err != nil {
				t.Fatal(err)
			}
			defer stop()
			set, fired := waitFire(t, c)
			if set {
				t.Errorf("the wake-up for %s says the clock was set", at)
			}
			if fired.Round(0).Before(at) {
				t.Errorf("the wake-up for %s came %v early", at, at.Sub(fired.Round(0)))
			}
		})
	}
}

// A wake-up on the boot clock comes with false, not before d has passed;
// zero and negative d come at once (a zero relative timerfd value would
// disarm it).
func TestArmBootFires(t *testing.T) {
	for _, d := range []time.Duration{50 * time.Millisecond, 0, -time.Second} {
		start := time.Now()
		c, stop, err := armBoot(d)
		if err != nil {
			t.Fatal(err)
		}
		set, fired := waitFire(t, c)
		stop()
		if set {
			t.Errorf("armBoot(%v) says the clock was set", d)
		}
		// No suspend in a test: the boot and monotonic clocks run together.
		if elapsed := fired.Sub(start); elapsed < d {
			t.Errorf("armBoot(%v) fired after %v", d, elapsed)
		}
	}
}

// timerfds lists this process's timerfds: each one's /proc fdinfo, by fd.
func timerfds(t *testing.T) map[string]string {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	found := map[string]string{}
	for _, fd := range fds {
		link, err := os.Readlink(filepath.Join("/proc/self/fd", fd.Name()))
		if err != nil || link != "anon_inode:[timerfd]" {
			continue
		}
		info, err := os.ReadFile(filepath.Join("/proc/self/fdinfo", fd.Name()))
		if err != nil {
			t.Fatal(err)
		}
		found[fd.Name()] = string(info)
	}
	return found
}

// What no test can wait for (a suspend, in CI), the kernel shows: the wall
// wake-up is an absolute timer on CLOCK_REALTIME cancelled when the clock is
// set, the boot wake-up one on CLOCK_BOOTTIME, which counts suspend (absolute
// too: the timerfd is shared by the waits of many loops).
func TestArmClocks(t *testing.T) {
	for _, tc := range []struct {
		name string
		arm  func() (<-chan bool, func(), error)
		want []string
	}{
		{"wall", func() (<-chan bool, func(), error) { return armWall(time.Now().Add(time.Hour)) },
			[]string{"clockid: 0\n", "settime flags: 03\n"}}, // TFD_TIMER_ABSTIME|TFD_TIMER_CANCEL_ON_SET
		{"boot", func() (<-chan bool, func(), error) { return armBoot(time.Hour) },
			[]string{"clockid: 7\n", "settime flags: 01\n"}}, // TFD_TIMER_ABSTIME
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, stop, err := tc.arm()
			if err != nil {
				t.Fatal(err)
			}
			defer stop()
			// The armed one: the timerfd that is set (the long-lived one
			// of the other clock, if any, is disarmed).
			var armed []string
			for _, info := range timerfds(t) {
				if !strings.Contains(info, "it_value: (0, 0)") {
					armed = append(armed, info)
				}
			}
			if len(armed) != 1 {
				t.Fatalf("%d armed timerfds, want 1: %q", len(armed), armed)
			}
			for _, want := range tc.want {
				if !strings.Contains(armed[0], want) {
					t.Errorf("timerfd lacks %q:\n%s", want, armed[0])
				}
			}
		})
	}
}

// armsFor are the two kinds of wake-up, each armed for d from now.
var armsFor = map[string]func(d time.Duration) (<-chan bool, func(), error){
	"wall": func(d time.Duration) (<-chan bool, func(), error) { return armWall(time.Now().Add(d)) },
	"boot": armBoot,
}

// armedOnce arms a wait with arm and stops it, so that its clock's timerfd
// and goroutine exist, and returns the timerfds and goroutines then.
func armedOnce(t *testing.T, arm func(time.Duration) (<-chan bool, func(), error)) (fds map[string]string, goroutines int) {
	t.Helper()
	_, stop, err := arm(time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	stop()
	return timerfds(t), runtime.NumGoroutine()
}

// shared fails the test if more timerfds or goroutines exist now than fds
// and goroutines, taken before the waits under way were armed: a wait made
// a descriptor or a goroutine of its own.
func shared(t *testing.T, fds map[string]string, goroutines int) {
	t.Helper()
	if now := timerfds(t); len(now) != len(fds) {
		t.Fatalf("%d timerfds while armed, %d before: a new one per wait", len(now), len(fds))
	}
	if g := runtime.NumGoroutine(); g > goroutines {
		t.Fatalf("%d goroutines while armed, %d before: a new one per wait", g, goroutines)
	}
}

// The loop's waits, one at a time, all go to one long-lived timerfd per
// clock: arming again opens no descriptor and starts no goroutine.
func TestArmReusesTimerfd(t *testing.T) {
	for name, arm := range armsFor {
		t.Run(name, func(t *testing.T) {
			fds, goroutines := armedOnce(t, arm)
			for range 100 {
				c, stop, err := arm(0)
				if err != nil {
					t.Fatal(err)
				}
				shared(t, fds, goroutines)
				waitFire(t, c)
				stop()
			}
		})
	}
}

// Many waits at once (the loops of every jobs) share each clock's timerfd
// and its goroutine: each fires at its own time, never before, with false;
// those stopped first never fire; and a wait armed earlier than those
// waiting, or the stop of the earliest, moves the timer.
func TestArmManyWaitsShareATimer(t *testing.T) {
	for name, arm := range armsFor {
		t.Run(name, func(t *testing.T) {
			fds, goroutines := armedOnce(t, arm)
			const n = 60
			type wait struct {
				c     <-chan bool
				stop  func()
				start time.Time
				d     time.Duration
			}
			waits := make([]wait, n)
			// One for an hour first, then the others latest first: each
			// new wait is earlier than those armed (a timer left armed for
			// the hour would fire none of them within the test's bound).
			hour, stopHour, err := arm(time.Hour)
			if err != nil {
				t.Fatal(err)
			}
			for i := n - 1; i >= 0; i-- {
				d := time.Duration(i) * 5 * time.Millisecond
				start := time.Now()
				c, stop, err := arm(d)
				if err != nil {
					t.Fatal(err)
				}
				waits[i] = wait{c, stop, start, d}
			}
			shared(t, fds, goroutines)
			// The odd ones stop before their time; among them, the earliest
			// waiting at each moment.
			for i := 1; i < n; i += 2 {
				waits[i].stop()
			}
			for i := 0; i < n; i += 2 {
				w := waits[i]
				set, at := waitFire(t, w.c)
				w.stop()
				if set || at.Sub(w.start) < w.d {
					t.Errorf("wait %d of %v fired after %v (set %v)", i, w.d, at.Sub(w.start), set)
				}
			}
			for i := 1; i < n; i += 2 {
				if len(waits[i].c) != 0 {
					t.Errorf("wait %d fired after it was stopped", i)
				}
			}
			stopHour()
			if len(hour) != 0 {
				t.Error("the wait for an hour fired")
			}
			// None left waiting: the timer is disarmed.
			for fd, info := range timerfds(t) {
				if !strings.Contains(info, "it_value: (0, 0)") {
					t.Errorf("timerfd %s still armed with no wait:\n%s", fd, info)
				}
			}
		})
	}
}

// An expiry of a wait that stopped without reading it never reaches the
// next wait on the same timer: each wait fires at its own time, not before.
func TestArmReusedNotEarly(t *testing.T) {
	const d = 20 * time.Millisecond
	for i := range 50 {
		c, stop, err := armBoot(0)
		if err != nil {
			t.Fatal(err)
		}
		if i%2 == 0 {
			waitFire(t, c) // the expiry is being read: a read under way races the stop
		}
		stop()
		start := time.Now()
		c, stop, err = armBoot(d)
		if err != nil {
			t.Fatal(err)
		}
		set, at := waitFire(t, c)
		stop()
		if set || at.Sub(start) < d {
			t.Fatalf("wait %d of %v fired after %v (set %v): an earlier wait's expiry", i, d, at.Sub(start), set)
		}
	}
}

// A wait woken by a set of the wall clock leaves the long-lived timer fit
// for the next: that one fires at its own time, with false, and so do the
// hundred after it.
func TestArmWallReusedAfterClockSet(t *testing.T) {
	requireClockStep(t)
	c, stop, err := armWall(time.Now().Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	stepClock(t, time.Microsecond)
	stepClock(t, -time.Microsecond)
	if set, _ := waitFire(t, c); !set {
		t.Error("a clock set woke the wake-up with false, want true")
	}
	stop()
	for i := range 100 {
		at := time.Now().Add(time.Millisecond)
		c, stop, err := armWall(at)
		if err != nil {
			t.Fatal(err)
		}
		set, when := waitFire(t, c)
		stop()
		if set || when.Before(at) {
			t.Fatalf("wait %d after a clock set: fired at %v for %v, set %v", i, when, at, set)
		}
	}
}

// fdCount counts this process's open file descriptors.
func fdCount(t *testing.T) int {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(fds)
}

// A stopped wake-up never comes, and arming and stopping leaks neither file
// descriptors nor goroutines, whether stop comes before the wake-up, after
// it, or twice.
func TestArmStop(t *testing.T) {
	for name, arm := range armsFor {
		t.Run(name, func(t *testing.T) {
			const d = 50 * time.Millisecond
			c, stop, err := arm(d)
			if err != nil {
				t.Fatal(err)
			}
			stop()
			// The one negative wait: well past the target, nothing came.
			past := time.NewTimer(d + 200*time.Millisecond)
			defer past.Stop()
			select {
			case v := <-c:
				t.Fatalf("a stopped wake-up came (%v)", v)
			case <-past.C:
			}

			fds, goroutines := fdCount(t), runtime.NumGoroutine()
			for i := range 100 {
				// Half stopped while waiting, half after the wake-up came.
				wait := time.Hour
				if i%2 == 1 {
					wait = 0
				}
				c, stop, err := arm(wait)
				if err != nil {
					t.Fatal(err)
				}
				if wait == 0 {
					waitFire(t, c)
				}
				stop()
				stop()
			}
			if n := fdCount(t); n != fds {
				t.Errorf("%d file descriptors open after 100 arm/stop, %d before", n, fds)
			}
			settle(t, goroutines)
		})
	}
}

// settle waits (within waitBound) for the number of goroutines to come down
// to n, and fails the test if it does not: no wait leaves one behind.
func settle(t *testing.T, n int) {
	t.Helper()
	testutil.Eventually(func() bool { return runtime.NumGoroutine() <= n })
	if got := runtime.NumGoroutine(); got > n {
		t.Errorf("%d goroutines, %d before", got, n)
	}
}

// Once stop has returned, nothing more is sent, even when it races the
// wake-up: each channel holds, once the timer's reader has handled every
// expiry of them, what it held when stop returned.
func TestArmStopIsFinal(t *testing.T) {
	arms := map[string]func() (<-chan bool, func(), error){
		"wall": func() (<-chan bool, func(), error) { return armWall(time.Now()) },
		"boot": func() (<-chan bool, func(), error) { return armBoot(0) },
	}
	for name, arm := range arms {
		t.Run(name, func(t *testing.T) {
			_, stop, err := arm()
			if err != nil {
				t.Fatal(err)
			}
			stop() // the clock's long-lived timer and its goroutine exist from here
			goroutines := runtime.NumGoroutine()
			const n = 1000
			cs, held := make([]<-chan bool, n), make([]int, n)
			for i := range n {
				c, stop, err := arm()
				if err != nil {
					t.Fatal(err)
				}
				stop()
				cs[i], held[i] = c, len(c)
			}
			// The reader wakes the waits due in turn: once a wait armed
			// after them all has fired, it has handled theirs.
			last, stopLast, err := arm()
			if err != nil {
				t.Fatal(err)
			}
			waitFire(t, last)
			stopLast()
			settle(t, goroutines)
			late, fired := 0, 0
			for i, c := range cs {
				fired += len(c)
				if len(c) != held[i] {
					late++
				}
			}
			t.Logf("%d of %d wake-ups fired, the rest were stopped first", fired, n)
			if late > 0 {
				t.Errorf("%d of %d wake-ups came after stop returned", late, n)
			}
		})
	}
}

// stepClockEnv must be "1" for a test to step the host's clock. A step is
// the host's, not the test's: it wakes every wall-clock timer of every
// process on the machine, and shows in their logs. So it is never done by
// default, not even as root (as in CI), where it would be possible.
const stepClockEnv = "EVERY_TEST_STEP_CLOCK"

// requireClockStep skips a test that steps the host's clock unless
// EVERY_TEST_STEP_CLOCK=1; a test calls it before it arms anything.
func requireClockStep(t *testing.T) {
	t.Helper()
	if os.Getenv(stepClockEnv) != "1" {
		t.Skipf("steps the host's CLOCK_REALTIME (by 1µs and back): run with %s=1, as root, on a machine whose clock may be stepped", stepClockEnv)
	}
}

// stepClock steps CLOCK_REALTIME by exactly d, relative to itself
// (ADJ_SETOFFSET), so the size of the step does not depend on how long the
// call takes; it skips the test without the privilege to set the clock, or
// without EVERY_TEST_STEP_CLOCK=1.
func stepClock(t *testing.T, d time.Duration) {
	t.Helper()
	requireClockStep(t)
	if d.Abs() > time.Millisecond || d%time.Microsecond != 0 {
		t.Fatalf("refusing to step the system clock by %v: tests step it by whole microseconds, 1ms at most", d)
	}
	// The kernel wants a fraction in [0, 1s): -1µs is -1s + 999999µs.
	var step unix.Timeval
	if d >= 0 {
		step = unix.NsecToTimeval(d.Nanoseconds())
	} else {
		step = unix.NsecToTimeval((time.Second + d).Nanoseconds())
		step.Sec--
	}
	tx := unix.Timex{Modes: unix.ADJ_SETOFFSET, Time: step}
	if _, err := unix.ClockAdjtime(unix.CLOCK_REALTIME, &tx); err != nil {
		if errors.Is(err, unix.EPERM) {
			t.Skipf("cannot set the system clock here (%v): run as root to test clock sets", err)
		}
		t.Fatalf("step the clock by %v: %v", d, err)
	}
}

// A set of the wall clock (here by 1µs forward, then back) wakes a wall
// wake-up an hour away at once, with true.
func TestArmWallClockSet(t *testing.T) {
	requireClockStep(t)
	c, stop, err := armWall(time.Now().Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	stepClock(t, time.Microsecond)
	stepClock(t, -time.Microsecond)
	if set, _ := waitFire(t, c); !set {
		t.Error("a clock set woke the wake-up with false, want true")
	}
}

// The time spent suspended is never negative, never goes down, and is
// CLOCK_BOOTTIME - CLOCK_MONOTONIC, which the test reads itself: reading
// MONOTONIC on either side of BOOTTIME brackets the true offset.
func TestSuspended(t *testing.T) {
	first := suspended()
	var mono1, boot, mono2 unix.Timespec
	for _, r := range []struct {
		clock int32
		ts    *unix.Timespec
	}{{unix.CLOCK_MONOTONIC, &mono1}, {unix.CLOCK_BOOTTIME, &boot}, {unix.CLOCK_MONOTONIC, &mono2}} {
		if err := unix.ClockGettime(r.clock, r.ts); err != nil {
			t.Fatal(err)
		}
	}
	second := suspended()
	lo, hi := time.Duration(boot.Nano()-mono2.Nano()), time.Duration(boot.Nano()-mono1.Nano())
	t.Logf("suspended: %v, then %v; boot-mono in [%v, %v]", first, second, lo, hi)
	if first < 0 {
		t.Errorf("suspended() = %v, negative", first)
	}
	if second < first {
		t.Errorf("suspended() went down: %v, then %v", first, second)
	}
	if second > hi || second < lo-time.Millisecond {
		t.Errorf("suspended() = %v, want boot-mono, in [%v, %v]", second, lo, hi)
	}
}
