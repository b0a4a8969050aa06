package regular

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// OpenExisting refuses what is not a regular file by its Lstat, before any
// open: a FIFO with no reader is named a FIFO (an open for writing would
// have failed with ENXIO, named a socket or a device), a link a link; a
// regular file opens, a missing one is fs.ErrNotExist.
func TestOpenExisting(t *testing.T) {
	dir := t.TempDir()
	file, fifo, link := filepath.Join(dir, "f"), filepath.Join(dir, "p"), filepath.Join(dir, "l")
	if err := os.WriteFile(file, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(file, link); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		path, want string // want: the error's text; empty: opens
	}{
		{file, ""},
		{fifo, "is a FIFO, not a regular file"},
		{link, "is a symbolic link, not a regular file"},
		{dir, "is a directory, not a regular file"},
	} {
		fd, err := OpenExisting(tt.path, unix.O_WRONLY, 0)
		if tt.want == "" {
			if err != nil {
				t.Errorf("%s: %v, want it open", tt.path, err)
			}
			unix.Close(fd)
			continue
		}
		if err == nil {
			unix.Close(fd)
		}
		var pe *fs.PathError
		if !errors.As(err, &pe) || !errors.Is(err, ErrNotRegular) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want a *fs.PathError that %s", tt.path, err, tt.want)
		}
	}
	if _, err := OpenExisting(filepath.Join(dir, "none"), unix.O_RDONLY, 0); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v, want fs.ErrNotExist", err)
	}
}
