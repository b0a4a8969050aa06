package main

import (
	"fmt"
	"io"
	"log/slog"
	"runtime/debug"

	"github.com/urfave/cli/v2"
)

// This file owns what people type and read of every's command line: argv
// becomes one validated request, a run's settings or a listing's, and the
// "every: ..." error lines are printed here. Nothing below it sees urfave/cli.

const usageText = `every [OPTIONS] SCHEDULE [OPTIONS] [--] COMMAND [ARG...]
every status [--state-dir DIR | --store URL] [--json] [NAME...]
every status --max-age D [--allow-inactive] [--nagios [--warn-age D]] [NAME...]
every next SCHEDULE [--align] [--tz ZONE] [-n N] [--from TIME]

SCHEDULE is a duration: 500ms, 30s, 90s, 1m30s, 2h, 1d. Runs start on a grid,
anchor + k*SCHEDULE, that neither run time nor lateness moves. With --align,
the grid is on the wall clock: every 15m --align runs at :00 :15 :30 :45.
SCHEDULE may also be a cron expression, as one argument: "*/5 * * * *",
6 fields with seconds first, @daily, "CRON_TZ=Europe/Berlin 30 2 * * *";
every next SCHEDULE shows when it runs. A run that lasts past slots skips
them; runs never overlap. Every option also reads EVERY_<NAME> from the
environment (--kill-after: EVERY_KILL_AFTER); the flag wins.

Examples:
   every 90s --retries 5 -- ./sync-ledger.sh --full
   every 500ms --timeout 2s -- curl -fsS http://localhost:8080/health
   every 1d --max-runs 1 --timeout 1h -- ./backup.sh    # one-shot, with a timeout
   every 10s -- sh -c 'date >> /tmp/ticks'
   every '30 2 * * *' --tz Europe/Berlin -- ./nightly.sh   # cron, DST done right
   every next '0 9 * * mon-fri' -n 3`

// newLogger builds the one logger of the process: logfmt or JSON on stderr.
func newLogger(w io.Writer, format, level string, quiet bool) *slog.Logger {
	var lv slog.Level
	_ = lv.UnmarshalText([]byte(level)) // checked in config
	if quiet && lv < slog.LevelWarn {
		lv = slog.LevelWarn
	}
	opts := &slog.HandlerOptions{Level: lv}
	if format == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

// version is the module version go install recorded, or "devel".
func version() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "devel"
}

// request is what argv asks for: a run, a listing (every status), or
// neither, when --help or --version has been printed.
type request struct {
	run    *settings
	status *statusSettings
	next   *nextSettings
}

// parse turns argv into a request. Help and version go to stdout.
func parse(args []string, stdout, stderr io.Writer) (request, error) {
	var req request
	inv, err := split(args, flagArity(runFlags))
	if err != nil {
		return req, err
	}
	if inv.next {
		app := newApp("every next", "print the next slots of a schedule",
			"every next SCHEDULE [--align] [--tz ZONE] [-n N] [--from TIME]", nextFlags, stdout, stderr,
			func(c *cli.Context) error {
				ns, err := nextConfig(c, inv)
				req.next = &ns
				return err
			})
		app.HideVersion = true
		return req, app.Run(append(append([]string{"every next"}, inv.opts...), "--"))
	}
	if inv.status {
		app := newApp("every status", "list the jobs of a state directory or a fleet's Redis",
			"every status [--state-dir DIR | --store URL] [--json | --max-age D [--allow-inactive] [--nagios [--warn-age D]]] [NAME...]", statusFlags, stdout, stderr,
			func(c *cli.Context) error {
				ss, err := statusConfig(c, inv)
				req.status = &ss
				return err
			})
		app.HideVersion = true
		return req, app.Run(append(append([]string{"every status"}, inv.opts...), "--"))
	}
	cli.VersionFlag = &cli.BoolFlag{Name: "version", Usage: "print the version and exit"}
	app := newApp("every", "run a command on a schedule, safely: cron + flock + timeout in one process",
		usageText, runFlags, stdout, stderr, func(c *cli.Context) error {
			st, err := config(c, inv, stderr)
			req.run = &st
			return err
		})
	app.Version = version()
	argv := append([]string{"every"}, inv.opts...)
	if !inv.help {
		argv = append(append(argv, "--", inv.schedule), inv.command...)
	}
	return req, app.Run(argv)
}

// newApp makes a urfave/cli app that returns its errors instead of exiting:
// exit statuses are decided in main.
func newApp(name, usage, usageText string, flags []cli.Flag, stdout, stderr io.Writer, action cli.ActionFunc) *cli.App {
	return &cli.App{
		Name:            name,
		Usage:           usage,
		UsageText:       usageText,
		Flags:           flags,
		HideHelpCommand: true,
		Writer:          stdout,
		ErrWriter:       stderr,
		// The default handler calls os.Exit inside Run.
		ExitErrHandler: func(*cli.Context, error) {},
		OnUsageError: func(_ *cli.Context, err error, _ bool) error {
			return usageError{err.Error()}
		},
		Action: action,
	}
}

// report prints an error as every's one line: "every: " and the message,
// which names the bad value and ends with what to do.
func report(stderr io.Writer, err error) {
	fmt.Fprintf(stderr, "every: %v\n", err)
}

// usageError is bad usage: one line naming the bad value and what to do. It
// exits 2 before anything runs or any file is written.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error {
	return usageError{fmt.Sprintf(format, args...)}
}
