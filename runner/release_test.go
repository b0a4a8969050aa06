package runner

import (
	"bytes"
	"context"
	"os"
	"testing"
	"testing/synctest"
	"time"
)

// The loop gives its memory back (Config.Release) before each wait for a
// slot at least ReleaseAfter away, and not before shorter ones.
func TestLoopReleasesBeforeLongWaits(t *testing.T) {
	for _, tc := range []struct {
		name string
		took time.Duration // each run; the wait is the 10s interval less this
		want []time.Duration
	}{
		{"waits of 9s", time.Second, []time.Duration{time.Second, 11 * time.Second}},
		{"waits of exactly 5s", 5 * time.Second, []time.Duration{5 * time.Second, 15 * time.Second}},
		{"waits of 3s", 7 * time.Second, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f := &fakeExec{took: []time.Duration{tc.took}}
				var buf bytes.Buffer
				cfg := testConfig(f, &buf, make(chan os.Signal))
				cfg.MaxRuns = 3
				origin := time.Now()
				var got []time.Duration
				var until []time.Duration
				cfg.Release = func(u time.Time) {
					got = append(got, time.Since(origin))
					until = append(until, u.Sub(origin))
				}
				cfg.ReleaseAfter = 5 * time.Second
				if end := Loop(context.Background(), cfg); end.Reason != MaxRuns {
					t.Fatalf("end = %+v, want MaxRuns", end)
				}
				if len(got) != len(tc.want) {
					t.Fatalf("released at %v, want at %v", got, tc.want)
				}
				for i := range got {
					if got[i] != tc.want[i] {
						t.Fatalf("released at %v, want at %v", got, tc.want)
					}
					// The slots are at 0, 10s, 20s: each wait ends at the next.
					if want := 10 * time.Second * time.Duration(i+1); until[i] != want {
						t.Errorf("release %d said the wait ends at %v, want %v", i, until[i], want)
					}
				}
			})
		})
	}
}
