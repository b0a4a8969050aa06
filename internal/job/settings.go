// Package job turns the checked command line of a run (Settings) into the
// loop's runner.Config, in one place (Build), and runs it (Run). It owns
// what a job is beside its loop: its name, where its files go and their
// checks, the fleet's store, who is told of each run (pings, metrics, the
// --listen server), the
// logger, the runtime's tuning for a process that mostly sleeps, and the
// active marker that every status reads.
package job

import (
	"net/url"
	"time"

	"github.com/everycli/every/runner"
)

// Settings is a run's command line, checked and typed: values only, no
// open file, client or logger. Build makes the rest of the loop's
// configuration from it.
type Settings struct {
	// Loop holds the loop's options as parsed: the command, the schedule,
	// retries, timeouts, hooks, catch-up, the job's name and the command's
	// environment. Build fills in what a start-up makes (files, store,
	// observers, logger, signals, tuning).
	Loop runner.Config

	Store           string // --store URL; empty: files
	LockTTL         time.Duration
	StateDir        string // --state-dir as given; empty: the default
	StatePath       string // --state as given
	LockPath        string // --lock as given
	NoState, NoLock bool

	Ping          *url.URL // --ping; nil: none
	PingTimeout   time.Duration
	PingFailAfter int
	MetricsFile   string // --metrics-file; empty: none
	MetricsFlag   string // where MetricsFile came from, for messages: the flag or its variable
	// Listen is --listen's address (listen.ParseAddr, checked); empty:
	// no server, and nothing of it is made. ListenFlag is where it came
	// from, for messages.
	Listen, ListenFlag string
	// MaxAge is --max-age: the age past which the job's last success makes
	// it unhealthy for --listen's /healthz; 0: none. It means nothing else.
	MaxAge time.Duration

	LogFormat, LogLevel string // --log-format, --log-level, checked
	Quiet               bool   // -q, or --quiet-success: warnings and errors only
}
