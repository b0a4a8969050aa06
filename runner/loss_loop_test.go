package runner

import (
	"bytes"
	"context"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/everycli/every/lock"
)

// floorLock is a memLock whose leases floor the run numbers as a fleet
// store's do: 1000 times the acquisitions so far, a clock of sorts.
type floorLock struct {
	memLock
	mu sync.Mutex
	n  int
}

func (f *floorLock) Lock(ctx context.Context, wait time.Duration) (lock.Lease, error) {
	l, err := f.memLock.Lock(ctx, wait)
	if err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.n++
	return floorLease{l.(memLease), 1000 * f.n}, nil
}

type floorLease struct {
	memLease
	floor int
}

func (l floorLease) RunFloor() int { return l.floor }

// A fleet store that loses the record (gone, then back to an older one)
// never makes EVERY_RUN go back: it jumps to the lease's floor, and counts
// on from there. A lease without a floor (a file lock) keeps counting from
// what the instance saw when the record is gone (what a local record that
// goes back does is the local store's matter, not pinned here).
func TestLoopStoreLossNeverGoesBack(t *testing.T) {
	for _, tt := range []struct {
		name string
		lock lock.Locker
		want []int
	}{
		{"floored", &floorLock{}, []int{1, 2, 3, 4000, 5000, 5001}},
		{"no floor", &memLock{}, []int{1, 2, 3, 4}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				store := &memStore{}
				f := &fakeExec{}
				var log bytes.Buffer
				cfg := testConfig(f, &log, nil)
				cfg.Store, cfg.Lock, cfg.MaxRuns = store, tt.lock, 6
				go func() {
					// Between the third and the fourth run, the record is
					// lost; between the fourth and the fifth, it goes back
					// to the second's (a replica that missed the rest).
					time.Sleep(25 * time.Second)
					old := store.get()
					old.Runs = 2
					store.mu.Lock()
					store.rec = nil
					store.mu.Unlock()
					time.Sleep(10 * time.Second)
					if err := store.Save(context.Background(), &old); err != nil {
						panic(err)
					}
				}()
				if end := Loop(context.Background(), cfg); end.Reason != MaxRuns {
					t.Fatalf("end = %+v", end)
				}
				var got []int
				for _, c := range f.calls {
					n, _ := strconv.Atoi(c.env["EVERY_RUN"])
					got = append(got, n)
				}
				if !slices.Equal(got[:len(tt.want)], tt.want) {
					t.Errorf("EVERY_RUN %v, want %v first", got, tt.want)
				}
				if rec := store.get(); len(tt.want) == 6 && rec.Runs != tt.want[5] {
					t.Errorf("runs %d on record, want %d", rec.Runs, tt.want[5])
				}
				lost := strings.Count(log.String(), "the store lost the job's record")
				if floored := tt.name == "floored"; floored && lost != 2 || !floored && lost != 0 {
					t.Errorf("%d warnings of a lost record:\n%s", lost, log.String())
				}
			})
		})
	}
}
