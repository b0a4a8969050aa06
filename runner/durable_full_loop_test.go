package runner

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/everycli/every/state"
)

// fullStore is a syncStore on a disk that can be full: while it is, a
// record cannot be written, but what is there can still be synced and
// marked behind its writer (as a File's mode bit can). A mark is read as
// Behind by the processes after the one that made it (gen: the process).
type fullStore struct {
	syncStore
	mu        sync.Mutex
	full      bool
	marked    bool
	markedGen int
	gen       int
}

func (s *fullStore) setFull(full bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.full = full
}

// restart makes the store's next reader another process.
func (s *fullStore) restart() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.gen++
}

// onDisk is the reservation on disk: the synced record's.
func (s *fullStore) onDisk() int {
	s.syncStore.mu.Lock()
	defer s.syncStore.mu.Unlock()
	if s.disk == nil {
		return 0
	}
	return s.disk.Reserved
}

func (s *fullStore) Load(ctx context.Context) (*state.Record, error) {
	r, err := s.syncStore.Load(ctx)
	s.mu.Lock()
	defer s.mu.Unlock()
	if r != nil && s.marked && s.markedGen != s.gen {
		r.Behind = true
	}
	return r, err
}

func (s *fullStore) Save(ctx context.Context, r *state.Record) error {
	s.mu.Lock()
	full := s.full
	if !full {
		s.marked = false
	}
	s.mu.Unlock()
	if full {
		return fmt.Errorf("write state memory: %w", syscall.ENOSPC)
	}
	return s.syncStore.Save(ctx, r)
}

func (s *fullStore) MarkBehind() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.syncStore.get().Runs == 0 {
		return errors.New("no record")
	}
	if !s.marked {
		s.marked, s.markedGen = true, s.gen
	}
	return nil
}

// fullConfig is a loop at 1s slots (a reservation block of 6) on store,
// each exec's EVERY_RUN taken with the reservation on disk then.
func fullConfig(f *fakeExec, buf *bytes.Buffer, store *fullStore, pid int, runs *execRuns) Config {
	cfg := testConfig(f, buf, nil)
	cfg.Schedule, cfg.Lock, cfg.Store, cfg.PID = grid("1s"), &memLock{}, store, pid
	cfg.Exec = func(ctx context.Context, a Attempt) Result {
		r := execRun{onDisk: store.onDisk()}
		for _, kv := range a.Env {
			if v, ok := strings.CutPrefix(kv, "EVERY_RUN="); ok {
				r.run, _ = strconv.Atoi(v)
			}
		}
		runs.add(r)
		if a.started != nil {
			close(a.started)
		}
		return f.exec(ctx, a)
	}
	return cfg
}

// execRun is a run as its exec saw it: its EVERY_RUN, and the highest
// number reserved on disk then.
type execRun struct{ run, onDisk int }

// execRuns are the runs of a test, in order.
type execRuns struct {
	mu   sync.Mutex
	runs []execRun
}

func (e *execRuns) add(r execRun) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.runs = append(e.runs, r)
}

func (e *execRuns) all() []execRun {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]execRun(nil), e.runs...)
}

// SPEC 9 [crash]: a full disk never lets the loop hand out a number that a
// reservation on disk does not cover: within the reservation the runs go
// on, past it the slots are skipped (reason=state), logged once and
// summarised; and a restart after it (the disk still full, then freed)
// never gives a number again.
func TestLoopFullDiskNeverPassesTheReservation(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := &fullStore{syncStore: syncStore{log: &durLog{}}}
		var runs execRuns
		var buf bytes.Buffer
		f := &fakeExec{took: []time.Duration{10 * time.Millisecond}}
		cfg := fullConfig(f, &buf, store, 100, &runs)
		signals := make(chan os.Signal, 1)
		cfg.Signals = signals
		done := make(chan Exit, 1)
		go func() { done <- Loop(context.Background(), cfg) }()
		time.Sleep(3500 * time.Millisecond)
		store.setFull(true)
		before := len(runs.all())
		time.Sleep(80 * time.Second) // 80 slots on a full disk
		during := runs.all()[before:]
		signals <- os.Signal(sigterm) // its last writes failed
		<-done

		if len(during) == 0 || len(during) > 6 {
			t.Errorf("%d runs on the full disk, want some (a short outage stops nothing), at most a block (6)", len(during))
		}
		for _, r := range runs.all() {
			if r.run > r.onDisk {
				t.Fatalf("EVERY_RUN %d handed out with numbers reserved on disk up to %d", r.run, r.onDisk)
			}
		}
		log := buf.String()
		if n := strings.Count(log, `"level":"ERROR","msg":"cannot reserve a run number, skipping the slot","job":"job","event":"skip","reason":"state"`); n != 1 {
			t.Errorf("%d error lines for the skipped slots, want 1, then summaries\n%s", n, log)
		}
		if !strings.Contains(log, `"msg":"cannot reserve a run number, skipping the slot","job":"job","event":"skip","reason":"state","count":`) ||
			!strings.Contains(log, `"repeated":true`) {
			t.Errorf("no summary of the skipped slots\n%s", log)
		}

		// Restarted, the disk still full: nothing runs; then freed.
		store.restart()
		buf.Reset()
		cfg = fullConfig(f, &buf, store, 200, &runs)
		signals = make(chan os.Signal, 1)
		cfg.Signals = signals
		go func() { done <- Loop(context.Background(), cfg) }()
		before = len(runs.all())
		time.Sleep(5 * time.Second)
		if n := len(runs.all()) - before; n != 0 {
			t.Errorf("%d runs after the restart on the full disk, want none", n)
		}
		store.setFull(false)
		time.Sleep(5 * time.Second)
		signals <- os.Signal(sigterm)
		<-done
		all := runs.all()
		if len(all)-before < 4 {
			t.Errorf("%d runs once the disk was freed, want 4 or more", len(all)-before)
		}
		seen := map[int]bool{}
		last := 0
		for _, r := range all {
			if seen[r.run] || r.run <= last {
				t.Fatalf("EVERY_RUN %d after %d: a number given again (runs %+v)\n%s", r.run, last, all, buf.String())
			}
			seen[r.run], last = true, r.run
		}
		if !strings.Contains(buf.String(), `"msg":"state behind its writer`) {
			t.Errorf("the restart did not say it went on after the reservation\n%s", buf.String())
		}
	})
}

// flappingStore is a memStore on a disk nearly full: while flapping, one
// write in two fails.
type flappingStore struct {
	memStore
	mu       sync.Mutex
	flapping bool
	writes   int
}

func (s *flappingStore) setFlapping(on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.flapping = on
}

func (s *flappingStore) Save(ctx context.Context, r *state.Record) error {
	s.mu.Lock()
	s.writes++
	fail := s.flapping && s.writes%2 == 1
	s.mu.Unlock()
	if fail {
		return fmt.Errorf("write state memory: %w", syscall.ENOSPC)
	}
	return s.memStore.Save(ctx, r)
}

// SPEC 9 [safety]: a disk nearly full, that fails one write in two for
// five minutes, is one outage: its first error, then a line a minute at
// most, and one when it ends; never an error and an end at each slot.
func TestLoopFlappingWritesSummarised(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := &flappingStore{}
		var buf bytes.Buffer
		f := &fakeExec{took: []time.Duration{10 * time.Millisecond}}
		cfg := testConfig(f, &buf, nil)
		cfg.Schedule, cfg.Lock, cfg.Store = grid("1s"), &memLock{}, store
		signals := make(chan os.Signal, 1)
		cfg.Signals = signals
		done := make(chan Exit, 1)
		go func() { done <- Loop(context.Background(), cfg) }()
		time.Sleep(2500 * time.Millisecond)
		store.setFlapping(true)
		time.Sleep(5 * time.Minute)
		store.setFlapping(false)
		time.Sleep(2 * time.Minute)
		signals <- os.Signal(sigterm)
		<-done
		log := buf.String()
		var lines int
		for line := range strings.Lines(log) {
			if !strings.Contains(line, `"level":"DEBUG"`) && strings.Contains(line, `"event":"state_error"`) {
				lines++
			}
		}
		if n := strings.Count(log, `"level":"ERROR","msg":"cannot write state`); n != 1 {
			t.Errorf("%d error lines, want 1", n)
		}
		// The start, and at most one line a minute (summaries and ends).
		if lines > 1+5+2 {
			t.Errorf("%d state_error lines for a five-minute outage, want at most 8\n%s", lines, log)
		}
		last := log[strings.LastIndex(log, `"event":"state_error"`):]
		if !strings.Contains(log, `"msg":"state written again"`) || !strings.Contains(last, `"ended":true`) {
			t.Errorf("the outage's end was not told last\n%s", log)
		}
		if len(f.calls) < 400 {
			t.Errorf("%d runs, want one a slot: the outage stops nothing", len(f.calls))
		}
	})
}
