package ping

import (
	"context"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/everycli/every/runner"
	"github.com/everycli/every/schedule"
)

// TestLoop checks the pings of real runs of the real loop: its failure
// count for FailAfter, its timeout as 124, a rid per run. (The bodies, the
// output tail, are the end-to-end scripts' to check: the tail is filled by
// the runner's Exec.)
func TestLoop(t *testing.T) {
	if _, err := os.Stat("/bin/sh"); err != nil {
		t.Skip("no /bin/sh")
	}
	for _, tc := range []struct {
		name      string
		argv      []string
		timeout   time.Duration
		failAfter int
		want      []string // the kind of each run's end ping
	}{
		{"success", sh("true"), 0, 1, []string{"0", "0"}},
		{"fail after 2", sh("exit 3"), 0, 2, []string{"log", "3", "3"}},
		{"timeout", sh("exec sleep 60"), 100 * time.Millisecond, 1, []string{"124"}},
		{"cannot start", []string{"/nonexistent/every-test"}, 0, 1, []string{"fail"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := newRecorder(t, nil)
			p, _ := start(t, Config{URL: rec.url(t), FailAfter: tc.failAfter}, slog.LevelInfo)
			exit := runner.Loop(context.Background(), runner.Config{
				Name: "job", Command: tc.argv, Schedule: schedule.Grid{Interval: 10 * time.Millisecond},
				MaxRuns: len(tc.want), Timeout: tc.timeout, Signal: 15, KillAfter: time.Second, OutputTail: 10000,
				Observer: p, Logger: slog.New(slog.DiscardHandler), Env: os.Environ(),
			})
			if exit.Reason != runner.MaxRuns {
				t.Fatalf("loop ended by %v, want MaxRuns", exit.Reason)
			}
			p.Close(bound)
			seen := map[string]bool{}
			for i, kind := range tc.want {
				begin, end := rec.next(t), rec.next(t)
				if begin.path != "/ping/"+check+"/start" || end.path != "/ping/"+check+"/"+kind {
					t.Errorf("run %d: pings %s, %s; want start, %s", i+1, begin.path, end.path, kind)
				}
				if begin.rid != end.rid || !uuid4.MatchString(begin.rid) || seen[begin.rid] {
					t.Errorf("run %d: rid %s at the start, %s at the end; want one new v4 UUID", i+1, begin.rid, end.rid)
				}
				seen[begin.rid] = true
			}
			rec.none(t)
		})
	}
}

func sh(script string) []string { return []string{"/bin/sh", "-c", script} }
