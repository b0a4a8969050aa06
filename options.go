package main

import (
	"fmt"
	"io"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"
	"golang.org/x/sys/unix"

	"github.com/everycli/every/ping"
	"github.com/everycli/every/runner"
	"github.com/everycli/every/schedule"
)

// This file owns the options: their flags, their environment variables, and
// their checking into one settings value.

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
	stringFlag(catFleet, "store", "", "keep lock and state in Redis for a fleet: `URL` redis://[user:pass@]host:port/db[?prefix=every:], or rediss://"),
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
	describedDefault(stringFlag("", "state-dir", "", "list the jobs of `DIR`"), "as for running"),
	stringFlag("", "store", "", "list the jobs of the Redis at `URL`, as --store of a run"),
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

// options reads the parsed options and checks each one.
type options struct {
	c     *cli.Context
	given map[string]bool // given on the command line, not from the environment
	err   error
}

// label names where an option's value came from, for messages: the flag
// ("--retries"), or the environment variable it was read from.
func (o *options) label(name string) string {
	if !o.given[name] && os.Getenv(envName(name)) != "" {
		return envName(name)
	}
	return "--" + name
}

// get returns an option's value. An empty one, as from EVERY_RETRIES= in the
// environment, means the default, as an unset one does.
func (o *options) get(name string) string {
	if s := o.c.String(name); s != "" {
		return s
	}
	return defaults[name]
}

// defaults holds the options' default values, read before urfave/cli, which
// stores values from the environment in its flags, has run.
var defaults = func() map[string]string {
	m := map[string]string{}
	for _, f := range runFlags {
		if sf, ok := plain(f).(*cli.StringFlag); ok {
			m[sf.Name] = sf.Value
		}
	}
	return m
}()

// duration reads a duration option: every's duration syntax, or a bare
// number of seconds, as timeout(1), flock(1) and systemd take it
// (--timeout 60, --kill-after 2.5). A schedule takes no bare number.
func (o *options) duration(name string) time.Duration {
	if o.err != nil {
		return 0
	}
	d, err := optionDuration(o.get(name))
	if err != nil {
		o.err = usagef("bad %s: %v; try 500ms, 30s, 1m30s or 1d", o.label(name), err)
	} else if d < 0 {
		o.err = usagef("bad %s %q: must not be negative", o.label(name), o.get(name))
	}
	return d
}

// optionDuration parses the value of a duration option: a duration, or a
// number of seconds.
func optionDuration(s string) (time.Duration, error) {
	if bareNumber(strings.TrimLeft(s, "+-")) {
		d, err := schedule.ParseDuration(s + "s")
		if err != nil {
			return 0, fmt.Errorf("%q is not a duration", s) // out of range
		}
		return d, nil
	}
	return schedule.ParseDuration(s)
}

// bareNumber reports whether s is a decimal number without a unit: 60, 2.5, .5.
func bareNumber(s string) bool {
	digits, frac, _ := strings.Cut(s, ".")
	return digits+frac != "" && !strings.ContainsFunc(digits+frac, func(r rune) bool { return r < '0' || r > '9' })
}

func (o *options) count(name string) int {
	if o.err != nil {
		return 0
	}
	s := o.get(name)
	n, err := strconv.Atoi(s)
	if err != nil {
		o.err = usagef("bad %s %q: not a whole number", o.label(name), s)
	} else if n < 0 {
		o.err = usagef("bad %s %q: must not be negative", o.label(name), s)
	}
	return n
}

// streak reads a count of failed runs in a row: 1 or more, 1 being the
// first failure. 0 or less gets hint: 0 could be taken for "at every
// failure", which it is not.
func (o *options) streak(name, hint string) int {
	if n, err := strconv.Atoi(o.get(name)); err == nil && n < 1 && o.err == nil {
		o.err = usagef("bad %s %q: give 1 or more failed runs in a row; %s", o.label(name), o.get(name), hint)
		return n
	}
	return o.count(name)
}

func (o *options) oneOf(name string, allowed ...string) string {
	s := o.get(name)
	for _, a := range allowed {
		if s == a {
			return s
		}
	}
	if o.err == nil {
		o.err = usagef("bad %s %q: use one of %s", o.label(name), s, strings.Join(allowed, ", "))
	}
	return s
}

func (o *options) signal(name string) syscall.Signal {
	sig, ok := parseSignal(o.get(name))
	if !ok && o.err == nil {
		o.err = usagef("bad %s %q: not a signal; try TERM, INT, HUP, KILL or a number", o.label(name), o.get(name))
	}
	return sig
}

// parseSignal reads a signal by name, with or without "SIG", in any case, or
// by number (1 to 64).
func parseSignal(s string) (syscall.Signal, bool) {
	s = strings.ToUpper(s)
	if n, err := strconv.Atoi(s); err == nil {
		return syscall.Signal(n), n > 0 && n < 65
	}
	if !strings.HasPrefix(s, "SIG") {
		s = "SIG" + s
	}
	sig := unix.SignalNum(s)
	return sig, sig != 0
}

// settings is the command line, validated and typed: the loop's
// configuration and where its lock and state live.
type settings struct {
	cfg runner.Config

	store           string // --store URL; empty: files
	lockTTL         time.Duration
	stateDir        string // --state-dir as given; empty: the default
	statePath       string // --state as given
	lockPath        string // --lock as given
	noState, noLock bool

	ping          *url.URL // --ping; nil: none
	pingTimeout   time.Duration
	pingFailAfter int
	metricsFile   string // --metrics-file; empty: none
	metricsFlag   string // where metricsFile came from, for messages: the flag or its variable

	commandPath string // the command's executable, as found in PATH at start
}

// minLockTTL is the shortest --lock-ttl: renewals go every third of it.
const minLockTTL = 100 * time.Millisecond

// config turns the parsed command line into settings. Every value is
// checked, whether or not it matters in this invocation.
func config(c *cli.Context, inv invocation, stderr io.Writer) (settings, error) {
	o := &options{c: c, given: inv.given}
	sched, err := o.schedule(inv.schedule)
	if err != nil {
		return settings{}, err
	}
	cfg := runner.Config{
		Command:      inv.command,
		Schedule:     sched,
		Jitter:       o.duration("jitter"),
		Delay:        o.duration("delay"),
		Retries:      o.count("retries"),
		Backoff:      o.duration("backoff"),
		BackoffMax:   o.duration("backoff-max"),
		MaxFailures:  o.count("max-failures"),
		MaxRuns:      o.count("max-runs"),
		Timeout:      o.duration("timeout"),
		Signal:       o.signal("signal"),
		KillAfter:    o.duration("kill-after"),
		Stdin:        c.Bool("stdin"),
		CatchUpMax:   o.count("catch-up-max"),
		LockWait:     o.duration("lock-wait"),
		RetryOn:      runner.RetryPolicy{On: o.codes("retry-on"), Not: o.codes("no-retry-on")},
		OutputTail:   o.count("output-tail"),
		QuietSuccess: c.Bool("quiet-success"),
		Hooks: runner.Hooks{OnFailure: c.String("on-failure"), OnEachFailure: c.String("on-each-failure"),
			OnSuccess: c.String("on-success"), OnRecover: c.String("on-recover"), Timeout: o.duration("hook-timeout"),
			FailureAfter: o.streak("on-failure-after", "for a hook after every failed run, use --on-each-failure CMD")},
	}
	st := settings{
		lockTTL:       o.duration("lock-ttl"),
		store:         c.String("store"),
		stateDir:      c.String("state-dir"),
		statePath:     c.String("state"),
		lockPath:      c.String("lock"),
		noState:       c.Bool("no-state"),
		noLock:        c.Bool("no-lock"),
		ping:          o.pingURL("ping"),
		pingTimeout:   o.duration("ping-timeout"),
		pingFailAfter: o.count("ping-fail-after"),
		metricsFile:   c.String("metrics-file"),
		metricsFlag:   o.label("metrics-file"),
	}
	policy := o.oneOf("catch-up", catchUpPolicies...)
	cfg.CatchUp, _ = runner.ParseCatchUp(policy)
	format := o.oneOf("log-format", logFormats...)
	level := o.oneOf("log-level", logLevels...)
	switch {
	case o.err != nil:
		return st, o.err
	case cfg.Jitter >= sched.MinGap(time.Now()):
		if !sched.WallClock() {
			return st, usagef("bad %s %q: must be shorter than the interval %s; the jitter delays each run within its own period", o.label("jitter"), o.get("jitter"), inv.schedule)
		}
		return st, usagef("bad %s %q: must be shorter than the %v between two slots of %q; the jitter delays each run within its own period", o.label("jitter"), o.get("jitter"), sched.MinGap(time.Now()), inv.schedule)
	case st.lockTTL < minLockTTL:
		return st, usagef("bad %s %q: give a duration of at least 100ms, such as 30s", o.label("lock-ttl"), o.get("lock-ttl"))
	case cfg.OutputTail < 1:
		return st, usagef("bad %s %q: keep at least 1 byte of output, such as 10000", o.label("output-tail"), o.get("output-tail"))
	case cfg.OutputTail > runner.MaxOutputTail:
		return st, usagef("bad %s %q: keep at most %d bytes (16 MiB) of output; for all of it, have the command write a log file of its own", o.label("output-tail"), o.get("output-tail"), runner.MaxOutputTail)
	case cfg.Hooks.Timeout <= 0:
		return st, usagef("bad %s %q: give a hook time to run, such as 30s", o.label("hook-timeout"), o.get("hook-timeout"))
	case st.pingTimeout <= 0:
		return st, usagef("bad %s %q: give a ping time to answer, such as 5s", o.label("ping-timeout"), o.get("ping-timeout"))
	case st.pingFailAfter < 1:
		return st, usagef("bad %s %q: give 1 or more runs", o.label("ping-fail-after"), o.get("ping-fail-after"))
	case st.statePath != "" && st.statePath == st.lockPath:
		return st, usagef("bad --state and --lock %q: they may not name the same file; give each its own", st.statePath)
	}
	cfg.Name = c.String("name")
	if cfg.Name == "" && !inv.given["name"] {
		cfg.Name = jobName(inv.command)
	} else if err := checkName(cfg.Name); err != nil {
		return st, err
	}
	cfg.Logger = newLogger(stderr, format, level, c.Bool("quiet") || cfg.QuietSuccess).With("job", cfg.Name)
	st.cfg = cfg
	return st, nil
}

// codes parses a list of failures (--retry-on); nil when not given.
func (o *options) codes(name string) *runner.Codes {
	s := o.get(name)
	if s == "" || o.err != nil {
		return nil
	}
	c, err := runner.ParseCodes(s)
	if err != nil {
		o.err = usagef("bad %s: %v", o.label(name), err)
	}
	return &c
}

// pingURL parses --ping: an http or https URL with a host. The message of a
// bad one shows no more of it than its scheme and host: its path is a secret.
func (o *options) pingURL(name string) *url.URL {
	s := o.get(name)
	if s == "" || o.err != nil {
		return nil
	}
	u, err := url.Parse(s)
	switch {
	case err != nil:
		o.err = usagef("bad %s: not a URL; give one such as https://hc-ping.com/UUID", o.label(name))
	case u.Scheme != "http" && u.Scheme != "https" || u.Host == "" || u.Opaque != "":
		o.err = usagef("bad %s: give an http or https URL with a host, such as https://hc-ping.com/UUID (got scheme %q, host %q)", o.label(name), u.Scheme, u.Host)
	case u.User != nil:
		o.err = usagef("bad %s: no user or password in the URL, please; the service takes the key in its path", o.label(name))
	case ping.CheckHost(u) != nil:
		o.err = usagef("bad %s: %v; give the check's ping URL, such as https://hc-ping.com/UUID", o.label(name), ping.CheckHost(u))
	}
	return u
}

// schedule parses the schedule with --align and --tz (its Recorded text
// names them).
func (o *options) schedule(given string) (schedule.Schedule, error) {
	opts := schedule.Options{Align: o.c.Bool("align")}
	if tz := o.get("tz"); tz != "" {
		loc, err := schedule.LoadZone(tz)
		if err != nil {
			return nil, usagef("bad %s: %v", o.label("tz"), err)
		}
		opts.Zone = loc
	}
	s, err := schedule.Parse(given, opts)
	switch {
	case err == nil:
	case bareNumber(given) && strings.Trim(given, "0.") == "":
		return nil, usagef("bad schedule %q: a number alone is not a schedule; give a unit, as in 90s or 5m", given)
	case bareNumber(given):
		// Never seconds: an unquoted cron line (every 5 * * * * cmd) would
		// run the first file of the directory.
		return nil, usagef("bad schedule %q: a number alone is not a schedule; did you mean %ss?", given, given)
	case cronField().MatchString(given):
		return nil, usagef("bad schedule %q: a cron expression has 5 fields, as one argument; quote them all, as in '*/5 * * * *'", given)
	case opts.Align:
		return nil, usagef("bad schedule: %v", err) // the hint is in it
	case len(strings.Fields(given)) == 1:
		return nil, usagef("bad schedule: %v; try 500ms, 30s, 1m30s, 2h or 1d, or a cron expression", err)
	default:
		return nil, usagef("bad schedule: %v; see every --help", err)
	}
	return s, nil
}

// envVars are the environment variables the flags read.
func envVars(sets ...[]cli.Flag) map[string]bool {
	m := map[string]bool{}
	for _, flags := range sets {
		for _, f := range flags {
			if e, ok := f.(interface{ GetEnvVars() []string }); ok {
				for _, v := range e.GetEnvVars() {
					m[v] = true
				}
			}
		}
	}
	return m
}

// outputVars are what every sets for its command (SPEC section 10), and
// hookVars what it sets for its hooks besides (section 13); inherited ones
// (of an outer every, or of its hook) are dropped, so the command and its
// hooks see only this job's.
var (
	outputVars = []string{"EVERY_NAME", "EVERY_RUN", "EVERY_ATTEMPT", "EVERY_SLOT", "EVERY_LAST_SUCCESS", "EVERY_FENCING_TOKEN"}
	hookVars   = []string{"EVERY_RESULT", "EVERY_EXIT_CODE", "EVERY_SIGNAL", "EVERY_DURATION_MS", "EVERY_ATTEMPTS", "EVERY_CONSECUTIVE_FAILURES", "EVERY_OUTPUT"}
)

// childEnv is the environment the command inherits: every's own, less the
// options every reads and the outputs of an outer every.
//
// No variable every reads as an option is passed on (SPEC section 1), those
// of a run, of every status and of every next: an every inside a job takes
// nothing of the outer job's options, neither its identity (EVERY_STATE,
// EVERY_LOCK, EVERY_STATE_DIR, EVERY_STORE: it would find the outer job's
// lock busy or its slot done) nor how it is told and bounded (EVERY_PING,
// EVERY_ON_FAILURE, EVERY_METRICS_FILE, EVERY_TIMEOUT...: it would ping the
// outer check, run the outer hook and overwrite the outer metrics).
func childEnv(environ []string) []string {
	return withoutInputs(environ, runFlags, statusFlags, nextFlags)
}

// withoutInputs is environ less the variables the flags read (worked out
// from them, so that a new option's is never left out), and the outputs of
// an outer every.
func withoutInputs(environ []string, flags ...[]cli.Flag) []string {
	inputs := envVars(flags...)
	return slices.DeleteFunc(slices.Clone(environ), func(kv string) bool {
		k, _, _ := strings.Cut(kv, "=")
		return strings.HasPrefix(k, "EVERY_") &&
			(inputs[k] || slices.Contains(outputVars, k) || slices.Contains(hookVars, k))
	})
}
