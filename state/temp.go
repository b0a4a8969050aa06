package state

// This file names and writes the temporary files of state writes (the next
// one prepared ahead, off the path to exec), and removes the ones a crash
// left behind.

import (
	"errors"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/everycli/every/internal/pid"
	"golang.org/x/sys/unix"
)

// tempPrefix starts the names of a record's temporary files; the pid that
// follows tells whose they are, so leftovers of dead writers can be removed.
func (f File) tempPrefix() string {
	return "." + filepath.Base(f.Path) + ".tmp-"
}

// selfPID is this process's pid, for the names of its temporary files.
var selfPID = os.Getpid()

// selfTag tells this process's temporary files from those of a process with
// the same pid in another PID namespace (two containers, each every as PID 1,
// sharing a state volume), or of an earlier process with the same pid.
var selfTag = strconv.FormatUint(rand.Uint64(), 36)

// selfNS names this process's PID namespace, on this kernel's boot, in its
// temporary files' names, so that a start can tell a writer of its own
// namespace, whose pid it can check, from one of another sharing the
// directory (a container, another host), whose pid means nothing here; "x"
// where it cannot be known.
var selfNS = sync.OnceValue(func() string {
	if ns, ok := pidNamespace(); ok {
		return ns
	}
	return unknownNS
})

// nsToken is the name of PID namespace inode on the kernel boot bootID (as
// /proc/sys/kernel/random/boot_id gives it), for temporary files' names:
// no '-' in it, which would split the name.
func nsToken(inode uint64, bootID string) (string, bool) {
	id := strings.ReplaceAll(strings.TrimSpace(bootID), "-", "")
	if len(id) < 16 {
		return "", false
	}
	return strconv.FormatUint(inode, 36) + "." + id[:16], true
}

// unknownNS is the namespace of a writer that could not name its own.
const unknownNS = "x"

// tempName is the name of a new temporary file of the record: the writer's
// pid and PID namespace (for removeLeftovers), its tag and a sequence number.
func (f File) tempName() string {
	return f.tempPrefix() + strconv.Itoa(selfPID) + "-" + selfNS() + "-" + selfTag + "-" + strconv.FormatUint(tempSeq.Add(1), 10)
}

// tempSeq numbers this process's temporary files.
var tempSeq atomic.Uint64

// writeNew creates the new file name (never an existing one) and writes b
// to it, and returns it open. On failure the file is removed.
func writeNew(name string, b []byte) (int, error) {
	fd, err := unix.Open(name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return -1, &fs.PathError{Op: "create", Path: name, Err: err}
	}
	if err := writeAll(fd, b); err != nil {
		_ = unix.Close(fd)
		_ = unix.Unlink(name)
		return -1, &fs.PathError{Op: "write", Path: name, Err: err}
	}
	return fd, nil
}

// writeAll writes b to fd.
func writeAll(fd int, b []byte) error {
	var err error
	for len(b) > 0 && err == nil {
		var n int
		n, err = unix.Write(fd, b)
		switch {
		case errors.Is(err, unix.EINTR):
			err = nil
		case err == nil && n == 0:
			err = io.ErrShortWrite
		}
		b = b[max(n, 0):]
	}
	return err
}

// leftoverAge is the age past which a temporary file is removed, whoever
// wrote it.
const leftoverAge = time.Minute

// removeLeftovers removes the temporary files of writers that died (a crash
// between creating one and renaming it). Every start-up does it, so they
// never pile up: there is at most one, of the last crash, per job.
func (f File) removeLeftovers() {
	dir := filepath.Dir(f.Path)
	entries, err := listings.read(dir)
	if err != nil {
		return
	}
	prefix := f.tempPrefix()
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), prefix)
		if !ok {
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue
		}
		if time.Since(info.ModTime()) > leftoverGrace(rest) {
			_ = os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}

// leftoverGrace is how old the temporary file of the writer its name names
// (pid-ns-tag-n, after the prefix) must be to be removed. A writer of this
// PID namespace that is dead, or has this pid but another tag (a process
// before this one), will never finish its write: its file goes at once. Its
// pid is checked only in this namespace: a writer of another namespace
// sharing the directory (a container), or of one unknown, may be alive
// whatever its pid says here, and has a second for a write in flight. Any
// file goes once it is a minute old (a pid reused, a namespace gone).
func leftoverGrace(rest string) time.Duration {
	f := strings.SplitN(rest, "-", 4)
	writer, err := strconv.Atoi(f[0])
	ours := len(f) == 4 && f[1] != unknownNS && f[1] == selfNS()
	switch {
	case err != nil:
		return time.Second
	case ours && writer == selfPID && f[2] == selfTag:
		return leftoverAge // this process's own: never a crash's
	case writer == selfPID || !pid.Alive(writer):
		if ours {
			return 0
		}
		return time.Second
	}
	return leftoverAge
}

// maxKept bounds the files a writer keeps open.
const maxKept = 3

// writer is what a process keeps between the writes of one record: the
// next temporary file, created ahead, and the files it wrote, kept open.
type writer struct {
	mu   sync.Mutex
	next int // the next temporary file's descriptor; -1: none
	name string
	kept []int // the files written, the last at the path
	// replaced are the names of the files that writes exchanged with the
	// record (the records they replaced), to be removed.
	replaced []string
	// noExchange says the filesystem cannot exchange two files: writes
	// rename over the record.
	noExchange bool
	// last is the file this writer put at the path last (see known).
	last *placed
	// marked is the file at the path this process marked behind it (see
	// MarkBehind): its own numbers, which it knows.
	marked fileID
}

// writers are the writers of this process, by path.
var writers sync.Map

func writerOf(path string) *writer {
	if w, ok := writers.Load(path); ok {
		return w.(*writer)
	}
	w, _ := writers.LoadOrStore(path, &writer{next: -1})
	return w.(*writer)
}

// take returns the prepared temporary file, if there is one still there
// (a start-up of another every removes those a minute old), or -1.
func (w *writer) take() (int, string) {
	fd, name := w.next, w.name
	w.next, w.name = -1, ""
	if fd < 0 {
		return -1, ""
	}
	var a, b unix.Stat_t
	if unix.Fstat(fd, &a) != nil || unix.Lstat(name, &b) != nil || a.Dev != b.Dev || a.Ino != b.Ino || a.Size != 0 {
		_ = unix.Close(fd)
		return -1, ""
	}
	return fd, name
}

// Prepare readies the next Save, off the path from a slot to its exec:
// it removes the records replaced and closes the files written before the
// one at the path (freeing them, the costliest part of a replacing rename,
// here), and creates the next temporary file. A failure costs nothing:
// Save creates one itself.
func (f File) Prepare() {
	w := writerOf(f.Path)
	w.mu.Lock()
	defer w.mu.Unlock()
	w.removeReplaced()
	if n := len(w.kept); n > 1 {
		for _, fd := range w.kept[:n-1] {
			_ = unix.Close(fd)
		}
		w.kept = append(w.kept[:0], w.kept[n-1])
	}
	if w.next >= 0 {
		return
	}
	name := filepath.Join(filepath.Dir(f.Path), f.tempName())
	fd, err := unix.Open(name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return
	}
	w.next, w.name = fd, name
}

// Close removes the prepared temporary file and closes the files kept
// open: nothing of this process's is left in the directory.
func (f File) Close() error {
	w := writerOf(f.Path)
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.next >= 0 {
		_ = unix.Close(w.next)
		_ = unix.Unlink(w.name)
		w.next, w.name = -1, ""
	}
	w.removeReplaced()
	for _, fd := range w.kept {
		_ = unix.Close(fd)
	}
	w.kept = nil
	return nil
}

// removeReplaced removes the records that writes replaced.
func (w *writer) removeReplaced() {
	for _, name := range w.replaced {
		_ = unix.Unlink(name)
	}
	w.replaced = w.replaced[:0]
}

// listings are the state directories as read for their leftovers, kept a
// few seconds: every jobs starts many jobs of one directory, each of which
// would read it whole, a start quadratic in the number of jobs. A listing a
// few seconds old misses only files made since, by writers alive then; a
// leftover of a writer that died since is removed at the next start.
var listings = &dirListings{m: map[string]dirListing{}, probed: map[string]time.Time{}}

// listingAge is how long a directory's listing is used again.
const listingAge = 5 * time.Second

type dirListings struct {
	mu sync.Mutex
	m  map[string]dirListing
	// probed is when each directory last took a new file (probe).
	probed map[string]time.Time
}

// dirListing is a directory's entries, as read at read.
type dirListing struct {
	read    time.Time
	entries []os.DirEntry
}

// read returns dir's entries, as read within listingAge.
// Only the temporary files' entries are kept (those removeLeftovers looks
// at, usually none): a process holds next to nothing of a listing once its
// start-up is over, and one of another directory, when read, drops the
// listings gone stale.
func (d *dirListings) read(dir string) ([]os.DirEntry, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if l, ok := d.m[dir]; ok && time.Since(l.read) < listingAge {
		return l.entries, nil
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	entries = slices.DeleteFunc(entries, func(e os.DirEntry) bool {
		return !strings.HasPrefix(e.Name(), ".") || !strings.Contains(e.Name(), ".tmp-")
	})
	for other, l := range d.m {
		if time.Since(l.read) >= listingAge {
			delete(d.m, other)
		}
	}
	d.m[dir] = dirListing{time.Now(), entries}
	return entries, nil
}

// probe makes sure dir takes a new file, name (a temporary file's), unless
// it did within listingAge: every jobs checks many jobs of one directory,
// and each file made and removed costs every later create in it (on ext4
// without a journal, a new inode skips those freed in the last half
// minute). The probe is made as Save makes its files (a name of its own,
// O_EXCL), with the system calls directly: an *os.File would try to
// register a regular file with the poller and fail, four more calls.
func (d *dirListings) probe(dir, name string) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if at, ok := d.probed[dir]; ok && time.Since(at) < listingAge {
		return nil
	}
	tmp := filepath.Join(dir, name)
	fd, err := unix.Open(tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return &fs.PathError{Op: "create", Path: tmp, Err: err}
	}
	_ = unix.Close(fd)
	if err := unix.Unlink(tmp); err != nil {
		return &fs.PathError{Op: "remove", Path: tmp, Err: err}
	}
	d.probed[dir] = time.Now()
	return nil
}
