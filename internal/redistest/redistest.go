// Package redistest starts real redis-server processes for tests: each on a
// free loopback port, in a temporary directory, gone when the test ends.
package redistest

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// quiet silences go-redis's own log lines, which would only clutter the
// tests' output. Every entry point of the package calls it: a test that uses
// redistest uses it before any client of its own talks to a server here.
var quiet = sync.OnceFunc(func() { redis.SetLogger(discard{}) })

type discard struct{}

func (discard) Printf(context.Context, string, ...any) {}

// TB is what a Server needs of its test: testing.TB, or testscript's T.
type TB interface {
	Helper()
	Fatalf(format string, args ...any)
	Skip(args ...any)
	Cleanup(func())
	TempDir() string
}

// Server is one redis-server.
type Server struct {
	Addr string // 127.0.0.1:port
	args []string
	dir  string
	cmd  *exec.Cmd
	t    TB
}

// Path finds redis-server. Without it, the test is skipped, unless
// EVERY_REQUIRE_REDIS=1 (as in CI), which makes it fail.
func Path(t TB) string {
	quiet()
	t.Helper()
	path, err := exec.LookPath("redis-server")
	if err != nil {
		if os.Getenv("EVERY_REQUIRE_REDIS") == "1" {
			t.Fatalf("redis-server not found and EVERY_REQUIRE_REDIS=1: %v", err)
		}
		t.Skip("redis-server not found in PATH; install it (Debian: redis-server) to run this test")
	}
	return path
}

// Start starts a server with extra arguments (such as "--requirepass", "x").
func Start(t TB, args ...string) *Server {
	quiet()
	t.Helper()
	Path(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("find a free port: %v", err)
	}
	addr := l.Addr().String()
	l.Close()
	s := &Server{Addr: addr, args: args, dir: t.TempDir(), t: t}
	s.Restart()
	t.Cleanup(s.Stop)
	return s
}

// Port is the server's port.
func (s *Server) Port() string {
	_, port, _ := net.SplitHostPort(s.Addr)
	return port
}

// URL is a redis:// URL for the server, with a password if given.
func (s *Server) URL(password string) string {
	if password != "" {
		return "redis://:" + password + "@" + s.Addr + "/0"
	}
	return "redis://" + s.Addr + "/0"
}

// Restart starts the server again, on the same port, if it is stopped, and
// waits until it answers.
func (s *Server) Restart() {
	s.t.Helper()
	if s.cmd != nil {
		return
	}
	args := append([]string{"--port", s.Port(), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
		"--dir", s.dir, "--logfile", s.dir + "/redis.log"}, s.args...)
	cmd := exec.Command(Path(s.t), args...)
	if err := cmd.Start(); err != nil {
		s.t.Fatalf("start redis-server: %v", err)
	}
	s.cmd = cmd
	if err := s.waitReady(10 * time.Second); err != nil {
		log, _ := os.ReadFile(s.dir + "/redis.log")
		s.Stop()
		s.t.Fatalf("redis-server on %s did not answer: %v\n%s", s.Addr, err, log)
	}
}

// Stop kills the server (SIGKILL: as a crash would) and waits for it.
func (s *Server) Stop() {
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Kill()
	_ = s.cmd.Wait()
	s.cmd = nil
}

// Client returns a client for the server, closed with the test.
func (s *Server) Client(password string) *redis.Client {
	c := redis.NewClient(&redis.Options{Addr: s.Addr, Password: password, Protocol: 2, DisableIdentity: true})
	s.t.Cleanup(func() { c.Close() })
	return c
}

func (s *Server) waitReady(bound time.Duration) error {
	deadline := time.Now().Add(bound)
	for {
		conn, err := net.DialTimeout("tcp", s.Addr, 200*time.Millisecond)
		if err == nil {
			// A reply of any kind (PONG, or NOAUTH with requirepass) means ready.
			fmt.Fprintf(conn, "PING\r\n")
			conn.SetReadDeadline(time.Now().Add(time.Second))
			buf := make([]byte, 64)
			n, rerr := conn.Read(buf)
			conn.Close()
			if rerr == nil && n > 0 {
				return nil
			}
			err = rerr
		}
		if time.Now().After(deadline) {
			return err
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Do runs one command (for scripts: DEL a key, and the like).
func (s *Server) Do(ctx context.Context, password string, args ...string) (any, error) {
	c := redis.NewClient(&redis.Options{Addr: s.Addr, Password: password, Protocol: 2, DisableIdentity: true})
	defer c.Close()
	a := make([]any, len(args))
	for i, v := range args {
		a[i] = v
	}
	return c.Do(ctx, a...).Result()
}
