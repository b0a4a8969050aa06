package runner

import (
	"reflect"
	"testing"
	"time"

	"github.com/everycli/every/state"
)

func TestMarkStartAndEnd(t *testing.T) {
	t0 := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	slot := t0.Add(90 * time.Second)
	start := runStart{Name: "j", Command: []string{"job", "-x"}, Schedule: "90s", Anchor: t0, Slot: slot,
		At: slot.Add(time.Millisecond), Host: "web-1", PID: 42}
	before := state.Record{Version: 1, Name: "j", Schedule: "90s", Anchor: t0, Runs: 4, Failures: 1,
		ConsecutiveFailures: 1, LastResult: "failure", LastExitCode: 3, Skipped: 2}

	started := markStart(before, start)
	want := before
	want.Command, want.LastSlot, want.LastRun = start.Command, slot, start.At
	want.Running, want.Host, want.PID, want.Runs = true, "web-1", 42, 5
	if !reflect.DeepEqual(started, want) {
		t.Fatalf("markStart:\n got %+v\nwant %+v", started, want)
	}

	end := start.At.Add(2 * time.Second)
	tests := []struct {
		name string
		res  Result
		want func(r *state.Record)
	}{
		{"success resets the failures", Result{Outcome: Success}, func(r *state.Record) {
			r.LastResult, r.LastExitCode, r.ConsecutiveFailures, r.LastSuccess = "success", 0, 0, start.At
		}},
		{"failure counts", Result{Outcome: Failure, ExitCode: 7}, func(r *state.Record) {
			r.LastResult, r.LastExitCode, r.ConsecutiveFailures, r.Failures = "failure", 7, 2, 2
		}},
		{"timeout is a failure", Result{Outcome: Timeout, ExitCode: 124}, func(r *state.Record) {
			r.LastResult, r.LastExitCode, r.ConsecutiveFailures, r.Failures = "timeout", 124, 2, 2
		}},
		{"lost lock is a failure", Result{Outcome: LostLock, ExitCode: 137}, func(r *state.Record) {
			r.LastResult, r.LastExitCode, r.ConsecutiveFailures, r.Failures = "lost_lock", 137, 2, 2
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := markEnd(started, tt.res, 3, end)
			want := started
			want.Running, want.LastEnd, want.LastAttempts = false, end, 3
			tt.want(&want)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("markEnd:\n got %+v\nwant %+v", got, want)
			}
		})
	}

	cut := markInterrupted(started)
	if cut.LastResult != "interrupted" || cut.Failures != 2 || cut.ConsecutiveFailures != 2 || cut.Runs != 5 {
		t.Fatalf("markInterrupted: %+v", cut)
	}
}
