// Package cli owns what people type and read of every's command line: argv
// split around the schedule (argv.go), the flags in one table and their
// checking into one value per command (options.go, statusflags.go,
// next.go), help, the version, the completion scripts, every(1) and
// docs/REFERENCE.md, all made from the same flag table. Nothing outside it
// sees urfave/cli.
package cli

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/everycli/every/internal/job"
	"github.com/everycli/every/internal/status"
	"github.com/everycli/every/internal/ui"
	"github.com/urfave/cli/v2"
)

// This file turns argv into one request, and holds the help's layout.

// usageText is every --help's usage: the synopsis, a description and the
// examples, each also a section of every(1) (man.go). Each example runs
// (cli_test.go, testdata/script/cli_examples.txtar).
const usageText = synopsis + "\n\n" + description + "\n\nExamples:\n" + examples

const synopsis = `every [OPTIONS] SCHEDULE [OPTIONS] [--] COMMAND [ARG...]
every status [--state-dir DIR... | --store URL] [--json] [NAME...]
every status --max-age D [--allow-inactive] [--nagios [--warn-age D]] [NAME...]
every next SCHEDULE [--align] [--tz ZONE] [-n N] [--from TIME]
every completion bash|zsh|fish
` + jobsSynopsis

const description = `SCHEDULE is a duration: 500ms, 30s, 90s, 1m30s, 2h, 1d. Runs start on a grid,
anchor + k*SCHEDULE, that neither run time nor lateness moves. With --align,
the grid is on the wall clock: every 15m --align runs at :00 :15 :30 :45.
SCHEDULE may also be a cron expression, as one argument: "*/5 * * * *",
@daily, "CRON_TZ=Europe/Berlin 30 2 * * *", 6 fields with seconds first, 7
with a year last, and supercronic's L, W, # and ? ("0 0 L * *": the last
day of the month); every next SCHEDULE shows when it runs. A run that
lasts past slots skips them; runs never overlap. A duration option D also
takes a number of seconds (--timeout 60); SCHEDULE does not. Every option
also reads EVERY_<NAME> from the environment (--kill-after:
EVERY_KILL_AFTER); the flag wins.`

const examples = `   every 90s --retries 5 --name ledger -- ./sync-ledger.sh --full
   every 500ms --timeout 2s -- curl -fsS http://localhost:8080/health
   every 1d --max-runs 1 --timeout 1h -- ./backup.sh    # one-shot, with a timeout
   every 10s -- sh -c 'date >> "$HOME/ticks"'
   every '30 2 * * *' --tz Europe/Berlin -- ./nightly.sh   # cron, DST done right
   every next '0 9 * * mon-fri' -n 3`

// Request is what argv asks for: a run, a listing (every status), the
// slots of a schedule (every next), the jobs of files (every jobs), or none
// of them, when help, the version or a completion script has been printed.
type Request struct {
	Run    *job.Settings
	Status *status.Settings
	Next   *NextSettings
	Jobs   *JobsSettings
}

// Parse turns argv into a request. Help, version and completion scripts go
// to stdout.
func Parse(args []string, stdout, stderr io.Writer) (Request, error) {
	var req Request
	inv, err := split(args, flagArity(runFlags))
	if err != nil {
		return req, err
	}
	if inv.completion {
		return req, completion(inv, stdout)
	}
	if inv.next {
		app := newApp("every next", "print the next slots of a schedule",
			"every next SCHEDULE [--align] [--tz ZONE] [-n N] [--from TIME]", nextFlags, stdout, stderr,
			func(c *cli.Context) error {
				ns, err := nextConfig(c, inv)
				req.Next = &ns
				return err
			})
		return req, app.Run(append(append([]string{"every next"}, inv.opts...), "--"))
	}
	if inv.jobs {
		app := newApp("every jobs", "run the jobs of jobs files, every lines and crontab lines, in one process; or check them", jobsUsage, jobsFlags, stdout, stderr,
			func(c *cli.Context) error {
				js, err := jobsConfig(c, inv)
				req.Jobs = &js
				return err
			})
		return req, app.Run(append(append([]string{"every jobs"}, inv.opts...), "--"))
	}
	if inv.status {
		app := newApp("every status", "list the jobs of state directories or of a fleet's store",
			"every status [--state-dir DIR... | --store URL] [--json | --max-age D [--allow-inactive] [--nagios [--warn-age D]]] [NAME...]", statusFlags, stdout, stderr,
			func(c *cli.Context) error {
				if c.Bool(namesFlag) {
					return status.PrintJobNames(stateDirs(c, inv), stdout)
				}
				ss, err := statusConfig(c, inv)
				req.Status = &ss
				return err
			})
		return req, app.Run(append(append([]string{"every status"}, inv.opts...), "--"))
	}
	if inv.version && !inv.help {
		_, err := fmt.Fprintln(stdout, version())
		return req, err
	}
	app := newApp("every", "run a command on a schedule, safely: cron + flock + timeout in one process",
		usageText, runFlags, stdout, stderr, func(c *cli.Context) error {
			st, err := config(c, inv)
			req.Run = &st
			return err
		})
	app.Metadata["options"] = lazyText(func() string { return optionsHelp(slices.Concat(runFlags, metaFlags), categories) })
	argv := append([]string{"every"}, inv.opts...)
	if !inv.help {
		argv = append(append(argv, "--", inv.schedule), inv.command...)
	}
	return req, app.Run(argv)
}

// helpTemplate is the help of every, every status and every next: urfave/cli's
// without its VERSION and GLOBAL OPTIONS, with the options as optionsHelp
// lists them.
const helpTemplate = `NAME:
   {{.Name}} - {{.Usage}}

USAGE:
   {{wrap .UsageText 3}}

OPTIONS:
{{index .Metadata "options"}}
`

// lazyText is text made when it is printed: the options' help, which only
// --help shows, is not laid out on every start.
type lazyText func() string

func (f lazyText) String() string { return f() }

// helpWidth is the width --help fills.
const helpWidth = 80

// optionsHelp lists flags for --help: under each category in turn (none
// when categories is nil), a flag a line, its usage wrapped to helpWidth,
// with its default once and its environment variable, as urfave/cli's
// FlagStringer words them (flagHelp).
func optionsHelp(flags []cli.Flag, categories []string) string {
	type entry struct{ names, usage string }
	byCat := map[string][]entry{}
	width := 0
	for _, f := range flags {
		if vf, ok := f.(cli.VisibleFlag); ok && !vf.IsVisible() {
			continue
		}
		names, usage, _ := strings.Cut(flagHelp(plain(f)), "\t")
		cat := ""
		if cf, ok := f.(cli.CategorizableFlag); ok && categories != nil {
			cat = cf.GetCategory()
		}
		byCat[cat] = append(byCat[cat], entry{names, usage})
		width = max(width, len(names))
	}
	var b strings.Builder
	for _, cat := range append([]string{""}, categories...) {
		if len(byCat[cat]) == 0 {
			continue
		}
		if cat != "" {
			fmt.Fprintf(&b, "\n   %s:\n", cat)
		}
		indent := 3 + width + 2
		for _, e := range byCat[cat] {
			lines := wrapWords(e.usage, helpWidth-indent)
			fmt.Fprintf(&b, "   %-*s  %s\n", width, e.names, lines[0])
			for _, l := range lines[1:] {
				fmt.Fprintf(&b, "%*s%s\n", indent, "", l)
			}
		}
	}
	return strings.TrimRight(b.String(), "\n")
}

// wrapWords breaks text into lines of at most width bytes, between words (a
// longer word stands on a line of its own).
func wrapWords(text string, width int) []string {
	var lines []string
	line := ""
	for _, w := range strings.Fields(text) {
		switch {
		case line == "":
			line = w
		case len(line)+1+len(w) <= width:
			line += " " + w
		default:
			lines = append(lines, line)
			line = w
		}
	}
	return append(lines, line)
}

// newApp makes a urfave/cli app that returns its errors instead of exiting:
// exit statuses are decided in main. The version is every's own (version.go).
func newApp(name, usage, usageText string, flags []cli.Flag, stdout, stderr io.Writer, action cli.ActionFunc) *cli.App {
	return &cli.App{
		Name:                  name,
		Usage:                 usage,
		UsageText:             usageText,
		Flags:                 flags,
		HideHelpCommand:       true,
		HideVersion:           true,
		CustomAppHelpTemplate: helpTemplate,
		Metadata:              map[string]any{"options": lazyText(func() string { return optionsHelp(append(slices.Clone(flags), metaFlags[0]), nil) })},
		Writer:                stdout,
		ErrWriter:             stderr,
		// The default handler calls os.Exit inside Run.
		ExitErrHandler: func(*cli.Context, error) {},
		OnUsageError: func(_ *cli.Context, err error, _ bool) error {
			return ui.Usagef("%s", err.Error())
		},
		Action: action,
	}
}
