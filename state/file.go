package state

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"

	"github.com/everycli/every/internal/regular"
)

// File is a Record kept in a JSON file. Writes go to a temporary file in the
// same directory, renamed over the record: a crash of every at any moment
// leaves the old record or the new one, never a torn one. Sync makes it
// durable (see durable.go): a power loss never leaves it empty or torn.
//
// The path is every's own: a symbolic link there is never followed (a write
// replaces the link, a read refuses it), and a directory, a device, a FIFO
// or a socket there is refused (ErrNotRegular) and never opened in a way that
// can block.
type File struct {
	Path string
	// Period is the job's schedule's period, for the Sane check of Load; 0
	// when not known (UnknownPeriod then stands for it).
	Period time.Duration
}

// ErrNotRegular is the error, wrapped in an *fs.PathError, of a state path
// that exists but is not a regular file.
var ErrNotRegular = regular.ErrNotRegular

// ErrNotRecord is the error, wrapped in an *fs.PathError, of a state path
// that holds a file of another kind than a record (a script, a lock file, a
// log): CheckWritable refuses it, where Load would set it aside and put a
// record in its place.
var ErrNotRecord = errors.New("not a state record: it does not start with '{'")

// errTooLarge is a state file over MaxSize: corrupt.
var errTooLarge = fmt.Errorf("larger than %d bytes", MaxSize)

// Where is the file's path.
func (f File) Where() string { return f.Path }

// openRegular opens path for reading if it is a regular file: never through a
// link at the path, never blocking, never opening a device or a FIFO at all
// (Lstat first; the fstat closes the race). A missing file is fs.ErrNotExist.
func openRegular(path string) (*os.File, fs.FileInfo, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return nil, nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, nil, &fs.PathError{Op: "open", Path: path, Err: regular.NotMode(fi.Mode())}
	}
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	switch {
	case errors.Is(err, unix.ELOOP) || errors.Is(err, unix.EMLINK): // FreeBSD says EMLINK
		return nil, nil, &fs.PathError{Op: "open", Path: path, Err: regular.Not("a symbolic link")}
	case errors.Is(err, unix.ENXIO) || errors.Is(err, unix.ENODEV):
		return nil, nil, &fs.PathError{Op: "open", Path: path, Err: regular.Not("a socket or a device")}
	case err != nil:
		return nil, nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	fh := os.NewFile(uintptr(fd), path)
	if fi, err = fh.Stat(); err != nil {
		fh.Close()
		return nil, nil, err
	}
	if !fi.Mode().IsRegular() {
		fh.Close()
		return nil, nil, &fs.PathError{Op: "open", Path: path, Err: regular.NotMode(fi.Mode())}
	}
	return fh, fi, nil
}

// read reads the file, at most MaxSize bytes (errTooLarge beyond), with what
// it was (for setAside). It goes to the system calls directly: an *os.File
// would try to register the descriptor with the poller on each read.
func (f File) read() ([]byte, *unix.Stat_t, error) {
	var st unix.Stat_t
	if err := unix.Lstat(f.Path, &st); err != nil {
		return nil, nil, &fs.PathError{Op: "lstat", Path: f.Path, Err: err}
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return nil, nil, &fs.PathError{Op: "open", Path: f.Path, Err: regular.Not(regular.StatKind(uint32(st.Mode)))}
	}
	// Lstat first, so that a device or a FIFO is never opened at all; the
	// flags and the fstat close the race.
	fd, err := regular.Open(f.Path, unix.O_RDONLY, 0)
	if err != nil {
		return nil, nil, err
	}
	defer unix.Close(fd)
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, nil, &fs.PathError{Op: "fstat", Path: f.Path, Err: err}
	}
	if st.Size > MaxSize {
		return nil, &st, errTooLarge
	}
	// One byte more than the size, to see the end in one read; a file that
	// grew since is read on, up to MaxSize+1.
	b := make([]byte, 0, st.Size+1)
	for len(b) <= MaxSize {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := unix.Read(fd, b[len(b):min(cap(b), MaxSize+1)])
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return nil, nil, &fs.PathError{Op: "read", Path: f.Path, Err: err}
		}
		if n == 0 {
			break
		}
		b = b[:len(b)+n]
	}
	if len(b) > MaxSize {
		return nil, &st, errTooLarge
	}
	return b, &st, nil
}

// Read reads the record as Load does, but changes nothing: a missing record
// is fs.ErrNotExist, and one that cannot be used is an error (every status).
//
// A record that a power loss left empty or torn reads as its synced copy.
func (f File) Read(now time.Time) (*Record, error) {
	b, st, err := f.read()
	if err != nil && !errors.Is(err, errTooLarge) {
		return nil, err
	}
	var r *Record
	if err == nil {
		r, err = Decode(b)
	}
	if err == nil {
		r.Behind = f.behind(st)
	}
	if err == nil {
		err = r.Sane(now, f.Period)
	}
	if err != nil {
		if c := f.restore(); c != nil && c.Sane(now, f.Period) == nil {
			return c, nil
		}
		return nil, fmt.Errorf("state %s cannot be used: %w", f.Path, err)
	}
	return r, nil
}

// Load reads the record. One that cannot be parsed or trusted (over MaxSize,
// or not Sane with the File's Period) is renamed to
// <file>.corrupt-<unix seconds>, and reported as a *CorruptError; with it,
// the synced copy's record if there is one (a power loss left the file
// empty or torn: the records since the last Sync are lost, not the job's
// history). A path that is not a regular file is a plain error
// (ErrNotRegular), never set aside.
//
// The record is Durable if it is the synced copy, or was written before a
// reboot (it was read from the disk).
func (f File) Load(context.Context) (*Record, error) {
	if r := f.known(); r != nil {
		return r, nil
	}
	b, fi, err := f.read()
	switch {
	case errors.Is(err, fs.ErrNotExist):
		// A record removed by hand starts the job afresh: its synced copy
		// must not bring it back after a power loss.
		f.removeSynced()
		return nil, nil
	case errors.Is(err, errTooLarge):
		return f.restored(fi, err)
	case err != nil:
		return nil, err
	}
	r, err := Decode(b)
	if err == nil {
		err = r.Sane(time.Now(), f.Period)
	}
	if err != nil {
		return f.restored(fi, err)
	}
	r.Durable, r.Behind = f.durable(r, fi), f.behind(fi)
	return r, nil
}

// durable reports whether the record r, read from the file st, is on disk:
// written before a reboot, or the synced copy.
func (f File) durable(r *Record, st *unix.Stat_t) bool {
	return r.Boot != "" && r.Boot != BootID() || f.isSynced(st)
}

// restored sets aside the record read (fi), which cannot be used (why), and
// returns the synced copy's record with the *CorruptError, if it can be used.
func (f File) restored(fi *unix.Stat_t, why error) (*Record, error) {
	err := f.setAside(fi, why)
	var corrupt *CorruptError
	if !errors.As(err, &corrupt) {
		return nil, err
	}
	if c := f.restore(); c != nil && c.Sane(time.Now(), f.Period) == nil {
		corrupt.Restored = f.SyncedPath()
		return c, corrupt
	}
	return nil, corrupt
}

// Save writes the record atomically, mode 0600: a temporary file, put in
// the record's place in one rename (see place). It syncs nothing (see
// Sync): a crash of every loses nothing, a power loss what was written
// since the last Sync. A write that fails removes its temporary file; one
// cut short by a crash is removed by the next CheckWritable, at start-up.
//
// It goes to the system calls directly (write, lstat, renameat2, after the
// open of a temporary file that Prepare made ahead): an *os.File would add
// a poller registration and a finalizer, and a random name a retry loop, to
// a write that happens twice a run. The temporary file's name is this
// process's pid and a sequence number, unique among its writers, and
// created with O_EXCL: never an existing file, never through a link. The
// file written is kept open until the next Prepare, so that the write that
// replaces it does not free it (where a rename replaces it: on ext4 that is
// much of its cost), on the path from a slot to its exec.
func (f File) Save(_ context.Context, r *Record) error {
	b, err := Encode(r)
	if err != nil {
		return err
	}
	w := writerOf(f.Path)
	w.mu.Lock()
	defer w.mu.Unlock()
	fd, tmp := w.take()
	if fd >= 0 {
		// Prepared (see Prepare): the path to exec creates no inode.
		err = writeAll(fd, b)
	} else {
		tmp = filepath.Join(filepath.Dir(f.Path), f.tempName())
		fd, err = writeNew(tmp, b)
	}
	if err == nil {
		err = f.place(w, tmp)
	}
	if err != nil {
		w.last = nil
		if fd >= 0 {
			_ = unix.Close(fd)
		}
		_ = unix.Unlink(tmp)
		return fmt.Errorf("write state %s: %w", f.Path, err)
	}
	w.remember(fd, r)
	// Kept open: the file it replaces next is then freed by Prepare, not
	// by the rename that replaces it.
	w.kept = append(w.kept, fd)
	if len(w.kept) > maxKept {
		// Writes with no Prepare between them (a burst of catch-up runs):
		// the oldest goes now.
		_ = unix.Close(w.kept[0])
		w.kept = append(w.kept[:0], w.kept[1:]...)
	}
	return nil
}

// place puts the temporary file tmp, written, at the path: over nothing, a
// regular file, or a link (replaced, never followed); a device, a FIFO, a
// socket or a directory put there is never replaced.
//
// A file there is exchanged with tmp (renameat2 RENAME_EXCHANGE), and is
// left at tmp's name for the next Prepare to remove, off the path to exec:
// on ext4 a rename that replaces a file first starts writing the new one to
// the disk (auto_da_alloc), most of a write's cost, and twice a run a disk
// write that a power loss protection needs only once a second (Sync). An
// exchange does not. Nothing is ever written into a file that was at the
// path: a reader of the old record reads it whole.
func (f File) place(w *writer, tmp string) error {
	fi, err := os.Lstat(f.Path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return unix.Rename(tmp, f.Path)
	case err != nil:
		return err
	case !fi.Mode().IsRegular() && fi.Mode()&fs.ModeSymlink == 0:
		return &fs.PathError{Op: "rename", Path: f.Path, Err: regular.NotMode(fi.Mode())}
	}
	if !w.noExchange {
		switch err := exchange(tmp, f.Path); {
		case err == nil:
			w.replaced = append(w.replaced, tmp)
			if len(w.replaced) > maxKept {
				// Writes with no Prepare between them: the oldest goes now.
				_ = unix.Unlink(w.replaced[0])
				w.replaced = append(w.replaced[:0], w.replaced[1:]...)
			}
			return nil
		case errors.Is(err, errNoExchange):
			w.noExchange = true
		case !errors.Is(err, fs.ErrNotExist):
			return err
		}
		// No exchange here, or the record went since the Lstat: a rename.
	}
	return unix.Rename(tmp, f.Path)
}

// errNoExchange is an exchange the system or the filesystem cannot do.
var errNoExchange = errors.New("no exchanging rename here")

// CheckWritable makes sure the record's directory exists (created 0700) and
// takes a new file, and that an existing record is a regular file that can be
// read: the start-up check, before anything runs. A path that is a symbolic
// link, a directory, a device, a FIFO or a socket is an error wrapping
// ErrNotRegular; nothing blocks, and nothing at a link's target is touched.
// A file that is not a record (ErrNotRecord) is refused too: a state path
// is every's own, and only its own kind of file there is replaced.
func (f File) CheckWritable() error {
	dir := filepath.Dir(f.Path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	f.removeLeftovers()
	if err := listings.probe(dir, f.tempName()); err != nil {
		return err
	}
	fh, _, err := openRegular(f.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer fh.Close()
	head := make([]byte, recordHead)
	n, err := io.ReadFull(fh, head)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
		return &fs.PathError{Op: "read", Path: f.Path, Err: err}
	}
	if !isRecord(head[:n]) {
		return &fs.PathError{Op: "open", Path: f.Path, Err: ErrNotRecord}
	}
	return nil
}

// recordHead is how much of a state file isRecord is given.
const recordHead = 512

// isRecord reports whether a file that starts with head is a record, or
// what is left of one: a JSON object, even one cut short or that Load will
// set aside as corrupt. A script, a binary, a metrics file, an empty lock
// file or marker is not: replaced by a record, it would be lost to its
// owner (a renamed lock no longer excludes; a renamed script no longer
// runs).
func isRecord(head []byte) bool {
	rest := bytes.TrimLeft(head, " \t\r\n") // JSON's white space
	return len(rest) > 0 && rest[0] == '{'
}
