package cli

import (
	"fmt"
	"os"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/everycli/every/internal/job"
	"github.com/everycli/every/internal/jobfiles"
	"github.com/everycli/every/internal/listen"
	"github.com/everycli/every/internal/ui"
	"github.com/everycli/every/runner"
	"github.com/everycli/every/schedule"
)

// minLockTTL is the shortest --lock-ttl: renewals go every third of it.
const minLockTTL = 100 * time.Millisecond

// config turns the parsed command line into a run's settings. Every value
// is checked, whether or not it matters in this invocation.
func config(c *cli.Context, inv invocation) (job.Settings, error) {
	o := &options{c: c, given: inv.given, from: inv.from, inFile: inv.inFile}
	sched, err := o.schedule(inv.schedule)
	if err == nil {
		err = comes(inv.schedule, sched, time.Now())
	}
	if err != nil {
		return job.Settings{}, err
	}
	st := job.Settings{
		Loop:          o.loop(inv.command, sched),
		LockTTL:       o.duration("lock-ttl"),
		Store:         c.String("store"),
		StateDir:      c.String("state-dir"),
		StatePath:     c.String("state"),
		LockPath:      c.String("lock"),
		NoState:       c.Bool("no-state"),
		NoLock:        c.Bool("no-lock"),
		Ping:          o.pingURL("ping"),
		PingTimeout:   o.duration("ping-timeout"),
		PingFailAfter: o.count("ping-fail-after"),
		MetricsFile:   c.String("metrics-file"),
		MetricsFlag:   o.label("metrics-file"),
		Listen:        c.String("listen"),
		ListenFlag:    o.label("listen"),
		LogFormat:     o.oneOf("log-format", logFormats...),
		LogLevel:      o.oneOf("log-level", logLevels...),
	}
	st.Quiet = c.Bool("quiet") || st.Loop.QuietSuccess
	if o.get("max-age") != "" {
		st.MaxAge = o.duration("max-age")
	}
	cfg := &st.Loop
	cfg.CatchUp, _ = runner.ParseCatchUp(o.oneOf("catch-up", catchUpPolicies...))
	if sched.Recorded() == schedule.RebootText {
		// Once, when every jobs starts: a one-shot.
		if cfg.MaxRuns > 1 && o.err == nil {
			o.err = ui.BadFlag(o.label("max-runs"), o.get("max-runs"), "@reboot runs once", "leave --max-runs out")
		}
		cfg.MaxRuns = 1
	}
	if err := o.check(st, sched, inv.schedule); err != nil {
		return st, err
	}
	cfg.Name = c.String("name")
	if cfg.Name == "" && !inv.given["name"] {
		cfg.Name = jobfiles.Name(inv.command)
	} else if err := jobfiles.CheckName(cfg.Name); err != nil {
		return st, err
	}
	cfg.Env = childEnv(os.Environ())
	return st, nil
}

// loop reads the options of the loop itself: when and how the command runs.
func (o *options) loop(command []string, sched schedule.Schedule) runner.Config {
	c := o.c
	return runner.Config{
		Command:      command,
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
}

// check returns the first error of the options read, or of values that
// parse but cannot be used: out of their range, or not with the schedule
// (given, as typed).
func (o *options) check(st job.Settings, sched schedule.Schedule, given string) error {
	cfg := st.Loop
	bad := func(name, reason, hint string) error { return ui.BadFlag(o.label(name), o.get(name), reason, hint) }
	const withinPeriod = "the jitter delays each run within its own period"
	switch {
	case o.err != nil:
		return o.err
	case cfg.Jitter >= sched.MinGap(time.Now()):
		if !sched.WallClock() {
			return bad("jitter", "must be shorter than the interval "+given, withinPeriod)
		}
		return bad("jitter", fmt.Sprintf("must be shorter than the %v between two slots of %q", sched.MinGap(time.Now()), given), withinPeriod)
	case st.LockTTL < minLockTTL:
		return bad("lock-ttl", "give a duration of at least 100ms, such as 30s", "")
	case cfg.OutputTail < 1:
		return bad("output-tail", "keep at least 1 byte of output, such as 10000", "")
	case cfg.OutputTail > runner.MaxOutputTail:
		return bad("output-tail", fmt.Sprintf("keep at most %d bytes (16 MiB) of output", runner.MaxOutputTail), "for all of it, have the command write a log file of its own")
	case cfg.Hooks.Timeout <= 0:
		return bad("hook-timeout", "give a hook time to run, such as 30s", "")
	case st.PingTimeout <= 0:
		return bad("ping-timeout", "give a ping time to answer, such as 5s", "")
	case st.PingFailAfter < 1:
		return bad("ping-fail-after", "give 1 or more runs", "")
	case st.StatePath != "" && st.StatePath == st.LockPath:
		return ui.Usagef("bad --state and --lock %q: they may not name the same file; give each its own", st.StatePath)
	case o.get("max-age") != "" && st.MaxAge == 0:
		return bad("max-age", "give an age such as 1h", "")
	}
	if st.Listen != "" {
		if o.inFile {
			return ui.Usagef("bad %s %q: a job's line has no server of its own; every jobs --listen ADDR serves all the jobs of its files", o.label("listen"), st.Listen)
		}
		if _, err := listen.ParseAddr(st.Listen); err != nil {
			return bad("listen", err.Error(), "")
		}
	}
	return o.checkStore(st)
}

// checkStore refuses --store where it would be ignored, or ignore another
// option: with --no-lock and --no-state it keeps nothing; with --lock or
// --state, the lock and the state are in the store, and the file named
// would never be used. The URL is not repeated (it may hold a password).
func (o *options) checkStore(st job.Settings) error {
	if st.Store == "" {
		return nil
	}
	store := o.label("store")
	switch {
	case st.NoLock && st.NoState:
		return ui.Usagef("bad %s with %s and %s: the store would keep neither the lock nor the state; drop %[1]s, or one of %[2]s and %[3]s",
			store, o.label("no-lock"), o.label("no-state"))
	case st.LockPath != "":
		return ui.Usagef("bad %s %q with %s: the lock is in the store, so the file would exclude nothing; drop %[1]s, or %[3]s for a lock on this host",
			o.label("lock"), st.LockPath, store)
	case st.StatePath != "":
		return ui.Usagef("bad %s %q with %s: the state is in the store, so the file would never be written; drop %[1]s, or %[3]s for a state on this host",
			o.label("state"), st.StatePath, store)
	}
	return nil
}
