package runner

import (
	"context"
	"log/slog"
	"slices"
	"time"
)

// This file owns the logging of repeated errors: a store that is down, a
// state that cannot be written or read, a lock that stays busy, a command
// that keeps failing. At 10ms slots a line per slot would drown the log, so
// each is logged when it starts, summarised with a count at most once every
// summaryEvery, and logged once more when it ends.

// summaryEvery is how often a repeated error is summarised.
const summaryEvery = time.Minute

// outage is one kind of error while it repeats.
type outage struct {
	key      string    // what makes two errors the same one
	n        int       // occurrences since it started
	shown    int       // occurrences logged or summarised so far
	lines    int       // lines logged for it
	since    time.Time // when it started
	lastLine time.Time // when it was last logged or summarised
	// endKey and endLine are the key of the last outage whose end was
	// logged (or passed silently, its one line telling all), and when: the
	// same error within summaryEvery of it resumes it (see note).
	endKey  string
	endLine time.Time
	// resumed says this outage resumed one that had ended moments before
	// (a disk nearly full, that fails one write in two): its end is logged
	// only once summaryEvery has passed since its last line.
	resumed bool
}

// note counts n occurrences at now (n skipped slots, say). It returns how
// many occurrences a line logged now stands for, and whether one is due: at
// the first occurrence, and then as a summary once summaryEvery has passed.
// An error with another key starts over.
func (o *outage) note(now time.Time, key string, n int) (count int, due bool) {
	if o.n > 0 && key != o.key {
		*o = outage{}
	}
	if o.n == 0 && key == o.endKey && now.Sub(o.endLine) < summaryEvery {
		// It ended moments ago: the same outage, flapping. Counted, told
		// in the next summary, not as a new start.
		o.key, o.since, o.n, o.resumed, o.lastLine = key, now, n, true, o.endLine
		return n, false
	}
	first := o.n == 0
	o.n += n
	if first {
		o.key, o.since = key, now
	} else if now.Sub(o.lastLine) < summaryEvery {
		return n, false
	}
	count = o.n - o.shown
	o.shown, o.lastLine = o.n, now
	o.lines++
	return count, true
}

// end ends the outage. It returns the occurrences in all and those no line
// has counted yet; ok is false when there was no outage, or when its one
// line told all of it.
func (o *outage) end() (total, unshown int, since time.Time, ok bool) {
	if o.n == 0 {
		return 0, 0, time.Time{}, false
	}
	if o.lines == 1 && o.shown == o.n {
		*o = outage{}
		return 0, 0, time.Time{}, false
	}
	total, unshown, since = o.n, o.n-o.shown, o.since
	*o = outage{}
	return total, unshown, since, true
}

// outages are the repeated errors a loop keeps track of.
type outages struct {
	store, lockErr, stateRead, stateWrite, locked, overrun, failing, clock, corrupt outage
	// reserve are the slots skipped for want of a run number reserved on
	// disk; jumped, the records whose reserved numbers were skipped.
	reserve, jumped outage
	// concurrency are the slots skipped for want of a place in the gate.
	concurrency outage
	// exec are its attempts' repeated warnings, which Exec logs.
	exec execWarnings
}

// execWarnings are the warnings an attempt's process may give at each run
// (exec.go), summarised across the runs as the loop's errors are: a
// command that leaves a process behind at every 100ms slot, or times out
// at each, must not log a line per slot.
type execWarnings struct {
	leftBehind, timedOut, graceKill, guard outage
}

// report logs n occurrences of a repeated error: at level when it starts,
// as a summary with the count since the last line once one is due (at warn
// at most), at debug otherwise. attrs must not hold "count".
func (l *loop) report(o *outage, key string, n int, level slog.Level, msg string, attrs ...any) {
	logRepeated(l.log, o, key, n, level, msg, attrs...)
}

// logRepeated is repeated, to log.
func logRepeated(log *slog.Logger, o *outage, key string, n int, level slog.Level, msg string, attrs ...any) {
	first := o.n == 0 || o.key != key
	count, due := o.note(time.Now(), key, n)
	switch {
	case !due:
		log.Debug(msg, withCount(attrs, n)...)
		return
	case !first:
		level = min(level, slog.LevelWarn)
		attrs = append(attrs, "since", o.since.Round(0).UTC(), "repeated", true)
	}
	log.Log(context.Background(), level, msg, withCount(attrs, count)...)
}

// withCount puts "count" after a skip's reason, where a reader of the log
// looks for it, or else last.
func withCount(attrs []any, n int) []any {
	at := len(attrs)
	for i := 0; i+1 < len(attrs); i += 2 {
		if attrs[i] == "reason" {
			at = i + 2
		}
	}
	return slices.Concat(attrs[:at:at], []any{"count", n}, attrs[at:])
}

// recover logs the end of a repeated error, with the count of occurrences no
// line has counted yet and the total. One whose single line told all ends
// silently, unless always says otherwise.
func (l *loop) recover(o *outage, always bool, msg string, attrs ...any) {
	logEnded(l.log, o, always, msg, attrs...)
}

// logEnded is ended, to log.
//
// The end of an outage that resumed one ended moments before waits until
// summaryEvery has passed since its last line, for a later call: a
// flapping error (a write that fails one time in two) is summarised as one
// outage, never logged twice a slot.
func logEnded(log *slog.Logger, o *outage, always bool, msg string, attrs ...any) {
	now := time.Now()
	if o.n > 0 && o.resumed && now.Sub(o.lastLine) < summaryEvery {
		return
	}
	n, since, key := o.n, o.since, o.key
	total, unshown, _, ok := o.end()
	if n > 0 {
		o.endKey, o.endLine = key, now
	}
	if !ok && (n == 0 || !always) {
		return
	}
	if !ok {
		total, unshown = n, 0
	}
	log.Info(msg, append(withCount(attrs, unshown), "total", total, "since", since.Round(0).UTC(), "ended", true)...)
}
