package listen

// This file owns the answers: /metrics, /healthz and /, read-only, each
// made whole in memory from the views of one moment before a byte is
// written.

import (
	"encoding/json"
	"io"
	"net/http"

	"github.com/everycli/every/metrics"
)

// handler routes the server's three paths; anything else is 404, a method
// other than GET or HEAD 405.
func (s *Server) handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Cache-Control", "no-store")
		h.Set("X-Content-Type-Options", "nosniff")
		var serve func(http.ResponseWriter, *http.Request)
		switch r.URL.Path {
		case "/metrics":
			serve = s.metrics
		case "/healthz":
			serve = s.healthz
		case "/":
			serve = s.page
		default:
			http.NotFound(w, r)
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			h.Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed: this server only reads (GET, HEAD)", http.StatusMethodNotAllowed)
			return
		}
		serve(w, r)
	})
}

// metricsType is the content type of the text exposition, version 0.0.4.
const metricsType = "text/plain; version=0.0.4; charset=utf-8"

// metrics answers /metrics: the exposition of every job, as the metrics
// file has it for one (package metrics renders both).
func (s *Server) metrics(w http.ResponseWriter, _ *http.Request) {
	var jobs []metrics.Job
	for _, j := range s.listed() {
		snap := &metrics.Snapshot{}
		if j.view != nil {
			snap = &j.view.snap
		}
		jobs = append(jobs, metrics.Job{Name: j.job.Name, Snapshot: snap})
	}
	w.Header().Set("Content-Type", metricsType)
	_, _ = w.Write(metrics.Render(jobs...))
}

// Health is /healthz's body: whether every job is healthy, how many jobs
// there are, and each unhealthy one and why.
type Health struct {
	Healthy   bool        `json:"healthy"`
	Jobs      int         `json:"jobs"`
	Unhealthy []Unhealthy `json:"unhealthy"`
}

// Unhealthy is a job that fails /healthz, and why.
type Unhealthy struct {
	Job    string `json:"job"`
	Reason string `json:"reason"`
}

// healthz answers /healthz: 200 when every job is healthy (judge), else
// 503; no job at all is not healthy (a server of jobs that are not there
// must not pass for a healthy one, as every status --max-age says).
func (s *Server) healthz(w http.ResponseWriter, _ *http.Request) {
	now := s.now()
	jobs := s.listed()
	body := Health{Jobs: len(jobs), Unhealthy: []Unhealthy{}}
	for _, j := range jobs {
		if h := judge(j.view, j.job.MaxAge, now); !h.ok {
			body.Unhealthy = append(body.Unhealthy, Unhealthy{Job: j.job.Name, Reason: h.why})
		}
	}
	if len(jobs) == 0 {
		body.Unhealthy = append(body.Unhealthy, Unhealthy{Reason: "no jobs"})
	}
	body.Healthy = len(body.Unhealthy) == 0
	b, _ := json.Marshal(body) // strings and numbers: cannot fail
	w.Header().Set("Content-Type", "application/json")
	if !body.Healthy {
		w.WriteHeader(http.StatusServiceUnavailable)
	}
	_, _ = w.Write(append(b, '\n'))
}

// page answers /: the page of the jobs.
func (s *Server) page(w http.ResponseWriter, _ *http.Request) {
	page := render(s.pageData(s.listed(), s.now()))
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	// No script may run, whatever a name holds; styles are the page's own.
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'")
	h.Set("Referrer-Policy", "no-referrer")
	_, _ = io.WriteString(w, page)
}
