// Command every runs a command on a schedule, safely: cron's job plus flock's
// and timeout's, in one process, down to sub-second intervals.
package main

import (
	"errors"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/everycli/every/internal/catch"
	"github.com/everycli/every/internal/cli"
	"github.com/everycli/every/internal/job"
	"github.com/everycli/every/internal/status"
	"github.com/everycli/every/internal/ui"
)

func main() {
	// The signals every handles were caught already, in package catch's
	// initialisation: before anything else every does.
	code, sig := run(os.Args[1:], os.Stderr)
	exit(code, sig)
}

// exit ends the process with code, or, after a stop signal, the way a
// cooperative Unix program does: by that signal, so a shell sees 128+n and
// systemd a clean stop. Where the signal cannot kill every, it exits 128+n
// itself: as PID 1 (the kernel ignores signals to a namespace's init that it
// has no handler for) and when the signal was ignored at start (Reset would
// ignore it again).
func exit(code int, sig os.Signal) {
	if s, ok := sig.(syscall.Signal); ok {
		code = 128 + int(s)
		if os.Getpid() != 1 && !catch.IgnoredAtStart[s] {
			signal.Reset(s)
			_ = syscall.Kill(os.Getpid(), s)
			// The signal is on its way, with its default action; this is a
			// fallback that should never be reached.
			time.Sleep(100 * time.Millisecond)
		}
	}
	os.Exit(code)
}

// run is every from argv to an exit status, or to the signal to exit by:
// argv becomes a request (cli.Parse), the request a run (job.Run), a
// listing (status.Run), the slots of a schedule (cli.PrintNext), the jobs
// of files checked (cli.CheckJobs) or run (cli.RunJobs), or text already
// printed (help, the version, a completion script).
func run(args []string, stderr io.Writer) (code int, stopSig os.Signal) {
	// What every prints itself stops at the first write error (cli.Output).
	out := cli.NewOutput(os.Stdout)
	req, err := cli.Parse(args, out, stderr)
	if err != nil || req.Run == nil && (req.Jobs == nil || req.Jobs.Check) {
		// No job to run: the signals go back to their defaults, and one
		// that came while every started ends it, as it would have.
		if sig := catch.Release(); sig != nil {
			return 0, sig
		}
	}
	switch {
	case out.Err() != nil:
		return out.End(0, stderr), nil
	case err != nil:
		ui.Report(stderr, err)
		if cli.NagiosAsked(args, os.Getenv) {
			// A monitoring plugin's usage error is UNKNOWN, in its one line.
			status.Unknown(out, err)
			return out.End(status.ExitUnknown, stderr), nil
		}
		return ui.ExitUsage, nil
	case req.Status != nil:
		return out.End(status.Run(*req.Status, out, stderr), stderr), nil
	case req.Next != nil:
		// out keeps the first write error; a usage error is a slot past
		// what every next can show, after those it could.
		if err := cli.PrintNext(*req.Next, out); out.Err() == nil && errors.As(err, new(ui.UsageError)) {
			ui.Report(stderr, err)
			return ui.ExitUsage, nil
		}
		return out.End(0, stderr), nil
	case req.Jobs != nil && req.Jobs.Check:
		return out.End(cli.CheckJobs(*req.Jobs, out, stderr), stderr), nil
	case req.Jobs != nil:
		return cli.RunJobs(*req.Jobs, catch.Signals, os.Stdout, stderr)
	case req.Run != nil:
		return job.Run(*req.Run, stderr)
	}
	return out.End(0, stderr), nil // --help, --version or a completion script, printed
}
