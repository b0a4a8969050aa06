package cli

import (
	"errors"
	"fmt"
	"io"
	"syscall"
)

// This file owns what every does when its own output cannot be written
// (SPEC sections 7 and 12): every status, every next, every completion, help
// and the version stop at the first write error. A reader that went away
// (EPIPE: every status | head -1) ends every at once and quietly, with the
// status a shell reports for a filter killed by SIGPIPE (141, as for
// yes | head -1 under pipefail); any other error (a full disk) is one line
// and exit 74. Never an exit 0 after lost output.

// Exit statuses of output that could not be written.
const (
	exitIOErr = 74                         // EX_IOERR
	exitPipe  = 128 + int(syscall.SIGPIPE) // the reader went away
)

// output is every's stdout for what every prints itself. It keeps the first
// write error and writes nothing after it: the rest of a listing is not
// tried against a full disk or a closed pipe, and err says what happened.
type output struct {
	w   io.Writer
	err error
}

func (o *output) Write(p []byte) (int, error) {
	if o.err != nil {
		return 0, o.err
	}
	n, err := o.w.Write(p)
	if err == nil && n < len(p) {
		err = io.ErrShortWrite
	}
	if err != nil {
		o.err = err
	}
	return n, err
}

// outputEnd is every's exit status once it has printed what it had to: code
// if all of it was written; for a closed pipe exitPipe, quietly (not by the
// signal itself: Go's runtime keeps its own handler for SIGPIPE, so every
// could not die of it at once); for another write error, one line on
// stderr and exitIOErr.
func outputEnd(o *output, code int, stderr io.Writer) int {
	switch {
	case o.err == nil:
		return code
	case errors.Is(o.err, syscall.EPIPE):
		return exitPipe
	}
	fmt.Fprintf(stderr, "every: cannot write to stdout: %v\n", unwrapPath(o.err))
	return exitIOErr
}
