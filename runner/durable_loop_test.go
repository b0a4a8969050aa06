package runner

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/everycli/every/lock"
	"github.com/everycli/every/state"
)

// durEvent is what a durability test sees happen, in order: a slot's lock
// taken, a record saved, a sync, a command's exec.
type durEvent struct {
	what    string // lock, save, sync, exec
	at      time.Time
	runs    int
	running bool
	run     string // exec: EVERY_RUN
}

type durLog struct {
	mu     sync.Mutex
	events []durEvent
}

func (d *durLog) add(e durEvent) {
	d.mu.Lock()
	defer d.mu.Unlock()
	e.at = time.Now()
	d.events = append(d.events, e)
}

func (d *durLog) all() []durEvent {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]durEvent(nil), d.events...)
}

// syncStore is a memStore with a disk: Sync puts the record on it, and a
// record read that is the one on disk is Durable, as a File's would be.
type syncStore struct {
	memStore
	log  *durLog
	disk *state.Record
}

func (s *syncStore) Load(ctx context.Context) (*state.Record, error) {
	r, err := s.memStore.Load(ctx)
	s.mu.Lock()
	defer s.mu.Unlock()
	if r != nil && s.disk != nil && s.disk.Runs == r.Runs && s.disk.Running == r.Running && s.disk.LastEnd.Equal(r.LastEnd) {
		r.Durable = true
	}
	return r, err
}

func (s *syncStore) Save(ctx context.Context, r *state.Record) error {
	s.log.add(durEvent{what: "save", runs: r.Runs, running: r.Running})
	return s.memStore.Save(ctx, r)
}

func (s *syncStore) Sync() (*state.Record, error) {
	s.mu.Lock()
	c := *s.rec
	s.disk = &c
	s.mu.Unlock()
	s.log.add(durEvent{what: "sync", runs: c.Runs, running: c.Running})
	return &c, nil
}

// lockLog is a memLock that logs each slot's lock.
type lockLog struct {
	memLock
	log *durLog
}

func (l *lockLog) Lock(ctx context.Context, wait time.Duration) (lock.Lease, error) {
	l.log.add(durEvent{what: "lock"})
	return l.memLock.Lock(ctx, wait)
}

// durConfig is a loop on a syncStore, its execs logged as Exec would tell
// of them (started closed once the command runs).
func durConfig(f *fakeExec, buf *bytes.Buffer, log *durLog, store *syncStore) Config {
	cfg := testConfig(f, buf, nil)
	cfg.Lock, cfg.Store = &lockLog{log: log}, store
	cfg.Exec = func(ctx context.Context, a Attempt) Result {
		run := ""
		for _, kv := range a.Env {
			if v, ok := strings.CutPrefix(kv, "EVERY_RUN="); ok {
				run = v
			}
		}
		log.add(durEvent{what: "exec", run: run})
		if a.started != nil {
			close(a.started)
		}
		return f.exec(ctx, a)
	}
	return cfg
}

// checkDurable checks a durability log: nothing synced between a slot's
// lock and the exec of its command (but for the first, if firstSyncs: a
// fresh job reserves its first numbers), the start saved before the exec,
// syncs at most once a second (the last, at exit, aside), each end on disk
// within a second, and the last record synced at the end.
func checkDurable(t *testing.T, events []durEvent, firstSyncs bool) {
	t.Helper()
	var trace strings.Builder
	for _, e := range events {
		fmt.Fprintf(&trace, "%s %s runs=%d running=%v run=%s\n", e.at.Format("05.000"), e.what, e.runs, e.running, e.run)
	}
	inSlot, startSaved, execs := false, false, 0
	exitSync := -1 // the last sync, at exit
	for i, e := range events {
		if e.what == "sync" {
			exitSync = i
		}
	}
	var lastSync time.Time
	var syncs []durEvent
	for i, e := range events {
		switch e.what {
		case "lock":
			inSlot, startSaved = true, false
		case "save":
			if inSlot && e.running {
				startSaved = true
			}
		case "exec":
			if !startSaved {
				t.Fatalf("event %d: exec before its start was saved\n%s", i, trace.String())
			}
			inSlot = false
			execs++
		case "sync":
			// The last sync is at exit: a stop may come as a slot begins.
			if inSlot && !(firstSyncs && execs == 0) && i != exitSync {
				t.Fatalf("event %d: a sync between a slot and its exec\n%s", i, trace.String())
			}
			if !lastSync.IsZero() && e.at.Sub(lastSync) < syncEvery && i != exitSync && !(firstSyncs && len(syncs) == 1) {
				t.Fatalf("event %d: two syncs %v apart, want at most one a second\n%s", i, e.at.Sub(lastSync), trace.String())
			}
			lastSync = e.at
			syncs = append(syncs, e)
		}
	}
	// Each end saved is on disk (it, or a later record) within a second.
	for i, e := range events {
		if e.what != "save" || e.running {
			continue
		}
		found := false
		for _, s := range syncs {
			if !s.at.Before(e.at) && s.runs >= e.runs {
				if d := s.at.Sub(e.at); d > syncEvery {
					t.Fatalf("event %d: end of run %d synced %v after it was saved, want within %v\n%s", i, e.runs, d, syncEvery, trace.String())
				}
				found = true
				break
			}
		}
		if !found {
			t.Fatalf("event %d: end of run %d never synced\n%s", i, e.runs, trace.String())
		}
	}
	for _, e := range events[exitSync+1:] {
		if e.what != "lock" {
			t.Fatalf("a %s after the last sync, want the sync at exit last (but for a slot's lock the stop came at)\n%s", e.what, trace.String())
		}
	}
	if execs == 0 {
		t.Fatalf("nothing ran\n%s", trace.String())
	}
}

// SPEC 9 [durability]: at 100ms slots, the loop syncs its record at most once
// a second, each end within a second and at the stop, never between a slot
// and its exec; the run numbers come from a reservation on disk.
func TestLoopDurableEndsNothingSyncedBeforeExec(t *testing.T) {
	for _, tt := range []struct {
		name  string
		took  []time.Duration // the runs, the last for the rest
		fresh bool            // no record yet
	}{
		{"100ms slots, instant runs, record synced before", nil, false},
		{"100ms slots, instant runs, fresh job", nil, true},
		{"100ms slots, 30ms runs", []time.Duration{30 * time.Millisecond}, false},
		{"runs of 3s that overrun", []time.Duration{3 * time.Second}, false},
		// The end of the second run is due to be synced while the third runs.
		{"a long run after a short one", []time.Duration{50 * time.Millisecond, 50 * time.Millisecond, 3 * time.Second, 0}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				log := &durLog{}
				store := &syncStore{log: log}
				f := &fakeExec{took: tt.took}
				var buf bytes.Buffer
				cfg := durConfig(f, &buf, log, store)
				cfg.Schedule = grid("100ms")
				if !tt.fresh {
					// A record of 7 runs, synced, with 20 numbers reserved.
					rec := state.Record{Version: state.Version, Name: "job", Command: cfg.Command, Schedule: cfg.Schedule.Recorded(),
						Anchor: time.Now().Add(-time.Hour), LastSlot: time.Now().Add(-time.Minute), Runs: 7, Reserved: 27,
						Boot: state.BootID()}
					store.rec, store.disk = &rec, &rec
				}
				runFor(cfg, 3500*time.Millisecond)
				events := log.all()
				checkDurable(t, events, tt.fresh)
				// EVERY_RUN counts on from the record, each number once.
				want := 8
				if tt.fresh {
					want = 1
				}
				for _, e := range events {
					if e.what == "exec" {
						if e.run != strconv.Itoa(want) {
							t.Fatalf("EVERY_RUN %s, want %d", e.run, want)
						}
						want++
					}
				}
			})
		})
	}
}

// A one-shot's end is synced before it exits, and a one-shot whose number is
// reserved on disk syncs nothing before its exec: a block reserved once
// serves the one-shots that follow.
func TestOneShotsShareAReservation(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		log := &durLog{}
		store := &syncStore{log: log}
		for i := range 6 {
			f := &fakeExec{}
			var buf bytes.Buffer
			cfg := durConfig(f, &buf, log, store)
			cfg.MaxRuns, cfg.PID = 1, 100+i // each one-shot a process of its own
			before := len(log.all())
			if end := Loop(context.Background(), cfg); end.Reason != MaxRuns {
				t.Fatalf("one-shot %d ended %+v", i, end)
			}
			events := log.all()[before:]
			checkDurable(t, events, i == 0)
			syncs := 0
			for _, e := range events {
				if e.what == "sync" {
					syncs++
				}
			}
			if want := 1 + b2i(i == 0); syncs != want {
				t.Fatalf("one-shot %d: %d syncs, want %d (its end at exit%s)", i, syncs, want, map[bool]string{true: ", and the first reservation"}[i == 0])
			}
			if got := store.get().Runs; got != i+1 {
				t.Fatalf("one-shot %d: runs %d, want %d", i, got, i+1)
			}
			time.Sleep(10 * time.Second) // the next one-shot's slot
		}
	})
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// beforeReboot is a durable record of cfg's job written before a reboot
// (another boot's), 7 runs on record and 19 reserved.
func beforeReboot(cfg Config) *state.Record {
	return &state.Record{Version: state.Version, Name: "job", Command: cfg.Command, Schedule: cfg.Schedule.Recorded(),
		Anchor: time.Now().Add(-time.Hour), LastSlot: time.Now().Add(-time.Minute), Runs: 7, Reserved: 19,
		Boot: "another-boot", Durable: true}
}

// A record written before a reboot may have lost the starts written after
// it: the run numbers go on after what it reserved, never repeating one,
// and that start is synced before its command runs.
func TestLoopAfterRebootSkipsReservedNumbers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		log := &durLog{}
		store := &syncStore{log: log}
		f := &fakeExec{}
		var buf bytes.Buffer
		cfg := durConfig(f, &buf, log, store)
		cfg.MaxRuns = 1
		rec := beforeReboot(cfg)
		store.rec, store.disk = rec, rec
		Loop(context.Background(), cfg)
		if len(f.calls) != 1 || f.calls[0].env["EVERY_RUN"] != "20" {
			t.Fatalf("EVERY_RUN %q, want 20 (after the 19 reserved before the reboot)", f.calls[0].env["EVERY_RUN"])
		}
		var order []string
		for _, e := range log.all() {
			if e.what != "lock" {
				order = append(order, e.what)
			}
		}
		if got := strings.Join(order, " "); !strings.HasPrefix(got, "save sync exec") {
			t.Fatalf("events %s, want the start saved and synced before the exec", got)
		}
		if !strings.Contains(buf.String(), "state written before a reboot") {
			t.Fatalf("no warning of the skip:\n%s", buf.String())
		}
	})
}
