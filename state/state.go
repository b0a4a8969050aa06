// Package state owns a job's memory between runs and restarts: the Record of
// the last run and of the slot grid, with the limits within which it is
// trusted, and the Stores that keep it: a JSON file written atomically on one
// host, or a Redis key for a fleet.
package state

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Version is the version of the Record's format.
const Version = 1

// Record is the JSON state of one job (docs/GUIDE.md, The state). Times are
// UTC.
type Record struct {
	Version  int      `json:"version"`
	Name     string   `json:"name"`
	Command  []string `json:"command"`
	Schedule string   `json:"schedule"`
	// Anchor and the schedule's interval define the grid: slot k is at
	// Anchor + k*interval. Every instance that shares the record shares it.
	Anchor time.Time `json:"anchor"`
	// LastSlot is the slot of the last run started, written when it starts.
	LastSlot time.Time `json:"last_slot,omitzero"`
	LastRun  time.Time `json:"last_run,omitzero"`
	LastEnd  time.Time `json:"last_end,omitzero"`
	// Running is true from a run's start to its end: found true with nobody
	// running, it means the run was cut short.
	Running             bool      `json:"running"`
	LastResult          string    `json:"last_result,omitempty"`
	LastExitCode        int       `json:"last_exit_code"`
	LastAttempts        int       `json:"last_attempts"`
	LastSuccess         time.Time `json:"last_success,omitzero"`
	ConsecutiveFailures int       `json:"consecutive_failures"`
	Runs                int       `json:"runs"`
	Failures            int       `json:"failures"`
	Skipped             int       `json:"skipped"`
	Host                string    `json:"host,omitempty"`
	PID                 int       `json:"pid,omitempty"`
	// Reserved is the highest EVERY_RUN that may have been handed out: a
	// run's number is reserved, durably, before its command starts (runs up
	// to it need no sync), so that a record from before a power loss, which
	// may have lost the starts after it, is never followed by a number
	// already given. 0: none reserved (a record of an older every).
	Reserved int `json:"reserved,omitempty"`
	// Boot is the boot id of the kernel that wrote the record (see BootID):
	// written under another, it comes from before a reboot, and the numbers
	// it reserved may have been handed out.
	Boot string `json:"boot,omitempty"`

	// Durable is set by a File's Load on a record that is on disk: the one
	// last synced, or one read after a reboot. It is never written.
	Durable bool `json:"-"`
	// Behind is set by a File's Load on a record whose writer went on
	// without it (see File.MarkBehind): it handed out run numbers after
	// its runs, up to its reserved, that it could not write. It is never
	// written.
	Behind bool `json:"-"`
}

// Store keeps one job's Record.
type Store interface {
	// Load returns the record, or nil if there is none. A record that cannot be
	// parsed is set aside and reported as a *CorruptError, with a nil record
	// (the job starts fresh) or, where the store keeps one, the record of its
	// synced copy (CorruptError.Restored).
	Load(ctx context.Context) (*Record, error)
	// Save replaces the record as a whole: a reader sees the old one or the new
	// one, never a mix, whatever happens to the writer.
	Save(ctx context.Context, r *Record) error
	// Where names the store for messages: a path, or a host and key.
	Where() string
}

// CorruptError is a record that could not be parsed, or cannot be trusted
// (see Record.Sane), and where it was put.
type CorruptError struct {
	Where   string
	MovedTo string
	Err     error
	// Restored, if set, names the record's synced copy, whose record the
	// job goes on from instead of starting fresh.
	Restored string
}

func (e *CorruptError) Error() string {
	if e.Restored != "" {
		return fmt.Sprintf("state %s cannot be used (%v); kept as %s, going on from its last synced copy %s", e.Where, e.Err, e.MovedTo, e.Restored)
	}
	return fmt.Sprintf("state %s cannot be used (%v); kept as %s, starting fresh", e.Where, e.Err, e.MovedTo)
}

func (e *CorruptError) Unwrap() error { return e.Err }

// Decode parses a record and checks that it is one every can use: its
// version, its anchor, and what Sane can check without a clock or a period
// (counters, pids, times before 1970).
func Decode(b []byte) (*Record, error) {
	var r Record
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, err
	}
	switch {
	case r.Version != Version:
		return nil, fmt.Errorf("version %d, want %d", r.Version, Version)
	case r.Anchor.IsZero():
		return nil, errors.New("no anchor")
	}
	if err := r.sane(); err != nil {
		return nil, err
	}
	return &r, nil
}

// Limits of a record that can be trusted (docs/DESIGN.md, Safety under
// faults: a state is trusted only within reason): a damaged or hostile record
// beyond them is treated as corrupt, never obeyed into a stall or a negative
// or wrapped EVERY_RUN.
const (
	// MaxSize is the largest state file read; a larger one is corrupt. A
	// record is a few hundred bytes.
	MaxSize = 1 << 20
	// MaxCount is the largest counter trusted, and the largest every writes:
	// 2^52-1, half of what a JSON reader holding numbers as float64 keeps
	// exactly (2^53). A record near 2^53 is corrupt, never counted on: the
	// sums made of its counters (runs and a reservation block, at most
	// 2^21) stay exact, and every's counts stop at MaxCount (AddCount)
	// rather than write a record it would refuse to read back. (At a run
	// a millisecond, runs reach it in 142,000 years; only a record written
	// by hand starts near it.) A run whose number would pass it is not
	// run: EVERY_RUN never repeats the last one.
	MaxCount = 1<<52 - 1
	// maxPID is Linux's PID_MAX_LIMIT.
	maxPID = 1 << 22
)

// AddCount returns the counter n with d more counted, held within [0,
// MaxCount]: a count that reached MaxCount stays there.
func AddCount(n, d int) int {
	switch {
	case d <= 0:
		return max(n+d, 0)
	case n >= MaxCount-d:
		return MaxCount
	}
	return n + d
}

// epoch and lastWritable bound the times a record may hold: RFC 3339 in UTC,
// as Encode writes them, has four digits for the year.
var (
	epoch        = time.Unix(0, 0)
	lastWritable = time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC)
)

// Sane reports why the record cannot be trusted, or nil: a counter that is
// negative or over MaxCount, a pid out of range, or a time before 1970 or
// after 9999 (in UTC, which Encode could not write back).
//
// A time after now is not a reason (docs/DESIGN.md, Safety under faults: a
// clock set back is not corruption): the wall clock was set back since it was
// written, or its writer's clock runs ahead. The record keeps its counters
// and history, and the runner starts a new grid from now (see Latest); every
// status shows it. The clock's reading and the schedule's period that callers
// pass are what they know of the record's context; no check needs them since.
func (r *Record) Sane(_ time.Time, _ time.Duration) error {
	return r.sane()
}

// Latest returns the latest time the record holds, zero if none: later than
// now, it says the record comes from the future of this host's clock.
func (r *Record) Latest() time.Time {
	var latest time.Time
	for _, t := range r.times() {
		if t.at.After(latest) {
			latest = t.at
		}
	}
	return latest
}

// sane is what Sane checks without a clock or a period.
func (r *Record) sane() error {
	for _, c := range []struct {
		name string
		n    int
	}{
		{"runs", r.Runs}, {"failures", r.Failures}, {"skipped", r.Skipped},
		{"consecutive_failures", r.ConsecutiveFailures}, {"last_attempts", r.LastAttempts}, {"reserved", r.Reserved},
	} {
		if c.n < 0 || int64(c.n) > MaxCount {
			return fmt.Errorf("%s %d is out of range [0, %d]", c.name, c.n, int64(MaxCount))
		}
	}
	if r.PID < 0 || int64(r.PID) > maxPID {
		return fmt.Errorf("pid %d is out of range [0, %d]", r.PID, maxPID)
	}
	for _, t := range r.times() {
		switch {
		case t.at.Before(epoch):
			return fmt.Errorf("%s %s is before 1970", t.name, t.at.UTC().Format(time.RFC3339))
		case t.at.After(lastWritable):
			// Written with a zone offset, it reads; in UTC, it would not write.
			return fmt.Errorf("%s %s is after the year 9999", t.name, t.at.Format(time.RFC3339))
		}
	}
	return nil
}

type namedTime struct {
	name string
	at   time.Time
}

// times are the record's times that are set.
func (r *Record) times() []namedTime {
	var ts []namedTime
	for _, t := range []namedTime{{"anchor", r.Anchor}, {"last_slot", r.LastSlot}, {"last_run", r.LastRun},
		{"last_end", r.LastEnd}, {"last_success", r.LastSuccess}} {
		if !t.at.IsZero() {
			ts = append(ts, t)
		}
	}
	return ts
}

// canonical is r as a read of its encoding gives it back: times on UTC,
// without a monotonic reading, never Durable.
func canonical(r *Record) Record {
	c := *r
	for _, t := range []*time.Time{&c.Anchor, &c.LastSlot, &c.LastRun, &c.LastEnd, &c.LastSuccess} {
		*t = t.Round(0).UTC()
	}
	c.Durable, c.Behind = false, false
	return c
}

// Encode formats a record, with all its times in UTC.
func Encode(r *Record) ([]byte, error) {
	c := canonical(r)
	if b, ok := appendRecord(make([]byte, 0, encodedSize(&c)), &c); ok {
		return append(b, '\n'), nil
	}
	// A time outside the years json writes: json's own error. (A copy, so
	// that c need not be on the heap for the common case.)
	d := c
	b, err := json.MarshalIndent(&d, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}
