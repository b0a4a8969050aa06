package runner

// The events of every's log lines (the event field; docs/REFERENCE.md,
// Log events), and the reasons they give (the reason field, and the reason a skipped slot
// is told to the Observer with, as metrics counts it): declared once,
// snake_case tokens, so that a reader of the log (or a grep) can match
// them exactly.
const (
	EventStart      = "start"       // an attempt starts
	EventFinish     = "finish"      // a run, with its retries, ends
	EventRetry      = "retry"       // an attempt failed and another follows
	EventSkip       = "skip"        // a slot is not run
	EventTimeout    = "timeout"     // an attempt's --timeout expired
	EventKill       = "kill"        // SIGKILL went to the command
	EventCatchUp    = "catch_up"    // slots missed, or the grid starts anew or moves
	EventStop       = "stop"        // a stop signal came
	EventStateError = "state_error" // the state could not be used or written
	EventLockError  = "lock_error"  // the lock could not be taken, released or kept
	EventHook       = "hook"        // a hook ended
	EventReady      = "ready"       // once, at start: the schedule and its first slot
	EventOutput     = "output"      // a failed run's held output was cut (--quiet-success); every jobs: a line of a command's output (--log-format json)
	EventReload     = "reload"      // every jobs: the files read again (SIGHUP, --watch)
	EventJobEnded   = "job_end"     // every jobs: a job's loop ended by itself (--max-runs, --max-failures)
	EventPing       = "ping"        // a ping failed, was dropped, or went through again
)

// The reasons of skip, catch_up, timeout and kill lines.
const (
	ReasonOverrun = "overrun" // skip: a run went past slots, or a wake-up came late
	ReasonLocked  = "locked"  // skip: the lock was busy
	// ReasonConcurrency: skip: --max-concurrent commands were running until
	// the next slot (every jobs).
	ReasonConcurrency = "concurrency"
	ReasonDone        = "done"  // skip: the slot was run already
	ReasonState       = "state" // skip: the state could not be read
	ReasonStore       = "store" // skip: the store (Redis) could not be reached
	ReasonLock        = "lock"  // a skip told to the Observer: the lock could not be taken (logged as lock_error)

	ReasonScheduleChanged = "schedule_changed" // catch_up at start: the record is of another schedule
	ReasonClockMovedBack  = "clock_moved_back" // catch_up at start: the record's times lie ahead of the clock
	ReasonClock           = "clock"            // catch_up: the wall clock was set
	ReasonSuspend         = "suspend"          // catch_up: the system slept past slots
	ReasonDST             = "dst"              // catch_up: a DST change moved or chose a slot

	ReasonTimeout       = "timeout"        // timeout: --timeout expired
	ReasonKillAfter     = "kill_after"     // kill: --kill-after passed after the signal
	ReasonLeaseExpiring = "lease_expiring" // kill: the fleet lease is about to run out
	ReasonSecondSignal  = "second_signal"  // kill: a second stop signal came
	ReasonLeftBehind    = "left_behind"    // kill: processes outside the group were left behind
)
