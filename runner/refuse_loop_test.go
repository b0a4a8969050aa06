package runner

import (
	"bytes"
	"context"
	"os"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/everycli/every/lock"
)

// fencedLock is a memLock whose leases carry a fencing token, as a fleet
// store's do.
type fencedLock struct{ *memLock }

func (f fencedLock) Lock(ctx context.Context, wait time.Duration) (lock.Lease, error) {
	l, err := f.memLock.Lock(ctx, wait)
	if err != nil {
		return nil, err
	}
	return fencedLease{l}, nil
}

type fencedLease struct{ lock.Lease }

func (fencedLease) Token() int64 { return 1 }

// SPEC 9 [crash]: a fleet store that refuses writes never lets the loop hand out
// a number that is not on record, which another instance would hand out
// again: the slots are skipped (reason=state), logged once, until a write
// succeeds; each EVERY_RUN the command saw was the store's count then.
func TestLoopRefusingStoreHandsOutNoNumber(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// A store without Sync, a server's record, refusing writes while
		// set (as a Redis out of memory or a read-only replica does).
		store := &faultyStore{}
		var runs execRuns
		var buf bytes.Buffer
		f := &fakeExec{took: []time.Duration{10 * time.Millisecond}}
		cfg := testConfig(f, &buf, nil)
		cfg.Schedule, cfg.Lock, cfg.Store = grid("1s"), fencedLock{&memLock{}}, store
		cfg.Exec = func(ctx context.Context, a Attempt) Result {
			r := execRun{onDisk: store.get().Runs} // the count on record at exec
			for _, kv := range a.Env {
				if v, ok := strings.CutPrefix(kv, "EVERY_RUN="); ok {
					r.run, _ = strconv.Atoi(v)
				}
			}
			runs.add(r)
			return f.exec(ctx, a)
		}
		signals := make(chan os.Signal, 1)
		cfg.Signals = signals
		done := make(chan Exit, 1)
		go func() { done <- Loop(context.Background(), cfg) }()
		time.Sleep(2500 * time.Millisecond)
		store.set(true, false)
		before := len(runs.all())
		time.Sleep(10 * time.Second)
		during := len(runs.all()) - before
		store.set(false, false)
		time.Sleep(3 * time.Second)
		signals <- os.Signal(sigterm)
		<-done

		if during != 0 {
			t.Errorf("%d runs while the store refused writes, want none", during)
		}
		last := 0
		for _, r := range runs.all() {
			if r.run != r.onDisk || r.run <= last {
				t.Fatalf("EVERY_RUN %d (after %d) with %d runs on record: a number not on record (runs %+v)", r.run, last, r.onDisk, runs.all())
			}
			last = r.run
		}
		if len(runs.all())-before < 2 {
			t.Errorf("%d runs once the store took writes again, want 2 or more", len(runs.all())-before)
		}
		log := buf.String()
		if n := strings.Count(log, `"level":"ERROR","msg":"cannot reserve a run number, skipping the slot"`); n != 1 {
			t.Errorf("%d error lines for the skipped slots, want 1\n%s", n, log)
		}
		if !strings.Contains(log, `"msg":"run numbers reserved on disk again"`) {
			t.Errorf("the end of the outage is not logged\n%s", log)
		}
	})
}
