// Package state owns a job's memory between runs and restarts: the Record of
// the last run and of the slot grid, and the Stores that keep it, a JSON file
// written atomically on one host.
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

// CorruptError is a record that could not be parsed, and where it was put.
type CorruptError struct {
	Where   string
	MovedTo string
	Err     error
}

func (e *CorruptError) Error() string {
	return fmt.Sprintf("state %s cannot be parsed (%v); kept as %s, starting fresh", e.Where, e.Err, e.MovedTo)
}

func (e *CorruptError) Unwrap() error { return e.Err }

// Decode parses a record and checks that it is one every can use.
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
	return &r, nil
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
