package runner

import (
	"errors"
	"syscall"

	"golang.org/x/sys/unix"
)

// Outcome is how an attempt or a run ended, spelled as the state file and the
// logs spell it.
type Outcome string

// The outcomes a run ends with (docs/REFERENCE.md, Environment:
// EVERY_RESULT).
const (
	Success     Outcome = "success"
	Failure     Outcome = "failure"
	Timeout     Outcome = "timeout"
	Interrupted Outcome = "interrupted"
	LostLock    Outcome = "lost_lock"
)

// ErrLostLock is the cause of an attempt's context when the run's lock was lost.
var ErrLostLock = errors.New("lock lost")

// Result is the end of one attempt.
type Result struct {
	Outcome Outcome
	// ExitCode is the status as a shell would report it: the child's code,
	// 128+n when a signal killed it, 124 when it timed out, 126/127 when it could
	// not be started.
	ExitCode int
	Signal   syscall.Signal // the signal that killed the child, if one did
	Err      error          // why the child could not be started, if it could not
}

// SignalName returns the conventional name of sig, such as "SIGTERM".
func SignalName(sig syscall.Signal) string {
	if name := unix.SignalName(sig); name != "" {
		return name
	}
	return sig.String()
}
