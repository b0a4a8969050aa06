package state

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// File is a Record kept in a JSON file. Writes go to a temporary file in the
// same directory, which is synced and renamed over the record, and the
// directory is synced (after a run's end; see Save): a crash at any moment
// leaves the old record or the new one, never a torn one.
type File struct {
	Path string
}

// Where is the file's path.
func (f File) Where() string { return f.Path }

// Load reads the record. One that cannot be parsed is renamed to
// <file>.corrupt-<unix seconds>.
func (f File) Load(context.Context) (*Record, error) {
	b, err := os.ReadFile(f.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	r, err := Decode(b)
	if err == nil {
		return r, nil
	}
	moved := f.Path + ".corrupt-" + strconv.FormatInt(time.Now().Unix(), 10)
	if rerr := os.Rename(f.Path, moved); rerr != nil {
		return nil, fmt.Errorf("state %s cannot be parsed (%v) nor set aside: %w", f.Path, err, rerr)
	}
	return nil, &CorruptError{Where: f.Path, MovedTo: moved, Err: err}
}

// tempPrefix starts the names of a record's temporary files; the pid that
// follows tells whose they are, so leftovers of dead writers can be removed.
func (f File) tempPrefix() string {
	return "." + filepath.Base(f.Path) + ".tmp-"
}

// Save writes the record atomically, mode 0600. A write that fails removes
// its temporary file; one cut short by a crash is removed by the next
// CheckWritable, at start-up.
func (f File) Save(_ context.Context, r *Record) error {
	b, err := Encode(r)
	if err != nil {
		return err
	}
	dir := filepath.Dir(f.Path)
	tmp, err := os.CreateTemp(dir, f.tempPrefix()+strconv.Itoa(os.Getpid())+"-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // after a successful rename, there is nothing to remove
	_, err = tmp.Write(b)
	if err == nil {
		// The data must be on disk before the rename that publishes it, or a
		// power cut could leave an empty file under the record's name.
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), f.Path)
	}
	if err != nil {
		return fmt.Errorf("write state %s: %w", f.Path, err)
	}
	// The rename is atomic already; the directory's sync makes it durable.
	// A run's start (running: true) need not be: if a power cut loses it, the
	// record before it stands, and the run looks cut short, which it was.
	if r.Running {
		return nil
	}
	if err := syncDir(dir); err != nil {
		return fmt.Errorf("write state %s: sync directory: %w", f.Path, err)
	}
	return nil
}

// removeLeftovers removes the temporary files of writers that died (a crash
// between creating one and renaming it). Every start-up does it, so they
// never pile up: there is at most one, of the last crash, per job.
func (f File) removeLeftovers() {
	dir := filepath.Dir(f.Path)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	prefix := f.tempPrefix()
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), prefix)
		if !ok {
			continue
		}
		pid, err := strconv.Atoi(strings.SplitN(rest, "-", 2)[0])
		if err != nil || pid == os.Getpid() || !alive(pid) {
			_ = os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}

// alive reports whether a process with this pid exists (on this host).
func alive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// CheckWritable makes sure the record's directory exists (created 0700) and
// takes a new file, and that an existing record can be read: the start-up
// check, before anything runs.
func (f File) CheckWritable() error {
	dir := filepath.Dir(f.Path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	f.removeLeftovers()
	tmp, err := os.CreateTemp(dir, f.tempPrefix()+strconv.Itoa(os.Getpid())+"-*")
	if err != nil {
		return err
	}
	tmp.Close()
	if err := os.Remove(tmp.Name()); err != nil {
		return err
	}
	if fh, err := os.Open(f.Path); err == nil {
		fh.Close()
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}
