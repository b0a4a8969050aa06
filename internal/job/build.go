package job

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/everycli/every/internal/catch"
	"github.com/everycli/every/internal/ui"
	"github.com/everycli/every/runner"
)

// Run starts the job of st and runs its loop until it ends: every's exit
// status (docs/REFERENCE.md, Exit status), or the signal to exit by. What
// cannot start is one line on stderr.
func Run(st Settings, stderr io.Writer) (int, os.Signal) {
	type built struct {
		cfg   runner.Config
		flush func()
		err   error
	}
	// A stop that comes while the job is set up (a store's start-up check
	// may take its timeout) ends every at once, as before the loop, which
	// logs its stops, has started; other signals wait for the loop.
	c := make(chan built, 1)
	go func() {
		cfg, flush, err := Build(st, stderr)
		c <- built{cfg, flush, err}
	}()
	var b built
	select {
	case b = <-c:
	case sig := <-catch.Stops:
		return 0, sig
	}
	cfg, flush, err := b.cfg, b.flush, b.err
	if err != nil {
		ui.Report(stderr, err)
		return StartCode(err), nil
	}
	defer flush()
	return exitStatus(runner.Loop(context.Background(), cfg), stderr)
}

// startError is a start-up failure whose exit status is not 73: the
// command that cannot be run (126 or 127, as a shell says).
type startError struct {
	code int
	err  error
}

func (e startError) Error() string { return e.err.Error() }
func (e startError) Unwrap() error { return e.err }

// StartCode is the exit status of a failed start: 2 for bad usage found
// only now (two paths naming one file), the command's own 126 or 127, else
// 73: the job's files or store cannot be used.
func StartCode(err error) int {
	var se startError
	switch {
	case errors.As(err, new(ui.UsageError)):
		return ui.ExitUsage
	case errors.As(err, &se):
		return se.code
	}
	return ui.ExitCantCreate
}

// Build makes the loop's whole configuration from st, the one place that
// does: it finds the command, sets up and checks the job's files or its
// fleet store, its observers and the active marker, and the runtime's
// tuning, and hands the loop every's signals, caught since its start
// (package catch). done flushes what the observers have left to send, and
// takes back a fleet job's announcement in the store. Nothing has run when
// it fails.
func Build(st Settings, stderr io.Writer) (cfg runner.Config, done func(), err error) {
	if cfg, done, err = BuildJob(st, stderr); err == nil {
		sleeper(&cfg, os.Getenv)
	}
	return cfg, done, err
}

// BuildJob is Build without the runtime's tuning for a process that runs
// one loop (sleeper): every jobs builds many loops, and tunes the process
// once (TuneProcess).
func BuildJob(st Settings, stderr io.Writer) (cfg runner.Config, done func(), err error) {
	cfg = st.Loop
	cfg.Logger = NewLogger(stderr, st.LogFormat, st.LogLevel, st.Quiet).With("job", cfg.Name)
	path, err := runner.LookPath(cfg.Command[0], cfg.Env)
	if err != nil {
		return cfg, nil, startError{runner.StartErrorCode(err), fmt.Errorf("cannot run %q: %w", cfg.Command[0], errors.Unwrap(err))}
	}
	cfg.Host, _ = os.Hostname()
	cfg.PID = os.Getpid()
	mark, leave, err := jobFiles(st, &cfg, path)
	if err != nil {
		return cfg, nil, err
	}
	obs, done, err := observers(st, &cfg)
	if err != nil {
		if leave != nil {
			leave()
		}
		return cfg, nil, err
	}
	if leave != nil {
		flush := done
		done = func() { flush(); leave() }
	}
	// The active marker is told with the others, last.
	switch {
	case obs != nil && mark != nil:
		cfg.Observer = runner.Observers{obs, mark}
	case obs != nil:
		cfg.Observer = obs
	case mark != nil:
		cfg.Observer = mark
	}
	cfg.Signals = catch.Signals
	return cfg, done, nil
}

// exitStatus turns the end of the loop into every's exit status
// (docs/REFERENCE.md, Exit status), or the signal to exit by.
func exitStatus(end runner.Exit, stderr io.Writer) (int, os.Signal) {
	switch end.Reason {
	case runner.Stopped:
		return 0, end.Signal
	case runner.MaxRuns:
		return end.Last.ExitCode, nil
	case runner.MaxFailures:
		return ui.ExitMaxFailures, nil
	case runner.LockBusy:
		return ui.ExitLockBusy, nil
	case runner.SlotDone:
		return 0, nil // a one-shot whose slot another run took care of
	}
	ui.Report(stderr, fmt.Errorf("internal error: loop ended for no known reason %d", end.Reason))
	return ui.ExitInternal, nil
}
