// Package regular owns the refusal of a path that is not a regular file
// (a link, a directory, a device, a FIFO, a socket), shared by the lock and
// state files: one sentinel, one way to say what the path is instead.
package regular

import (
	"errors"
	"io/fs"
)

// ErrNotRegular is the error, wrapped in an *fs.PathError, of a path that
// exists but is not a regular file.
var ErrNotRegular = errors.New("not a regular file")

// notRegular says what a refused path is instead of a regular file.
type notRegular struct{ is string }

func (e notRegular) Error() string { return "is " + e.is + ", not a regular file" }

// Is makes errors.Is(err, ErrNotRegular) true.
func (e notRegular) Is(target error) bool { return target == ErrNotRegular }

// Not is the error of a path that is what instead of a regular file ("a
// FIFO").
func Not(what string) error { return notRegular{what} }

// NotMode is the error of a path of this mode, which is not a regular file.
func NotMode(mode fs.FileMode) error { return notRegular{Kind(mode)} }

// Kind names a file type that is not a regular file, for messages.
func Kind(mode fs.FileMode) string {
	switch {
	case mode&fs.ModeSymlink != 0:
		return "a symbolic link"
	case mode.IsDir():
		return "a directory"
	case mode&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case mode&fs.ModeSocket != 0:
		return "a socket"
	case mode&fs.ModeDevice != 0:
		return "a device"
	}
	return "not a regular file (" + mode.Type().String() + ")"
}
