package jobsfile

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/everycli/every/internal/jobfiles"
	"github.com/everycli/every/schedule"
)

// This file reads a crontab line: its time fields, counted as supercronic
// counts them, and refused where two crons read them two ways; its command;
// and the user column of a system crontab, which every does not read.

// Cron is a crontab line of a jobs file.
type Cron struct {
	// Schedule is the line's time fields joined by one space ("*/5 * * *
	// *"), or its nickname ("@daily", "@every 90s", "@reboot"), without
	// the section's CRON_TZ (Entry.Zone).
	Schedule string
	// Fields is how many time fields the line has: 5, 7, or 1 for a
	// nickname (2 for @every D).
	Fields int
	// Command is the rest of the line, as written: run by Shell -c, with
	// '%' not special.
	Command string
	// Shell is the SHELL of the section, else /bin/sh (every's own SHELL
	// is a login shell's, which cron never uses).
	Shell string
	// Name is the job's default name: the base name of the command's first
	// word, a dash and 8 hex digits of the sha256 of Schedule and Command
	// (jobfiles.CronName).
	Name string
	// Reboot says the schedule is @reboot: the job runs once when every
	// jobs starts, never on a reload.
	Reboot bool
}

// DefaultShell runs a crontab line's command where the file sets no SHELL.
const DefaultShell = "/bin/sh"

// nicknames are the @names a crontab line may start with, as messages list
// them: those of a schedule (docs/GUIDE.md, Cron expressions), @every D and
// @reboot.
const nicknames = "@reboot, @yearly, @annually, @monthly, @weekly, @daily, @midnight, @hourly or @every D"

// word is a blank-separated word of a line, and where it ends.
type word struct {
	text     string
	from, to int
}

// blankWords returns the first n blank-separated words of line, with
// where each starts and ends.
func blankWords(line string, n int) []word {
	var words []word
	for i := 0; i < len(line) && len(words) < n; {
		for i < len(line) && isBlank(line[i]) {
			i++
		}
		j := i
		for j < len(line) && !isBlank(line[j]) {
			j++
		}
		if j > i {
			words = append(words, word{line[i:j], i, j})
		}
		i = j
	}
	return words
}

// fieldShaped reports whether w has the shape of a cron field, cronie's
// random values (6~15, ~) included: those are counted as fields and refused
// by the schedule's parser, with its fix.
func fieldShaped(w string) bool {
	return schedule.IsCronField(w) || strings.Contains(w, "~") && (w == "~" || schedule.IsCronField(strings.ReplaceAll(w, "~", "-")))
}

// parses reports whether fields make a schedule.
func parses(fields []word) error {
	_, err := schedule.Parse(joined(fields), schedule.Options{Zone: time.UTC})
	return err
}

// joined is the words' texts joined by one space.
func joined(ws []word) string {
	texts := make([]string, len(ws))
	for i, w := range ws {
		texts[i] = w.text
	}
	return strings.Join(texts, " ")
}

// readCron reads a crontab line: its schedule and command. The time fields
// are counted as supercronic counts them (7, then 6, then 5): 7 when the
// first seven make a valid schedule (seconds first, a year last); 6, which
// crons read two ways, when the first six have the shape of fields
// (sixField); else 5 (POSIX), or a nickname.
func readCron(line string) (Cron, error) {
	ws := blankWords(line, 8)
	if strings.HasPrefix(ws[0].text, "@") {
		return readNickname(line, ws)
	}
	shaped := 0
	for shaped < len(ws) && shaped < 7 && fieldShaped(ws[shaped].text) {
		shaped++
	}
	var n int
	switch {
	case shaped == 7 && parses(ws[:7]) == nil:
		n = 7
	case shaped >= 6:
		return Cron{}, sixField(line, ws)
	case shaped == 5:
		if err := parses(ws[:5]); err != nil {
			return Cron{}, fmt.Errorf("%v%s", err, randomFix(ws[:5]))
		}
		n = 5
	case shaped == 0:
		return Cron{}, errNotAJob
	default:
		fields := "time fields"
		if shaped == 1 {
			fields = "time field"
		}
		return Cron{}, fmt.Errorf("%d %s (%q): a crontab line has 5 (minute, hour, day of month, month, day of week), or 7 (seconds first, a year last), then the command",
			shaped, fields, joined(ws[:shaped]))
	}
	if len(ws) == n {
		return Cron{}, fmt.Errorf("no command after the %d time fields %q", n, joined(ws[:n]))
	}
	return Cron{Schedule: joined(ws[:n]), Fields: n, Command: line[ws[n].from:]}, nil
}

// randomFix ends the error of a crontab line with a random value (cronie's
// 6~15): the schedule's parser says to give a fixed value and --jitter, and a
// crontab line gives --jitter by an EVERY_JITTER= line above it.
func randomFix(fields []word) string {
	for _, f := range fields {
		if strings.Contains(f.text, "~") {
			return "; above a crontab line, --jitter is an EVERY_JITTER=D line"
		}
	}
	return ""
}

// readNickname reads a crontab line that starts with a nickname.
func readNickname(line string, ws []word) (Cron, error) {
	nick := strings.ToLower(ws[0].text)
	n := 1
	switch {
	case nick == schedule.RebootText:
	case nick == "@every":
		if len(ws) < 2 {
			return Cron{}, fmt.Errorf("@every needs a duration, then the command, as in @every 90s CMD")
		}
		n = 2
		if _, err := schedule.Parse("@every "+ws[1].text, schedule.Options{Zone: time.UTC}); err != nil {
			return Cron{}, fmt.Errorf("@every %s: %v", ws[1].text, err)
		}
	default:
		if _, err := schedule.Parse(nick, schedule.Options{Zone: time.UTC}); err != nil {
			return Cron{}, fmt.Errorf("%q is no nickname: use %s", ws[0].text, nicknames)
		}
	}
	if len(ws) == n {
		return Cron{}, fmt.Errorf("no command after %q", joined(ws[:n]))
	}
	sched := nick
	if n == 2 {
		sched += " " + ws[1].text
	}
	return Cron{Schedule: sched, Fields: n, Command: line[ws[n].from:], Reboot: nick == schedule.RebootText}, nil
}

// sixField is the error of a line whose first six words have the shape of
// cron fields and whose first seven are no schedule: crons read 6 fields
// two ways, and every takes neither (docs/GUIDE.md, Many jobs: every jobs).
// It names both readings and the fixes.
func sixField(line string, ws []word) error {
	six := joined(ws[:6])
	fields := strings.Fields(six)
	var b strings.Builder
	fmt.Fprintf(&b, "6 time fields (%q), which crons read two ways: ", six)
	// supercronic's: a year last, as in 7 fields with second 0.
	yearly := "0 " + six
	_, yerr := schedule.Parse(yearly, schedule.Options{Zone: time.UTC})
	fiveErr := parses(ws[:5])
	switch {
	case yerr == nil:
		fmt.Fprintf(&b, "supercronic takes the sixth for a year (%q as 7 fields)", yearly)
	case fiveErr == nil:
		// supercronic then falls back to 5 fields, the sixth its command's.
		fmt.Fprintf(&b, "supercronic takes the sixth for a year and, %q being none, reads 5 fields and runs %q", fields[5], line[ws[5].from:])
	default:
		fmt.Fprintf(&b, "supercronic takes the sixth for a year (and finds no schedule: %v)", yerr)
	}
	// Spring's, croner's, robfig/cron's with seconds: seconds first.
	if _, err := schedule.Parse(six, schedule.Options{Zone: time.UTC}); err == nil {
		fmt.Fprintf(&b, ", Spring, croner and robfig/cron take the first for seconds (%q as 7 fields)", six+" *")
	} else {
		fmt.Fprintf(&b, ", Spring, croner and robfig/cron take the first for seconds (and find no schedule: %v)", err)
	}
	b.WriteString("; say which: write 7 fields, seconds first and a year last")
	if y := fields[5]; (y == "*" || y == "?") && fiveErr == nil {
		fmt.Fprintf(&b, ", or the 5 of POSIX cron (%q)", strings.Join(fields[:5], " "))
	}
	fmt.Fprintf(&b, ", or an every line, where 6 fields are seconds first: every '%s' -- CMD", six)
	return fmt.Errorf("%s", b.String())
}

// userColumn returns the error of a crontab line whose command's first word
// is a user name and no command on path: the user column of /etc/crontab
// and /etc/cron.d, which every does not read (docs/GUIDE.md, Many jobs:
// every jobs).
func userColumn(first, path string, cfg Config) error {
	if first == "" || strings.ContainsAny(first, "/=$`'\"\\") || !cfg.isUser(first) || cfg.isCommand(first, path) {
		return nil
	}
	return fmt.Errorf("%q looks like /etc/crontab's user column; every jobs runs every job as its own user: drop it", first)
}

// isCommand reports whether name is an executable file in a directory of
// path, as a shell finds a command.
func isCommand(name, path string) bool {
	for _, dir := range filepath.SplitList(path) {
		if dir == "" {
			dir = "."
		}
		st, err := os.Stat(filepath.Join(dir, name))
		if err == nil && st.Mode().IsRegular() && st.Mode().Perm()&0o111 != 0 {
			return true
		}
	}
	return false
}

// firstWord is the first word of a shell command, as far as it can be told
// without a shell: its first blank-separated word.
func firstWord(command string) string {
	if ws := blankWords(command, 1); len(ws) > 0 {
		return ws[0].text
	}
	return ""
}

// cronName is the default name of a crontab line's job.
func cronName(c Cron) string {
	return jobfiles.CronName(firstWord(c.Command), c.Schedule, c.Command)
}

// unquotedCron recognises an every line whose cron expression is not
// quoted (every 0 3 * * * CMD), which a shell would have split and globbed:
// it returns the expression, as the longest of 7, 6 or 5 of the words after
// every that makes a schedule (6 fields are seconds first on an every line),
// with the CRON_TZ= or TZ= word before them, if there is one.
func unquotedCron(line string) (string, bool) {
	ws := blankWords(line, 9)[1:]
	var zone []word
	if len(ws) > 0 && (strings.HasPrefix(ws[0].text, "CRON_TZ=") || strings.HasPrefix(ws[0].text, "TZ=")) {
		zone, ws = ws[:1], ws[1:]
	}
	shaped := 0
	for shaped < len(ws) && shaped < 7 && schedule.IsCronField(ws[shaped].text) {
		shaped++
	}
	for n := shaped; n >= 5; n-- {
		if expr := append(slices.Clone(zone), ws[:n]...); parses(expr) == nil {
			return joined(expr), true
		}
	}
	return "", false
}
