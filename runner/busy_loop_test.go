package runner

import (
	"bytes"
	"context"
	"os"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/everycli/every/lock"
	"github.com/everycli/every/state"
)

// slowEndStore is a memStore whose first write of a run's end takes took:
// a fleet store that answers slowly.
type slowEndStore struct {
	memStore
	took time.Duration
	done bool
}

func (s *slowEndStore) Save(ctx context.Context, r *state.Record) error {
	s.mu.Lock()
	slow := !r.Running && !s.done
	s.done = s.done || slow
	s.mu.Unlock()
	if slow {
		time.Sleep(s.took)
	}
	return s.memStore.Save(ctx, r)
}

// slowReleaseLock is a memLock whose first release takes took.
type slowReleaseLock struct {
	memLock
	took time.Duration
	done bool
}

func (s *slowReleaseLock) Lock(ctx context.Context, wait time.Duration) (lock.Lease, error) {
	if _, err := s.memLock.Lock(ctx, wait); err != nil {
		return nil, err
	}
	return slowRelease{s}, nil
}

type slowRelease struct{ s *slowReleaseLock }

func (l slowRelease) Unlock() error {
	l.s.mu.Lock()
	slow := !l.s.done
	l.s.done = true
	l.s.mu.Unlock()
	if slow {
		time.Sleep(l.s.took)
	}
	return memLease{&l.s.memLock}.Unlock()
}
func (slowRelease) Lost() <-chan struct{}     { return nil }
func (slowRelease) Token() int64              { return 0 }
func (slowRelease) Expiring() <-chan struct{} { return nil }

// Slots that pass while every waits on a call of its own (a store that
// answers slowly, a lock slow to release) are not a wake-up come late: the
// wait did not oversleep, every was busy. They are skipped as a run's
// overrun skips them (the next run at the next slot to come, on the grid),
// and never logged as a SIGSTOP or a starved machine.
func TestLoopSlowCallIsNotALateWake(t *testing.T) {
	for _, tt := range []struct {
		name  string
		setup func(*Config)
	}{
		{"slow end write", func(cfg *Config) { cfg.Store = &slowEndStore{took: 25 * time.Second} }},
		{"slow release", func(cfg *Config) { cfg.Lock = &slowReleaseLock{took: 25 * time.Second} }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f := &fakeExec{took: []time.Duration{time.Second}}
				var buf bytes.Buffer
				cfg := testConfig(f, &buf, make(chan os.Signal, 1))
				tt.setup(&cfg)
				cfg.MaxRuns = 2
				origin := time.Now()
				Loop(context.Background(), cfg)
				// Run 1 at 0 ends at 1s; its call ends at 26s: slots 10s
				// and 20s passed meanwhile, 30s is the next.
				if got, want := offsets(f.starts(), origin), []time.Duration{0, 30 * time.Second}; !slices.Equal(got, want) {
					t.Errorf("runs at %v, want %v", got, want)
				}
				events := logEvents(t, &buf)
				for _, e := range events {
					if msg, _ := e["msg"].(string); strings.Contains(msg, "late") || strings.Contains(msg, "starved") {
						t.Errorf("logged as a late wake-up: %v", e)
					}
				}
				skips := eventsNamed(events, "skip")
				if len(skips) != 1 || skips[0]["reason"] != "overrun" || skips[0]["count"] != 2.0 || skips[0]["level"] != "WARN" {
					t.Errorf("skip events %v, want one overrun of 2, at warn", skips)
				}
			})
		})
	}
}
