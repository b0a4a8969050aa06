package cli

import (
	"io"
	"slices"
	"strings"
	"testing"
	"time"
)

// --listen and --max-age of a run: read from their flags or variables,
// checked before anything runs (exit 2), with one line and a hint.
func TestListenOptions(t *testing.T) {
	clearEveryEnv(t)
	req, err := Parse([]string{"1h", "--listen", "localhost:9746", "--max-age", "90", "--", "true"}, io.Discard, io.Discard)
	if err != nil || req.Run == nil || req.Run.Listen != "localhost:9746" || req.Run.MaxAge != 90*time.Second || req.Run.ListenFlag != "--listen" {
		t.Fatalf("Parse: %+v, %v", req.Run, err)
	}
	t.Setenv("EVERY_LISTEN", "unix:/run/every.sock")
	t.Setenv("EVERY_MAX_AGE", "2h")
	req, err = Parse([]string{"1h", "--", "true"}, io.Discard, io.Discard)
	if err != nil || req.Run.Listen != "unix:/run/every.sock" || req.Run.MaxAge != 2*time.Hour || req.Run.ListenFlag != "EVERY_LISTEN" {
		t.Fatalf("Parse with EVERY_LISTEN and EVERY_MAX_AGE: %+v, %v", req.Run, err)
	}
	clearEveryEnv(t)
	// --max-age alone is taken (EVERY_MAX_AGE may be there for every
	// status): it means nothing without --listen.
	if req, err := Parse([]string{"1h", "--max-age", "1h", "--", "true"}, io.Discard, io.Discard); err != nil || req.Run.MaxAge != time.Hour {
		t.Errorf("--max-age without --listen: %v", err)
	}
	for _, c := range []struct{ args, want string }{
		{"--listen 9746", `bad --listen "9746": a port alone is not an address; did you mean localhost:9746 (this host only) or :9746 (every interface)?`},
		{"--listen http://localhost:9746", `bad --listen "http://localhost:9746": give an address to listen on, not a URL: host:port (localhost:9746, :9746) or unix:/path`},
		{"--listen localhost", `bad --listen "localhost": give host:port (localhost:9746, :9746, [::1]:9746) or unix:/path`},
		{"--listen unix:", `bad --listen "unix:": no socket path; give one, as in unix:/run/every.sock`},
		{"--max-age 0", `bad --max-age "0": give an age such as 1h`},
		{"--max-age soon", `bad --max-age "soon": not a duration; try 500ms, 30s, 1m30s or 1d`},
	} {
		args := append(append([]string{"1h"}, strings.Fields(c.args)...), "--", "true")
		_, err := Parse(args, io.Discard, io.Discard)
		if err == nil || err.Error() != c.want {
			t.Errorf("every %s: %v, want %q", strings.Join(args, " "), err, c.want)
		}
	}
}

// In a jobs file, --listen is every jobs' own: a line refuses it, a file
// cannot make it a default, and every's environment's EVERY_LISTEN is not
// each job's. --max-age is each job's, as any option.
func TestLoadJobsListen(t *testing.T) {
	clearEveryEnv(t)
	paths := jobsDir(t, "a.tab", `every 1h --listen :9746 -- ./a
EVERY_LISTEN=:9747
EVERY_MAX_AGE=3h
every 1h -- ./b
`)
	got := loadErrors(t, paths)
	want := []string{
		`a.tab:1: bad --listen ":9746": a job's line has no server of its own; every jobs --listen ADDR serves all the jobs of its files`,
		`a.tab:2: EVERY_LISTEN is no option of a job (EVERY_<OPTION> lines set the options' defaults: EVERY_TIMEOUT=60s is --timeout 60s); see every --help for the options, or use a name without EVERY_ for the jobs' environment`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("errors:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	t.Setenv("EVERY_LISTEN", ":9746")
	paths = jobsDir(t, "b.tab", "EVERY_MAX_AGE=3h\nevery 1h -- ./b\nevery 1h --max-age 1h -- ./c\n")
	jobs, _, err := LoadJobs(paths)
	if err != nil || len(jobs) != 2 {
		t.Fatalf("LoadJobs with EVERY_LISTEN in every's environment: %d jobs, %v", len(jobs), err)
	}
	for i, maxAge := range []time.Duration{3 * time.Hour, time.Hour} {
		if st := jobs[i].Settings; st.Listen != "" || st.MaxAge != maxAge {
			t.Errorf("job %d: --listen %q, --max-age %v; want none and %v", i, st.Listen, st.MaxAge, maxAge)
		}
	}
}
