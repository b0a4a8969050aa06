package listen

// This file owns what the server knows of a job: its settings, and a view
// of its loop kept by the job's runner.Observer, published whole after
// each event for the handlers to read without a lock.

import (
	"fmt"
	"sync/atomic"
	"time"

	"github.com/everycli/every/metrics"
	"github.com/everycli/every/runner"
	"github.com/everycli/every/state"
)

// Recent is how many results of each job the page's strip shows: the
// record keeps only the last, so they are kept in memory, from the loop's
// events, since every started.
const Recent = 20

// Job is what the server is told of a job besides its loop's events.
type Job struct {
	Name     string
	Schedule string   // as every status shows it (schedule.Schedule's Recorded)
	Command  []string // shown on the page quoted, its URLs' secrets masked
	// MaxAge is the job's --max-age: /healthz fails when its last success
	// (or, not run yet, its first slot) is older. 0: no age is checked.
	MaxAge time.Duration
}

// result is one finished run, for the strip.
type result struct {
	Slot, Start time.Time
	Duration    time.Duration
	Outcome     string
	ExitCode    int
	Attempts    int
}

// view is what the server shows of a job at one moment. A published view
// is never changed: each event publishes a new one.
type view struct {
	snap  metrics.Snapshot
	began bool      // the loop has begun (Began)
	first time.Time // the first slot waited for at Began
	// since is when the run under way started (snap.Running).
	since  time.Time
	recent []result // the last Recent finished runs, oldest first
}

// clone returns a copy of v that shares nothing with it.
func (v *view) clone() *view {
	c := *v
	c.snap = v.snap.Clone()
	c.recent = append([]result(nil), v.recent...)
	return &c
}

// entry is a job as the server holds it: its settings, its command as the
// page shows it, and its latest view.
type entry struct {
	job     Job
	command string
	view    atomic.Pointer[view]
}

// observer is a job's runner.Observer: it keeps the job's view up to date.
// Its calls come from the job's loop, one at a time, as runner.Observer's
// do: cur is the loop's alone, and each call publishes a copy of it with
// an atomic store, so that neither side ever waits for the other.
type observer struct {
	e   *entry
	cur *view
}

var _ runner.Observer = (*observer)(nil)

func (o *observer) publish() { o.e.view.Store(o.cur.clone()) }

func (o *observer) Began(rec state.Record, next time.Time) {
	o.cur.snap.Began(rec, next)
	o.cur.began, o.cur.first = true, next
	o.publish()
}

func (o *observer) Started(r runner.Run) {
	o.cur.snap.Started(r)
	o.cur.since = r.Start
	o.publish()
}

func (o *observer) Finished(r runner.Run) {
	o.cur.snap.Finished(r)
	o.cur.recent = append(o.cur.recent, result{Slot: r.Slot, Start: r.Start, Duration: r.End.Sub(r.Start),
		Outcome: string(r.Result.Outcome), ExitCode: r.Result.ExitCode, Attempts: r.Attempts})
	if n := len(o.cur.recent); n > Recent {
		o.cur.recent = append(o.cur.recent[:0], o.cur.recent[n-Recent:]...)
	}
	o.publish()
}

func (o *observer) Skipped(reason string, count int, next time.Time) {
	o.cur.snap.Skipped(reason, count, next)
	o.publish()
}

// WantsOutput is false: the server shows no output.
func (o *observer) WantsOutput() bool { return false }

// health is how a job fares for /healthz: ok, or why not, in a few words.
type health struct {
	ok  bool
	why string
}

// judge tells whether a job is healthy at now (docs/GUIDE.md, Health and
// metrics over HTTP (--listen)): not when its last run, as its record tells it (a run
// of an earlier every included), did not succeed; nor, with a max-age,
// when its last success is older, or, when it has never run, when its
// first slot is. A job whose loop has not begun, or whose first slot has
// not come, is healthy.
func judge(v *view, maxAge time.Duration, now time.Time) health {
	if v == nil || !v.began {
		return health{ok: true}
	}
	r := &v.snap.Record
	switch {
	case r.LastResult != "" && r.LastResult != string(runner.Success):
		return health{why: "last run " + resultText(r)}
	case maxAge <= 0:
	case r.LastSuccess.IsZero():
		// Not run yet, or its first run under way: as late as its first
		// slot is old.
		if !v.first.IsZero() && now.Sub(v.first) > maxAge {
			return health{why: fmt.Sprintf("not run yet, first slot %s ago, older than --max-age %s", roughly(now.Sub(v.first)), roughly(maxAge))}
		}
	default:
		if age := max(0, now.Sub(r.LastSuccess)); age > maxAge {
			return health{why: fmt.Sprintf("last success %s ago, older than --max-age %s", roughly(age), roughly(maxAge))}
		}
	}
	return health{ok: true}
}

// resultText is a record's last result as every status shows it:
// "failure (3)", or "interrupted" alone for a run cut short (its every
// killed mid-run), whose end, and code, were never written.
func resultText(r *state.Record) string {
	ended := !r.LastEnd.IsZero() && !r.LastEnd.Before(r.LastRun)
	if r.LastResult == string(runner.Interrupted) && !ended {
		return r.LastResult
	}
	return fmt.Sprintf("%s (%d)", r.LastResult, r.LastExitCode)
}

// roughly is d to the second, or to the millisecond under a second.
func roughly(d time.Duration) string {
	if d < time.Second && d > -time.Second {
		return d.Round(time.Millisecond).String()
	}
	return d.Round(time.Second).String()
}
