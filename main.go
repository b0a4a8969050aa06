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

	"github.com/everycli/every/internal/cli"
	"github.com/everycli/every/internal/job"
	"github.com/everycli/every/internal/status"
	"github.com/everycli/every/internal/ui"
)

func main() {
	// A write to a closed stderr (every ... 2>&1 | head) must not kill every
	// and, through the parent-death signal, its running command: with SIGPIPE
	// handled, the write fails with EPIPE instead and logging stops there.
	// Handled, not ignored: an ignored signal would stay ignored in the
	// command, which exec resets only for handled ones.
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
	// Whether the stop signals were ignored when every started (a script's
	// background job starts with SIGINT ignored), read before Notify changes it.
	for _, s := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		ignoredAtStart[s] = signal.Ignored(s)
	}
	code, sig := run(os.Args[1:], os.Stderr)
	exit(code, sig)
}

// ignoredAtStart records the stop signals every inherited as ignored.
var ignoredAtStart = map[syscall.Signal]bool{}

// exit ends the process with code, or, after a stop signal, the way a
// cooperative Unix program does: by that signal, so a shell sees 128+n and
// systemd a clean stop. Where the signal cannot kill every, it exits 128+n
// itself: as PID 1 (the kernel ignores signals to a namespace's init that it
// has no handler for) and when the signal was ignored at start (Reset would
// ignore it again).
func exit(code int, sig os.Signal) {
	if s, ok := sig.(syscall.Signal); ok {
		code = 128 + int(s)
		if os.Getpid() != 1 && !ignoredAtStart[s] {
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
// listing (status.Run), the slots of a schedule (cli.PrintNext), or text
// already printed (help, the version, a completion script).
func run(args []string, stderr io.Writer) (code int, stopSig os.Signal) {
	// What every prints itself stops at the first write error (cli.Output).
	out := cli.NewOutput(os.Stdout)
	req, err := cli.Parse(args, out, stderr)
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
	case req.Run != nil:
		return job.Run(*req.Run, stderr)
	}
	return out.End(0, stderr), nil // --help, --version or a completion script, printed
}
