package state

// This file owns what makes a File's record durable (SPEC 9 [durability]):
// Save only renames a new file into place (atomic: a crash of every loses
// nothing), and Sync, at most once a second, puts what is at the path on
// disk and links it as the record's synced copy, which Load falls back to
// when a power loss left the file at the path empty or torn.

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

// errReplaced is a record replaced while Sync linked it: the next Sync
// takes the new one.
var errReplaced = errors.New("replaced while being synced")

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
	b, _, err := c.read()
	if err != nil {
		return nil
	}
	r, err := Decode(b)
	if err != nil {
		return nil
	}
	r.Durable = true
	return r
}

// removeSynced removes the synced copy of a record that is gone: a record
// removed by hand is not brought back.
func (f File) removeSynced() {
	_ = unix.Unlink(f.SyncedPath())
}
