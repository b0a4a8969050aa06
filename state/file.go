package state

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
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

	"golang.org/x/sys/unix"

	"github.com/everycli/every/internal/pid"
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
	b, _, err := f.read()
	if err != nil && !errors.Is(err, errTooLarge) {
		return nil, err
	}
	var r *Record
	if err == nil {
		r, err = Decode(b)
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
	r.Durable = r.Boot != "" && r.Boot != BootID() || f.isSynced(fi)
	return r, nil
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

// setAside renames the file that was read, fi, to <file>.corrupt-<unix
// seconds>, if it is still the one at the path: what took its place since is
// not renamed unseen. A name taken already (a second one set aside within the
// second) is never replaced: the next free of <file>.corrupt-<seconds>-2,
// -3, ... is used. Of the files set aside for the job, the keptAside newest
// are kept, the older ones removed: they never pile up.
func (f File) setAside(was *unix.Stat_t, why error) error {
	var now unix.Stat_t
	if err := unix.Lstat(f.Path, &now); err != nil || now.Dev != was.Dev || now.Ino != was.Ino {
		return fmt.Errorf("state %s cannot be used (%v) and was replaced while being read; reading it again next time", f.Path, why)
	}
	moved, err := f.moveAside(time.Now())
	if err != nil {
		return fmt.Errorf("state %s cannot be used (%v) nor set aside: %w", f.Path, why, err)
	}
	f.pruneAside()
	return &CorruptError{Where: f.Path, MovedTo: moved, Err: why}
}

// keptAside is how many files set aside are kept per job.
const keptAside = 3

// asidePrefix starts the names of the files the record is set aside as.
func (f File) asidePrefix() string { return f.Path + ".corrupt-" }

// moveAside renames the record to a name of those set aside at now, after
// (in asideOrder) any of that second already there, and returns it: never a
// name freed by pruneAside, which would sort among the oldest.
func (f File) moveAside(now time.Time) (string, error) {
	sec := now.Unix()
	n := 1
	for _, a := range f.aside() {
		if a.sec == sec {
			n = max(n, a.n+1)
		}
	}
	base := f.asidePrefix() + strconv.FormatInt(sec, 10)
	for tries := 0; ; tries++ {
		name := base
		if n > 1 {
			name += "-" + strconv.Itoa(n)
		}
		err := renameNoReplace(f.Path, name)
		switch {
		case err == nil:
			return name, nil
		case !errors.Is(err, unix.EEXIST) || tries >= maxAsideTries:
			return "", &fs.PathError{Op: "rename", Path: name, Err: err}
		}
		n++
	}
}

// maxAsideTries bounds the names tried in one second: more than ever set
// aside in one.
const maxAsideTries = 1000

// asideOrder returns the order of a file set aside, from the rest of its
// name after asidePrefix: its seconds, then its number within them (1 for
// none). ok is false for a name every did not make.
func asideOrder(rest string) (sec int64, n int, ok bool) {
	secs, num, numbered := strings.Cut(rest, "-")
	sec, err := strconv.ParseInt(secs, 10, 64)
	if err != nil || sec < 0 || secs != strconv.FormatInt(sec, 10) {
		return 0, 0, false
	}
	n = 1
	if numbered {
		if n, err = strconv.Atoi(num); err != nil || n < 2 || num != strconv.Itoa(n) {
			return 0, 0, false
		}
	}
	return sec, n, true
}

// asideFile is a file the record was set aside as: its name in the
// record's directory, and its order (see asideOrder).
type asideFile struct {
	name string
	sec  int64
	n    int
}

// aside lists the files the record was set aside as: regular files named as
// every names them, newest first. Anything else is left out.
func (f File) aside() []asideFile {
	entries, err := os.ReadDir(filepath.Dir(f.Path))
	if err != nil {
		return nil
	}
	var found []asideFile
	prefix := filepath.Base(f.asidePrefix())
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), prefix)
		if !ok || !e.Type().IsRegular() {
			continue
		}
		if sec, n, ok := asideOrder(rest); ok {
			found = append(found, asideFile{e.Name(), sec, n})
		}
	}
	sortAside(found)
	return found
}

// sortAside sorts files set aside newest first.
func sortAside(found []asideFile) {
	slices.SortFunc(found, func(a, b asideFile) int {
		return cmp.Or(cmp.Compare(b.sec, a.sec), cmp.Compare(b.n, a.n))
	})
}

// pruneAside removes the files set aside for the record but the keptAside
// newest.
func (f File) pruneAside() {
	found := f.aside()
	for _, a := range found[min(keptAside, len(found)):] {
		_ = unix.Unlink(filepath.Join(filepath.Dir(f.Path), a.name))
	}
}

// renameChecked renames from to to if nothing is at to (else unix.EEXIST),
// where no system call can do it in one: a file created at to between the
// look and the rename would be replaced.
func renameChecked(from, to string) error {
	var st unix.Stat_t
	switch err := unix.Lstat(to, &st); {
	case err == nil:
		return unix.EEXIST
	case !errors.Is(err, unix.ENOENT):
		return err
	}
	return unix.Rename(from, to)
}

// tempPrefix starts the names of a record's temporary files; the pid that
// follows tells whose they are, so leftovers of dead writers can be removed.
func (f File) tempPrefix() string {
	return "." + filepath.Base(f.Path) + ".tmp-"
}

// Save writes the record atomically, mode 0600: a temporary file, renamed
// over the record. It syncs nothing (see Sync): a crash of every loses
// nothing, a power loss what was written since the last Sync. A write that
// fails removes its temporary file; one cut short by a crash is removed by
// the next CheckWritable, at start-up.
//
// It goes to the system calls directly (write, lstat, rename, after the
// open of a temporary file that Prepare made ahead): an *os.File would add
// a poller registration and a finalizer, and a random name a retry loop, to
// a write that happens twice a run. The temporary file's name is this
// process's pid and a sequence number, unique among its writers, and
// created with O_EXCL: never an existing file, never through a link. The
// file written is kept open until the next Prepare, so that the rename
// that replaces it does not free it: on ext4 that is most of a rename's
// cost, and it would fall on the path from a slot to its exec.
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
		err = f.replaceable()
	}
	if err == nil {
		// A link at the path is replaced, never written through.
		err = unix.Rename(tmp, f.Path)
	}
	if err != nil {
		if fd >= 0 {
			_ = unix.Close(fd)
		}
		_ = unix.Unlink(tmp)
		return fmt.Errorf("write state %s: %w", f.Path, err)
	}
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

// maxKept bounds the files a writer keeps open.
const maxKept = 3

// writer is what a process keeps between the writes of one record: the
// next temporary file, created ahead, and the files it wrote, kept open.
type writer struct {
	mu   sync.Mutex
	next int // the next temporary file's descriptor; -1: none
	name string
	kept []int // the files written, the last at the path
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
// it closes the files written before the one at the path (freeing those
// replaced, the rename's costliest part, here), and creates the next
// temporary file. A failure costs nothing: Save creates one itself.
func (f File) Prepare() {
	w := writerOf(f.Path)
	w.mu.Lock()
	defer w.mu.Unlock()
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
	for _, fd := range w.kept {
		_ = unix.Close(fd)
	}
	w.kept = nil
	return nil
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

// replaceable checks that a rename may replace what is at the path: nothing,
// a regular file, or a link (replaced, not followed). A device, a FIFO, a
// socket or a directory put there is never replaced.
func (f File) replaceable() error {
	fi, err := os.Lstat(f.Path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return err
	case fi.Mode().IsRegular() || fi.Mode()&fs.ModeSymlink != 0:
		return nil
	}
	return &fs.PathError{Op: "rename", Path: f.Path, Err: regular.NotMode(fi.Mode())}
}

// leftoverAge is the age past which a temporary file is removed, whoever
// wrote it.
const leftoverAge = time.Minute

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
	// The probe is a temporary file as Save makes them (a name of its own,
	// O_EXCL), with the system calls directly: an *os.File would try to
	// register a regular file with the poller and fail, four more calls.
	tmp := filepath.Join(dir, f.tempName())
	fd, err := unix.Open(tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return &fs.PathError{Op: "create", Path: tmp, Err: err}
	}
	_ = unix.Close(fd)
	if err := unix.Unlink(tmp); err != nil {
		return &fs.PathError{Op: "remove", Path: tmp, Err: err}
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
