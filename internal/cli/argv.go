package cli

import (
	"os"
	"slices"
	"strings"
	"time"

	"github.com/everycli/every/internal/ui"
	"github.com/everycli/every/schedule"
)

// This file owns the splitting of argv into options, the schedule and the
// command, before urfave/cli sees the options.

// invocation is argv split into its parts.
type invocation struct {
	opts       []string        // option tokens, in their order, values included
	given      map[string]bool // the options given on the command line, by canonical name
	schedule   string
	command    []string
	help       bool     // --help: no schedule needed
	version    bool     // --version: no schedule needed either
	status     bool     // every status
	next       bool     // every next
	completion bool     // every completion
	names      []string // every status NAME..., every next SCHEDULE, every completion SHELL
	// stateDirs are every status's --state-dir values, each time given, in
	// order: urfave/cli keeps only the last.
	stateDirs []string
	jobs      bool // every jobs
	// from and inFile are for a line of a jobs file (jobs.go): where the
	// values not given on the line came from, and that @reboot is a
	// schedule there.
	from   map[string]string
	inFile bool
}

// split separates options, the schedule and the command. urfave/cli stops
// parsing options at the first positional argument, so options may stand on
// either side of the schedule only if they are gathered here first. Everything
// after "--" is the command; without "--", the first positional after the
// schedule starts it.
func split(args []string, arity map[string]bool) (invocation, error) {
	return splitIn(args, arity, dirNames)
}

// splitIn is split, with names giving the file names that a shell would put
// for an unquoted '*', for the message of an unquoted cron expression: those
// of the current directory from a shell, none in a jobs file.
func splitIn(args []string, arity map[string]bool, names func() []string) (invocation, error) {
	var inv invocation
	positional := 0
	var afterSchedule []string // the schedule and what follows it, as given
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			inv.command = args[i+1:]
			break
		}
		if !isOption(a) {
			if positional == 0 && slices.Contains(subcommands, a) {
				// Options before the subcommand are its own: every --state-dir D status.
				return splitSub(a, append(slices.Clone(inv.opts), args[i+1:]...))
			}
			if positional == 0 && a == "help" {
				// every help is every --help; every help next, every next --help.
				if i+1 < len(args) && slices.Contains(subcommands, args[i+1]) {
					return splitSub(args[i+1], []string{"--help"})
				}
				inv.help = true
				inv.opts = append(inv.opts, "--help")
				break
			}
			if positional == 0 {
				inv.schedule = a
				afterSchedule = args[i:]
				positional++
				continue
			}
			inv.command = args[i:]
			break
		}
		tokens, name, err := option(args, i, arity, "every")
		if err != nil {
			return inv, err
		}
		if inv.given == nil {
			inv.given = map[string]bool{}
		}
		i += len(tokens) - 1
		if name == "version" {
			// every's own, not urfave/cli's: printed by parse.
			inv.version = true
			continue
		}
		inv.given[canonical()[name]] = true
		inv.opts = append(inv.opts, tokens...)
		if name == "help" || name == "h" {
			inv.help = true
		}
	}
	if inv.help || inv.version {
		return inv, nil
	}
	return inv, checkRun(inv, afterSchedule, names)
}

// subcommands are every's words that start a command other than a run.
var subcommands = []string{"status", "next", "completion", "jobs"}

// checkRun checks that a run's argv has its schedule, as one argument, and
// its command. afterSchedule is argv from the schedule on.
func checkRun(inv invocation, afterSchedule []string, names func() []string) error {
	if inv.schedule != "" && mayBeCron(inv.schedule) {
		if expr, globbed, ok := unquotedCron(afterSchedule, names()); ok {
			return ui.Usagef("bad schedule: a cron expression is one argument; quote it: every '%s' -- CMD%s", expr, globNote(globbed))
		}
	}
	if inv.schedule == "" {
		return ui.Usagef("missing schedule; try: every 90s -- COMMAND")
	}
	if len(inv.command) == 0 {
		return ui.Usagef("missing command after schedule %q; try: every %s -- COMMAND", inv.schedule, inv.schedule)
	}
	return nil
}

// splitSub gathers the options of every status, every next, every
// completion or every jobs, wherever they stand, from the job names, the
// schedule, the shell or the files.
func splitSub(sub string, args []string) (invocation, error) {
	inv := invocation{status: sub == "status", next: sub == "next", completion: sub == "completion", jobs: sub == "jobs"}
	arity := flagArity(statusFlags)
	switch {
	case inv.next:
		arity = flagArity(nextFlags)
	case inv.completion:
		arity = flagArity(nil)
	case inv.jobs:
		arity = flagArity(jobsFlags)
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			inv.names = append(inv.names, args[i+1:]...)
			break
		}
		if !isOption(a) {
			inv.names = append(inv.names, a)
			continue
		}
		tokens, name, err := option(args, i, arity, "every "+sub)
		if err != nil {
			return inv, err
		}
		if inv.status && name == "state-dir" {
			inv.stateDirs = append(inv.stateDirs, optionValue(tokens))
		}
		inv.opts = append(inv.opts, tokens...)
		i += len(tokens) - 1
	}
	return inv, nil
}

// option reads the option at args[i]: its tokens (with its value, when it
// takes one not given with "="), and its name.
func option(args []string, i int, arity map[string]bool, cmd string) ([]string, string, error) {
	a := args[i]
	name, _, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
	takesValue, known := arity[name]
	switch {
	case !known:
		return nil, name, ui.Usagef("unknown option %s; see %s --help", a, cmd)
	case !takesValue || hasValue:
		return []string{a}, name, nil
	case i+1 >= len(args):
		return nil, name, ui.Usagef("option %s needs a value; see %s --help", a, cmd)
	}
	return []string{a, args[i+1]}, name, nil
}

// optionValue is the value in an option's tokens, as option reads them:
// "--x=v", or "--x" "v".
func optionValue(tokens []string) string {
	if len(tokens) == 2 {
		return tokens[1]
	}
	_, v, _ := strings.Cut(tokens[0], "=")
	return v
}

// isOption reports whether an argument is an option: a dash and a name. A
// name never holds a space, so '-1 * * * *' is a (bad) schedule, not an
// unknown option; a value may ("--on-failure=notify-send failed").
func isOption(a string) bool {
	if len(a) < 2 || a[0] != '-' {
		return false
	}
	name, _, _ := strings.Cut(a, "=")
	return !strings.ContainsAny(name, " \t\n")
}

// isCronField reports whether s is one field of a cron expression: a list
// of '*', '?', numbers and names, ranges, steps, and cronexpr's day terms. Written out rather than a
// regular expression: every start asks it of its schedule, and compiling
// the expression cost more than the rest of the argument parsing.
func isCronField(s string) bool {
	for part := range strings.SplitSeq(s, ",") {
		if !isCronPart(part) {
			return false
		}
	}
	return true
}

// isCronPart reports whether s is '*', '?', a value or a range of two, with
// an optional step ("*", "5", "mon-fri", "1-30/5", "*/10"), or one of
// cronexpr's day terms: L, LW, 15W, 5L, 5#2.
func isCronPart(s string) bool {
	if isCronDayTerm(s) {
		return true
	}
	if base, step, ok := strings.Cut(s, "/"); ok {
		if !isDigits(step) {
			return false
		}
		s = base
	}
	if s == "*" || s == "?" {
		return true
	}
	from, to, isRange := strings.Cut(s, "-")
	return isCronValue(from) && (!isRange || isCronValue(to))
}

// isCronDayTerm reports whether s is one of cronexpr's day terms: L or LW
// (the last day, the last weekday), 15W (the weekday nearest the 15th), 5L
// (the last Friday), 5#2 (the second Friday), any case.
func isCronDayTerm(s string) bool {
	if strings.EqualFold(s, "L") || strings.EqualFold(s, "LW") {
		return true
	}
	if v, n, ok := strings.Cut(s, "#"); ok {
		return isCronValue(v) && isDigits(n)
	}
	if n := len(s); n > 1 && (s[n-1] == 'W' || s[n-1] == 'w') {
		return isDigits(s[:n-1])
	}
	if n := len(s); n > 1 && (s[n-1] == 'L' || s[n-1] == 'l') {
		return isCronValue(s[:n-1])
	}
	return false
}

// isCronValue reports whether s is a number or the name of a month or a
// weekday (three letters or in full, any case, as Unicode folds it).
func isCronValue(s string) bool {
	if isDigits(s) {
		return true
	}
	const names = "jan feb mar apr may jun jul aug sep oct nov dec sun mon tue wed thu fri sat " +
		"january february march april june july august september october november december " +
		"sunday monday tuesday wednesday thursday friday saturday"
	for name := range strings.FieldsSeq(names) {
		if strings.EqualFold(s, name) {
			return true
		}
	}
	return false
}

// isDigits reports whether s is one or more ASCII digits.
func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// mayBeCron reports whether a schedule may be the first word of a cron
// expression the shell split, so that the directory is worth reading for
// the file names an unquoted '*' became: a cron field, a CRON_TZ= prefix,
// or a name in the current directory.
func mayBeCron(sched string) bool {
	if isCronField(sched) || strings.HasPrefix(sched, "CRON_TZ=") || strings.HasPrefix(sched, "TZ=") {
		return true
	}
	_, err := os.Lstat(sched)
	return err == nil
}

// dirNames returns the names in the current directory, which a shell puts
// for an unquoted '*'; none when it cannot be read.
func dirNames() []string {
	entries, _ := os.ReadDir(".")
	names := make([]string, len(entries))
	for i, e := range entries {
		names[i] = e.Name()
	}
	return names
}

// unquotedCron recognises a cron expression typed without quotes: args
// begin with its fields, each a cron field or, for an unquoted '*', the
// names of the directory the shell put in its place (names: all of them,
// hidden ones too). It returns the expression, quoted as it should have
// been, and whether a '*' had become file names. An expression is 5 fields,
// 6 with seconds first, or 7 with a year last: where the words go on after
// 5, the longest reading wins if it parses, unless its sixth is the single name of a
// directory of one file (most likely the command, as in every 0 2 * * 0
// job.sh).
func unquotedCron(args, names []string) (expr string, globbed bool, ok bool) {
	prefix := ""
	if len(args) > 0 && (strings.HasPrefix(args[0], "CRON_TZ=") || strings.HasPrefix(args[0], "TZ=")) {
		prefix, args = args[0]+" ", args[1:]
	}
	var fields []string
	var globs []int // how many names each field's glob was; 0: a plain field
	for len(args) > 0 && len(fields) < 7 {
		if k := globRun(args, names); k > 0 {
			fields, globs, args = append(fields, "*"), append(globs, k), args[k:]
			continue
		}
		if !isCronField(args[0]) {
			break
		}
		fields, globs, args = append(fields, args[0]), append(globs, 0), args[1:]
	}
	if len(fields) < 5 {
		return "", false, false
	}
	parses := func(n int) bool {
		_, err := schedule.Parse(prefix+strings.Join(fields[:n], " "), schedule.Options{Zone: time.UTC})
		return err == nil
	}
	n := 5
	if len(fields) >= 6 && parses(6) {
		n = 6
		ended := len(fields) == 6 && len(args) > 0 && (args[0] == "--" || isOption(args[0]))
		if globs[5] == 1 && !ended && parses(5) {
			n = 5
		}
	}
	if len(fields) == 7 && parses(7) {
		// Seconds first and a year last, unless the seventh is the single
		// name of a directory of one file (the command).
		ended := len(args) > 0 && (args[0] == "--" || isOption(args[0]))
		if globs[6] != 1 || ended || n < 6 {
			n = 7
		}
	}
	for _, k := range globs[:n] {
		globbed = globbed || k > 0
	}
	return prefix + strings.Join(fields[:n], " "), globbed, true
}

// globRun returns how many of the first args are the names a shell puts for
// an unquoted '*' (those not hidden, or with dotglob all), in any order; 0
// when they are not.
func globRun(args, names []string) int {
	visible := slices.DeleteFunc(slices.Clone(names), func(n string) bool { return strings.HasPrefix(n, ".") })
	for _, set := range [][]string{visible, names} {
		k := len(set)
		if k == 0 || len(args) < k {
			continue
		}
		got := slices.Clone(args[:k])
		slices.Sort(got)
		want := slices.Clone(set)
		slices.Sort(want)
		if slices.Equal(got, want) {
			return k
		}
	}
	return 0
}

// globNote is the end of the message about an unquoted cron expression
// whose '*' the shell had made file names.
func globNote(globbed bool) string {
	if !globbed {
		return ""
	}
	return "; unquoted, each * became the names of the files here"
}
