package runner

import "time"

// Where the kernel cannot wake a wait when the wall clock is set (timerfd's
// TFD_TIMER_CANCEL_ON_SET is Linux's), nor count time spent suspended in a
// timer, the wake-ups of clock_other.go look at the clocks every
// recheckPeriod instead: a step of the wall clock, or a suspend (which moves
// the wall clock while the monotonic clock stands still), is then seen that
// much later at most. The decisions are these pure functions, shared by all
// systems, so that they are tested on Linux too.

// recheckPeriod bounds how late a wake-up hears of a step of the wall clock
// or of a resume from suspend.
const recheckPeriod = 10 * time.Second

// stepTolerance is how far the wall clock may drift from the monotonic clock
// between two looks without counting as set: NTP's slewing moves it by 0.5
// ms a second at most, 5 ms a period; a smaller step is not worth a wake-up,
// as a wait that ends early is resumed by the loop anyway.
const stepTolerance = 250 * time.Millisecond

// wallLook is the outcome of a look at the clocks for a wall-clock wake-up.
type wallLook int

const (
	wallWait    wallLook = iota // not yet: look again after the returned duration
	wallDue                     // the wall clock has reached the instant
	wallStepped                 // the wall clock was set (or the system slept) since the last look
)

// lookWall decides, for a wake-up at the wall-clock instant at, at a look
// where the wall clock reads now, and where, since the last look, the wall
// clock moved by wall and the monotonic clock by mono: due, stepped, or wait
// on, for the returned duration.
func lookWall(wall, mono time.Duration, now, at time.Time) (wallLook, time.Duration) {
	if !now.Before(at) {
		return wallDue, 0
	}
	if skew := wall - mono; skew > stepTolerance || skew < -stepTolerance {
		return wallStepped, 0
	}
	return wallWait, min(at.Sub(now), recheckPeriod)
}

// lookBoot decides, for a wake-up when a clock that counts suspends reads
// due, at a look where it reads now: whether it is due, and if not, how long
// to wait (on the monotonic clock, which may stand still in a suspend: hence
// no longer than recheckPeriod) before looking again.
func lookBoot(now, due time.Duration) (bool, time.Duration) {
	if now >= due {
		return true, 0
	}
	return false, min(due-now, recheckPeriod)
}

// raiseSuspended returns the largest suspend reading so far, given the
// previous largest hi and a new reading d (a difference of two clocks read
// one after the other, so a little low, and jittery by the clocks' tick):
// readings never go down, and rise by a millisecond at least, so that the
// loop does not take the jitter of the reads for a suspend.
func raiseSuspended(hi, d time.Duration) time.Duration {
	if d >= hi+time.Millisecond {
		return d
	}
	return hi
}
