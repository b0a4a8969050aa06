package listen

import (
	"fmt"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/everycli/every/runner"
	"github.com/everycli/every/state"
)

// BenchmarkObserverFinished is what the loop pays the server at a run's
// end: the job's view copied, the strip full, and published.
func BenchmarkObserverFinished(b *testing.B) {
	s := server(t0)
	obs := s.Job(Job{Name: "backup", Schedule: "1m", Command: []string{"backup", "--full"}})
	obs.Began(state.Record{}, t0)
	rec := state.Record{Command: []string{"backup", "--full"}}
	for i := range Recent {
		ran(obs, &rec, t0.Add(time.Duration(i)*time.Minute), runner.Success, 0, t0)
	}
	obs.Skipped("locked", 1, t0)
	run := runner.Run{Start: t0, End: t0.Add(time.Second), Result: runner.Result{Outcome: runner.Success}, Record: rec, Next: t0}
	b.ReportAllocs()
	for b.Loop() {
		obs.Finished(run)
	}
}

// servedJobs is a server of n jobs, each with a full strip.
func servedJobs(n int) *Server {
	s := server(t0.Add(time.Hour))
	for j := range n {
		obs := s.Job(Job{Name: fmt.Sprintf("job-%03d", j), Schedule: "1m", Command: []string{"sync", "--to", "https://user:pw@example.com/secret-path"}, MaxAge: time.Hour})
		obs.Began(state.Record{}, t0)
		rec := state.Record{}
		for i := range Recent {
			ran(obs, &rec, t0.Add(time.Duration(i)*time.Minute), runner.Success, 0, t0.Add(time.Duration(i+1)*time.Minute))
		}
	}
	return s
}

func benchmarkGet(b *testing.B, jobs int, path string) {
	s := servedJobs(jobs)
	h := s.handler()
	b.ReportAllocs()
	for b.Loop() {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest("GET", path, nil))
		if w.Code != 200 {
			b.Fatalf("%s: %d", path, w.Code)
		}
	}
}

func BenchmarkMetrics1(b *testing.B)   { benchmarkGet(b, 1, "/metrics") }
func BenchmarkMetrics100(b *testing.B) { benchmarkGet(b, 100, "/metrics") }
func BenchmarkHealthz100(b *testing.B) { benchmarkGet(b, 100, "/healthz") }
func BenchmarkPage1(b *testing.B)      { benchmarkGet(b, 1, "/") }
func BenchmarkPage100(b *testing.B)    { benchmarkGet(b, 100, "/") }
