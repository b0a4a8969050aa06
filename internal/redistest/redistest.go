// Package redistest starts real redis-server processes for tests: each on a
// free loopback port, in a temporary directory, gone when the test ends
// (servertest runs them).
package redistest

import (
	"context"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/everycli/every/internal/servertest"
)

// quiet silences go-redis's own log lines, which would only clutter the
// tests' output. Every entry point of the package calls it: a test that uses
// redistest uses it before any client of its own talks to a server here.
var quiet = sync.OnceFunc(func() { redis.SetLogger(discard{}) })

type discard struct{}

func (discard) Printf(context.Context, string, ...any) {}

// TB is what a Server needs of its test: testing.TB, or testscript's T.
type TB = servertest.TB

// Server is one redis-server.
type Server struct {
	Addr string // 127.0.0.1:port
	args []string
	dir  string
	proc *servertest.Process // nil until started
	t    TB
}

// Path finds redis-server. Without it, the test is skipped, unless
// EVERY_REQUIRE_REDIS=1 (as in CI), which makes it fail.
func Path(t TB) string {
	quiet()
	t.Helper()
	return servertest.Path(t, "redis-server", "EVERY_REQUIRE_REDIS", "Debian: redis-server")
}

// Start starts a server with extra arguments (such as "--requirepass", "x").
func Start(t TB, args ...string) *Server {
	quiet()
	t.Helper()
	Path(t)
	s := &Server{Addr: servertest.FreeAddrs(t, 1)[0], args: args, dir: t.TempDir(), t: t}
	s.Restart()
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
	if s.proc.Running() {
		return
	}
	log := s.dir + "/redis.log"
	args := append([]string{"--port", s.Port(), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
		"--dir", s.dir, "--logfile", log}, s.args...)
	s.proc = servertest.Start(s.t, servertest.Command{
		Name: "redis-server on " + s.Addr, Path: Path(s.t), Args: args, Log: log, Ready: s.ping,
	})
}

// Stop kills the server (SIGKILL: as a crash would) and waits for it.
func (s *Server) Stop() { s.proc.Stop() }

// Client returns a client for the server, closed with the test.
func (s *Server) Client(password string) *redis.Client {
	c := redis.NewClient(&redis.Options{Addr: s.Addr, Password: password, Protocol: 2, DisableIdentity: true})
	s.t.Cleanup(func() { c.Close() })
	return c
}

// ping is nil once the server answers a PING: a reply of any kind (PONG,
// or NOAUTH with requirepass) means ready.
func (s *Server) ping() error {
	conn, err := net.DialTimeout("tcp", s.Addr, 200*time.Millisecond)
	if err != nil {
		return err
	}
	defer conn.Close()
	fmt.Fprintf(conn, "PING\r\n")
	conn.SetReadDeadline(time.Now().Add(time.Second))
	_, err = conn.Read(make([]byte, 64))
	return err
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
