// Package jobsfile reads the files of every jobs: one job a line, as an every
// command line or a crontab line, below NAME=value lines that set the
// environment, the options' defaults (EVERY_<OPTION>=) and the cron lines'
// zone (CRON_TZ=) of the jobs below them. It is a parser: it reads files and
// says where each job is and what it says, with every error of every line;
// whether the options of an every line are right is internal/cli's to
// check, with the same flag table as a standalone every
// (docs/GUIDE.md, Many jobs: every jobs).
package jobsfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/everycli/every/internal/regular"
	"github.com/everycli/every/internal/ui"
	"github.com/everycli/every/schedule"
)

// Entry is one job line of a jobs file: an every line (Every) or a crontab
// line (Cron), with the settings of the lines above it in its file.
type Entry struct {
	File string // the file's path, as given or joined to its directory's
	Line int    // the line's number, from 1

	// Every is an every line's words after "every", split as sh splits
	// them; nil for a crontab line.
	Every []string
	// Cron is a crontab line; nil for an every line.
	Cron *Cron

	// Defaults are the EVERY_<OPTION>= lines above the entry in its file
	// that are in force (the last of each option; one with an empty value
	// drops the option's), in the order of their lines.
	Defaults []Default
	// Env is the environment the NAME=value lines above the entry set, as
	// NAME=value, in the order of their lines (the last of each name);
	// EVERY_*, CRON_TZ and MAILTO are not in it.
	Env []string
	// Zone is the CRON_TZ in force above the entry ("" for none: the
	// local zone). It is the zone of a crontab line's schedule; an every
	// line takes its zone from its own --tz or EVERY_TZ=, as a standalone
	// every does.
	Zone string
}

// Default is an EVERY_<OPTION>=value line: the default of that option for
// the jobs below it in its file.
type Default struct {
	File   string
	Line   int
	Var    string // as written: EVERY_TIMEOUT
	Option string // the option it sets, without dashes: timeout
	Value  string
}

// LineError is what is wrong with a line of a jobs file (Line 0: with the
// file itself), and the fix.
type LineError struct {
	File string
	Line int
	Err  error
}

// Error is FILE:LINE: what, and the fix.
func (e *LineError) Error() string {
	if e.Line == 0 {
		return fmt.Sprintf("%s: %v", e.File, e.Err)
	}
	return fmt.Sprintf("%s:%d: %v", e.File, e.Line, e.Err)
}

// Unwrap returns the error of the line.
func (e *LineError) Unwrap() error { return e.Err }

// Errors are all the errors of the files read, in the order of the files
// and their lines. Read and Parse return them as one error; errors.As
// finds them.
type Errors []*LineError

// Error is one line per error.
func (es Errors) Error() string {
	lines := make([]string, len(es))
	for i, e := range es {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}

// Config is what the parser asks of the world.
type Config struct {
	// IsOption reports whether option (as after "--": "timeout",
	// "retry-on") is an option of a job: EVERY_<OPTION>= lines may set
	// the defaults of those only. Nil: none is.
	IsOption func(option string) bool
	// IsUser reports whether name is a user of this system; nil: looked up
	// with os/user (/etc/passwd, or NSS where cgo is in).
	IsUser func(name string) bool
	// IsCommand reports whether name is a command in the directories of
	// path; nil: an executable regular file in one of them.
	IsCommand func(name, path string) bool
	// Path is the PATH that a crontab line's first word is looked up in
	// where its file sets none; "" means every's own ($PATH).
	Path string
}

func (c Config) isOption(name string) bool { return c.IsOption != nil && c.IsOption(name) }

func (c Config) isUser(name string) bool {
	if c.IsUser != nil {
		return c.IsUser(name)
	}
	_, err := user.Lookup(name)
	return err == nil
}

func (c Config) isCommand(name, path string) bool {
	if c.IsCommand != nil {
		return c.IsCommand(name, path)
	}
	return isCommand(name, path)
}

// Suffix ends the names of the files a directory's jobs are read from.
const Suffix = ".tab"

// MaxSize is the largest jobs file read: far more than any crontab, and
// bounded, so that a wrong path never fills the memory.
const MaxSize = 16 << 20

// Files is what Read read.
type Files struct {
	// Names are the files read, and the paths that could not be, in the
	// order they were read: the order of Entries and of the errors.
	Names []string
	// Entries are the jobs of the good lines, in the order of the files and
	// their lines.
	Entries []Entry
	// Defaults are all the EVERY_<OPTION>= lines that set a default, in
	// the order of the files and their lines, whether or not a job is
	// below them: every value is checked.
	Defaults []Default
	Warnings []*LineError
}

// Read reads the jobs files and directories at paths, in order: a file as
// it is (a link followed), a directory as its files named *.tab, in the
// order of their names (links to files followed, names starting with a dot
// skipped, subdirectories not read). It returns every job and warning of
// them all and, when a path or a line is wrong, Errors: all of them (the
// Entries are then those of the good lines, for a caller that checks them
// further).
func Read(paths []string, cfg Config) (Files, error) {
	if cfg.Path == "" {
		cfg.Path = os.Getenv("PATH")
	}
	var read Files
	var errs Errors
	for _, path := range paths {
		files, err := filesOf(path)
		if err != nil {
			read.Names = append(read.Names, path)
			errs = append(errs, err)
			continue
		}
		for _, f := range files {
			read.Names = append(read.Names, f)
			data, err := readFile(f)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			file, perr := Parse(f, data, cfg)
			read.Entries = append(read.Entries, file.Entries...)
			read.Defaults = append(read.Defaults, file.Defaults...)
			read.Warnings = append(read.Warnings, file.Warnings...)
			var fileErrs Errors
			if errors.As(perr, &fileErrs) {
				errs = append(errs, fileErrs...)
			}
		}
	}
	if len(errs) > 0 {
		return read, errs
	}
	return read, nil
}

// filesOf returns the files path stands for: itself, or a directory's
// *.tab files in name order.
func filesOf(path string) ([]string, *LineError) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, &LineError{File: path, Err: pathError(err)}
	}
	if !st.IsDir() {
		return []string{path}, nil
	}
	dir, err := os.ReadDir(path) // in name order
	if err != nil {
		return nil, &LineError{File: path, Err: pathError(err)}
	}
	var files []string
	for _, e := range dir {
		name := e.Name()
		if strings.HasPrefix(name, ".") || !strings.HasSuffix(name, Suffix) {
			continue
		}
		full := filepath.Join(path, name)
		if e.IsDir() {
			continue
		}
		if e.Type()&fs.ModeSymlink != 0 {
			// A ConfigMap's files are links into its ..data directory.
			if st, err := os.Stat(full); err == nil && st.IsDir() {
				continue
			}
		}
		files = append(files, full)
	}
	if len(files) == 0 {
		return nil, &LineError{File: path, Err: fmt.Errorf("a directory with no *%s file: put the jobs in files named *%s, or name the file itself", Suffix, Suffix)}
	}
	return files, nil
}

// pathError says why a path cannot be read, without repeating it.
func pathError(err error) error {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return errors.New("no such file or directory")
	case errors.Is(err, fs.ErrPermission):
		return errors.New("permission denied: every reads its jobs files as its own user")
	}
	return ui.UnwrapPath(err)
}

// readFile reads a jobs file: a regular file (a link followed), opened
// without blocking, so that a FIFO or a device is refused, not waited on.
func readFile(path string) ([]byte, *LineError) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if err != nil {
		return nil, &LineError{File: path, Err: pathError(err)}
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, &LineError{File: path, Err: pathError(err)}
	}
	if !st.Mode().IsRegular() {
		return nil, &LineError{File: path, Err: regular.NotMode(st.Mode())}
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxSize+1))
	switch {
	case err != nil:
		return nil, &LineError{File: path, Err: pathError(err)}
	case len(data) > MaxSize:
		return nil, &LineError{File: path, Err: fmt.Errorf("larger than %d MiB: not a jobs file", MaxSize>>20)}
	}
	return data, nil
}

// errNotAJob is the error of a line that is none of the forms.
var errNotAJob = errors.New("not a job: a line is an every command line (every 90s -- CMD), a crontab line (*/5 * * * * CMD), NAME=value, or a # comment")

// section is what the lines read so far set for the lines below them.
type section struct {
	defaults []Default
	env      []string
	zone     string
	shell    string
	path     string // PATH, for the user column's check
	mailto   bool   // MAILTO warned of
}

// Parse reads the jobs file name, whose content is data. It returns its
// jobs, defaults and warnings and, when lines are wrong, Errors: every bad
// line's (the entries are then those of the good lines).
func Parse(name string, data []byte, cfg Config) (Files, error) {
	if cfg.Path == "" {
		cfg.Path = os.Getenv("PATH")
	}
	p := parser{file: name, cfg: cfg, sec: section{shell: DefaultShell, path: cfg.Path}}
	text := string(data)
	for n := 1; text != ""; n++ {
		line, rest, _ := strings.Cut(text, "\n")
		text = rest
		p.line(n, line)
	}
	read := Files{Names: []string{name}, Entries: p.entries, Defaults: p.defaults, Warnings: p.warnings}
	if len(p.errs) > 0 {
		return read, p.errs
	}
	return read, nil
}

// parser reads one file's lines.
type parser struct {
	file     string
	cfg      Config
	sec      section
	entries  []Entry
	defaults []Default
	warnings []*LineError
	errs     Errors
}

func (p *parser) fail(n int, err error) {
	p.errs = append(p.errs, &LineError{File: p.file, Line: n, Err: err})
}

// line reads line n.
func (p *parser) line(n int, line string) {
	indent := len(line)
	line = trimBlanks(line)
	indent -= len(line)
	for len(line) > 0 && isBlank(line[len(line)-1]) {
		line = line[:len(line)-1] // a CRLF file's \r too
	}
	switch {
	case line == "" || line[0] == '#':
		return
	case strings.IndexByte(line, 0) >= 0:
		p.fail(n, errors.New("a NUL byte: a jobs file is text"))
		return
	}
	if name, value, ok, problem := envLine(line); ok {
		p.setting(n, name, value)
		return
	} else if problem != "" {
		p.fail(n, fmt.Errorf("not a NAME=value line as cron reads it: %s", problem))
		return
	}
	if w := blankWords(line, 1)[0].text; w == "every" {
		p.everyLine(n, line, indent)
		return
	}
	p.cronLine(n, line)
}

// entry is a new entry at line n, with the section's settings.
func (p *parser) entry(n int) Entry {
	return Entry{File: p.file, Line: n, Defaults: slices.Clone(p.sec.defaults), Env: slices.Clone(p.sec.env), Zone: p.sec.zone}
}

// everyLine reads an every line, after indent blanks.
func (p *parser) everyLine(n int, line string, indent int) {
	words, err := shellWords(line, indent)
	switch {
	case err != nil:
		if expr, ok := unquotedCron(line); ok {
			err = fmt.Errorf("bad schedule: a cron expression is one argument; quote it: every '%s' -- CMD", expr)
		}
		p.fail(n, err)
	case len(words) < 2:
		p.fail(n, errors.New("every with no schedule or command: write every SCHEDULE [OPTIONS] -- COMMAND, as in every 90s -- ./sync.sh"))
	default:
		e := p.entry(n)
		e.Every = words[1:]
		p.entries = append(p.entries, e)
	}
}

// cronLine reads a crontab line.
func (p *parser) cronLine(n int, line string) {
	c, err := readCron(line)
	if err == nil {
		err = userColumn(firstWord(c.Command), p.sec.path, p.cfg)
	}
	if err != nil {
		p.fail(n, err)
		return
	}
	c.Shell = p.sec.shell
	c.Name = cronName(c)
	e := p.entry(n)
	e.Cron = &c
	p.entries = append(p.entries, e)
}

// setting reads a NAME=value line.
func (p *parser) setting(n int, name, value string) {
	switch {
	case name == "":
		p.fail(n, errors.New("a setting with no name: write NAME=value"))
	case name == "CRON_TZ":
		if value == "" {
			p.sec.zone = "" // back to the local zone
			return
		}
		if _, err := schedule.LoadZone(value); err != nil {
			p.fail(n, fmt.Errorf("CRON_TZ=%s: %v", value, err))
			return
		}
		p.sec.zone = value
	case name == "MAILTO":
		// MAILTO="" asks cron for no mail: every sends none anyway.
		if value != "" && !p.sec.mailto {
			p.sec.mailto = true
			p.warnings = append(p.warnings, &LineError{File: p.file, Line: n, Err: errMailto})
		}
	case strings.HasPrefix(name, "EVERY_"):
		p.option(n, name, value)
	default:
		if name == "SHELL" {
			p.sec.shell = value
			if value == "" {
				p.sec.shell = DefaultShell
			}
		}
		if name == "PATH" {
			p.sec.path = value
		}
		p.sec.env = slices.DeleteFunc(p.sec.env, func(kv string) bool { return strings.HasPrefix(kv, name+"=") })
		p.sec.env = append(p.sec.env, name+"="+value)
	}
}

// errMailto is the warning of a MAILTO line.
var errMailto = errors.New(`MAILTO is not read: every sends no mail; to be told of a failure, set a hook above the jobs, such as EVERY_ON_FAILURE='mail -s "$EVERY_NAME failed" ops@example.com < "$EVERY_OUTPUT"' (--on-failure, with the output's tail in $EVERY_OUTPUT)`)

// option reads an EVERY_<OPTION>=value line: the option's default for the
// jobs below.
func (p *parser) option(n int, name, value string) {
	option := strings.ReplaceAll(strings.ToLower(strings.TrimPrefix(name, "EVERY_")), "_", "-")
	switch {
	case name == "EVERY_NAME":
		p.fail(n, errors.New("EVERY_NAME is no default: each job has a name of its own; give --name on its every line"))
		return
	case !p.cfg.isOption(option) || name != "EVERY_"+strings.ToUpper(strings.ReplaceAll(option, "-", "_")):
		p.fail(n, fmt.Errorf("%s is no option of a job (EVERY_<OPTION> lines set the options' defaults: EVERY_TIMEOUT=60s is --timeout 60s); see every --help for the options, or use a name without EVERY_ for the jobs' environment", name))
		return
	}
	p.sec.defaults = slices.DeleteFunc(p.sec.defaults, func(d Default) bool { return d.Option == option })
	if value != "" {
		// An empty value drops the default, as an empty variable counts as unset.
		d := Default{File: p.file, Line: n, Var: name, Option: option, Value: value}
		p.sec.defaults = append(p.sec.defaults, d)
		p.defaults = append(p.defaults, d)
	}
}

// trimBlanks drops leading blanks.
func trimBlanks(s string) string {
	for len(s) > 0 && isBlank(s[0]) {
		s = s[1:]
	}
	return s
}
