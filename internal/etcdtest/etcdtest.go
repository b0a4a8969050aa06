// Package etcdtest starts real single-node etcd servers for tests: each on
// free loopback ports, in a temporary directory, killed (by its own PID)
// when the test ends.
package etcdtest

import (
	"context"
	"net"
	"os"
	"os/exec"
	"time"

	"github.com/everycli/every/internal/etcd"
)

// TB is what a Server needs of its test: testing.TB, or testscript's T.
type TB interface {
	Helper()
	Fatalf(format string, args ...any)
	Skip(args ...any)
	Cleanup(func())
	TempDir() string
}

// Server is one etcd.
type Server struct {
	Addr string // 127.0.0.1:port, the client port
	peer string
	dir  string
	cmd  *exec.Cmd
	t    TB
}

// Path finds etcd. Without it, the test is skipped, unless
// EVERY_REQUIRE_ETCD=1 (as in CI), which makes it fail.
func Path(t TB) string {
	t.Helper()
	path, err := exec.LookPath("etcd")
	if err != nil {
		if os.Getenv("EVERY_REQUIRE_ETCD") == "1" {
			t.Fatalf("etcd not found and EVERY_REQUIRE_ETCD=1: %v", err)
		}
		t.Skip("etcd not found in PATH; install it (Debian: etcd-server) to run this test")
	}
	return path
}

// FreeAddr is a loopback address with a port nobody listens on now.
func FreeAddr(t TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("find a free port: %v", err)
	}
	defer l.Close()
	return l.Addr().String()
}

// Start starts a server and waits until it answers.
func Start(t TB) *Server {
	t.Helper()
	Path(t)
	s := &Server{Addr: FreeAddr(t), peer: FreeAddr(t), dir: t.TempDir(), t: t}
	s.Restart()
	t.Cleanup(s.Stop)
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
	if s.cmd != nil {
		return
	}
	cu, pu := "http://"+s.Addr, "http://"+s.peer
	log, err := os.OpenFile(s.dir+"/etcd.log", os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		s.t.Fatalf("etcd log: %v", err)
	}
	defer log.Close()
	// --bcrypt-cost 4, the least etcd takes (10 by default): every
	// authentication checks the password with bcrypt on the server, and at
	// cost 10 on a loaded 2-core machine that took over 2s, longer than
	// every gives it at start-up and far longer than a store call's 500ms,
	// so a script with -auth failed with "context deadline exceeded". What
	// is tested is which credentials are taken, not how slowly.
	cmd := exec.Command(Path(s.t), "--name", "t", "--data-dir", s.dir+"/data",
		"--listen-client-urls", cu, "--advertise-client-urls", cu,
		"--listen-peer-urls", pu, "--initial-advertise-peer-urls", pu,
		"--initial-cluster", "t="+pu, "--unsafe-no-fsync", "--bcrypt-cost", "4")
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		s.t.Fatalf("start etcd: %v", err)
	}
	s.cmd = cmd
	if err := s.waitReady(30 * time.Second); err != nil {
		b, _ := os.ReadFile(s.dir + "/etcd.log")
		s.Stop()
		s.t.Fatalf("etcd on %s did not answer: %v\n%s", s.Addr, err, b)
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

func (s *Server) waitReady(bound time.Duration) error {
	c := etcd.New(etcd.Config{Endpoints: []string{s.Addr}, Timeout: time.Second})
	defer c.Close()
	deadline := time.Now().Add(bound)
	for {
		// A range answered means a leader was elected: the server is ready
		// for leases and transactions, not just listening.
		_, err := c.Range(context.Background(), []byte("ready"), nil, 1)
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return err
		}
		time.Sleep(20 * time.Millisecond)
	}
}
