package jobfiles

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/everycli/every/internal/regular"
)

// A running every marks its job active for its whole life by holding a
// shared (read) record lock on a file beside the job's state,
// <state>.active, and every status probes that lock. A record lock, not a pid
// in a file: the kernel drops it when its holder ends, however it ends
// (SIGKILL, OOM, a crash), so a dead every is never taken for a live one, and
// a pid reused by another process means nothing here. Shared, because several
// every processes may run one job (docs/DESIGN.md, Safety under faults:
// never two runs at once), and each holds the marker at once. Not flock(2):
// the probe must ask "is it held?" without taking anything, and fcntl's
// GETLK does exactly that. On Linux the locks are open file description
// locks (F_OFD_*), which belong to the open file, not to the process, so no
// other descriptor of this file in the holder can drop them by being closed;
// elsewhere they are classic POSIX record locks, which behave the same here
// as long as the holder opens the marker once (it does) and the prober is
// another process (it is).
//
// The marker's content says what every status shows of a job before its
// first run has written a state (docs/REFERENCE.md, every status): one
// JSON line, the job's name, schedule and first slot (MarkerInfo). The first
// every to hold the marker writes it, in place (a marker replaced by a
// rename would leave the other holders' locks on the old file); later ones,
// finding it held, leave it alone. A reader may catch a write half done: it
// then shows the job without its schedule, never anything else.
//
// In a shared directory, only a marker of the job's own user counts: its
// holder must own the file (every refuses one of another user's, exit 73),
// and every status counts a marker as ACTIVE only when its owner is the
// state's (docs/DESIGN.md, Safety under faults: every file every writes is
// its own), so nobody else can make a dead job look alive.

// MarkerSuffix is what a job's state path takes to name its active marker.
// every status lists *.json files only, so the marker is never listed as a
// job.
const MarkerSuffix = ".active"

// MarkerPath is the active marker of the job whose state is at statePath.
func MarkerPath(statePath string) string { return statePath + MarkerSuffix }

// markerVersion is the version of MarkerInfo's format.
const markerVersion = 1

// markerMax is the most of a marker read: its content is one short line.
const markerMax = 4096

// MarkerInfo is what a marker says of its job, for every status while the
// job has no state yet. It is shown (escaped) and used for the grace of
// --max-age before the first slot, never for anything else.
type MarkerInfo struct {
	Version  int    `json:"version"`
	Name     string `json:"name"`
	Schedule string `json:"schedule"`
	// FirstSlot is the first slot the every that wrote it waits for; zero
	// until its loop has begun.
	FirstSlot time.Time `json:"first_slot,omitzero"`
	// NextSlot is the slot it waits for now: FirstSlot, or a later one once
	// slots were skipped before the first run.
	NextSlot time.Time `json:"next_slot,omitzero"`
	PID      int       `json:"pid,omitempty"`
	Host     string    `json:"host,omitempty"`
}

// ErrForeignMarker is the error, wrapped in an *fs.PathError, of a marker
// that another user owns: never held, never counted.
var ErrForeignMarker = errors.New("owned by another user")

// foreignOwner says who owns a marker that is not ours.
type foreignOwner struct{ uid, want uint32 }

func (e foreignOwner) Error() string {
	return fmt.Sprintf("is owned by uid %d, not by uid %d that runs every", e.uid, e.want)
}

// Is makes errors.Is(err, ErrForeignMarker) true.
func (e foreignOwner) Is(target error) bool { return target == ErrForeignMarker }

// Marker is an active marker this process holds. When this process wrote
// it, it keeps the marker's first and next slots up to date, as the loop
// tells them (internal/job makes it one of the loop's observers).
type Marker struct {
	fd     int
	path   string
	writer bool // this process holds the content: it was the first holder
	mu     sync.Mutex
	info   MarkerInfo
	ran    bool      // a run started: the state tells from then on
	wrote  time.Time // the last write, to keep skips from writing each slot
}

// held are the markers this process holds. Their descriptors are never
// closed: the locks last until the process ends, and a raw descriptor
// (unlike an *os.File) has no finalizer to close it behind our back.
var held struct {
	sync.Mutex
	markers []*Marker
}

// markerWait bounds how long Hold waits for the writer of the
// marker's content to let go of it: a write of one line.
const markerWait = 2 * time.Second

// Hold marks the job active for the rest of this process's life: it opens
// (creating 0600) the marker at path and takes a shared lock on all of it,
// which it never releases. The first holder writes info into it. A path
// that is a link, or anything but a regular file, is refused; so is a
// marker that another user owns (ErrForeignMarker).
func Hold(path string, info MarkerInfo) (*Marker, error) {
	fd, err := openMarker(path, unix.O_RDWR|unix.O_CREAT)
	if errors.Is(err, fs.ErrPermission) {
		// Most likely another user's 0600 file: say so, if it is.
		var st unix.Stat_t
		if unix.Lstat(path, &st) == nil && st.Uid != uint32(os.Geteuid()) {
			return nil, &fs.PathError{Op: "open", Path: path, Err: foreignOwner{st.Uid, uint32(os.Geteuid())}}
		}
	}
	if err != nil {
		return nil, err
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return nil, &fs.PathError{Op: "fstat", Path: path, Err: err}
	}
	if st.Uid != uint32(os.Geteuid()) {
		// Root can open anyone's file; it must not trust it any more.
		unix.Close(fd)
		return nil, &fs.PathError{Op: "open", Path: path, Err: foreignOwner{st.Uid, uint32(os.Geteuid())}}
	}
	if st.Mode&0o777 != 0o600 {
		// Ours, but left open to others by an older every or by hand.
		if err := unix.Fchmod(fd, 0o600); err != nil {
			unix.Close(fd)
			return nil, &fs.PathError{Op: "chmod", Path: path, Err: err}
		}
	}
	m := &Marker{fd: fd, path: path, info: info}
	m.info.Version = markerVersion
	if err := m.lock(); err != nil {
		unix.Close(fd)
		return nil, err
	}
	held.Lock()
	held.markers = append(held.markers, m)
	held.Unlock()
	return m, nil
}

// lock takes the marker's shared lock. A whole-file write lock taken first
// tells the first holder, which writes the content under it and turns it
// into the shared lock (at once: no moment without a lock); a later holder
// waits, bounded, for that write to be over.
func (m *Marker) lock() error {
	whole := func(typ int16) *unix.Flock_t {
		return &unix.Flock_t{Type: typ, Whence: io.SeekStart} // Len 0: the whole file, however it grows
	}
	err := fcntlLock(m.fd, setLock, whole(unix.F_WRLCK))
	if err == nil {
		m.writer = true
		m.write(time.Now())
		if err := fcntlLock(m.fd, setLock, whole(unix.F_RDLCK)); err != nil {
			return &fs.PathError{Op: "lock", Path: m.path, Err: err}
		}
		return nil
	}
	deadline := time.Now().Add(markerWait)
	for busy(err) && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
		err = fcntlLock(m.fd, setLock, whole(unix.F_RDLCK))
	}
	if err != nil {
		return &fs.PathError{Op: "lock", Path: m.path, Err: err}
	}
	return nil
}

// busy reports whether a lock could not be set because another holds a
// conflicting one.
func busy(err error) bool { return errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.EACCES) }

// write writes the marker's content, in place: the line, then the file cut
// to it, so a reader sees the old line or the new one first.
func (m *Marker) write(now time.Time) {
	b, err := json.Marshal(m.info)
	if err != nil {
		return
	}
	b = append(b, '\n')
	if n, err := unix.Pwrite(m.fd, b, 0); err == nil && n == len(b) {
		_ = unix.Ftruncate(m.fd, int64(len(b)))
	}
	m.wrote = now
}

// Began is told the first slot the loop waits for.
func (m *Marker) Began(first time.Time) {
	if !m.writer {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.info.FirstSlot, m.info.NextSlot = first.UTC(), first.UTC()
	m.write(time.Now())
}

// Skipped keeps the next slot up to date until the first run (at most once
// a second: a skip may come at each slot of a fast schedule).
func (m *Marker) Skipped(next time.Time) {
	if !m.writer {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if now := time.Now(); !m.ran && now.Sub(m.wrote) >= time.Second {
		m.info.NextSlot = next.UTC()
		m.write(now)
	}
}

// Ran is told that a run started: from then on the state tells of the job.
func (m *Marker) Ran() {
	m.mu.Lock()
	m.ran = true
	m.mu.Unlock()
}

// ProbeActive reports whether a process holds the marker at path (whether a
// whole-file write lock would conflict with a lock someone holds), and what
// the marker says. A marker whose owner trust refuses is not counted: it is
// inactive, whoever holds it. A missing marker is inactive (no every has run
// the job since, or it ran with a version that did not mark). The probe
// takes no lock and creates nothing.
func ProbeActive(path string, trust func(uid uint32) bool) (bool, MarkerInfo, error) {
	var info MarkerInfo
	fd, err := openMarker(path, unix.O_RDONLY)
	if errors.Is(err, fs.ErrNotExist) {
		return false, info, nil
	}
	if err != nil {
		return false, info, err
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return false, info, &fs.PathError{Op: "fstat", Path: path, Err: err}
	}
	if !trust(st.Uid) {
		return false, info, nil
	}
	lk := unix.Flock_t{Type: unix.F_WRLCK, Whence: io.SeekStart}
	if err := fcntlLock(fd, getLock, &lk); err != nil {
		return false, info, &fs.PathError{Op: "probe lock", Path: path, Err: err}
	}
	if lk.Type == unix.F_UNLCK {
		return false, info, nil
	}
	return true, readMarker(fd), nil
}

// readMarker reads what a marker says: its first line, if it is one
// (a marker of an older every is empty, a write may be under way).
func readMarker(fd int) MarkerInfo {
	var info MarkerInfo
	b := make([]byte, markerMax)
	n, err := unix.Pread(fd, b, 0)
	if err != nil || n <= 0 {
		return info
	}
	line, _, ok := bytes.Cut(b[:n], []byte("\n"))
	if !ok || json.Unmarshal(line, &info) != nil || info.Version != markerVersion {
		return MarkerInfo{}
	}
	return info
}

// openMarker opens the marker at path with flags, refusing what is not a
// regular file without blocking or following a link. It never leaks into the
// command: a command that inherited the descriptor would keep the lock, and
// the job active, after every died.
func openMarker(path string, flags int) (int, error) {
	return regular.Open(path, flags, 0o600)
}

// fcntlLock sets or gets a record lock, again if a signal interrupts it.
func fcntlLock(fd, cmd int, lk *unix.Flock_t) error {
	for {
		err := unix.FcntlFlock(uintptr(fd), cmd, lk)
		if !errors.Is(err, unix.EINTR) {
			return err
		}
	}
}
