// Package catch catches the signals every handles from its first moments:
// in its package initialisation, which runs as soon as os/signal is ready,
// before the initialisation of the heavier packages every links (the
// store clients, the help's templates) and before main. Without it, a
// SIGHUP, SIGUSR1 or SIGUSR2 that came while every was starting (10–50 ms
// on a loaded machine) would kill it by the runtime's default: a reload or
// a "run now" sent during a restart must never do that.
//
// What is caught waits in Signals. A job's loop reads it (docs/REFERENCE.md,
// Signals: HUP and USR2 are passed on or ignored, USR1 runs now, INT and TERM
// stop); every other use of every (status, next, help) gives the signals back
// to their defaults with Release, and dies of one that came meanwhile, as it
// would have.
package catch

import (
	"os"
	"os/signal"
	"syscall"
)

// handled are the signals a job's loop handles (runner.Config.Signals).
var handled = []os.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGUSR1, syscall.SIGUSR2}

var (
	// Signals receives the handled signals from every's start on.
	Signals = make(chan os.Signal, 8)
	// Stops receives SIGINT and SIGTERM too: a stop while a job is set
	// up, before its loop reads Signals, ends every at once.
	Stops = make(chan os.Signal, 1)
	// IgnoredAtStart records the stop signals every inherited as ignored
	// (a script's background job starts with SIGINT ignored), read before
	// they were caught.
	IgnoredAtStart = map[syscall.Signal]bool{}
)

func init() {
	for _, s := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		IgnoredAtStart[s] = signal.Ignored(s)
	}
	signal.Notify(Signals, handled...)
	signal.Notify(Stops, syscall.SIGINT, syscall.SIGTERM)
	// A write to a closed stderr (every ... 2>&1 | head) must not kill
	// every and, through its guard, its running command: with SIGPIPE
	// handled, the write fails with EPIPE instead and logging stops there.
	// Handled, not ignored: an ignored signal would stay ignored in the
	// command, which exec resets only for handled ones.
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
}

// Release gives the handled signals back to their default actions, for the
// uses of every that run no job, and returns the first of them that came
// before, if one did: every is to end by it, as it would have at once.
func Release() os.Signal {
	signal.Reset(handled...)
	select {
	case sig := <-Signals:
		return sig
	default:
		return nil
	}
}
