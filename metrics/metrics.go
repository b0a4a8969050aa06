// Package metrics owns --metrics-file (SPEC section 13): a job's counters and
// its last run as Prometheus text exposition, for node_exporter's textfile
// collector, rewritten atomically when every starts and at each run's start
// and end.
//
// What the file says, and why:
//
//   - Counters (runs, failures, overrun skips) come from the job's state, so
//     they survive restarts and count what every instance sharing the state
//     did. Skips for the other reasons (locked, done, store, state) are not in
//     the state: they count since this every started, and restart from 0 with
//     it, which rate() and increase() take as a counter reset.
//   - Every skip reason is written from the start, at 0, so that rate() has a
//     series to work on before the first skip.
//   - A time never reached (no run yet, no success yet, no next slot) is 0, not
//     left out: `time() - every_last_success_timestamp_seconds > D` then fires
//     for a job that never succeeded, as it should.
//   - No timestamps: node_exporter stamps the samples when it is scraped, and
//     its node_textfile_mtime_seconds tells how old the file is, so a dead
//     every is seen as a file that stops changing. The file is left in place
//     when every exits: its counters stay true.
package metrics

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/everycli/every/internal/pid"
	"github.com/everycli/every/internal/regular"
	"github.com/everycli/every/runner"
	"github.com/everycli/every/state"
)

// Event is the log event of a metrics file that cannot be written. Section 13
// gives each way of telling its own event (hook, ping); a metrics file is not
// the job's state, and state_error would send whoever watches for it to the
// wrong file.
const Event = "metrics"

// Mode is the metrics file's mode: node_exporter runs as another user.
const Mode fs.FileMode = 0o644

const (
	// skipEvery is how often skipped slots alone rewrite the file. A job at
	// 10ms slots whose lock is busy would otherwise rewrite it 100 times a
	// second for a collector that reads it every 15s or so.
	skipEvery = time.Second
	// summaryEvery is how often a metrics file that stays unwritable is
	// summarised in the log (SPEC section 9: repeated errors).
	summaryEvery = time.Minute
)

// ErrNotMetrics is the error, wrapped in an *fs.PathError, of a metrics path
// that holds something other than every's metrics: a file that is neither
// empty nor every's exposition (a script, a state record, a log) is never
// replaced.
var ErrNotMetrics = errors.New("holds something other than every's metrics")

// Reasons are the skip reasons written from the start, at 0 (SPEC sections 9
// and 11). Another reason the loop tells of is written from its first skip.
var Reasons = []string{"overrun", "locked", "done", "store", "state"}

// File is the metrics file of one job, a runner.Observer. Its methods are
// safe for concurrent use: a timer writes skips that were held back.
type File struct {
	path string
	job  string
	log  *slog.Logger

	mu        sync.Mutex
	snap      snapshot
	dirty     bool        // skips told and not yet written
	timer     *time.Timer // armed to write held-back skips
	lastWrite time.Time   // of the last attempt, written or not
	lastErr   error       // of the last attempt
	writes    int         // attempts, for tests
	written   lastFile    // the file this File last put at path
	fail      outage
	closed    bool
}

var _ runner.Observer = (*File)(nil)

// snapshot is what the file says.
type snapshot struct {
	rec state.Record
	// overrun counts overrun skips told since rec was taken: the loop books
	// them in its record, and tells of them before it passes that record on.
	overrun  int
	skips    map[string]int // the other reasons, since start
	duration time.Duration  // of the last finished run
	late     time.Duration  // of the last finished run, from its slot
	exitCode int            // of the last finished run
	next     time.Time
	running  bool
}

// New returns the metrics file at path for the job. It writes nothing until
// it is told something (Began); errors of writes are logged on logger (nil:
// none), one line when they start, a summary a minute, one when they end.
func New(path, job string, logger *slog.Logger) *File {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &File{path: path, job: job, log: logger, snap: snapshot{skips: map[string]int{}}}
}

// Began writes the file at start: the counters of the record as found, the
// last run as it tells it, not running, and the first slot waited for.
func (f *File) Began(rec state.Record, next time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	s := &f.snap
	s.rec, s.overrun, s.next, s.running = rec, 0, next, false
	s.exitCode, s.duration, s.late = rec.LastExitCode, 0, 0
	if !rec.LastRun.IsZero() && !rec.LastEnd.Before(rec.LastRun) {
		s.duration = rec.LastEnd.Sub(rec.LastRun)
	}
	if !rec.LastRun.IsZero() && !rec.LastSlot.IsZero() {
		s.late = rec.LastRun.Sub(rec.LastSlot)
	}
	f.write()
}

// Started writes the file at a run's start: running, and the counters of its
// record (this run counted). The last run's duration, exit code and lateness
// stay those of the last finished run.
func (f *File) Started(r runner.Run) {
	f.mu.Lock()
	defer f.mu.Unlock()
	s := &f.snap
	s.rec, s.overrun, s.running = r.Record, 0, true
	if !r.Next.IsZero() {
		s.next = r.Next
	}
	f.write()
}

// Finished writes the file at a run's end: everything from the run and its
// record, as written.
func (f *File) Finished(r runner.Run) {
	f.mu.Lock()
	defer f.mu.Unlock()
	s := &f.snap
	s.rec, s.overrun, s.running = r.Record, 0, false
	s.duration, s.late, s.exitCode = r.End.Sub(r.Start), r.Late, r.Result.ExitCode
	s.next = r.Next
	f.write()
}

// Skipped counts skipped slots by reason, and the slot waited for next. The
// file is rewritten at most once every skipEvery for skips alone: one held
// back is written by a timer, by the next run, or by Close.
func (f *File) Skipped(reason string, count int, next time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if count > 0 {
		if reason == "overrun" {
			f.snap.overrun += count
		} else {
			f.snap.skips[reason] += count
		}
	}
	if !next.IsZero() {
		f.snap.next = next
	}
	f.dirty = true
	f.throttled()
}

// throttled writes the file if skipEvery has passed since the last write, or
// else makes sure a timer will. f.mu is held.
func (f *File) throttled() {
	if f.closed || !f.dirty {
		return
	}
	wait := time.Until(f.lastWrite.Add(skipEvery))
	if wait <= 0 {
		f.write()
		return
	}
	if f.timer == nil {
		f.timer = time.AfterFunc(wait, f.flush)
	}
}

// flush is the timer's: it writes skips held back.
func (f *File) flush() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.timer = nil
	f.throttled()
}

// WantsOutput is false: metrics need no output.
func (f *File) WantsOutput() bool { return false }

// Close writes what is held back, and stops the timer; the file stays, with
// its last state. It returns the error of the last write, if it failed.
func (f *File) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.timer != nil {
		f.timer.Stop()
		f.timer = nil
	}
	if f.dirty && !f.closed {
		f.write()
	}
	f.closed = true
	f.written.release()
	return f.lastErr
}

// write writes the snapshot, and logs a failure as part of an outage. f.mu is
// held.
func (f *File) write() {
	if f.closed {
		return
	}
	f.dirty = false
	now := time.Now()
	f.lastWrite = now
	f.writes++
	f.lastErr = writeFile(f.path, render(f.job, &f.snap), &f.written)
	if f.lastErr != nil {
		f.failed(now, f.lastErr)
		return
	}
	f.recovered(now)
}

// outage is a metrics file that cannot be written, while it lasts.
type outage struct {
	n        int // failed writes since it started
	shown    int // failed writes counted by a line so far
	since    time.Time
	lastLine time.Time
}

// failed logs a failed write: the first of an outage, then a summary with the
// count at most once every summaryEvery.
func (f *File) failed(now time.Time, err error) {
	o := &f.fail
	o.n++
	switch {
	case o.n == 1:
		o.since, o.lastLine, o.shown = now, now, 1
		f.log.Error("cannot write the metrics file; the job goes on", "event", Event, "metrics_file", f.path,
			"error", err.Error())
	case now.Sub(o.lastLine) >= summaryEvery:
		f.log.Warn("cannot write the metrics file; the job goes on", "event", Event, "metrics_file", f.path,
			"count", o.n-o.shown, "error", err.Error(), "since", o.since.Round(0).UTC(), "repeated", true)
		o.shown, o.lastLine = o.n, now
	}
}

// recovered logs the end of an outage, if there was one.
func (f *File) recovered(time.Time) {
	o := &f.fail
	if o.n == 0 {
		return
	}
	f.log.Info("metrics file written again", "event", Event, "metrics_file", f.path,
		"count", o.n-o.shown, "total", o.n, "since", o.since.Round(0).UTC(), "ended", true)
	*o = outage{}
}

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

// family is one metric of the file.
type family struct {
	name, typ, help string
	samples         []sample
}

type sample struct {
	reason string // the reason label, for skips
	value  string
}

// render returns the exposition of the snapshot.
func render(job string, s *snapshot) []byte {
	r := &s.rec
	one := func(v string) []sample { return []sample{{value: v}} }
	running := "0"
	if s.running {
		running = "1"
	}
	var skips []sample
	for _, reason := range Reasons {
		n := s.skips[reason]
		if reason == "overrun" {
			n = r.Skipped + s.overrun
		}
		skips = append(skips, sample{reason, strconv.Itoa(n)})
	}
	var others []string
	for reason := range s.skips {
		if !slices.Contains(Reasons, reason) {
			others = append(others, reason)
		}
	}
	slices.Sort(others)
	for _, reason := range others {
		skips = append(skips, sample{reason, strconv.Itoa(s.skips[reason])})
	}
	families := []family{
		{"every_runs_total", "counter", "Runs started, from the job's state (they survive restarts).", one(strconv.Itoa(r.Runs))},
		{"every_failures_total", "counter", "Runs that failed, from the job's state.", one(strconv.Itoa(r.Failures))},
		{"every_skips_total", "counter", "Slots skipped, by reason: overrun from the job's state, the others since every started.", skips},
		{"every_last_run_timestamp_seconds", "gauge", "When the last run started, in Unix seconds; 0: never.", one(timestamp(r.LastRun))},
		{"every_last_success_timestamp_seconds", "gauge", "When the last successful run started, in Unix seconds; 0: never.", one(timestamp(r.LastSuccess))},
		{"every_next_run_timestamp_seconds", "gauge", "The slot waited for next, in Unix seconds; 0: none.", one(timestamp(s.next))},
		{"every_last_duration_seconds", "gauge", "How long the last finished run took, its retries included.", one(duration(s.duration))},
		{"every_last_exit_code", "gauge", "The exit code of the last finished run (124: timeout, 128+n: signal n).", one(strconv.Itoa(s.exitCode))},
		{"every_last_lateness_seconds", "gauge", "How late after its slot the last finished run started.", one(duration(s.late))},
		{"every_consecutive_failures", "gauge", "Runs failed in a row, up to the last finished run.", one(strconv.Itoa(r.ConsecutiveFailures))},
		{"every_running", "gauge", "1 while a run is in progress, else 0.", one(running)},
	}
	var b strings.Builder
	labels := `{job="` + escape(job) + `"`
	for _, fam := range families {
		fmt.Fprintf(&b, "# HELP %s %s\n# TYPE %s %s\n", fam.name, fam.help, fam.name, fam.typ)
		for _, smp := range fam.samples {
			b.WriteString(fam.name)
			b.WriteString(labels)
			if smp.reason != "" {
				b.WriteString(`,reason="` + escape(smp.reason) + `"`)
			}
			b.WriteString("} " + smp.value + "\n")
		}
	}
	return []byte(b.String())
}

// labelEscaper escapes what the text format escapes in a label value.
var labelEscaper = strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)

// escape escapes a label value as the text format wants: backslash, double
// quote and newline. Bytes that are not UTF-8 are replaced: the format is
// UTF-8.
func escape(v string) string {
	if !utf8.ValidString(v) {
		v = strings.ToValidUTF8(v, "\uFFFD")
	}
	return labelEscaper.Replace(v)
}

// timestamp is t in Unix seconds, exactly to the nanosecond; 0 for the zero
// time.
func timestamp(t time.Time) string {
	if t.IsZero() {
		return "0"
	}
	return seconds(t.Unix(), int64(t.Nanosecond()))
}

// duration is d in seconds, exactly to the nanosecond.
func duration(d time.Duration) string {
	sec, nsec := int64(d/time.Second), int64(d%time.Second)
	if nsec < 0 {
		sec, nsec = sec-1, nsec+int64(time.Second)
	}
	return seconds(sec, nsec)
}

// seconds formats sec + nsec/1e9 (0 <= nsec < 1e9) as a decimal, with no
// trailing zeros and none of the rounding of a float64 (whose 53 bits hold
// today's Unix time to a few hundred nanoseconds only).
func seconds(sec, nsec int64) string {
	neg := sec < 0
	if neg && nsec > 0 {
		sec, nsec = sec+1, int64(time.Second)-nsec // -2 + 0.25 is -(1 + 0.75)
	}
	u := uint64(sec)
	if neg {
		u = -u
	}
	s := strconv.FormatUint(u, 10)
	if nsec != 0 {
		s += "." + strings.TrimRight(fmt.Sprintf("%09d", nsec), "0")
	}
	if neg {
		s = "-" + s
	}
	return s
}
