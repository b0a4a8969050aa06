package scripttest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/everycli/every/internal/testutil"
)

// freeport NAME: set $NAME to a TCP port of 127.0.0.1 that nothing listens
// on now (the system's choice for port 0, let go at once), for an every
// --listen of the script.
func freePortCmd(ts *testscript.TestScript, neg bool, args []string) {
	noNeg(ts, neg, "freeport")
	if len(args) != 1 {
		ts.Fatalf("usage: freeport NAME")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	ts.Check(err)
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	ts.Check(ln.Close())
	ts.Setenv(args[0], port)
}

// httpget URL FILE [STATUS]: GET URL and write the answer to FILE: its
// status code on the first line, its Content-Type on the second, then its
// body. It waits until the server answers (every --listen started in the
// background), and with STATUS until the answer has that status (a job's
// health that changes after a run), for at most testutil.WaitBound. A URL
// unix:PATH:/path is asked over the unix socket PATH.
func httpGetCmd(ts *testscript.TestScript, neg bool, args []string) {
	noNeg(ts, neg, "httpget")
	if len(args) != 2 && len(args) != 3 {
		ts.Fatalf("usage: httpget URL FILE [STATUS]")
	}
	url, file := args[0], ts.MkAbs(args[1])
	want := 0
	if len(args) == 3 {
		var err error
		want, err = strconv.Atoi(args[2])
		ts.Check(err)
	}
	client := &http.Client{Timeout: 5 * time.Second}
	if rest, ok := strings.CutPrefix(url, "unix:"); ok {
		path, p, found := strings.Cut(rest, ":")
		if !found {
			ts.Fatalf("httpget: give unix:SOCKET:/path")
		}
		socket := ts.MkAbs(path)
		client.Transport = &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "unix", socket)
		}}
		url = "http://every" + p
	}
	var last string
	if !testutil.Eventually(func() bool {
		resp, err := client.Get(url)
		if err != nil {
			last = err.Error()
			return false
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			last = err.Error()
			return false
		}
		last = fmt.Sprintf("status %d: %s", resp.StatusCode, body)
		if want != 0 && resp.StatusCode != want {
			return false
		}
		out := fmt.Sprintf("%d\n%s\n%s", resp.StatusCode, resp.Header.Get("Content-Type"), body)
		ts.Check(os.WriteFile(file, []byte(out), 0o644))
		return true
	}) {
		ts.Fatalf("httpget %s: no answer %s within %v; the last: %s", args[0], args[2:], testutil.WaitBound, last)
	}
}

// chromiumCondition is the script condition [chromium]: Debian's chromium
// is installed. Where it is not and EVERY_REQUIRE_CHROMIUM=1 (as in CI),
// the script fails instead.
func chromiumCondition() (bool, error) {
	if _, err := exec.LookPath("chromium"); err != nil {
		if os.Getenv("EVERY_REQUIRE_CHROMIUM") == "1" {
			return false, fmt.Errorf("chromium not found and EVERY_REQUIRE_CHROMIUM=1 (Debian: chromium): %v", err)
		}
		return false, nil
	}
	return true, nil
}

// browse URL FILE: load URL in headless chromium, as a browser shows it,
// and write the DOM it made to FILE (chromium --headless --dump-dom).
// Chromium runs in a process group of its own, with a profile and a home in
// the script's directory, bounded by testutil.WaitBound; the group is
// killed when it is done, so no renderer outlives the script.
func browseCmd(ts *testscript.TestScript, neg bool, args []string) {
	noNeg(ts, neg, "browse")
	if len(args) != 2 {
		ts.Fatalf("usage: browse URL FILE")
	}
	home, err := os.MkdirTemp(ts.Getenv("WORK"), "chromium-")
	ts.Check(err)
	ctx, cancel := context.WithTimeout(context.Background(), testutil.WaitBound)
	defer cancel()
	// --no-sandbox: chromium refuses to run as root with its sandbox ("Running
	// as root without --no-sandbox is not supported"), and the tests run as
	// root in CI and in containers. The page is the test's own server's.
	cmd := exec.CommandContext(ctx, "chromium", "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
		"--no-first-run", "--user-data-dir="+home, "--dump-dom", args[0])
	cmd.Env = append(os.Environ(), "HOME="+home)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // its helpers, if any are left
	}
	if err != nil || len(out) == 0 {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			ts.Fatalf("chromium did not load %s within %v", args[0], testutil.WaitBound)
		}
		ts.Fatalf("chromium --dump-dom %s: %v\n%s", args[0], err, stderr.String())
	}
	ts.Check(os.WriteFile(ts.MkAbs(args[1]), out, 0o644))
}
