package scripttest

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/rogpeppe/go-internal/testscript"
)

// pingCheck is the check's UUID in the recorder's ping URL: the secret that
// every must never log.
const pingCheck = "5bf66975-d4c7-4bf5-bcc8-b8d8a82ea278"

var pingRID = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

// pingserver NAME [ANSWER...]: start a healthchecks.io stand-in for the
// script. $NAME_URL is its check's ping URL (http://127.0.0.1:PORT/ping/UUID)
// and $NAME_HOST its host. Each request is a line of the file NAME.pings,
// written when it has come in whole:
//
//	POST start rid=1 type=text/plain len=0 body=""
//
// with the path after the check's URL ("-" for the URL itself, the whole
// path if it is not the check's), the run ids numbered in the order they
// first came ("rid=bad:..." for one that is not a v4 UUID, "rid=none" for
// none), and the body quoted (its last 200 bytes). Request n is answered
// with the nth ANSWER, an HTTP status or "hang" (no answer until the script
// ends), and 200 beyond them. A sole ANSWER "refused" closes the server at
// once: its port refuses connections. The server stops when the script ends.
func pingServerCmd(ts *testscript.TestScript, neg bool, args []string) {
	noNeg(ts, neg, "pingserver")
	if len(args) < 1 {
		ts.Fatalf("usage: pingserver NAME [STATUS|hang...]")
	}
	name, answers := args[0], args[1:]
	refused := len(answers) == 1 && answers[0] == "refused"
	for _, a := range answers {
		if _, err := strconv.Atoi(a); err != nil && a != "hang" && !refused {
			ts.Fatalf("pingserver: bad answer %q: give an HTTP status or hang", a)
		}
	}
	log, err := os.OpenFile(ts.MkAbs(name+".pings"), os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	ts.Check(err)
	var (
		mu   sync.Mutex
		n    int
		rids = map[string]int{}
	)
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		n++
		answer := "200"
		if n <= len(answers) {
			answer = answers[n-1]
		}
		rid := r.URL.Query().Get("rid")
		switch {
		case rid == "":
			rid = "none"
		case !pingRID.MatchString(rid):
			rid = "bad:" + rid
		default:
			if rids[rid] == 0 {
				rids[rid] = len(rids) + 1
			}
			rid = strconv.Itoa(rids[rid])
		}
		path := r.URL.Path
		if rest, ok := strings.CutPrefix(path, "/ping/"+pingCheck); ok {
			path = strings.TrimPrefix(rest, "/")
			if path == "" {
				path = "-"
			}
		}
		shown := body
		if len(shown) > 200 {
			shown = shown[len(shown)-200:]
		}
		fmt.Fprintf(log, "%s %s rid=%s type=%s len=%d body=%q\n", r.Method, path, rid, r.Header.Get("Content-Type"), len(body), shown)
		mu.Unlock()
		if answer == "hang" {
			select {
			case <-release:
			case <-r.Context().Done():
			}
			return
		}
		status, _ := strconv.Atoi(answer)
		w.WriteHeader(status)
		_, _ = io.WriteString(w, "OK")
	}))
	ts.Defer(func() {
		close(release)
		srv.Close()
		_ = log.Close()
	})
	if refused {
		srv.Close()
	}
	ts.Setenv(name+"_URL", srv.URL+"/ping/"+pingCheck)
	ts.Setenv(name+"_HOST", strings.TrimPrefix(srv.URL, "http://"))
}
