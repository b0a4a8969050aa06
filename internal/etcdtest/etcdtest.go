// Package etcdtest starts real single-node etcd servers for tests, and
// clusters: each on free loopback ports, in a temporary directory, killed
// (by its own PID) when the test ends (servertest runs them).
package etcdtest

import (
	"context"
	"time"

	"github.com/everycli/every/internal/etcd"
	"github.com/everycli/every/internal/servertest"
)

// TB is what a Server needs of its test: testing.TB, or testscript's T.
type TB = servertest.TB

// Server is one etcd.
type Server struct {
	Addr string // 127.0.0.1:port, the client port
	peer string
	dir  string
	proc *servertest.Process // nil until started
	t    TB
}

// Path finds etcd. Without it, the test is skipped, unless
// EVERY_REQUIRE_ETCD=1 (as in CI), which makes it fail.
func Path(t TB) string {
	t.Helper()
	return servertest.Path(t, "etcd", "EVERY_REQUIRE_ETCD", "Debian: etcd-server")
}

// Start starts a server and waits until it answers.
func Start(t TB) *Server {
	t.Helper()
	Path(t)
	addrs := servertest.FreeAddrs(t, 2)
	s := &Server{Addr: addrs[0], peer: addrs[1], dir: t.TempDir(), t: t}
	s.Restart()
	return s
}

// Peer is the server's peer address: HTTP, but no etcd gateway.
func (s *Server) Peer() string { return s.peer }

// URL is an etcd:// URL for the server, with a user and password if user
// is set, and a prefix if set.
func (s *Server) URL(user, password, prefix string) string {
	u := "etcd://"
	if user != "" {
		u += user + ":" + password + "@"
	}
	u += s.Addr
	if prefix != "" {
		u += "/" + prefix
	}
	return u
}

// Restart starts the server again, on the same ports and data, if it is
// stopped, and waits until it answers.
func (s *Server) Restart() {
	s.t.Helper()
	if s.proc.Running() {
		return
	}
	cu, pu := "http://"+s.Addr, "http://"+s.peer
	c := readyClient(s.Addr)
	defer c.Close()
	// --bcrypt-cost 4, the least etcd takes (10 by default): every
	// authentication checks the password with bcrypt on the server, and at
	// cost 10 on a loaded 2-core machine that took over 2s, longer than
	// every gives it at start-up and far longer than a store call's 500ms,
	// so a script with -auth failed with "context deadline exceeded". What
	// is tested is which credentials are taken, not how slowly.
	s.proc = servertest.Start(s.t, servertest.Command{
		Name: "etcd on " + s.Addr, Path: Path(s.t), Log: s.dir + "/etcd.log", Ready: ready(c),
		Args: []string{"--name", "t", "--data-dir", s.dir + "/data",
			"--listen-client-urls", cu, "--advertise-client-urls", cu,
			"--listen-peer-urls", pu, "--initial-advertise-peer-urls", pu,
			"--initial-cluster", "t=" + pu, "--unsafe-no-fsync", "--bcrypt-cost", "4"},
	})
}

// Stop kills the server (SIGKILL: as a crash would) and waits for it.
func (s *Server) Stop() { s.proc.Stop() }

// Client is a client of the server, as root with password if set.
func (s *Server) Client(password string) *etcd.Client {
	cfg := etcd.Config{Endpoints: []string{s.Addr}, Timeout: 5 * time.Second}
	if password != "" {
		cfg.User, cfg.Password = "root", password
	}
	c := etcd.New(cfg)
	s.t.Cleanup(c.Close)
	if password != "" {
		if err := c.Authenticate(context.Background()); err != nil {
			s.t.Fatalf("etcd authenticate: %v", err)
		}
	}
	return c
}

// EnableAuth adds the user root with password and turns authentication on.
func (s *Server) EnableAuth(password string) {
	s.t.Helper()
	c := s.Client("")
	ctx := context.Background()
	var res struct{}
	for _, call := range []struct {
		path string
		req  any
	}{
		{"/v3/auth/role/add", map[string]string{"name": "root"}},
		{"/v3/auth/user/add", map[string]string{"name": "root", "password": password}},
		{"/v3/auth/user/grant", map[string]string{"user": "root", "role": "root"}},
		{"/v3/auth/enable", map[string]string{}},
	} {
		if err := c.Call(ctx, call.path, call.req, &res); err != nil {
			s.t.Fatalf("etcd %s: %v", call.path, err)
		}
	}
}

// readyClient is the client that asks an etcd at addr whether it is ready.
func readyClient(addr string) *etcd.Client {
	return etcd.New(etcd.Config{Endpoints: []string{addr}, Timeout: time.Second})
}

// ready is nil once c's etcd answers a range: a leader was elected, and the
// server is ready for leases and transactions, not just listening.
func ready(c *etcd.Client) func() error {
	return func() error {
		_, err := c.Range(context.Background(), []byte("ready"), nil, 1)
		return err
	}
}
