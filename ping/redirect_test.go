package ping

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/everycli/every/runner"
)

// Pings follow no redirect, to another host or to the same one: the output
// tail goes nowhere the URL did not say. The redirect is a ping error,
// logged with the host it pointed to (never its path), once, then
// summarised.
func TestNoRedirect(t *testing.T) {
	other := newRecorder(t, nil) // where a followed redirect would land
	otherURL := other.url(t)
	for _, tt := range []struct {
		name, to string
		status   int
		client   *http.Client // nil: the Pinger's own
	}{
		// 307 and 308 would send the POST, body and all, again.
		{name: "to another host, 307", to: otherURL.String(), status: http.StatusTemporaryRedirect},
		{name: "to another host, 308, a client of the caller's", to: otherURL.String(), status: http.StatusPermanentRedirect,
			client: &http.Client{}},
		{name: "to another host, 302", to: otherURL.String(), status: http.StatusFound},
		{name: "to the same host", to: "/elsewhere/" + check, status: http.StatusTemporaryRedirect},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var same atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if strings.HasPrefix(r.URL.Path, "/elsewhere/") {
					same.Add(1)
					return
				}
				http.Redirect(w, r, tt.to, tt.status)
			}))
			t.Cleanup(srv.Close)
			u, _ := url.Parse(srv.URL + "/ping/" + check)
			p, logs := start(t, Config{URL: u, NoStart: true, Client: tt.client}, slog.LevelInfo)
			for range 3 {
				p.Finished(result(runner.Failure, 1, 1, "the output tail\n"))
			}
			p.Close(bound)
			other.none(t)
			if n := same.Load(); n != 0 {
				t.Errorf("the redirect to the same host was followed %d times", n)
			}
			wantHost := otherURL.Host
			if strings.HasPrefix(tt.to, "/") {
				wantHost = u.Host
			}
			warn := logs.lines("level=WARN", `msg="ping failed"`)
			if len(warn) != 2 || !strings.Contains(warn[0], "status="+strconv.Itoa(tt.status)) ||
				!strings.Contains(warn[0], "redirect_host="+wantHost+" ") || !strings.Contains(warn[0], "count=1") ||
				!strings.Contains(warn[0], "attempts=1") || !strings.Contains(warn[1], "count=2 total=3") {
				t.Errorf("want the redirect logged once with its status and host, then summarised at the end, got\n%s", logs)
			}
			if strings.Contains(logs.String(), check) || strings.Contains(logs.String(), "/elsewhere") {
				t.Errorf("a path is in the log:\n%s", logs)
			}
		})
	}
}
