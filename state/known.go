package state

// This file lets a Load that follows this process's own Save skip reading
// the record back: under the lock, each run loads the record its last run
// wrote, and a stat that shows the same file, unchanged, says what a read
// would give.

import (
	"slices"
	"time"

	"golang.org/x/sys/unix"
)

// placed is the file a writer put at the path last, and the record in it.
type placed struct {
	st  unix.Stat_t
	rec Record
}

// remember takes note of the file fd, just put at the path with r in it.
func (w *writer) remember(fd int, r *Record) {
	w.last = nil
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil {
		return
	}
	c := canonical(r)
	c.Command = slices.Clone(r.Command)
	w.last = &placed{st: st, rec: c}
}

// known returns the record this process put at the path last if the file
// there is still that one, unchanged: the same inode, size, links and
// times (a write in place, a rename over it, a link to it by Sync, a chmod,
// all change its ctime), and nil otherwise: the record must be read.
func (f File) known() *Record {
	v, ok := writers.Load(f.Path)
	if !ok {
		return nil
	}
	w := v.(*writer)
	w.mu.Lock()
	last := w.last
	w.mu.Unlock()
	if last == nil {
		return nil
	}
	var st unix.Stat_t
	if unix.Lstat(f.Path, &st) != nil || !sameFile(&st, &last.st) {
		return nil
	}
	r := last.rec
	r.Command = slices.Clone(r.Command)
	if r.Sane(time.Now(), f.Period) != nil {
		return nil // read, and set aside, as any record that is not
	}
	r.Durable, r.Behind = f.durable(&r, &st), f.behind(&st)
	return &r
}

// sameFile reports whether a and b are the same file, unchanged between
// them.
func sameFile(a, b *unix.Stat_t) bool {
	return a.Dev == b.Dev && a.Ino == b.Ino && a.Mode == b.Mode && a.Nlink == b.Nlink &&
		a.Size == b.Size && a.Mtim == b.Mtim && a.Ctim == b.Ctim
}
