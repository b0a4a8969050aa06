package runner

import (
	"errors"
	"testing"
	"time"

	"github.com/everycli/every/state"
)

// syncerFunc is a state.Syncer whose Sync a test gives.
type syncerFunc func() (*state.Record, error)

func (f syncerFunc) Sync() (*state.Record, error) { return f() }

// TestDurabilityReserve: a run's number is handed out without a sync only
// when it is reserved on disk already; the reservation is renewed half a
// block ahead of running out, and without a syncer nothing is reserved.
func TestDurabilityReserve(t *testing.T) {
	syncer := syncerFunc(func() (*state.Record, error) { return &state.Record{}, nil })
	for _, tt := range []struct {
		name         string
		syncer       state.Syncer
		onDisk       int // reserved on disk
		runs, before int // the run's number; the record's reservation before
		wantSync     bool
		wantReserved int
	}{
		{"no syncer", nil, 0, 1, 0, false, 0},
		{"first run", syncer, 0, 1, 0, true, 9},
		{"within, far from the end", syncer, 8, 2, 8, false, 8},
		{"within, half a block left", syncer, 8, 5, 8, false, 13},
		{"the last reserved", syncer, 8, 8, 8, false, 16},
		{"past the reservation", syncer, 8, 9, 8, true, 17},
		{"record reserves more already", syncer, 8, 5, 20, false, 20},
	} {
		t.Run(tt.name, func(t *testing.T) {
			d := durability{syncer: tt.syncer, reserved: tt.onDisk}
			rec := state.Record{Runs: tt.runs, Reserved: tt.before}
			if sync := d.reserve(&rec, 8, "boot-1"); sync != tt.wantSync || rec.Reserved != tt.wantReserved {
				t.Fatalf("sync %v, reserved %d; want %v, %d", sync, rec.Reserved, tt.wantSync, tt.wantReserved)
			}
			if tt.syncer != nil && rec.Boot != "boot-1" {
				t.Fatalf("boot %q, want the run's", rec.Boot)
			}
		})
	}
}

// TestDurabilityLoaded: a record read says what is reserved on disk; one
// behind its writer, or synced before a reboot, has its runs go on after
// its reservation (warned of once per record); another writer's unsynced
// record reserves nothing.
func TestDurabilityLoaded(t *testing.T) {
	syncer := syncerFunc(func() (*state.Record, error) { return &state.Record{}, nil })
	for _, tt := range []struct {
		name         string
		rec          state.Record
		own          bool
		wantRuns     int
		wantReserved int // on disk, after
		wantSkipped  []skippedNumbers
	}{
		{"durable, this boot", state.Record{Runs: 5, Reserved: 12, Durable: true, Boot: "b2"}, false, 5, 12, nil},
		{"durable, before a reboot", state.Record{Runs: 5, Reserved: 12, Durable: true, Boot: "b1"}, false, 12, 12,
			[]skippedNumbers{{runs: 5, reserved: 12}}},
		{"durable, no boot id", state.Record{Runs: 5, Reserved: 12, Durable: true}, false, 5, 12, nil},
		{"behind its writer", state.Record{Runs: 5, Reserved: 12, Behind: true, Boot: "b2"}, false, 12, 0,
			[]skippedNumbers{{behind: true, runs: 5, reserved: 12}}},
		{"own, this boot", state.Record{Runs: 5, Reserved: 12, Boot: "b2"}, true, 5, 7, nil},
		{"own, before a reboot", state.Record{Runs: 5, Reserved: 12, Boot: "b1"}, true, 5, 0, nil},
		{"another writer's, unsynced", state.Record{Runs: 5, Reserved: 12, Boot: "b2"}, false, 5, 0, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			d := durability{syncer: syncer, reserved: 7}
			rec := tt.rec
			skipped := d.noteLoaded(&rec, tt.own, "b2")
			if rec.Runs != tt.wantRuns || d.reserved != tt.wantReserved || len(skipped) != len(tt.wantSkipped) {
				t.Fatalf("runs %d, reserved %d, skipped %+v; want %d, %d, %+v", rec.Runs, d.reserved, skipped,
					tt.wantRuns, tt.wantReserved, tt.wantSkipped)
			}
			for i := range skipped {
				if skipped[i] != tt.wantSkipped[i] {
					t.Fatalf("skipped %+v, want %+v", skipped, tt.wantSkipped)
				}
			}
			// Read again: a reboot's numbers are warned of once.
			again := tt.rec
			if s := d.noteLoaded(&again, tt.own, "b2"); tt.rec.Durable && len(s) != 0 {
				t.Fatalf("warned again of %+v", s)
			}
		})
	}
	t.Run("no syncer", func(t *testing.T) {
		var d durability
		rec := state.Record{Runs: 5, Reserved: 12, Behind: true}
		if s := d.noteLoaded(&rec, false, "b2"); s != nil || rec.Runs != 5 {
			t.Fatalf("skipped %+v, runs %d: a store without syncs reserves nothing", s, rec.Runs)
		}
	})
}

// TestDurabilitySync: a record written is synced as soon as written, but
// at most once a second; a failed sync is due again at once, and one that
// another writer overtook is no failure, nor reserves anything.
func TestDurabilitySync(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	var (
		ret *state.Record
		err error
	)
	d := durability{syncer: syncerFunc(func() (*state.Record, error) { return ret, err })}
	if _, ok := d.due(); ok {
		t.Fatal("due with nothing written")
	}
	d.noteWritten(t0)
	d.noteWritten(t0.Add(time.Second)) // still the first write's
	if due, ok := d.due(); !ok || !due.Equal(t0) {
		t.Fatalf("due %v %v, want at once: %v", due, ok, t0)
	}
	ret = &state.Record{Reserved: 9}
	if e := d.sync(t0); e != nil || d.reserved != 9 || d.pending {
		t.Fatalf("sync: %v, reserved %d, pending %v", e, d.reserved, d.pending)
	}
	d.noteWritten(t0.Add(100 * time.Millisecond))
	if due, _ := d.due(); !due.Equal(t0.Add(syncEvery)) {
		t.Fatalf("due %v, want a second after the last sync", due)
	}
	ret, err = nil, errors.New("no space left on device")
	if e := d.sync(t0.Add(syncEvery)); e == nil || !d.pending {
		t.Fatalf("failed sync: %v, pending %v", e, d.pending)
	}
	if due, _ := d.due(); !due.Equal(t0.Add(2 * syncEvery)) {
		t.Fatalf("due %v after a failure, want a second after it", due)
	}
	err = state.ErrReplaced
	if e := d.sync(t0.Add(2 * syncEvery)); !errors.Is(e, state.ErrReplaced) || d.pending || d.reserved != 9 {
		t.Fatalf("replaced: %v, pending %v, reserved %d", e, d.pending, d.reserved)
	}
	if d.syncs != 3 {
		t.Fatalf("%d syncs, want 3", d.syncs)
	}
}
