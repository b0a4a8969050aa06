package state

// This file owns what makes a File's record durable (docs/DESIGN.md,
// Durability): Save only renames a new file into place (atomic: a crash of
// every loses nothing), and Sync, at most once a second, puts what is at the
// path on disk and links it as the record's synced copy, which Load falls
// back to when a power loss left the file at the path empty or torn.

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/everycli/every/internal/regular"
)

// Syncer is a Store whose Saves are atomic but not durable: Sync makes the
// record at its place durable, and returns it.
type Syncer interface {
	Sync() (*Record, error)
}

// BootID is this kernel's boot id (/proc/sys/kernel/random/boot_id), ""
// where there is none: a record written under another boot id was written
// before a reboot, and what was not synced then may have been lost.
var BootID = sync.OnceValue(func() string {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
})

// fsync syncs fd, again if a signal interrupts it; a variable, so that
// tests can count the syncs and see where they fall.
var fsync = func(fd int) error {
	for {
		if err := unix.Fsync(fd); !errors.Is(err, unix.EINTR) {
			return err
		}
	}
}

// SyncedPath is the name of the record's synced copy: a second link to the
// last file Sync put on disk.
func (f File) SyncedPath() string {
	return filepath.Join(filepath.Dir(f.Path), "."+filepath.Base(f.Path)+".synced")
}

// errReplaced is a record replaced while Sync linked it: Sync takes the
// new one.
var errReplaced = errors.New("replaced while being synced")

// ErrReplaced is the error of a Sync whose record was replaced, again and
// again, while it was being synced: another instance of the job writes it
// (each of its writes under the lock, while this one's Sync needs none).
// Nothing failed: the record at the path is that writer's, newer, and
// its own Sync makes it durable.
var ErrReplaced = errors.New("state replaced by another writer while being synced")

// syncTries bounds the records a Sync tries, each replaced while it was
// being synced, before it gives up (ErrReplaced).
const syncTries = 3

// Sync makes the record at the path durable: its data, then the directory
// (the rename that put it there), and links it as the synced copy (the
// directory's journal keeps that link before any later rename over the
// record: what Load falls back to is on disk whenever a later, unsynced
// record is). It needs no lock: whoever wrote the record, what is there is
// a whole record. A file that is not one is not synced.
//
// The data is synced before the file's name is: on XFS, as on ext4 with
// data=writeback, a file renamed into place without it can be empty after
// a power loss; the synced copy covers the records written since.
func (f File) Sync() (*Record, error) {
	for range syncTries - 1 {
		if r, err := f.syncOnce(); !errors.Is(err, errReplaced) {
			return r, err
		}
	}
	r, err := f.syncOnce()
	if errors.Is(err, errReplaced) {
		return nil, fmt.Errorf("sync state %s: %w", f.Path, ErrReplaced)
	}
	return r, err
}

// syncOnce is one try of Sync, errReplaced (wrapped) if the record was
// replaced meanwhile.
func (f File) syncOnce() (*Record, error) {
	b, st, err := f.read()
	if err != nil {
		return nil, fmt.Errorf("sync state %s: %w", f.Path, err)
	}
	r, err := Decode(b)
	if err != nil {
		return nil, fmt.Errorf("sync state %s: %w", f.Path, err)
	}
	if err := f.syncFile(st); err != nil {
		return nil, fmt.Errorf("sync state %s: %w", f.Path, err)
	}
	dir := filepath.Dir(f.Path)
	tmp := filepath.Join(dir, f.tempName())
	err = unix.Link(f.Path, tmp)
	if err == nil {
		var got unix.Stat_t
		if err = unix.Lstat(tmp, &got); err == nil && (got.Dev != st.Dev || got.Ino != st.Ino) {
			err = errReplaced
		}
	}
	if err == nil {
		err = unix.Rename(tmp, f.SyncedPath())
	}
	if err != nil {
		_ = unix.Unlink(tmp)
		return nil, fmt.Errorf("sync state %s: %w", f.Path, err)
	}
	if err := syncDir(dir); err != nil {
		return nil, fmt.Errorf("sync state %s: directory %s: %w", f.Path, dir, err)
	}
	return r, nil
}

// syncFile syncs the data of the file at the path, if it is still the one
// read (st).
func (f File) syncFile(st *unix.Stat_t) error {
	fd, err := regular.Open(f.Path, unix.O_RDONLY, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	var now unix.Stat_t
	if err := unix.Fstat(fd, &now); err != nil {
		return err
	}
	if now.Dev != st.Dev || now.Ino != st.Ino {
		return errReplaced
	}
	return fsync(fd)
}

// syncDir syncs the directory dir, so that a rename in it is durable.
func syncDir(dir string) error {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	err = fsync(fd)
	if cerr := unix.Close(fd); err == nil {
		err = cerr
	}
	return err
}

// isSynced reports whether the file read (st) is the synced copy: the last
// file a Sync put on disk, whose record a power loss cannot take back.
func (f File) isSynced(st *unix.Stat_t) bool {
	var c unix.Stat_t
	return st.Nlink > 1 && unix.Lstat(f.SyncedPath(), &c) == nil && c.Dev == st.Dev && c.Ino == st.Ino
}

// restore reads the synced copy, for a record at the path that a power loss
// left empty or torn: nil if there is none that can be used.
func (f File) restore() *Record {
	c := File{Path: f.SyncedPath(), Period: f.Period}
	b, st, err := c.read()
	if err != nil {
		return nil
	}
	r, err := Decode(b)
	if err != nil {
		return nil
	}
	r.Durable, r.Behind = true, f.behind(st)
	return r
}

// removeSynced removes the synced copy of a record that is gone: a record
// removed by hand is not brought back.
func (f File) removeSynced() {
	_ = unix.Unlink(f.SyncedPath())
}

// behindMode is the mode bit that marks a record behind its writer (see
// MarkBehind): the owner's execute bit, which no file every writes has,
// and a umask cannot add.
const behindMode = unix.S_IXUSR

// MarkBehind marks the record at the path as behind its writer: the
// writer could not write a run's start (a full disk), and hands out its
// number all the same, as one that a reservation on disk covers. A Load
// by any other process then sets the record's Behind: a run number after
// its runs, up to its reserved, may have been handed out, and the next
// one must come after them. (This process knows its own numbers: its own
// Loads of a record it marked itself do not say Behind.) The mark is a bit of the file's mode, which a full disk still
// lets every change (no data block is written, where a new record needs
// one); the next write that succeeds puts a new file in place, unmarked,
// with the runs counted since. It lasts while the file does: a crash of
// every keeps it, a power loss may not, and after a reboot a record's
// reservation is skipped anyway (see Record.Boot).
func (f File) MarkBehind() error {
	fd, err := regular.Open(f.Path, unix.O_RDONLY, 0)
	if err != nil {
		return fmt.Errorf("mark state %s: %w", f.Path, err)
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return fmt.Errorf("mark state %s: %w", f.Path, err)
	}
	if st.Mode&behindMode != 0 {
		// Marked already: by this process, or by another writer, whose
		// numbers this one then goes on after (not made its own).
		return nil
	}
	if err := unix.Fchmod(fd, uint32(st.Mode)&0o7777|behindMode); err != nil {
		return fmt.Errorf("mark state %s: %w", f.Path, err)
	}
	w := writerOf(f.Path)
	w.mu.Lock()
	w.marked = idOf(&st)
	w.mu.Unlock()
	return nil
}

// fileID is a file's device and inode.
type fileID struct{ dev, ino uint64 }

// behind reports whether the file st at the path is marked behind a
// writer other than this process.
func (f File) behind(st *unix.Stat_t) bool {
	if st == nil || st.Mode&behindMode == 0 {
		return false
	}
	v, ok := writers.Load(f.Path)
	if !ok {
		return true
	}
	w := v.(*writer)
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.marked != idOf(st)
}

// idOf is the fileID of the file st.
func idOf(st *unix.Stat_t) fileID {
	return fileID{uint64(st.Dev), uint64(st.Ino)} //nolint:unconvert // not uint64 on every system
}
