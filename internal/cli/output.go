package cli

import (
	"errors"
	"fmt"
	"io"
	"syscall"

	"github.com/everycli/every/internal/ui"
)

// This file owns what every does when its own output cannot be written
// (docs/REFERENCE.md, Exit status: 74): every status, every next, every
// completion, help and the version stop at the first write error. A reader
// that went away (EPIPE: every status | head -1) ends every at once and
// quietly, with the status a shell reports for a filter killed by SIGPIPE
// (141, as for yes | head -1 under pipefail); any other error (a full disk)
// is one line and exit 74. Never an exit 0 after lost output.

// Output is every's stdout for what every prints itself. It keeps the first
// write error and writes nothing after it: the rest of a listing is not
// tried against a full disk or a closed pipe, and err says what happened.
type Output struct {
	w   io.Writer
	err error
}

// NewOutput is an Output that writes to w.
func NewOutput(w io.Writer) *Output { return &Output{w: w} }

// Err is the first write error; nil if all was written.
func (o *Output) Err() error { return o.err }

func (o *Output) Write(p []byte) (int, error) {
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

// End is every's exit status once it has printed what it had to: code
// if all of it was written; for a closed pipe ui.ExitPipe, quietly (not by the
// signal itself: Go's runtime keeps its own handler for SIGPIPE, so every
// could not die of it at once); for another write error, one line on
// stderr and ui.ExitIOErr.
func (o *Output) End(code int, stderr io.Writer) int {
	switch {
	case o.err == nil:
		return code
	case errors.Is(o.err, syscall.EPIPE):
		return ui.ExitPipe
	}
	fmt.Fprintf(stderr, "every: cannot write to stdout: %v\n", ui.UnwrapPath(o.err))
	return ui.ExitIOErr
}
