package metrics

// This file writes the metrics file: atomically, never over a file that is
// not every's metrics (or that every did not write last), leftovers removed.

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/everycli/every/internal/pid"
	"github.com/everycli/every/internal/regular"
)

// tempPrefix starts the names of the file's temporary files, followed by the
// writer's pid, so that leftovers of dead writers can be removed. They never
// end in ".prom", so node_exporter never reads one.
func tempPrefix(path string) string {
	return "." + filepath.Base(path) + ".tmp-"
}

// writeFile replaces the file at path with b, atomically: a temporary file
// in the same directory, mode Mode whatever the umask, renamed over it. The
// temporary file is removed on any error. What is at path is replaced only
// if it is the file written last (written, updated), or else a metrics file
// (see replaceable).
//
// It is not synced. Writes are on the loop's path, at every run, and an fsync
// costs milliseconds; what a power cut could lose is a file rewritten from the
// state at the next start (an empty file is a valid, empty exposition).
func writeFile(path string, b []byte, written *lastFile) (err error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), tempPrefix(path)+strconv.Itoa(os.Getpid())+"-*")
	if err != nil {
		return fmt.Errorf("write metrics %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			_ = tmp.Close()
			_ = os.Remove(tmp.Name())
			err = fmt.Errorf("write metrics %s: %w", path, err)
		}
	}()
	_, err = tmp.Write(b)
	if err == nil {
		// Chmod, unlike the mode given at creation, is not masked by the umask.
		err = tmp.Chmod(Mode)
	}
	var fi fs.FileInfo
	if err == nil {
		fi, err = tmp.Stat()
	}
	if err == nil {
		err = replaceable(path, written.id)
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err == nil {
		written.release()
		*written = lastFile{idOf(fi), tmp}
	}
	return err
}

// lastFile is the file a File last put at its path. Its descriptor stays
// open until the next write: while it is open the kernel cannot free the
// inode, so no file put there since (a script written over a removed metrics
// file) can come with the same inode number and be taken for it.
type lastFile struct {
	id fileID
	fd *os.File
}

// release closes the descriptor held, if any.
func (l *lastFile) release() {
	if l.fd != nil {
		_ = l.fd.Close()
		l.fd = nil
	}
}

// fileID tells one file from another: its device and inode. The zero value
// is no file.
type fileID struct{ dev, ino uint64 }

// idOf is the fileID of fi, or the zero value where it cannot be known.
func idOf(fi fs.FileInfo) fileID {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return fileID{uint64(st.Dev), st.Ino}
	}
	return fileID{}
}

// replaceable checks that what is at path may be replaced: nothing, the file
// written last (written), or another regular file that is a metrics file (see
// isMetrics; ErrNotMetrics). A link, a directory, a FIFO, a device or a
// socket put there is refused, as Check refuses it at start-up. The file
// written last is known by its inode, so that the steady state costs no
// read: only a file put there since, by someone else, is read.
func replaceable(path string, written fileID) error {
	fi, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return err
	case !fi.Mode().IsRegular():
		return &fs.PathError{Op: "replace", Path: path, Err: regular.NotMode(fi.Mode())}
	case written != fileID{} && idOf(fi) == written:
		return nil
	}
	return ownKind(path)
}

// metricsHead is what every's exposition starts with.
const metricsHead = "# HELP every_"

// isMetrics reports whether a file that starts with head may be replaced by
// a metrics file: it is empty (created for every to fill), or every's
// exposition. Anything else (a script, a state record, a lock file that
// is not empty, another exporter's metrics) is someone's.
func isMetrics(head []byte) bool {
	return len(head) == 0 || strings.HasPrefix(string(head), metricsHead)
}

// ownKind reads the start of the regular file at path, without following a
// link or blocking, and returns an error wrapping ErrNotMetrics unless
// isMetrics.
func ownKind(path string) error {
	fd, err := regular.Open(path, syscall.O_RDONLY, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil // gone since the Lstat: nothing to lose
	}
	if err != nil {
		return err
	}
	defer syscall.Close(fd)
	head := make([]byte, len(metricsHead))
	n := 0
	for n < len(head) {
		m, err := syscall.Read(fd, head[n:])
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil {
			return &fs.PathError{Op: "read", Path: path, Err: err}
		}
		if m == 0 {
			break
		}
		n += m
	}
	if !isMetrics(head[:n]) {
		return &fs.PathError{Op: "replace", Path: path, Err: ErrNotMetrics}
	}
	return nil
}

// Check returns an error when the metrics file cannot be written: its
// directory is missing (it is not created: it is node_exporter's, and a typo
// must not go unseen) or takes no new file, the path is not a regular file
// (a symbolic link, a directory, a FIFO...: ErrNotRegular), or the file there
// is not a metrics file (ErrNotMetrics), which would be lost to its owner. It
// removes the temporary files of writers that died, as
// state.File.CheckWritable does.
func Check(path string) error {
	if path == "" || strings.HasSuffix(path, "/") {
		return fmt.Errorf("metrics file %q names no file", path)
	}
	dir := filepath.Dir(path)
	fi, err := os.Stat(dir)
	switch {
	case err != nil:
		return fmt.Errorf("metrics file %s: directory: %w", path, err)
	case !fi.IsDir():
		return fmt.Errorf("metrics file %s: %w", path, &fs.PathError{Op: "stat", Path: dir, Err: syscall.ENOTDIR})
	}
	removeLeftovers(path)
	tmp, err := os.CreateTemp(dir, tempPrefix(path)+strconv.Itoa(os.Getpid())+"-*")
	if err != nil {
		return fmt.Errorf("metrics file %s: directory takes no new file: %w", path, err)
	}
	tmp.Close()
	if err := os.Remove(tmp.Name()); err != nil {
		return fmt.Errorf("metrics file %s: %w", path, err)
	}
	if err := replaceable(path, fileID{}); err != nil {
		return fmt.Errorf("metrics file %s: %w", path, err)
	}
	return nil
}

// removeLeftovers removes the temporary files of writers that are gone (a
// crash between a temporary file's creation and its rename). One named with
// this process's pid is an earlier process's, or, just made, that of an
// every in another container sharing the directory with this pid (each PID
// 1): it is removed once it is a second old.
func removeLeftovers(path string) {
	dir := filepath.Dir(path)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), tempPrefix(path))
		if !ok {
			continue
		}
		writer, err := strconv.Atoi(strings.SplitN(rest, "-", 2)[0])
		if writer == os.Getpid() {
			if info, ierr := e.Info(); ierr != nil || time.Since(info.ModTime()) < time.Second {
				continue
			}
		}
		if err != nil || writer == os.Getpid() || !pid.Alive(writer) {
			_ = os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}
