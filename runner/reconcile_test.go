package runner

import (
	"testing"
	"time"

	"github.com/everycli/every/state"
)

// TestRereadRecord: what a record read again under the lock makes the loop
// do, decided from values alone.
func TestRereadRecord(t *testing.T) {
	anchor := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	other := anchor.Add(3 * time.Second) // another instance's grid
	slot := anchor.Add(time.Hour)
	now := slot.Add(time.Millisecond)
	sched := grid("10s")
	rec := func(change func(r *state.Record)) *state.Record {
		r := &state.Record{Version: state.Version, Name: "job", Schedule: "10s", Anchor: anchor,
			LastSlot: slot.Add(-10 * time.Second), LastRun: slot.Add(-10 * time.Second), LastEnd: slot.Add(-9 * time.Second),
			Runs: 5, Reserved: 8, Host: "web-2", PID: 7}
		if change != nil {
			change(r)
		}
		return r
	}
	mine := held{Record: *rec(nil)}
	for _, tt := range []struct {
		name     string
		found    *state.Record
		mine     func(h *held)
		floor    int // 0: the lease has none
		alive    bool
		manual   bool
		wantRuns int
		wantOwn  bool
		wantLost *lostRecord
		wantJoin time.Time
		wantSlot time.Time
		wantDone bool
		wantInt  bool
	}{
		{name: "the store's, unchanged", found: rec(nil), wantRuns: 5, wantSlot: slot},
		{name: "another instance ran more", found: rec(func(r *state.Record) { r.Runs = 9 }), wantRuns: 9, wantSlot: slot},
		{name: "none, nothing seen before", found: nil, mine: func(h *held) { h.Record = state.Record{} }, floor: 40,
			wantRuns: 0, wantSlot: slot},
		{name: "none, no floor", found: nil, wantRuns: 5, wantSlot: slot},
		{name: "none under a floor: lost", found: nil, floor: 40, wantRuns: 39,
			wantLost: &lostRecord{found: -1, seen: 5, runs: 39}, wantSlot: slot},
		{name: "none, a holder seen, under a floor: lost", found: nil, floor: 40,
			mine:     func(h *held) { h.Record, h.sawHolder = state.Record{}, true },
			wantRuns: 39, wantLost: &lostRecord{found: -1, seen: 0, runs: 39}, wantSlot: slot},
		{name: "fewer runs under a floor: lost", found: rec(func(r *state.Record) { r.Runs = 2 }), floor: 3, wantRuns: 5,
			wantLost: &lostRecord{found: 2, seen: 5, runs: 5}, wantSlot: slot},
		{name: "fewer runs, no floor", found: rec(func(r *state.Record) { r.Runs = 2 }), wantRuns: 2, wantSlot: slot},
		{name: "own, its write failed", found: rec(func(r *state.Record) { r.Runs, r.Reserved = 4, 12 }),
			mine: func(h *held) { h.unsaved = true }, wantRuns: 5, wantOwn: true, wantSlot: slot},
		{name: "own start, its end unwritten", found: rec(func(r *state.Record) { r.Running, r.Host, r.PID = true, "web-1", 42 }),
			mine: func(h *held) { h.unsaved = true }, wantRuns: 5, wantOwn: true, wantSlot: slot},
		{name: "a start of another pid, running", alive: true,
			found:    rec(func(r *state.Record) { r.Running, r.Host, r.PID = true, "web-1", 43 }),
			mine:     func(h *held) { h.unsaved = true },
			wantRuns: 5, wantSlot: slot},
		{name: "a start cut short", found: rec(func(r *state.Record) { r.Running = true }), wantRuns: 5, wantInt: true, wantSlot: slot},
		{name: "own, before a step", found: rec(nil),
			mine: func(h *held) {
				h.Record, h.stale = restamp(h.Record, time.Minute), time.Minute
			}, wantRuns: 5, wantOwn: true, wantSlot: slot},
		{name: "another grid: joined", found: rec(func(r *state.Record) { r.Anchor, r.LastSlot = other, other.Add(time.Hour-20*time.Second) }),
			wantRuns: 5, wantJoin: other, wantSlot: other.Add(time.Hour - 10*time.Second)},
		{name: "another grid, manual: joined, slot kept", manual: true,
			found:    rec(func(r *state.Record) { r.Anchor, r.LastSlot = other, other.Add(time.Hour-10*time.Second) }),
			wantRuns: 5, wantJoin: other, wantSlot: slot},
		{name: "another grid, from the future: not joined",
			found: rec(func(r *state.Record) {
				r.Anchor, r.LastSlot, r.LastEnd = other, other.Add(2*time.Hour), other.Add(2*time.Hour)
			}),
			wantRuns: 5, wantSlot: slot},
		{name: "the grid left: not joined", found: rec(func(r *state.Record) { r.Anchor = other }),
			mine: func(h *held) { h.left = other }, wantRuns: 5, wantSlot: slot},
		{name: "slot run already", found: rec(func(r *state.Record) { r.LastSlot = slot }), wantRuns: 5, wantDone: true, wantSlot: slot},
		{name: "slot run already, manual: runs", manual: true, found: rec(func(r *state.Record) { r.LastSlot = slot }),
			wantRuns: 5, wantSlot: slot},
		{name: "slot cut short: runs again", found: rec(func(r *state.Record) { r.LastSlot, r.Running = slot, true }),
			wantRuns: 5, wantInt: true, wantSlot: slot},
		{name: "another schedule: neither joined nor done",
			found:    rec(func(r *state.Record) { r.Schedule, r.Anchor, r.LastSlot = "1m", other, slot }),
			wantRuns: 5, wantSlot: slot},
	} {
		t.Run(tt.name, func(t *testing.T) {
			m := mine
			if tt.mine != nil {
				tt.mine(&m)
			}
			r := rereadRecord(rereadInput{found: tt.found, mine: m, floor: tt.floor, hasFloor: tt.floor != 0,
				alive: func(*state.Record) bool { return tt.alive }, sched: sched, anchor: anchor, slot: slot, now: now,
				manual: tt.manual, host: "web-1", pid: 42})
			if r.rec.Runs != tt.wantRuns || r.own != tt.wantOwn || !r.join.Equal(tt.wantJoin) || !r.slot.Equal(tt.wantSlot) ||
				r.done != tt.wantDone || r.interrupted != tt.wantInt {
				t.Fatalf("runs %d own %v join %v slot %v done %v interrupted %v;\nwant %d %v %v %v %v %v",
					r.rec.Runs, r.own, r.join, r.slot, r.done, r.interrupted,
					tt.wantRuns, tt.wantOwn, tt.wantJoin, tt.wantSlot, tt.wantDone, tt.wantInt)
			}
			if (r.lost == nil) != (tt.wantLost == nil) || r.lost != nil && *r.lost != *tt.wantLost {
				t.Fatalf("lost %+v, want %+v", r.lost, tt.wantLost)
			}
			if tt.wantInt && (r.rec.LastResult != string(Interrupted) || r.rec.Failures != tt.found.Failures+1) {
				t.Fatalf("a run cut short booked as %q, %d failures", r.rec.LastResult, r.rec.Failures)
			}
			if tt.wantOwn && r.rec.Reserved < tt.found.Reserved {
				t.Fatalf("own record reserves %d, below the store's %d: a reservation on disk given up", r.rec.Reserved, tt.found.Reserved)
			}
		})
	}
}
