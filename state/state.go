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
	"math"
	"time"
)

// Version is the version of the Record's format.
const Version = 1

// Record is the JSON state of one job (SPEC section 9). Times are UTC.
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
}

// Store keeps one job's Record.
type Store interface {
	// Load returns the record, or nil if there is none. A record that cannot be
	// parsed is set aside and reported as a *CorruptError, with a nil record:
	// the job starts fresh.
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
}

func (e *CorruptError) Error() string {
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

// Limits of a record that can be trusted (SPEC section 9): a damaged or
// hostile record beyond them is treated as corrupt, never obeyed into a
// stall or a negative or wrapped EVERY_RUN.
const (
	// MaxSize is the largest state file read; a larger one is corrupt. A
	// record is a few hundred bytes.
	MaxSize = 1 << 20
	// MaxCount is the largest counter trusted: one more can still be added
	// to it, and it survives JSON readers that hold numbers as float64.
	MaxCount = 1 << 53
	// maxPID is Linux's PID_MAX_LIMIT.
	maxPID = 1 << 22
	// Skew is how far ahead of this host's clock, beyond one period, a
	// record's times may be: another host's clock, or this one's stepped
	// back. Every time a record holds was this side of its writer's clock.
	Skew = time.Minute
	// UnknownPeriod stands for the period when Sane is not told it.
	UnknownPeriod = 24 * time.Hour
)

// epoch is the earliest time a record may hold.
var epoch = time.Unix(0, 0)

// Sane reports why the record cannot be trusted, or nil: a counter that is
// negative or over MaxCount, a pid out of range, a time before 1970, or a
// time later than now plus one period of the job's schedule (plus Skew). A
// period <= 0 means it is not known: UnknownPeriod stands for it. Stores call
// it on Load (File with its Period); a caller that knows the schedule calls
// it again with its period.
func (r *Record) Sane(now time.Time, period time.Duration) error {
	if err := r.sane(); err != nil {
		return err
	}
	if period <= 0 {
		period = UnknownPeriod
	}
	ahead := time.Duration(math.MaxInt64) // saturated, for a period near the largest
	if period < ahead-Skew {
		ahead = period + Skew
	}
	limit := now.Add(ahead)
	for _, t := range r.times() {
		if t.at.After(limit) {
			return fmt.Errorf("%s %s is later than now (%s) plus one period (%v) and %v", t.name,
				t.at.UTC().Format(time.RFC3339), now.UTC().Format(time.RFC3339), period, Skew)
		}
	}
	return nil
}

// sane is what Sane checks without a clock or a period.
func (r *Record) sane() error {
	for _, c := range []struct {
		name string
		n    int
	}{
		{"runs", r.Runs}, {"failures", r.Failures}, {"skipped", r.Skipped},
		{"consecutive_failures", r.ConsecutiveFailures}, {"last_attempts", r.LastAttempts},
	} {
		if c.n < 0 || int64(c.n) > MaxCount {
			return fmt.Errorf("%s %d is out of range [0, %d]", c.name, c.n, int64(MaxCount))
		}
	}
	if r.PID < 0 || int64(r.PID) > maxPID {
		return fmt.Errorf("pid %d is out of range [0, %d]", r.PID, maxPID)
	}
	for _, t := range r.times() {
		if t.at.Before(epoch) {
			return fmt.Errorf("%s %s is before 1970", t.name, t.at.UTC().Format(time.RFC3339))
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

// Encode formats a record, with all its times in UTC.
func Encode(r *Record) ([]byte, error) {
	c := *r
	for _, t := range []*time.Time{&c.Anchor, &c.LastSlot, &c.LastRun, &c.LastEnd, &c.LastSuccess} {
		*t = t.Round(0).UTC()
	}
	b, err := json.MarshalIndent(&c, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}
