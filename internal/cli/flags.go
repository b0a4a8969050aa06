package cli

import (
	"strings"
	"sync"

	"github.com/urfave/cli/v2"
)

// This file owns the flag table: every option, its category, its
// environment variable, its help; --help, every(1), docs/REFERENCE.md and
// the completions are all made from it.

// envName is the environment variable that every option also reads.
func envName(flag string) string {
	return "EVERY_" + strings.ToUpper(strings.ReplaceAll(flag, "-", "_"))
}

// The categories of every's options, in the order --help and every(1) show
// them.
const (
	catSchedule = "Schedule"
	catRetries  = "Retries"
	catTimeout  = "Timeout"
	catCommand  = "Command"
	catFiles    = "Lock & state"
	catFleet    = "Fleet"
	catMonitor  = "Hooks & monitoring"
	catLogs     = "Logs"
)

// categories is the order of the categories in --help and every(1).
var categories = []string{catSchedule, catRetries, catTimeout, catCommand, catFiles, catFleet, catMonitor, catLogs}

// stringFlag is an option with a value. Its default is shown once, by
// urfave/cli from DefaultText (unquoted): the usage text never repeats it.
func stringFlag(category, name, value, usage string) *stringOpt {
	return stringOf(&cli.StringFlag{Name: name, Value: value, DefaultText: value, Usage: usage, Category: category, EnvVars: []string{envName(name)}})
}

// describedDefault gives an option whose default is not a value (the local
// zone, a path that depends on the job) the words --help shows for it.
func describedDefault(f *stringOpt, text string) *stringOpt {
	f.DefaultText = text
	return f
}

// boolFlag is a switch. Its default, off, goes without saying: urfave/cli
// would append "(default: false)" to each one.
func boolFlag(category, name, usage string, aliases ...string) *boolOpt {
	f := &cli.BoolFlag{Name: name, Aliases: aliases, Usage: usage, Category: category, DisableDefaultText: true, EnvVars: []string{envName(name)}}
	return &boolOpt{f, f.Names()}
}

// stringOpt and boolOpt are urfave/cli's flags with their names worked out
// once. urfave/cli works a flag's names out again, with a regular
// expression, each time it looks a flag up, and parsing a command line
// looks each flag up among all the others: that was 70% of a parse (0.45 of
// 0.63 ms, go test -bench of parse). Where urfave/cli asks for the flag's
// own type (its help's default texts), plain gives the flag itself. Used by
// pointer, as urfave/cli's own flags are: comparable.
type (
	stringOpt struct {
		*cli.StringFlag
		names []string
	}
	boolOpt struct {
		*cli.BoolFlag
		names []string
	}
)

func stringOf(f *cli.StringFlag) *stringOpt { return &stringOpt{f, f.Names()} }

func (f *stringOpt) Names() []string { return f.names }
func (f *boolOpt) Names() []string   { return f.names }

// plain returns urfave/cli's flag inside f, or f.
func plain(f cli.Flag) cli.Flag {
	switch o := f.(type) {
	case *stringOpt:
		return o.StringFlag
	case *boolOpt:
		return o.BoolFlag
	}
	return f
}

// Every value is read as a string and parsed here, so that a bad one, from a
// flag or from the environment, gets the same one-line message.
var runFlags = []cli.Flag{
	boolFlag(catSchedule, "align", "put a duration on the wall clock: runs at whole multiples of it since local midnight (it must divide 24h)"),
	describedDefault(stringFlag(catSchedule, "tz", "", "`ZONE` of a cron expression's or --align's wall clock, an IANA name such as Europe/Berlin"), "local"),
	stringFlag(catSchedule, "jitter", "0", "delay each start by a random part of `D`; the grid does not move"),
	stringFlag(catSchedule, "delay", "0", "wait `D` before the first slot of a fresh start"),
	stringFlag(catSchedule, "catch-up", "once", "slots missed while not running: `POLICY` once, none or all"),
	stringFlag(catSchedule, "catch-up-max", "10", "with --catch-up all, run at most `N` missed slots"),
	describedDefault(stringFlag(catSchedule, "max-runs", "0", "exit after `N` runs, with the last run's status"), "0, never"),
	stringFlag(catRetries, "retries", "0", "retry a failed run up to `N` more times"),
	stringFlag(catRetries, "backoff", "1s", "first wait `D` between attempts, doubled each retry, +0-30% jitter"),
	stringFlag(catRetries, "backoff-max", "1m", "longest wait `D` between attempts"),
	stringFlag(catRetries, "retry-on", "", "retry only failed attempts in `CODES`: exit codes, ranges, timeout, signal (75,100-110,timeout)"),
	stringFlag(catRetries, "no-retry-on", "", "never retry failed attempts in `CODES`, as --retry-on lists them"),
	describedDefault(stringFlag(catRetries, "max-failures", "0", "exit 1 after `N` consecutive failed runs"), "0, never"),
	describedDefault(stringFlag(catTimeout, "timeout", "0", "stop an attempt after `D`; it counts as failed, status 124"), "0, never"),
	stringFlag(catTimeout, "signal", "TERM", "`SIG` sent to the command's process group on timeout"),
	stringFlag(catTimeout, "kill-after", "10s", "SIGKILL what is left `D` after a timeout or stop signal (0: never)"),
	// --name reads no environment variable: EVERY_NAME is what every sets for
	// its command, and an every inside a job must not take the outer job's name.
	stringOf(&cli.StringFlag{Name: "name", Category: catCommand, Usage: "job `NAME` for logs, lock and state", DefaultText: "command base name + hash of argv"}),
	boolFlag(catCommand, "stdin", "give the command every's stdin, not /dev/null"),
	boolFlag(catCommand, "quiet-success", "print a run's output only if it failed, as chronic(1) does (implies -q)"),
	stringFlag(catCommand, "output-tail", "10000", "keep the last `N` bytes (at most 16 MiB) of a run's output for --quiet-success, --ping and hooks"),
	describedDefault(stringFlag(catFiles, "state-dir", "", "`DIR` for state and lock files"), "$XDG_STATE_HOME/every, ~/.local/state/every, /var/lib/every for root"),
	describedDefault(stringFlag(catFiles, "state", "", "state file `PATH`"), "DIR/NAME.json"),
	boolFlag(catFiles, "no-state", "keep no state: no catch-up, no restart memory"),
	describedDefault(stringFlag(catFiles, "lock", "", "lock file `PATH`"), "DIR/NAME.lock"),
	boolFlag(catFiles, "no-lock", "take no lock: instances may run the command at the same time"),
	stringFlag(catFiles, "lock-wait", "0", "wait up to `D` for a busy lock, then skip the slot"),
	stringFlag(catFleet, "store", "", "keep lock and state in Redis or etcd for a fleet: `URL` redis://[user:pass@]host:port/db[?prefix=every:], rediss://, etcd://[user:pass@]host:port[,host:port...][/prefix], or etcds://"),
	stringFlag(catFleet, "lock-ttl", "30s", "with --store, the lock outlives a holder that stops renewing it by `D`"),
	stringFlag(catMonitor, "on-failure", "", "when runs fail, run `CMD` with sh -c, once per streak of failed runs (see --on-failure-after)"),
	stringFlag(catMonitor, "on-failure-after", "1", "run --on-failure at the `N`th failed run in a row; not again until a success"),
	stringFlag(catMonitor, "on-each-failure", "", "after every failed run, run `CMD` with sh -c"),
	stringFlag(catMonitor, "on-success", "", "after a successful run, run `CMD` with sh -c"),
	stringFlag(catMonitor, "on-recover", "", "after the first success that follows failures, run `CMD` with sh -c"),
	stringFlag(catMonitor, "hook-timeout", "30s", "stop a hook after `D`, as --timeout stops an attempt"),
	stringFlag(catMonitor, "ping", "", "ping `URL` at each run's start and end, by the healthchecks.io protocol"),
	stringFlag(catMonitor, "ping-timeout", "5s", "give a ping `D` to answer"),
	stringFlag(catMonitor, "ping-fail-after", "1", "ping a failure only once `N` runs in a row failed; before, /log"),
	stringFlag(catMonitor, "metrics-file", "", "write Prometheus metrics to `PATH`, for node_exporter's textfile collector"),
	stringFlag(catMonitor, "listen", "", "serve /metrics, /healthz and a page of the job over HTTP at `ADDR`: localhost:9746, :9746 (every interface) or unix:/path"),
	stringFlag(catMonitor, "max-age", "", "with --listen, /healthz fails once the last success is older than `D` (a job not run yet: its first slot)"),
	stringFlag(catLogs, "log-format", "text", "log as `FORMAT`: text (logfmt) or json"),
	stringFlag(catLogs, "log-level", "info", "log `LEVEL`: debug, info, warn or error"),
	boolFlag(catLogs, "quiet", "log warnings and errors only (--log-level warn)", "q"),
}

// metaFlags are every's --help and --version: not options of a run, but
// listed with them in --help, every(1) and the completions.
var metaFlags = []cli.Flag{
	&cli.BoolFlag{Name: "help", Aliases: []string{"h"}, Usage: "show help", DisableDefaultText: true},
	&cli.BoolFlag{Name: "version", Usage: "print the version, revision and Go version, and exit", DisableDefaultText: true},
}

// Values some options take, for the completions: they are the ones config
// accepts.
var (
	catchUpPolicies = []string{"once", "none", "all"}
	logFormats      = []string{"text", "json"}
	logLevels       = []string{"debug", "info", "warn", "error"}
	signalNames     = []string{"TERM", "INT", "HUP", "KILL", "QUIT", "USR1", "USR2"}
	outputModes     = []string{"prefixed", "raw"} // every jobs --output
)

// flagArity maps every spelling of the options to whether it takes a value.
func flagArity(flags []cli.Flag) map[string]bool {
	m := map[string]bool{"help": false, "h": false, "version": false}
	for _, f := range flags {
		_, isBool := plain(f).(*cli.BoolFlag)
		for _, n := range f.Names() {
			m[n] = !isBool
		}
	}
	return m
}

// canonical maps every spelling of the run options to the flag's name.
var canonical = sync.OnceValue(func() map[string]string {
	m := map[string]string{}
	for _, f := range runFlags {
		for _, n := range f.Names() {
			m[n] = f.Names()[0]
		}
	}
	return m
})

// statusFlags are the options of every status.
var statusFlags = []cli.Flag{
	describedDefault(stringFlag("", "state-dir", "", "list the jobs of `DIR` and of its subdirectories (a directory a job, as the systemd unit makes them); give it again to list more"), "as for running"),
	stringFlag("", "store", "", "list the jobs of the fleet's store at `URL` (Redis or etcd), as --store of a run"),
	boolFlag("", "json", "print a JSON array"),
	stringFlag("", "max-age", "", "exit 1 unless each job succeeded within `D` and has an every alive (a liveness probe)"),
	stringFlag("", "warn-age", "", "with --nagios: WARNING when a job's last success is older than `D`"),
	boolFlag("", "allow-inactive", "with --max-age: a job with no every alive may pass"),
	boolFlag("", "nagios", "print one monitoring-plugins line; exit 0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN"),
	// For the shell completions (completion.go): the job names, one a line.
	&cli.BoolFlag{Name: namesFlag, Hidden: true},
}

// nextFlags are the options of every next.
var nextFlags = []cli.Flag{
	boolFlag("", "align", "the duration is aligned on the wall clock, as with every --align"),
	describedDefault(stringFlag("", "tz", "", "`ZONE` of the wall clock, as with every --tz"), "local"),
	&cli.StringFlag{Name: "n", Value: "5", DefaultText: "5", Usage: "print `N` slots"},
	&cli.StringFlag{Name: "from", Usage: "the slots after `TIME`: RFC 3339, or a local time of --tz without the offset (2026-03-08T02:30)", DefaultText: "now"},
}
