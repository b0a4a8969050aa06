// Package metrics owns --metrics-file (docs/GUIDE.md, Prometheus metrics
// (--metrics-file)): a job's counters and its last run as Prometheus text
// exposition, for node_exporter's textfile collector, rewritten atomically
// when every starts and at each run's start and end; and the same
// exposition, for many jobs at once, for every --listen's /metrics (Render,
// from each job's Snapshot).
//
// What the exposition says, and why:
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
	"io/fs"
	"log/slog"
	"sync"
	"time"

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
	// summarised in the log (docs/REFERENCE.md, Log events: an error that
	// repeats).
	summaryEvery = time.Minute
)

// ErrNotMetrics is the error, wrapped in an *fs.PathError, of a metrics path
// that holds something other than every's metrics: a file that is neither
// empty nor every's exposition (a script, a state record, a log) is never
// replaced.
var ErrNotMetrics = errors.New("holds something other than every's metrics")

// Reasons are the skip reasons written from the start, at 0 (docs/GUIDE.md,
// Prometheus metrics (--metrics-file): every_skips_total; docs/REFERENCE.md,
// Log events: skip). Another reason the loop tells of is written from its
// first skip.
var Reasons = []string{"overrun", "locked", "done", "store", "state"}

// File is the metrics file of one job, a runner.Observer. Its methods are
// safe for concurrent use: a timer writes skips that were held back.
type File struct {
	path string
	job  string
	log  *slog.Logger

	mu        sync.Mutex
	snap      Snapshot
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

// New returns the metrics file at path for the job. It writes nothing until
// it is told something (Began); errors of writes are logged on logger (nil:
// none), one line when they start, a summary a minute, one when they end.
func New(path, job string, logger *slog.Logger) *File {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &File{path: path, job: job, log: logger}
}

// Began writes the file at start: the counters of the record as found, the
// last run as it tells it, not running, and the first slot waited for.
func (f *File) Began(rec state.Record, next time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.snap.Began(rec, next)
	f.write()
}

// Started writes the file at a run's start: running, and the counters of its
// record (this run counted). The last run's duration, exit code and lateness
// stay those of the last finished run.
func (f *File) Started(r runner.Run) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.snap.Started(r)
	f.write()
}

// Finished writes the file at a run's end: everything from the run and its
// record, as written.
func (f *File) Finished(r runner.Run) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.snap.Finished(r)
	f.write()
}

// Skipped counts skipped slots by reason, and the slot waited for next. The
// file is rewritten at most once every skipEvery for skips alone: one held
// back is written by a timer, by the next run, or by Close.
func (f *File) Skipped(reason string, count int, next time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.snap.Skipped(reason, count, next)
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
	f.lastErr = writeFile(f.path, Render(Job{f.job, &f.snap}), &f.written)
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
