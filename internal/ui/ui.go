// Package ui makes the lines every shows people of itself, and holds its
// exit statuses. Its rules, as age's cmd/age keeps them in one place:
//
//   - a line is "every: " and one sentence, lowercase, that names what is
//     wrong, the bad value quoted (%q) once, and ends with what to do;
//   - a bad option value is always BadFlag's one shape:
//     bad --FLAG "VALUE": REASON; HINT (docs/GUIDE.md, The command line);
//   - a path is quoted once, with the operation and path that
//     *fs.PathError repeats dropped (UnwrapPath);
//   - bad usage is a UsageError, exit 2, before anything runs or any file
//     is written; what it is, is decided with errors.As, never by its words.
package ui

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"syscall"
)

// Exit statuses that are every's own (docs/REFERENCE.md, Exit status).
const (
	ExitMaxFailures = 1
	ExitUsage       = 2
	ExitInternal    = 70                         // EX_SOFTWARE
	ExitCantCreate  = 73                         // EX_CANTCREAT: the state directory or file
	ExitIOErr       = 74                         // EX_IOERR: every's own output could not be written
	ExitLockBusy    = 75                         // EX_TEMPFAIL, as flock -n -E 75
	ExitPipe        = 128 + int(syscall.SIGPIPE) // the reader of every's output went away
)

// Report prints an error as every's one line: "every: " and the message,
// which names the bad value and ends with what to do.
func Report(stderr io.Writer, err error) {
	fmt.Fprintf(stderr, "every: %v\n", err)
}

// UsageError is bad usage: one line naming the bad value and what to do. It
// exits 2 before anything runs or any file is written.
type UsageError struct{ msg string }

func (e UsageError) Error() string { return e.msg }

// Usagef is a UsageError with a message made as fmt.Sprintf makes it.
func Usagef(format string, args ...any) error {
	return UsageError{fmt.Sprintf(format, args...)}
}

// BadFlag is the one shape of a bad option value: bad FLAG "VALUE": REASON;
// HINT. flag is how the value came, "--timeout" or the variable
// "EVERY_TIMEOUT"; hint may be empty where the reason says what to do.
func BadFlag(flag, value, reason, hint string) error {
	if hint != "" {
		reason += "; " + hint
	}
	return UsageError{fmt.Sprintf("bad %s %q: %s", flag, value, reason)}
}

// UnwrapPath drops the operation and path that *fs.PathError repeats, for
// a message that names the path itself.
func UnwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
