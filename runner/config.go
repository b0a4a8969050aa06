package runner

// This file holds the loop's configuration: everything the loop needs,
// validated and typed.

import (
	"log/slog"
	"os"
	"syscall"
	"time"

	"github.com/everycli/every/lock"
	"github.com/everycli/every/schedule"
	"github.com/everycli/every/state"
)

// Config is everything the loop needs, validated and typed. Zero values mean
// "none" (no timeout, no jitter, no limit), except where a field says otherwise.
type Config struct {
	Name    string
	Command []string // argv; Command[0] is looked up in PATH when it has no slash
	// Schedule is when the slots are: on the wall clock (a cron expression,
	// an aligned duration), or a grid started at once and kept on the
	// monotonic clock. Its Recorded text is the record's.
	Schedule schedule.Schedule

	Jitter time.Duration // each start is delayed by a uniform random part of it
	Delay  time.Duration // wait before the first slot of a fresh start

	Retries     int
	RetryOn     RetryPolicy // which failed attempts are retried
	Backoff     time.Duration
	BackoffMax  time.Duration
	MaxFailures int // consecutive failed runs before the loop ends; 0: never
	MaxRuns     int // runs before the loop ends; 0: never

	Timeout   time.Duration  // per attempt
	Signal    syscall.Signal // sent to the process group on timeout
	KillAfter time.Duration  // from that signal to SIGKILL

	Stdin bool     // pass every's stdin on instead of /dev/null
	Env   []string // the environment the child inherits

	// OutputTail is how many bytes of the command's output a run keeps when
	// a feature needs them (QuietSuccess, Hooks, an Observer that asks for
	// them); then stdout and stderr go through pipes. Otherwise the command
	// writes to every's own descriptors.
	OutputTail   int
	QuietSuccess bool // hold a run's output; print it only if the run failed
	// Lines, when set, takes the command's output line by line (every jobs:
	// each line told apart by its job) instead of every's own stdout and
	// stderr.
	Lines LineSink
	// Gate, when set, bounds the commands running at once across the loops
	// sharing it (every jobs --max-concurrent).
	Gate     Gate
	Hooks    Hooks    // commands run after a run, by its result
	Observer Observer // told of each run's start and end (pings, metrics); nil: none

	CatchUp CatchUp // what to do at start with slots missed while nothing ran
	// StartAnew starts the grid anew whatever the record says (every jobs'
	// @reboot: one run at each start).
	StartAnew  bool
	CatchUpMax int // the most slots CatchUpAll runs

	Lock     lock.Locker   // taken for each run with its retries; nil: none
	LockWait time.Duration // how long to wait for a busy lock before skipping
	Store    state.Store   // the job's record; nil: none kept
	Host     string        // this host's name, for the record
	PID      int           // this process's pid, for the record

	Logger *slog.Logger
	// Signals are every's own signals, as main receives them.
	Signals <-chan os.Signal
	// Retire, once closed, ends the loop after the run under way, if any,
	// with no slot more (every jobs: a job removed or changed by a reload).
	Retire <-chan struct{}
	// Exec runs one attempt; nil means Exec (a real process).
	Exec ExecFunc
	// Rand returns a number in [0, 1) for jitter; nil means math/rand/v2.
	Rand func() float64
	// SleepUntil sleeps the last moments before a slot, precisely; nil means
	// clock_nanosleep on the monotonic clock. (Tests on a fake clock give
	// time.Sleep.)
	SleepUntil func(time.Time)
	// Clock arms the waits for slots and tells of suspends; nil means the
	// system's. (Tests on a fake clock give one of Go timers.)
	Clock Clock
	// Release, when set, is called before each wait for a slot at least
	// ReleaseAfter away: the process gives back what it can of its memory
	// (freed heap, code pages) while it sleeps for long, and pays for it once
	// per long wait only (a page needed again comes back at its next use).
	// until is when the wait ends (on the monotonic clock): a process of
	// many loops gives its memory back once none has a slot nearer.
	Release      func(until time.Time)
	ReleaseAfter time.Duration
}
