package cli

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/everycli/every/internal/jobfiles"
	"github.com/urfave/cli/v2"
)

// This file owns every(1), the man page: written in roff from the same
// flag definitions and usage text as --help, so the two cannot drift
// (docs/every.1 is checked against it by TestDocsUpToDate), and the tables
// that every(1) and docs/REFERENCE.md (reference.go) both print: exit
// statuses, signals, environment, files and log events. Their texts mark
// literals with backquotes: bold in roff, code in Markdown.

// manDate is every(1)'s date (.TH): the last change to the page that a
// reader would care about. It is a constant so that the page is the same
// whenever it is generated; move it on with such a change.
const manDate = "2026-12-01"

// exitStatuses are every's exit statuses: the Exit status table of
// docs/REFERENCE.md and every(1).
var exitStatuses = [][2]string{
	{"0", "`--max-runs` reached and the last run succeeded"},
	{"the command's code", "`--max-runs` reached and the last run exited non-zero"},
	{"124", "`--max-runs` reached and the last attempt timed out, as timeout(1)"},
	{"128+n", "`--max-runs` reached and the last attempt was killed by signal n"},
	{"1", "`--max-failures` reached"},
	{"2", "usage error: one line naming the bad value (from a flag or its `EVERY_*` variable) and what to do, before anything runs or any file is written"},
	{"126, 127", "the command is not executable, or not found, at start-up"},
	{"73", "the state directory, the state file or the lock file cannot be created or written at start-up, or is a symbolic link, a directory, a device, a FIFO or a socket; a file at the state or `--metrics-file` path that every did not write, which it would replace (a script, a lock, another exporter's metrics: left as it was); with `--store`, an error that waiting will not heal (credentials or TLS refused, a database index the server does not have); the `--listen` address in use, not this host's, or a path there that is not a stale socket"},
	{"74", "`every status`, `next`, `completion` or `jobs --check` could not write its output (a reader that went away, EPIPE, ends it at once and quietly with 141, as a filter killed by SIGPIPE: never 0 after lost output)"},
	{"75", "one-shot (`--max-runs 1`) and the lock was busy (EX_TEMPFAIL, like `flock -n -E 75`), or its store or state could not be reached or read"},
	{"killed by SIGINT or SIGTERM", "stopped by that signal, after stopping the command"},
	{"70", "internal error (a bug), with a message"},
}

// signals is what every does with the signals it gets: the Signals table
// of docs/REFERENCE.md and every(1).
var signals = [][2]string{
	{"SIGINT, SIGTERM", "Start no new run. A running command's process group gets the same signal, and SIGKILL after `--kill-after`; a second SIGINT or SIGTERM kills it at once. The state is saved, then every exits by that same signal: a shell sees 130 or 143, systemd a clean stop. As PID 1, or when the signal was ignored when every started (a script's background job), it exits 128+n itself. Idle, it stops within milliseconds."},
	{"SIGUSR1", "Start a run now, if none is running; the grid does not move. One that comes while a run is going is dropped."},
	{"SIGHUP, SIGUSR2", "Passed on to the running command's process group; ignored while idle."},
	{"SIGPIPE", "Never kills every: if its log reader goes away (`every ... 2>&1 | head`), its log lines are lost and it goes on running the job."},
	{"SIGKILL of every", "The command's parent-death signal is SIGKILL, so it dies with every and never runs on unsupervised."},
}

// environment is every(1)'s ENVIRONMENT section, besides the options'
// variables.
var environment = [][2]string{
	{"EVERY_<NAME>", "each option's value, as `--NAME` would give it (`--kill-after`: `EVERY_KILL_AFTER`); the flag wins, and an empty variable counts as unset. `--name` reads none. None is passed on to the command or its hooks: an every inside a job takes nothing of the outer job's options (its lock, state, pings, hooks or metrics). For `every jobs`, each job's too, under a jobs file's `EVERY_<NAME>=` lines above it."},
	{"EVERY_NAME", "set for the command: the job's name. Set by every only: inherited ones, and those of the hooks below, are not passed on."},
	{"EVERY_RUN", "set for the command: the run's number, 1, 2, ..., counted on across restarts."},
	{"EVERY_ATTEMPT", "set for the command: the attempt within the run, 1 to `--retries` + 1."},
	{"EVERY_SLOT", "set for the command: the slot's time, RFC 3339 UTC (a run asked for with SIGUSR1: when it was asked for)."},
	{"EVERY_LAST_SUCCESS", "set for the command: when the last successful run started, RFC 3339 UTC, or empty."},
	{"EVERY_FENCING_TOKEN", "set for the command with `--store`: the lock's fencing token, greater than any before it."},
	{"EVERY_RESULT", "set for hooks (`--on-failure`, `--on-each-failure`, `--on-success`, `--on-recover`): the run's result, `success`, `failure`, `timeout`, `interrupted` or `lost_lock`."},
	{"EVERY_EXIT_CODE", "set for hooks: the run's exit code, as a shell reports it (124 for a timeout, 128+n for a signal)."},
	{"EVERY_SIGNAL", "set for hooks: the signal that killed the last attempt (`SIGKILL`), or empty."},
	{"EVERY_DURATION_MS", "set for hooks: the run's duration, retries and backoff included."},
	{"EVERY_ATTEMPTS", "set for hooks: how many attempts the run took."},
	{"EVERY_CONSECUTIVE_FAILURES", "set for hooks: failed runs in a row, this one included (0 after a success)."},
	{"EVERY_OUTPUT", "set for hooks: a file (mode 0600) with the run's output tail, removed after the hook."},
	{"XDG_STATE_HOME", "the default state directory is `$XDG_STATE_HOME/every` when it is an absolute path."},
	{"JOURNAL_STREAM", "set by systemd: when it names every's stderr (its device and inode), text logs leave out their time, which the journal records itself."},
	{"TZ", "the local zone of cron expressions and `--align`, unless `--tz` or `CRON_TZ=` is given. The zone database is built in."},
	{"GOMAXPROCS, GOGC", "a job that loops runs with `GOMAXPROCS=1` and `GOGC=25` unless these are set; `every jobs` with `GOGC=25` and Go's own `GOMAXPROCS` (its jobs run at once)."},
}

// files is every(1)'s FILES section.
var files = [][2]string{
	{"$XDG_STATE_HOME/every, ~/.local/state/every, /var/lib/every", "the default state directory (`--state-dir`): the first when `XDG_STATE_HOME` is set, else the second, or for root the third; created 0700."},
	{"DIR/NAME.json", "the job's state: its grid, last run and result, counters (`--state`, `--no-state`). Mode 0600, written atomically when a run starts and ends; synced to disk at most once a second and at exit."},
	{"DIR/NAME.lock", "the job's lock, taken with flock(2) for each run, so flock(1) and every exclude each other (`--lock`, `--no-lock`). Its content is never read or written."},
	{"DIR/NAME.json" + jobfiles.MarkerSuffix, "held (a shared lock, never written) by each running every of the job, for every status's ACTIVE column."},
	{"DIR/NAME.json.corrupt-<unix seconds>", "a state file that could not be used, set aside (a warning names both files); `-2`, `-3`, ... for more in one second, never one over another. The 3 newest of a job are kept, older ones removed."},
	{"DIR/.NAME.json.tmp-*", "a state write in progress (or the next one, prepared ahead); one left by a crash is removed when an every of the job next starts."},
	{"DIR/.NAME.json.synced", "a hard link to the state as last synced to disk (at most once a second, and at exit): what every goes on from if a power loss left the state empty or torn. Removed with the state."},
	{"/etc/every/NAME.conf", "the job of the systemd unit every@NAME.service: `EVERY_ARGS=\"SCHEDULE [OPTIONS] -- COMMAND\"`; its state is in /var/lib/every/NAME."},
}

// logEvent is a row of the log events' table: an event, the reasons the row
// is about (none: any), the level it is logged at, its fields besides job,
// event and the summary fields, and when it is logged.
type logEvent struct {
	event   string
	reasons []string
	level   string
	fields  []string
	when    string
}

// summaryFields are the fields of a repeated line's summary
// (docs/REFERENCE.md, Log events): any event that repeats may carry them.
var summaryFields = []string{"count", "since", "repeated", "ended", "total"}

// logEvents are the events of every's log lines: the Log events table of
// docs/REFERENCE.md and every(1).
// TestLogEventsMatchCode checks them against the logging calls of the code.
var logEvents = []logEvent{
	{"start", nil, "info", []string{"slot", "attempt", "late_ms"}, "an attempt starts; `late_ms` is how long after its slot"},
	{"finish", nil, "info, warn if it failed", []string{"result", "exit_code", "duration_ms", "attempts", "signal", "error", "after_failures"}, "a run, with its retries, ends: `signal` when one killed it, `error` when it could not start, `after_failures` on the success that ends failures (how many)"},
	{"retry", nil, "warn (info with `--quiet-success`)", []string{"attempt", "wait_ms", "error"}, "an attempt failed and another follows after `wait_ms`"},
	{"skip", []string{"concurrency"}, "warn", []string{"reason", "max_concurrent", "next"}, "every jobs: `--max-concurrent` commands were running, and no place came free before the job's next slot, which it waits for (`next`); summarised when it repeats, with a line when places come again"},
	{"skip", []string{"overrun"}, "warn", []string{"reason", "next", "late_ms"}, "a run went past slots (its command, or every's own calls after it: a slow store, a lock's release, hooks), or a wake-up came late (a SIGSTOP, a starved machine: `late_ms`), and the slots passed are skipped; `next` is the slot it waits for"},
	{"skip", []string{"locked"}, "info (debug while waiting with `--lock-wait`)", []string{"reason", "holder_pid", "holder_host", "holder", "wait_ms"}, "the lock was busy; `holder_pid` and `holder_host` say what is known of its holder (from a fleet store's lock, or from the job's record while it shows a live run), and `holder=unknown` stands for both when nothing is (a lock held by flock(1) or by another job sharing `--lock`, a record not written yet, `--no-state`)"},
	{"skip", []string{"done"}, "debug in a loop; info when it ends a one-shot", []string{"reason", "count", "slot", "next"}, "another instance already ran this slot; a one-shot then exits 0, and says which slot comes `next`"},
	{"skip", []string{"state"}, "error", []string{"reason", "state", "error"}, "the state could not be read (I/O error, permission, store timeout): the slot is skipped, the record never replaced; or no run number could be reserved on disk (a full disk, a read-only remount: the write or the sync that reserves it failed, once the numbers reserved were used up), and the slot is skipped so that `EVERY_RUN` never repeats, until a write succeeds"},
	{"skip", []string{"store"}, "error (warn at start-up)", []string{"reason", "error"}, "with `--store`, the store (Redis or etcd) could not be reached: at a slot, which is skipped; or at start-up, and its slots are skipped until it answers"},
	{"catch_up", []string{"schedule_changed", "clock_moved_back"}, "info (warn for `clock_moved_back`)", []string{"missed", "policy", "runs", "interrupted", "reason", "step", "state_time", "next"}, "at start: slots were missed while no every ran (`interrupted`: the last run was cut short), or a new grid starts: the schedule changed, or the state's times lie ahead of the wall clock (`step` how far, `state_time` its latest time, `next` the new grid's first slot)"},
	{"catch_up", []string{"clock", "suspend"}, "info (warn for a clock step)", []string{"reason", "missed", "policy", "runs", "step", "detail"}, "while running: the wall clock was set back or forward (`step`; the times recorded follow it), or the system slept past more than the slot due"},
	{"catch_up", []string{"dst"}, "info", []string{"reason", "missed", "slot", "detail"}, "a fixed-time calendar slot moved or chosen by a DST change"},
	{"state_error", nil, "warn or error", []string{"state", "moved_to", "error", "next_run"}, "the state could not be used (set aside as `moved_to`) or written (kept in memory, written again at the next run), or the active marker could not be held; or a fleet store lost the job's record, and the count goes on from `next_run`"},
	{"lock_error", nil, "error", []string{"error", "reason", "signal", "pgid"}, "the lock could not be taken (the slot is skipped) or released, or was lost during a run (then with the fields of `timeout`)"},
	{"timeout", []string{"timeout"}, "warn", []string{"reason", "signal", "pgid"}, "an attempt's `--timeout` expired; `signal` goes to the process group `pgid`; summarised when it repeats at each run"},
	{"kill", []string{"kill_after", "lease_expiring", "second_signal", "left_behind"}, "warn (error when some survive)", []string{"pgid", "after_ms", "reason", "count", "error"}, "SIGKILL went to the group after `--kill-after` (`kill_after`, `after_ms`), at once because a fleet lease is about to run out (`lease_expiring`) or at a second stop signal (`second_signal`), or to processes the command left behind outside its group (`left_behind`, `count` of them); left-behind processes and kill-after kills are summarised when they repeat, with a line when they end. With `error`: the run's guard could not be set, and the command's group would outlive every should it die (summarised)"},
	{"stop", nil, "info", []string{"signal", "running", "jobs"}, "every got SIGINT or SIGTERM; from `every jobs` itself, `jobs` is how many jobs it stops"},
	{"reload", nil, "info; error for each bad line of a refused reload", []string{"added", "changed", "removed", "unchanged", "names_added", "names_changed", "names_removed", "job", "error"}, "every jobs read its files again (SIGHUP, `--watch`): one line of what changed, by name; or, when the new files have bad lines, one error line each, and the jobs go on unchanged; or a new or changed job that cannot start (`job`, `error`)"},
	{"job_end", nil, "warn", []string{"job", "reason", "exit_code"}, "every jobs: a job's loop ended by itself (`reason` `max_runs` or `max_failures`); the other jobs go on"},
	{"output", nil, "warn; info for a line of output", []string{"dropped_bytes", "output_tail", "job", "stream", "line"}, "with `--quiet-success`, the output of a failed run was longer than `--output-tail`: the last `output_tail` bytes follow this line, the `dropped_bytes` before them were not kept; with `every jobs --log-format json`, each line a command writes (`job`, `stream` `stdout` or `stderr`, `line`)"},
	{"hook", nil, "info, warn if it failed", []string{"hook", "result", "exit_code", "duration_ms", "error"}, "a hook ended"},
	{"ping", nil, "warn (debug when sent)", []string{"host", "ping", "status", "error", "attempts", "queue", "redirect_host"}, "a ping failed (`ping` is its kind: `start`, `fail`, `log` or an exit status) or was dropped; a redirect is never followed and is an error (`redirect_host`); the URL's path is never logged"},
	{"listen", nil, "info; error when it stops serving; debug for net/http's own complaints", []string{"addr", "error"}, "with `--listen`: once at start, where the server listens (`addr`, a URL, or `unix:PATH`); or the server stopped on an error, and the jobs go on without it"},
	{"metrics", nil, "error, then warn; info when it works again", []string{"metrics_file", "error"}, "the metrics file could not be written"},
	{"ready", nil, "info", []string{"schedule", "first", "in"}, "once, at start: the first slot to run and how long until its run (`0s`: at once, for a slot missed); for a one-shot with nothing to run, the next slot, followed by its `skip reason=done` line"},
}

// roff escapes text for a roff line: backslashes, dashes (so options can be
// copied from the page), and a leading dot or quote.
func roff(s string) string {
	s = strings.NewReplacer(`\`, `\e`, "-", `\-`).Replace(s)
	if strings.HasPrefix(s, ".") || strings.HasPrefix(s, "'") {
		s = `\&` + s
	}
	return s
}

// roffText escapes a table's text as roff does, with its `literals` in
// bold.
func roffText(s string) string {
	parts := strings.Split(s, "`")
	for i, p := range parts {
		parts[i] = strings.NewReplacer(`\`, `\e`, "-", `\-`).Replace(p)
		if i%2 == 1 {
			parts[i] = `\fB` + parts[i] + `\fR`
		}
	}
	return strings.Join(parts, "")
}

// manWidth is the longest input line of every(1) (mandoc -Tlint's limit).
const manWidth = 80

// fill writes roff text as filled lines of at most manWidth bytes, broken
// between words, none of them starting as a request would.
func fill(w io.Writer, text string) {
	for _, l := range wrapWords(text, manWidth) {
		if strings.HasPrefix(l, ".") || strings.HasPrefix(l, "'") {
			l = `\&` + l
		}
		fmt.Fprintln(w, l)
	}
}

// manFlags writes flags as roff tagged paragraphs: the spellings in bold,
// the placeholder in italics, then the usage with its default and its
// variable, worded as --help words them.
func manFlags(w io.Writer, flags []cli.Flag) {
	for _, f := range flags {
		if vf, ok := f.(cli.VisibleFlag); ok && !vf.IsVisible() {
			continue
		}
		names, usage, _ := strings.Cut(flagHelp(plain(f)), "\t")
		var tag []string
		for _, n := range strings.Split(names, ", ") {
			name, placeholder, _ := strings.Cut(n, " ")
			t := `\fB` + roff(name) + `\fR`
			if placeholder != "" {
				t += ` \fI` + roff(placeholder) + `\fR`
			}
			tag = append(tag, t)
		}
		fmt.Fprintf(w, ".TP\n%s\n", strings.Join(tag, ", "))
		fill(w, roff(usage))
	}
}

// manTable writes tagged paragraphs, a term and its text.
func manTable(w io.Writer, rows [][2]string) {
	for _, r := range rows {
		fmt.Fprintf(w, ".TP\n\\fB%s\\fR\n", roff(r[0]))
		fill(w, roffText(r[1]))
	}
}

// manEvents writes the log events as tagged paragraphs.
func manEvents(w io.Writer) {
	for _, e := range logEvents {
		tag := `\fB` + roff(e.event) + `\fR`
		if len(e.reasons) > 0 {
			tag += " reason=" + roff(strings.Join(e.reasons, ", "))
		}
		fmt.Fprintf(w, ".TP\n%s\n", tag)
		fill(w, roffText(e.when+". At "+e.level+"; fields: "+strings.Join(e.fields, ", ")+"."))
	}
}

// splitExample splits a line of the examples into the command line and
// its comment (after "  # "), both trimmed.
func splitExample(line string) (example, comment string) {
	example, comment, _ = strings.Cut(line, "  # ")
	return strings.TrimSpace(example), strings.TrimSpace(comment)
}

// manPage writes every(1).
func manPage(w io.Writer) {
	fmt.Fprintf(w, `.\" every(1). Generated by go test -run TestDocsUpToDate ./internal/cli -update
.\" from the flag definitions of --help (options.go) and the tables of man.go;
.\" do not edit.
.TH EVERY 1 %s "every" "User Commands"
.SH NAME
every \- run a command on a schedule, safely: cron + flock + timeout in one
process
.SH SYNOPSIS
.nf
`, manDate)
	for _, l := range strings.Split(synopsis, "\n") {
		fmt.Fprintln(w, roff(l))
	}
	fmt.Fprint(w, ".fi\n.SH DESCRIPTION\n")
	fill(w, roff(strings.Join(strings.Fields(description), " ")))
	fmt.Fprint(w, ".PP\n")
	fill(w, `Options may stand before or after SCHEDULE. Everything after \fB\-\-\fR is the command, verbatim; without it, the first argument after SCHEDULE that is not an option starts the command. The command is executed directly, never through a shell.`)
	fmt.Fprint(w, ".SH OPTIONS\n")
	for _, cat := range categories {
		fmt.Fprintf(w, ".SS %s\n", roff(cat))
		manFlags(w, categoryFlags(cat))
	}
	fmt.Fprint(w, ".SS Help\n")
	manFlags(w, metaFlags)
	fmt.Fprint(w, ".SH COMMANDS\n.SS every status [\\fIOPTIONS\\fR] [\\fINAME\\fR...]\n")
	fill(w, roffText(statusDoc))
	manFlags(w, statusFlags)
	fmt.Fprint(w, ".SS every next \\fISCHEDULE\\fR [\\fIOPTIONS\\fR]\n")
	fill(w, roffText(nextDoc))
	manFlags(w, nextFlags)
	fmt.Fprint(w, ".SS every completion \\fISHELL\\fR\n")
	fill(w, roffText(completionDoc()))
	fmt.Fprint(w, ".SS every jobs \\-\\-check [\\fIOPTIONS\\fR] \\fIFILE\\fR|\\fIDIR\\fR...\n")
	fill(w, roffText(jobsDoc))
	manFlags(w, jobsFlags)
	fmt.Fprint(w, ".SH EXIT STATUS\n")
	manTable(w, exitStatuses)
	fmt.Fprint(w, ".SH SIGNALS\n")
	manTable(w, signals)
	fmt.Fprint(w, ".SH ENVIRONMENT\n")
	manTable(w, environment)
	fmt.Fprint(w, ".SH FILES\n")
	manTable(w, files)
	fmt.Fprint(w, ".SH LOGS\n")
	fill(w, roffText(logsDoc))
	manEvents(w)
	fmt.Fprint(w, ".SH EXAMPLES\n")
	for i, l := range strings.Split(examples, "\n") {
		ex, comment := splitExample(l)
		switch {
		case comment != "":
			fmt.Fprintf(w, ".PP\n%s:\n", roff(comment))
		case i > 0:
			fmt.Fprint(w, ".PP\n")
		}
		fmt.Fprintf(w, ".RS\n.nf\n%s\n.fi\n.RE\n", roff(ex))
	}
	fmt.Fprint(w, `.SH SEE ALSO
.BR cron (8),
.BR crontab (5),
.BR flock (1),
.BR timeout (1),
.BR chronic (1),
.BR systemd.timer (5)
.PP
The guide, the FAQ and the design notes: docs/ in every's source, or
https://github.com/everycli/every/tree/main/docs
`)
}

// categoryFlags are the run options of one category, in --help's order.
func categoryFlags(cat string) []cli.Flag {
	return slices.DeleteFunc(slices.Clone(runFlags), func(f cli.Flag) bool {
		cf, ok := f.(cli.CategorizableFlag)
		return !ok || cf.GetCategory() != cat
	})
}

// The texts of the subcommands and of the logs, in every(1) and the
// reference alike.
const (
	statusDoc = "Lists the jobs of the state directories (each `--state-dir` given, else the default one) and of their immediate subdirectories (not links), or of a fleet's store (Redis or etcd), one line each: name, schedule, last run, result, duration, next slot, consecutive failures, whether an every runs for it (ACTIVE: for a fleet's job, on any host, as the store knows from each every's announcement or the lock's holder), and whether a run is in progress. It reads the state only and never takes a lock; a store in a leader election or failover is asked again for up to 10 s. Exits 0, or 1 when a listed job's last result is not `success` or a job cannot be read, or 2 on bad usage. With `--max-age` it is a liveness check: 0 when each job succeeded within D and has an every alive, else 1 with a line per stale job, or one naming the directories read when there is no job at all. With `--nagios`: one monitoring-plugins line, exit 0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN (no job at all too)."
	nextDoc   = "Prints the next slots of a schedule, one a line, with the zone's offset, the weekday and how far away each is: the tool to check a schedule and its DST behaviour. It lists no slot more than 292 years after --from (the span it counts) nor past the year 9999 (which RFC 3339 cannot write): it stops there, after the slots before, with one line naming the -n that fits. Exits 0, or 2 on a bad schedule or a slot past those bounds."
	logsDoc   = "every's own lines go to stderr, logfmt (`--log-format text`) or JSON. Each carries `job` and `event`. Nothing is logged between runs while the job is healthy and idle. An error that repeats is logged when it starts, then summarised at most once a minute (`repeated=true`, `since`, `count`: occurrences since the last line), and once when it ends (`ended=true`, `total`). The events:"
)

// completionDoc says what every completion prints.
func completionDoc() string {
	return "Prints a completion script for " + strings.Join(shellNames, ", ") + ", built from the same flag definitions as `--help`. Job names for `every status` are completed from the state directory."
}
