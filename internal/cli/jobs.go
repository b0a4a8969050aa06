package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/everycli/every/internal/job"
	"github.com/everycli/every/internal/jobs"
	"github.com/everycli/every/internal/jobsfile"
	"github.com/everycli/every/internal/listen"
	"github.com/everycli/every/internal/ui"
	"github.com/everycli/every/schedule"
)

// This file owns every jobs: its command line, the jobs of its files made
// runs' settings with the same flag table and checks as a standalone every
// (LoadJobs, which the supervisor runs), and every jobs --check, which
// lists them.

// JobsSettings is every jobs's command line, checked.
type JobsSettings struct {
	// Check asks for the jobs to be listed, not run.
	Check bool
	// Paths are the files and directories of jobs, as given.
	Paths []string
	from  time.Time // --check's next slots are after it
	// MaxConcurrent bounds the commands running at once; 0: no bound.
	MaxConcurrent int
	Raw           bool   // --output raw
	Watch         bool   // --watch: a change of the files reloads them
	Listen        string // --listen: the address of the jobs' server
	// LogFormat, LogLevel and Quiet are every jobs' own log's; given
	// (logGiven), every job's too.
	LogFormat, LogLevel string
	Quiet, logGiven     bool
}

// jobsFlags are the options of every jobs. They read no environment
// variable but EVERY_LISTEN, which no job takes: the other EVERY_<NAME>
// are the jobs' options.
var jobsFlags = []cli.Flag{
	&cli.BoolFlag{Name: "check", Usage: "check the files and list their jobs (name, schedule, next slot, command); exit 2 on any bad line", DisableDefaultText: true},
	&cli.StringFlag{Name: "from", Usage: "with --check, show the next slot after `TIME`: RFC 3339, or a local time without the offset (2026-03-08T02:30)", DefaultText: "now"},
	&cli.IntFlag{Name: "max-concurrent", Usage: "run at most `N` commands at once; a slot that finds N running waits for a place until its next slot, else is skipped (reason=concurrency)", DefaultText: "no bound"},
	&cli.StringFlag{Name: "output", Value: "prefixed", DefaultText: "prefixed", Usage: "the commands' output, `MODE`: prefixed, each line as NAME | LINE on every's stream of the same name (event=output records with --log-format json), or raw, passed through as it comes"},
	&cli.StringFlag{Name: "listen", EnvVars: []string{envName("listen")}, Usage: "serve /metrics, /healthz and a status page of every job on `ADDR` (host:port, :port or unix:/path); in use: exit 73"},
	&cli.BoolFlag{Name: "watch", Usage: "read the files again within a second of a change (written, replaced, removed, a ConfigMap's swap), as SIGHUP does", DisableDefaultText: true},
	&cli.StringFlag{Name: "log-format", Value: "text", DefaultText: "text", Usage: "log as `FORMAT`: text (logfmt) or json; given, every job's log too"},
	&cli.StringFlag{Name: "log-level", Value: "info", DefaultText: "info", Usage: "log `LEVEL`: debug, info, warn or error; given, every job's log too"},
	&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "log warnings and errors only; given, every job's log too", DisableDefaultText: true},
}

// jobsSynopsis is every jobs's line of the synopsis.
const jobsSynopsis = "every jobs [--max-concurrent N] [--output prefixed|raw] [--watch] [--listen ADDR] FILE|DIR...\nevery jobs --check [--from TIME] FILE|DIR..."

// jobsDoc says what every jobs does, in --help, every(1) and the reference.
const jobsDoc = "Reads jobs files: one job a line, an every command line (`every 90s --retries 5 -- ./sync.sh`, words split as sh splits them, nothing expanded) or a crontab line (5 time fields, or 7 with seconds first and a year last, or a nickname, `@reboot` too, then a command for `/bin/sh -c`, `%` not special), below `NAME=value` lines that set the environment, an option's default (`EVERY_TIMEOUT=60s`) or the cron lines' zone (`CRON_TZ=`) for the jobs below them in the file; a directory is its `*.tab` files, in name order. Each job is checked as a standalone every of its line is, and has the name that every would give it; a crontab line's is its command's base name and a hash of its schedule and command. A crontab line of 6 time fields (read two ways by crons), a random value (`6~15`) or a user column is refused, and `MAILTO` is not read (a warning). With `--check`, prints each job's name, schedule, next slot and command (secrets in URLs masked) and exits 0; any bad line is `FILE:LINE: what, and the fix` on stderr, all of them, and exit 2. Without `--check`, runs the jobs until SIGTERM or SIGINT, each as a standalone every of its line would run it (its grid, lock, state, retries, timeout, catch-up, hooks, pings, metrics), each command in its process group, its output line by line as `NAME | LINE`; SIGUSR1 runs every job now, SIGUSR2 goes to the commands running, SIGHUP (or a change, with `--watch`) reads the files again: an unchanged job is left alone, a changed one takes its new definition after its run under way, a removed one ends after its run, a new one starts, and a file with bad lines changes nothing (each bad line logged)."

// jobsUsage is every jobs --help's usage.
const jobsUsage = jobsSynopsis + "\n\n" + "Runs files of jobs in one process, or checks them (--check), one job a\n" +
	"line: every command lines and crontab lines, with NAME=value lines above\n" +
	"them (the environment, EVERY_<OPTION>= defaults, CRON_TZ=). A DIR is its\n" +
	"*.tab files. Each output line is NAME | LINE; SIGHUP reads the files again.\n" +
	"See every(1) and docs/GUIDE.md, Many jobs: every jobs.\n\nExamples:\n" +
	"   every jobs --check /etc/every/jobs.tab\n" +
	"   every jobs --watch --max-concurrent 4 /etc/every/jobs.d"

// jobsConfig checks every jobs's command line.
func jobsConfig(c *cli.Context, inv invocation) (JobsSettings, error) {
	js := JobsSettings{Check: c.Bool("check"), Paths: inv.names, from: time.Now()}
	if from := c.String("from"); from != "" {
		if !js.Check {
			return js, ui.Usagef("bad --from %q: it is for --check; give --check too", from)
		}
		t, err := parseFrom(from, time.Local)
		if err != nil {
			return js, ui.BadFlag("--from", from, "give a time in RFC 3339, such as 2026-03-08T00:00:00-05:00", "or a local time without the offset, such as 2026-03-08T00:00:00")
		}
		js.from = t
	}
	if len(js.Paths) == 0 {
		return js, ui.Usagef("every jobs needs a file of jobs, or a directory of *.tab files; try: every jobs --check jobs.tab")
	}
	if n := c.Int("max-concurrent"); c.IsSet("max-concurrent") && n < 1 {
		return js, ui.BadFlag("--max-concurrent", c.String("max-concurrent"), "give a whole number of commands, 1 or more", "")
	} else {
		js.MaxConcurrent = n
	}
	switch out := c.String("output"); out {
	case "prefixed":
	case "raw":
		js.Raw = true
	default:
		return js, ui.BadFlag("--output", out, "give prefixed or raw", "")
	}
	js.Watch = c.Bool("watch")
	if js.Listen = c.String("listen"); js.Listen != "" {
		if _, err := listen.ParseAddr(js.Listen); err != nil {
			return js, ui.BadFlag("--listen", js.Listen, err.Error(), "")
		}
	}
	js.LogFormat, js.LogLevel, js.Quiet = c.String("log-format"), c.String("log-level"), c.Bool("quiet")
	if js.LogFormat != "text" && js.LogFormat != "json" {
		return js, ui.BadFlag("--log-format", js.LogFormat, "give text or json", "")
	}
	if !slices.Contains([]string{"debug", "info", "warn", "error"}, js.LogLevel) {
		return js, ui.BadFlag("--log-level", js.LogLevel, "give debug, info, warn or error", "")
	}
	js.logGiven = c.IsSet("log-format") || c.IsSet("log-level") || c.IsSet("quiet")
	return js, nil
}

// RunJobs runs the jobs of the files until a stop signal (internal/jobs):
// every's exit status, or the signal to exit by. Bad lines refuse the start
// (exit 2, all of them), as every jobs --check reports them; a reload (SIGHUP,
// --watch) reads the files again the same way.
func RunJobs(js JobsSettings, signals <-chan os.Signal, stdout, stderr io.Writer) (int, os.Signal) {
	first, err := js.load(stderr)
	if err != nil {
		reportJobs(stderr, err)
		return ui.ExitUsage, nil
	}
	opts := jobs.Options{MaxConcurrent: js.MaxConcurrent, Raw: js.Raw, Listen: js.Listen, LogFormat: js.LogFormat, LogLevel: js.LogLevel,
		Quiet: js.Quiet, Signals: signals, Load: func() ([]jobs.Job, error) { return js.load(io.Discard) }}
	if js.Watch {
		opts.Watch = js.Paths
	}
	return jobs.Run(first, opts, stdout, stderr)
}

// load reads the files: the jobs for the supervisor, their files' warnings
// said on stderr (at the start: a reload, which gives io.Discard, does not
// repeat them), or all the errors.
func (js JobsSettings) load(stderr io.Writer) ([]jobs.Job, error) {
	loaded, warnings, err := LoadJobs(js.Paths)
	printWarnings(stderr, warnings)
	if err != nil {
		return nil, err
	}
	out := make([]jobs.Job, 0, len(loaded))
	for _, j := range loaded {
		st := j.Settings
		if js.logGiven {
			st.LogFormat, st.LogLevel, st.Quiet = js.LogFormat, js.LogLevel, js.Quiet
		}
		if j.Reboot {
			st.Loop.StartAnew = true
		}
		def := strings.Join(j.Argv, "\x00") + "\x01" + strings.Join(j.Env, "\x00")
		out = append(out, jobs.Job{Name: j.Name, Where: j.File + ":" + strconv.Itoa(j.Line), Def: def, Settings: st, Reboot: j.Reboot})
	}
	return out, nil
}

// reportJobs says each error of the files on stderr, one line each.
func reportJobs(stderr io.Writer, err error) {
	var errs jobsfile.Errors
	if errors.As(err, &errs) {
		for _, e := range errs {
			ui.Report(stderr, e)
		}
		return
	}
	ui.Report(stderr, err)
}

// Job is one job of a jobs file, checked: the settings a standalone every
// of its line would run with, and where it comes from.
type Job struct {
	File string // its file, as read (a directory's files joined to it)
	Line int    // its line in File, from 1
	// Name is its name (Settings.Loop.Name): --name, else the one a
	// standalone every of the line gives it; a crontab line's, its
	// command's base name and a hash of its schedule and command.
	Name string
	// Settings are those of the standalone every the line is, with the
	// file's EVERY_<OPTION>= defaults: for a crontab line, every 'SCHEDULE'
	// --name NAME -- SHELL -c 'COMMAND', its schedule in the section's
	// CRON_TZ. Settings.Loop.Env is the command's whole environment:
	// every's own, less its inputs (as a standalone every passes it on),
	// with the file's NAME=value lines above the job over it.
	Settings job.Settings
	// Env are the file's NAME=value lines in force above the job, in their
	// order (also in Settings.Loop.Env).
	Env []string
	// Argv is the standalone every the job is, after "every": the file's
	// defaults as options, then the line's words (a crontab line's as
	// above). Two jobs of one name with the same Argv and Env are the same
	// job (a reload leaves it alone).
	Argv []string
	// Reboot says the job is @reboot: it runs once when every jobs starts,
	// never on a reload. Its settings are a one-shot's (--max-runs 1) on
	// schedule.Reboot, one slot at the loop's start.
	Reboot bool
	// Command is the command as people see it: a crontab line's as written,
	// an every line's words after the schedule, quoted for sh where they
	// need it; secrets in URLs masked (ui.MaskURLs).
	Command string
}

// jobsMu keeps LoadJobs to one call at a time: urfave/cli's flags remember
// their defaults as it applies them.
var jobsMu sync.Mutex

// LoadJobs reads the jobs files and directories at paths (a directory is
// its *.tab files, in name order) and checks each job as a standalone every
// of its line is checked, with the same flag table: the file's
// EVERY_<OPTION>= lines above a job set its options' defaults, over those
// of every's environment and under the line's own options. It returns every
// job, in the order of the files and lines, and the warnings of the files
// (MAILTO, a CRON_TZ an every line does not take), or all the errors: a
// jobsfile.Errors of every bad path and line, each FILE:LINE: what, and
// the fix; or a ui.UsageError when every's own environment has a bad
// EVERY_<OPTION>, which every job would share.
func LoadJobs(paths []string) ([]Job, []*jobsfile.LineError, error) {
	jobsMu.Lock()
	defer jobsMu.Unlock()
	env, err := environmentTokens()
	if err != nil {
		return nil, nil, err
	}
	if err := probe(env.tokens, env.labels); err != nil {
		return nil, nil, err // every job would have it: said once
	}
	read, err := jobsfile.Read(paths, jobsfile.Config{IsOption: isJobOption})
	var errs jobsfile.Errors
	if err != nil && !errors.As(err, &errs) {
		return nil, read.Warnings, err
	}
	warnings := read.Warnings
	l := loader{env: env, bad: map[string]bool{}}
	for _, d := range read.Defaults {
		// Each on its own, once, at its own line, whether or not a job is
		// below it; the jobs below a bad one are checked without it.
		if err := l.checkDefault(d); err != nil {
			errs = append(errs, &jobsfile.LineError{File: d.File, Line: d.Line, Err: err})
		}
	}
	var jobs []Job
	for _, e := range read.Entries {
		j, warn, err := l.job(e)
		if warn != nil {
			warnings = append(warnings, &jobsfile.LineError{File: e.File, Line: e.Line, Err: warn})
		}
		if err != nil {
			errs = append(errs, &jobsfile.LineError{File: e.File, Line: e.Line, Err: err})
			continue
		}
		jobs = append(jobs, j)
	}
	errs = append(errs, duplicates(jobs)...)
	if len(errs) > 0 {
		inOrder(errs, read.Names)
		inOrder(warnings, read.Names)
		return nil, warnings, errs
	}
	inOrder(warnings, read.Names)
	return jobs, warnings, nil
}

// inOrder sorts errors by their files, in the order names lists them, and
// their lines.
func inOrder(errs []*jobsfile.LineError, names []string) {
	rank := map[string]int{}
	for i, n := range names {
		if _, ok := rank[n]; !ok {
			rank[n] = i
		}
	}
	slices.SortStableFunc(errs, func(a, b *jobsfile.LineError) int {
		if c := rank[a.File] - rank[b.File]; c != 0 {
			return c
		}
		return a.Line - b.Line
	})
}

// isJobOption reports whether option is an option of a run, which a jobs
// file's EVERY_<OPTION>= line may set: not --name, which reads no
// environment variable either.
func isJobOption(option string) bool {
	_, ok := flagArity(runFlags)[option]
	return ok && option != "name" && !jobsOwn[option] && option != "help" && option != "h" && option != "version" && canonical()[option] == option
}

// jobsOwn are the run's options that every jobs takes for itself, not for
// each job: --listen, its one server of all the jobs. A line refuses them,
// a file's EVERY_<OPTION>= line is no default, and every's own
// environment's is not each job's.
var jobsOwn = map[string]bool{"listen": true}

// fileFlags are the run's flags without their environment variables: for
// a line of a jobs file, every's own environment is read by
// environmentTokens, so that the file's defaults stand over it, and each
// value's message names where it came from.
var fileFlags = func() []cli.Flag {
	flags := make([]cli.Flag, len(runFlags))
	for i, f := range runFlags {
		switch o := f.(type) {
		case *stringOpt:
			c := *o.StringFlag
			c.EnvVars, c.Value = nil, defaults[c.Name]
			flags[i] = stringOf(&c)
		case *boolOpt:
			c := *o.BoolFlag
			c.EnvVars, c.Value = nil, false
			flags[i] = &boolOpt{&c, c.Names()}
		default:
			flags[i] = f
		}
	}
	return flags
}()

// optionTokens are options as tokens of a command line ("--timeout=60s"),
// and the labels of their values, for messages.
type optionTokens struct {
	tokens []string
	labels map[string]string // option name -> where its value came from
}

// environmentTokens reads the options of every's own environment
// (EVERY_<NAME>), as a standalone every reads them: an empty one counts as
// unset. A bad switch (EVERY_ALIGN=yes) is an error here; other bad values
// are checked with the line they come to.
func environmentTokens() (optionTokens, error) {
	ot := optionTokens{labels: map[string]string{}}
	for _, f := range runFlags {
		vars := plain(f).(interface{ GetEnvVars() []string }).GetEnvVars()
		if len(vars) == 0 || jobsOwn[f.Names()[0]] {
			continue
		}
		value := os.Getenv(vars[0])
		if value == "" {
			continue
		}
		token, err := optionToken(f, vars[0], value)
		if err != nil {
			return ot, err
		}
		ot.tokens = append(ot.tokens, token)
		ot.labels[f.Names()[0]] = vars[0]
	}
	return ot, nil
}

// optionToken is the token that gives flag f value: --name=value; label
// names where the value came from, for the message of a bad switch.
func optionToken(f cli.Flag, label, value string) (string, error) {
	name := f.Names()[0]
	if _, isBool := plain(f).(*cli.BoolFlag); isBool {
		on, err := strconv.ParseBool(value)
		if err != nil {
			return "", ui.BadFlag(label, value, "not a switch value", "give 1 or true to turn it on, 0 or false to turn it off")
		}
		value = strconv.FormatBool(on)
	}
	return "--" + name + "=" + value, nil
}

// loader turns a file's entries into jobs.
type loader struct {
	env optionTokens // every's own environment
	// bad holds the defaults that are wrong on their own, by
	// defaultKey.
	bad map[string]bool
}

// defaultKey is where a default is: its file and line.
func defaultKey(d jobsfile.Default) string { return fmt.Sprintf("%s\x00%d", d.File, d.Line) }

// defaultLabel names a default's value in messages: its variable and line.
func defaultLabel(d jobsfile.Default) string { return fmt.Sprintf("%s (line %d)", d.Var, d.Line) }

// probe checks options on their own, with a schedule whose gaps are longer
// than any --jitter (one day where --align asks for one that divides 24h).
func probe(tokens []string, labels map[string]string) error {
	sched := "36500d"
	if _, ok := labels["align"]; ok {
		sched = "1d"
	}
	_, err := runSettings(invocation{schedule: sched, command: []string{"true"}, opts: tokens, from: labels, inFile: true})
	return err
}

// checkDefault checks a default on its own: a value that no job could take
// (EVERY_TIMEOUT=soon) is wrong at its own line.
func (l *loader) checkDefault(d jobsfile.Default) error {
	token, err := optionToken(fileFlag(d.Option), defaultLabel(d), d.Value)
	if err == nil {
		err = probe([]string{token}, map[string]string{d.Option: defaultLabel(d)})
	}
	if err != nil {
		l.bad[defaultKey(d)] = true
	}
	return err
}

// defaults returns the tokens of an entry's defaults that are good on their
// own, and their labels.
func (l *loader) defaults(e jobsfile.Entry) optionTokens {
	ot := optionTokens{labels: map[string]string{}}
	for _, d := range e.Defaults {
		if l.bad[defaultKey(d)] {
			continue
		}
		token, _ := optionToken(fileFlag(d.Option), defaultLabel(d), d.Value) // good: checked
		ot.tokens = append(ot.tokens, token)
		ot.labels[d.Option] = defaultLabel(d)
	}
	return ot
}

// fileFlag is the flag of option name, which jobsfile took for an option
// (isJobOption).
func fileFlag(name string) cli.Flag {
	i := slices.IndexFunc(fileFlags, func(f cli.Flag) bool { return f.Names()[0] == name })
	return fileFlags[i]
}

// runSettings runs the flag table and checks of a standalone every (config)
// on an invocation: a line of a jobs file.
func runSettings(inv invocation) (job.Settings, error) {
	var st job.Settings
	app := newApp("every", "", "", fileFlags, io.Discard, io.Discard, func(c *cli.Context) error {
		var err error
		st, err = config(c, inv)
		return err
	})
	err := app.Run(append(append(append([]string{"every"}, inv.opts...), "--", inv.schedule), inv.command...))
	return st, err
}

// job checks one entry: its settings, or its error; warn is a warning of
// its line.
func (l *loader) job(e jobsfile.Entry) (j Job, warn, err error) {
	defs := l.defaults(e)
	words := e.Every
	if e.Cron != nil {
		words = cronWords(e)
	}
	inv, err := splitIn(words, flagArity(fileFlags), func() []string { return nil })
	switch {
	case err != nil:
		return j, nil, err
	case inv.help || inv.version || inv.status || inv.next || inv.completion || inv.jobs:
		return j, nil, errors.New("a job line runs a job: every SCHEDULE [OPTIONS] -- COMMAND; every's other commands, --help and --version are not jobs")
	}
	lineOpts := inv.opts
	inv.opts = slices.Concat(l.env.tokens, defs.tokens, inv.opts)
	inv.from = mergeLabels(l.env.labels, defs.labels)
	inv.inFile = true
	st, err := runSettings(inv)
	if err != nil {
		return j, nil, err
	}
	st.Loop.Env = withEnv(st.Loop.Env, e.Env)
	sched := st.Loop.Schedule
	j = Job{File: e.File, Line: e.Line, Name: st.Loop.Name, Settings: st, Env: e.Env,
		Argv: slices.Concat(defs.tokens, lineOpts, []string{inv.schedule, "--"}, inv.command), Reboot: sched.Recorded() == schedule.RebootText}
	if e.Cron != nil {
		j.Command = shownText(ui.MaskURLs(e.Cron.Command))
	} else {
		j.Command = ui.CommandText(inv.command)
		if e.Zone != "" && sched.WallClock() && sched.Location() == time.Local {
			warn = fmt.Errorf("CRON_TZ=%s above is the zone of crontab lines; this every line's schedule is in the local zone: give it --tz %[1]s, or set EVERY_TZ=%[1]s above it", e.Zone)
		}
	}
	return j, warn, nil
}

// cronWords are the words of the standalone every a crontab line is: every
// 'SCHEDULE' --name NAME -- SHELL -c 'COMMAND', its schedule in the
// section's CRON_TZ (a cron expression's or a nickname's; @every's and
// @reboot's have no zone).
func cronWords(e jobsfile.Entry) []string {
	c := e.Cron
	sched := c.Schedule
	if e.Zone != "" && !c.Reboot && !strings.HasPrefix(sched, "@every ") {
		sched = "CRON_TZ=" + e.Zone + " " + sched
	}
	return []string{sched, "--name", c.Name, "--", c.Shell, "-c", c.Command}
}

// mergeLabels is a's labels with b's over them.
func mergeLabels(a, b map[string]string) map[string]string {
	m := make(map[string]string, len(a)+len(b))
	for k, v := range a {
		m[k] = v
	}
	for k, v := range b {
		m[k] = v
	}
	return m
}

// withEnv is environ with the settings over it, each NAME=value replacing
// NAME's value in environ.
func withEnv(environ, settings []string) []string {
	out := slices.Clone(environ)
	for _, kv := range settings {
		name, _, _ := strings.Cut(kv, "=")
		out = slices.DeleteFunc(out, func(e string) bool { return strings.HasPrefix(e, name+"=") })
		out = append(out, kv)
	}
	return out
}

// duplicates returns an error for each job whose name, or whose --state
// file, an earlier job has: the later one's line, naming both.
func duplicates(jobs []Job) jobsfile.Errors {
	var errs jobsfile.Errors
	byName := map[string]Job{}
	byState := map[string]Job{}
	for _, j := range jobs {
		if first, ok := byName[j.Name]; ok {
			errs = append(errs, &jobsfile.LineError{File: j.File, Line: j.Line, Err: fmt.Errorf(
				"job name %q is also that of %s:%d; give one of them a --name of its own (a crontab line: write it as an every line with --name)", j.Name, first.File, first.Line)})
			continue
		}
		byName[j.Name] = j
		if p := j.Settings.StatePath; p != "" {
			key := filepath.Clean(p)
			if first, ok := byState[key]; ok {
				errs = append(errs, &jobsfile.LineError{File: j.File, Line: j.Line, Err: fmt.Errorf(
					"--state %q is also that of %s:%d; two jobs in one state file would overwrite each other: give each its own, or leave --state out", p, first.File, first.Line)})
				continue
			}
			byState[key] = j
		}
	}
	return errs
}

// shownText is s as a line of the listing shows it: control characters and
// bytes that are not UTF-8 escaped, as Go writes them in a string.
func shownText(s string) string { return ui.Escape(s) }

// printWarnings says the files' warnings on stderr, one a line.
func printWarnings(stderr io.Writer, warnings []*jobsfile.LineError) {
	for _, w := range warnings {
		fmt.Fprintf(stderr, "every: %s:%d: warning: %v\n", w.File, w.Line, w.Err)
	}
}

// CheckJobs is every jobs --check: it reads the files and lists their jobs,
// one a line (name, schedule, next slot, command) to stdout, and returns 0;
// or it writes every error, one a line, to stderr, and returns 2. Warnings go
// to stderr either way.
func CheckJobs(js JobsSettings, stdout, stderr io.Writer) int {
	jobs, warnings, err := LoadJobs(js.Paths)
	printWarnings(stderr, warnings)
	if err != nil {
		reportJobs(stderr, err)
		return ui.ExitUsage
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tSCHEDULE\tNEXT\tWHERE\tCOMMAND")
	for _, j := range jobs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s:%d\t%s\n", j.Name, shownText(j.Settings.Loop.Schedule.Recorded()), nextText(j, js.from), shownText(j.File), j.Line, j.Command)
	}
	tw.Flush()
	return 0
}

// nextText is a job's next slot for the listing: when a fresh start at
// from would run it.
func nextText(j Job, from time.Time) string {
	s, delay := j.Settings.Loop.Schedule, j.Settings.Loop.Delay
	switch {
	case j.Reboot || !s.WallClock() && delay == 0:
		return "at start"
	case !s.WallClock():
		return "at start+" + schedule.Distance(delay)
	}
	t := s.First(from.Add(delay))
	if loc := s.Location(); loc != nil {
		t = t.In(loc)
	}
	return t.Format(time.RFC3339)
}
