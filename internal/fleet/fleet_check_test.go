package fleet

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/everycli/every/internal/testutil"
	"github.com/everycli/every/internal/ui"
)

// listen serves each connection to a local TCP listener with serve, until
// the test ends; it returns the listener's address.
func listen(t *testing.T, serve func(net.Conn)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	done := make(chan struct{})
	t.Cleanup(func() {
		close(done)
		_ = ln.Close()
		wg.Wait()
	})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				go func() {
					<-done
					_ = c.Close() // a server that never answers ends with the test
				}()
				serve(c)
			}()
		}
	}()
	return ln.Addr().String()
}

// A --store that answers, but not in Redis's protocol, is a start-up error
// (exit 73 in main): no wait makes it Redis. One that says nothing, or
// hangs up, may be a Redis on its way up: its slots are skipped meanwhile.
func TestFleetCheckNotRedis(t *testing.T) {
	web := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(web.Close)
	tests := []struct {
		name  string
		addr  string
		fatal string // in the fatal error; "" for a transient one
	}{
		{name: "an HTTP server", addr: strings.TrimPrefix(web.URL, "http://"),
			fatal: `is not a Redis server: it answered "HTTP/1.1 400 Bad Request"; check the host and port in --store`},
		{name: "a banner before any request", addr: listen(t, func(c net.Conn) {
			_, _ = c.Write([]byte("SSH-2.0-OpenSSH_9.6\r\n"))
			_, _ = c.Read(make([]byte, 64))
		}), fatal: `it answered "SSH-2.0-OpenSSH_9.6"`},
		{name: "garbage for an answer", addr: listen(t, func(c net.Conn) {
			_, _ = c.Read(make([]byte, 64))
			_, _ = c.Write([]byte("\x00\x01hello\n"))
		}), fatal: `it answered "\x00\x01hello"`},
		{name: "silent", addr: listen(t, func(c net.Conn) { _, _ = io.Copy(io.Discard, c) })},
		{name: "hangs up", addr: listen(t, func(net.Conn) {})},
		{name: "a Redis error", addr: listen(t, func(c net.Conn) {
			_, _ = c.Read(make([]byte, 64))
			_, _ = c.Write([]byte("-LOADING Redis is loading the dataset in memory\r\n"))
		})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := openRedis("redis://" + tt.addr + "/0")
			if err != nil {
				t.Fatal(err)
			}
			defer f.client.Close()
			fatal, transient := f.Check(context.Background())
			switch {
			case tt.fatal == "" && fatal != nil:
				t.Errorf("check: fatal %v, want it transient", fatal)
			case tt.fatal == "" && transient == nil:
				t.Errorf("check: no error, want a transient one")
			case tt.fatal != "" && (fatal == nil || !strings.Contains(fatal.Error(), tt.fatal)):
				t.Errorf("check: fatal %v (transient %v), want one with %q", fatal, transient, tt.fatal)
			}
		})
	}
}

// every with an HTTP server for its --store exits 73 at start-up, in one
// line that shows no password, and runs nothing.
func TestFleetNotRedisExits73(t *testing.T) {
	every, err := exec.LookPath("every") // testscript.Main put it on PATH
	if err != nil {
		t.Fatal(err)
	}
	web := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(web.Close)
	ran := t.TempDir() + "/ran"
	cmd := exec.Command(every, "1h", "--state-dir", t.TempDir(), "--store", "redis://:pw-secret@"+strings.TrimPrefix(web.URL, "http://")+"/0",
		"--", "touch", ran)
	cmd.Env = append(os.Environ(), "GORACE=atexit_sleep_ms=0")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	err, ok := testutil.Receive(done)
	if !ok {
		_ = cmd.Process.Kill()
		<-done
		t.Fatalf("every still runs after %v: the store was taken as down, not as no Redis; stderr:\n%s", testutil.WaitBound, &stderr)
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != ui.ExitCantCreate {
		t.Fatalf("every: %v, want exit status %d; stderr:\n%s", err, ui.ExitCantCreate, &stderr)
	}
	want := "every: redis://***@" + strings.TrimPrefix(web.URL, "http://") + `/0 is not a Redis server: it answered "HTTP/1.1 400 Bad Request"; check the host and port in --store` + "\n"
	if got := stderr.String(); got != want {
		t.Errorf("stderr:\n%q\nwant\n%q", got, want)
	}
	if _, err := os.Stat(ran); err == nil {
		t.Error("the command ran")
	}
}
