package listen

// This file owns the page at /: the jobs, one row each, with a strip of
// their recent results; plain HTML that refreshes itself, no script.
// html/template escapes what the jobs' names and commands hold.

import (
	"fmt"
	"html/template"
	"strings"
	"time"

	"github.com/everycli/every/internal/ui"
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
		pj := pageJob{Name: j.job.Name, Schedule: j.job.Schedule, Command: commandText(j.job.Command),
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

// commandText is a command as the page shows it: its words quoted for sh
// where they need it, the secrets of its URLs masked as every jobs --check
// masks them (ui.MaskURLs). Other secrets a command line holds (a password
// as an argument) are shown: keep them in the environment or a file.
func commandText(words []string) string {
	out := make([]string, len(words))
	for i, w := range words {
		w = ui.MaskURLs(w)
		if w == "" || strings.ContainsFunc(w, needsQuote) {
			w = "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
		}
		out[i] = w
	}
	return strings.Join(out, " ")
}

// needsQuote reports whether sh would read r as more than itself.
func needsQuote(r rune) bool {
	return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:=@%+,…", r))
}

var pageTemplate = template.Must(template.New("page").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="refresh" content="{{.Refresh}}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>every: {{len .Jobs}} job{{if ne (len .Jobs) 1}}s{{end}}, {{if .Healthy}}healthy{{else}}{{.Unhealthy}} unhealthy{{end}}</title>
<style>
body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5em; color: #222; }
table { border-collapse: collapse; }
th, td { text-align: left; padding: .3em .8em; border-bottom: 1px solid #ddd; vertical-align: top; }
th { font-weight: 600; }
code { font-size: 13px; word-break: break-all; }
.ok { color: #176f2c; }
.bad { color: #b42318; font-weight: 600; }
.strip span { display: inline-block; width: 1.1em; text-align: center; }
.strip .ok { background: #dcfae6; }
.strip .bad { background: #fee4e2; }
footer { margin-top: 1em; color: #666; }
</style>
</head>
<body>
<h1>every</h1>
<p id="health" class="{{if .Healthy}}ok{{else}}bad{{end}}">{{if .Healthy}}All {{len .Jobs}} job{{if ne (len .Jobs) 1}}s{{end}} healthy.{{else if not .Jobs}}No jobs.{{else}}{{.Unhealthy}} of {{len .Jobs}} job{{if ne (len .Jobs) 1}}s{{end}} unhealthy.{{end}}</p>
<table>
<thead><tr><th>Job</th><th>Schedule</th><th>Last run</th><th>Result</th><th>Next slot</th><th>Failures</th><th>Recent</th><th>Health</th></tr></thead>
<tbody>
{{range .Jobs}}<tr class="job">
<td><strong class="name">{{.Name}}</strong><br><code class="command">{{.Command}}</code></td>
<td><code>{{.Schedule}}</code></td>
<td>{{.LastRun}}{{if .Running}}<br><em class="running">running {{.Running}}</em>{{end}}</td>
<td class="result {{.ResultClass}}">{{.Result}}</td>
<td>{{.Next}}</td>
<td class="failures">{{.Failures}}</td>
<td class="strip">{{range .Recent}}<span class="{{.Class}}" title="{{.Title}}">{{.Mark}}</span>{{else}}-{{end}}</td>
<td class="health {{if .Healthy}}ok{{else}}bad{{end}}">{{if .Healthy}}healthy{{else}}{{.Why}}{{end}}</td>
</tr>
{{end}}</tbody>
</table>
<footer>{{.Now}}; this page reloads every {{.Refresh}}s. Also: <a href="/metrics">/metrics</a>, <a href="/healthz">/healthz</a>.</footer>
</body>
</html>
`))
