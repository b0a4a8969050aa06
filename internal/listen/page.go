package listen

// This file owns the page at /: the jobs, one row each, with a strip of
// their recent results; plain HTML that refreshes itself, no script, what
// the jobs' names and commands hold escaped.

import (
	"fmt"
	"html"
	"strconv"
	"strings"
	"time"

	"github.com/everycli/every/runner"
)

// refresh is how often the page reloads itself, in seconds.
const refresh = 5

// pageData is what the page shows.
type pageData struct {
	Refresh   int
	Now       string
	Healthy   bool
	Unhealthy int
	Jobs      []pageJob
}

// pageJob is a job's row.
type pageJob struct {
	Name, Schedule, Command string
	LastRun                 string // when, and how long ago; "never"
	Result, ResultClass     string
	Running                 string // since when, when a run is under way
	Next                    string
	Failures                int
	Recent                  []pageResult
	Healthy                 bool
	Why                     string // why not
}

// pageResult is one mark of the strip.
type pageResult struct {
	Class, Mark, Title string
}

// pageData makes the page's data of the jobs at now.
func (s *Server) pageData(jobs []shown, now time.Time) pageData {
	d := pageData{Refresh: refresh, Now: stamp(now), Healthy: len(jobs) > 0}
	for _, j := range jobs {
		v := j.view
		if v == nil {
			v = &view{}
		}
		r := &v.snap.Record
		h := judge(v, j.job.MaxAge, now)
		pj := pageJob{Name: j.job.Name, Schedule: j.job.Schedule, Command: j.command,
			LastRun: "never", Result: "-", ResultClass: "none", Next: "-", Failures: r.ConsecutiveFailures,
			Healthy: h.ok, Why: h.why}
		if !r.LastRun.IsZero() {
			pj.LastRun = stamp(r.LastRun) + " (" + roughly(now.Sub(r.LastRun).Truncate(time.Millisecond)) + " ago)"
		}
		if r.LastResult != "" {
			pj.Result, pj.ResultClass = resultText(r), outcomeClass(r.LastResult)
		}
		if v.snap.Running {
			pj.Running = "since " + stamp(v.since)
		}
		if !v.snap.Next.IsZero() {
			pj.Next = stamp(v.snap.Next) + " (in " + roughly(max(0, v.snap.Next.Sub(now))) + ")"
		}
		for _, res := range v.recent {
			mark := "✗"
			if res.Outcome == string(runner.Success) {
				mark = "✓"
			}
			pj.Recent = append(pj.Recent, pageResult{Class: outcomeClass(res.Outcome), Mark: mark,
				Title: fmt.Sprintf("%s: %s (%d), %s, %d attempt(s)", stamp(res.Start), res.Outcome, res.ExitCode,
					res.Duration.Round(time.Millisecond), res.Attempts)})
		}
		if !h.ok {
			d.Healthy = false
			d.Unhealthy++
		}
		d.Jobs = append(d.Jobs, pj)
	}
	return d
}

// stamp is a time as the page shows it: UTC, to the second.
func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// outcomeClass is the style of a result.
func outcomeClass(outcome string) string {
	if outcome == string(runner.Success) {
		return "ok"
	}
	return "bad"
}

// pageStyle is the page's own style (the only one its policy allows).
const pageStyle = `body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5em; color: #222; }
table { border-collapse: collapse; }
th, td { text-align: left; padding: .3em .8em; border-bottom: 1px solid #ddd; vertical-align: top; }
th { font-weight: 600; }
code { font-size: 13px; word-break: break-all; }
.ok { color: #176f2c; }
.bad { color: #b42318; font-weight: 600; }
.strip, .result { white-space: nowrap; }
.strip span { display: inline-block; width: 1.1em; text-align: center; }
.strip .ok { background: #dcfae6; }
.strip .bad { background: #fee4e2; }
footer { margin-top: 1em; color: #666; }`

// render writes the page of d. Every text that is not the page's own goes
// through esc (html.EscapeString: & < > ' "), and only into text or a
// quoted attribute's value, where that is all the escaping HTML needs; no
// URL, script or style is ever made of it. (html/template would do the
// same for about 200 KB more of binary, and a template parsed at every
// start or at the first request.)
func render(d pageData) string {
	esc := html.EscapeString
	var b strings.Builder
	w := func(parts ...string) {
		for _, p := range parts {
			b.WriteString(p)
		}
	}
	jobs := func(n int) string {
		if n == 1 {
			return "1 job"
		}
		return strconv.Itoa(n) + " jobs"
	}
	title, summary, class := "healthy", "All "+jobs(len(d.Jobs))+" healthy.", "ok"
	switch {
	case len(d.Jobs) == 0:
		title, summary, class = "no jobs", "No jobs.", "bad"
	case !d.Healthy:
		title = strconv.Itoa(d.Unhealthy) + " unhealthy"
		summary, class = strconv.Itoa(d.Unhealthy)+" of "+jobs(len(d.Jobs))+" unhealthy.", "bad"
	}
	w(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="refresh" content="`, strconv.Itoa(d.Refresh), `">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>every: `, jobs(len(d.Jobs)), ", ", title, `</title>
<style>
`, pageStyle, `
</style>
</head>
<body>
<h1>every</h1>
<p id="health" class="`, class, `">`, summary, `</p>
<table>
<thead><tr><th>Job</th><th>Schedule</th><th>Last run</th><th>Result</th><th>Next slot</th><th>Failures</th><th>Recent</th><th>Health</th></tr></thead>
<tbody>
`)
	for _, j := range d.Jobs {
		w(`<tr class="job">
<td><strong class="name">`, esc(j.Name), `</strong><br><code class="command">`, esc(j.Command), `</code></td>
<td><code>`, esc(j.Schedule), `</code></td>
<td>`, esc(j.LastRun))
		if j.Running != "" {
			w(`<br><em class="running">running `, esc(j.Running), `</em>`)
		}
		w(`</td>
<td class="result `, j.ResultClass, `">`, esc(j.Result), `</td>
<td>`, esc(j.Next), `</td>
<td class="failures">`, strconv.Itoa(j.Failures), `</td>
<td class="strip">`)
		for _, r := range j.Recent {
			w(`<span class="`, r.Class, `" title="`, esc(r.Title), `">`, r.Mark, `</span>`)
		}
		if len(j.Recent) == 0 {
			w("-")
		}
		w(`</td>
`)
		if j.Healthy {
			w(`<td class="health ok">healthy</td>`)
		} else {
			w(`<td class="health bad">`, esc(j.Why), `</td>`)
		}
		w(`
</tr>
`)
	}
	w(`</tbody>
</table>
<footer>`, esc(d.Now), `; this page reloads every `, strconv.Itoa(d.Refresh), `s. Also: <a href="/metrics">/metrics</a>, <a href="/healthz">/healthz</a>.</footer>
</body>
</html>
`)
	return b.String()
}
