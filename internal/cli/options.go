package cli

import (
	"fmt"
	"net/url"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"
	"golang.org/x/sys/unix"

	"github.com/everycli/every/internal/ui"
	"github.com/everycli/every/ping"
	"github.com/everycli/every/runner"
	"github.com/everycli/every/schedule"
)

// This file owns the reading of the options: each value checked, in one
// message shape (ui.BadFlag), whether it came from its flag or from its
// environment variable.

// options reads the parsed options and checks each one.
type options struct {
	c     *cli.Context
	given map[string]bool // given on the command line, not from the environment
	// from names where the values not given came from, when not from
	// urfave/cli's reading of the environment: for a jobs file's line,
	// every's environment and the file's EVERY_<OPTION>= lines (jobs.go).
	from   map[string]string
	inFile bool // a line of a jobs file, where @reboot is a schedule
	err    error
}

// label names where an option's value came from, for messages: the flag
// ("--retries"), or the environment variable it was read from, or the line
// of a jobs file that set it.
func (o *options) label(name string) string {
	if l := o.from[name]; l != "" && !o.given[name] {
		return l
	}
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
		o.err = ui.BadFlag(o.label(name), o.get(name), "not a duration", "try 500ms, 30s, 1m30s or 1d")
	} else if d < 0 {
		o.err = ui.BadFlag(o.label(name), o.get(name), "must not be negative", "")
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
		o.err = ui.BadFlag(o.label(name), s, "not a whole number", "")
	} else if n < 0 {
		o.err = ui.BadFlag(o.label(name), s, "must not be negative", "")
	}
	return n
}

// streak reads a count of failed runs in a row: 1 or more, 1 being the
// first failure. 0 or less gets hint: 0 could be taken for "at every
// failure", which it is not.
func (o *options) streak(name, hint string) int {
	if n, err := strconv.Atoi(o.get(name)); err == nil && n < 1 && o.err == nil {
		o.err = ui.BadFlag(o.label(name), o.get(name), "give 1 or more failed runs in a row", hint)
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
		o.err = ui.BadFlag(o.label(name), s, "use one of "+strings.Join(allowed, ", "), "")
	}
	return s
}

func (o *options) signal(name string) syscall.Signal {
	sig, ok := parseSignal(o.get(name))
	if !ok && o.err == nil {
		o.err = ui.BadFlag(o.label(name), o.get(name), "not a signal", "try TERM, INT, HUP, KILL or a number")
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

// codes parses a list of failures (--retry-on); nil when not given.
func (o *options) codes(name string) *runner.Codes {
	s := o.get(name)
	if s == "" || o.err != nil {
		return nil
	}
	c, err := runner.ParseCodes(s)
	if err != nil {
		o.err = ui.BadFlag(o.label(name), s, err.Error(), "")
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
		o.err = ui.Usagef("bad %s: not a URL; give one such as https://hc-ping.com/UUID", o.label(name))
	case u.Scheme != "http" && u.Scheme != "https" || u.Host == "" || u.Opaque != "":
		o.err = ui.Usagef("bad %s: give an http or https URL with a host, such as https://hc-ping.com/UUID (got scheme %q, host %q)", o.label(name), u.Scheme, u.Host)
	case u.User != nil:
		o.err = ui.Usagef("bad %s: no user or password in the URL, please; the service takes the key in its path", o.label(name))
	case ping.CheckHost(u) != nil:
		o.err = ui.Usagef("bad %s: %v; give the check's ping URL, such as https://hc-ping.com/UUID", o.label(name), ping.CheckHost(u))
	}
	return u
}

// schedule parses the schedule with --align and --tz (its Recorded text
// names them).
func (o *options) schedule(given string) (schedule.Schedule, error) {
	opts := schedule.Options{Align: o.c.Bool("align")}
	if strings.EqualFold(given, schedule.RebootText) {
		return o.reboot(given, opts.Align)
	}
	if tz := o.get("tz"); tz != "" {
		loc, err := schedule.LoadZone(tz)
		if err != nil {
			return nil, ui.BadFlag(o.label("tz"), tz, "not an IANA zone name", "try Europe/Berlin or UTC")
		}
		opts.Zone = loc
	}
	s, err := schedule.Parse(given, opts)
	switch {
	case err == nil:
	case bareNumber(given) && strings.Trim(given, "0.") == "":
		return nil, ui.Usagef("bad schedule %q: a number alone is not a schedule; give a unit, as in 90s or 5m", given)
	case bareNumber(given):
		// Never seconds: an unquoted cron line (every 5 * * * * cmd) would
		// run the first file of the directory.
		return nil, ui.Usagef("bad schedule %q: a number alone is not a schedule; did you mean %ss?", given, given)
	case isCronField(given):
		return nil, ui.Usagef("bad schedule %q: a cron expression has 5 fields, as one argument; quote them all, as in '*/5 * * * *'", given)
	case opts.Align:
		return nil, ui.Usagef("bad schedule: %v", err) // the hint is in it
	case len(strings.Fields(given)) == 1:
		return nil, ui.Usagef("bad schedule: %v; try 500ms, 30s, 1m30s, 2h or 1d, or a cron expression", err)
	default:
		return nil, ui.Usagef("bad schedule: %v; see every --help", err)
	}
	return s, nil
}

// reboot returns the schedule of @reboot: a jobs file's job that runs once
// when every jobs starts. A standalone every has no start of its own to
// give it a meaning.
func (o *options) reboot(given string, align bool) (schedule.Schedule, error) {
	switch {
	case !o.inFile:
		return nil, ui.Usagef("bad schedule %q: it runs a job once when every jobs starts, so it is for a jobs file (every jobs FILE); to run a command once, give a schedule and --max-runs 1, as in every 1d --max-runs 1 -- CMD", given)
	case align:
		return nil, ui.Usagef("bad %s with schedule %q: @reboot has no slots to align; leave out --align", o.label("align"), given)
	}
	return schedule.Reboot(), nil
}

// comes refuses a schedule with no slot after t: a cron expression whose
// years have all passed, which would wait for ever.
func comes(given string, s schedule.Schedule, t time.Time) error {
	if last, over := schedule.Over(s, t); over {
		return ui.Usagef("bad schedule %q: it has no slot after %s, its years are past (its last was %s); give a year to come, or leave the year field out",
			given, t.UTC().Format(time.RFC3339), last.UTC().Format(time.RFC3339))
	}
	return nil
}
