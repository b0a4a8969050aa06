// Package servertest runs the real server binaries of every's tests
// (redis-server, etcd): found in PATH or the test skipped, on free loopback
// ports, started and awaited until ready within a bound, killed by their
// own PID (and with the test process, where the system allows), and their
// log shown when they do not come up. redistest and etcdtest build on it.
package servertest

import (
	"net"
	"os"
	"os/exec"
	"time"

	"github.com/everycli/every/internal/testutil"
)

// TB is what a server needs of its test: testing.TB, or testscript's T.
type TB interface {
	Helper()
	Fatalf(format string, args ...any)
	Skip(args ...any)
	Cleanup(func())
	TempDir() string
}

// Path finds the binary name. Without it, the test is skipped, unless the
// environment variable require is 1 (as in CI), which makes it fail;
// install says how to get it.
func Path(t TB, name, require, install string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv(require) == "1" {
			t.Fatalf("%s not found and %s=1: %v", name, require, err)
		}
		t.Skip(name + " not found in PATH; install it (" + install + ") to run this test")
	}
	return path
}

// FreeAddrs are n loopback addresses with ports nobody listens on now, all
// different: each listener is held until all are found, so that no two
// calls find the same port free.
func FreeAddrs(t TB, n int) []string {
	t.Helper()
	addrs := make([]string, n)
	for i := range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatalf("find a free port: %v", err)
		}
		defer l.Close()
		addrs[i] = l.Addr().String()
	}
	return addrs
}

// Command is a server to run.
type Command struct {
	Name string   // what failures call it: "redis-server on 127.0.0.1:6379"
	Path string   // the binary, from Path
	Args []string // its arguments
	Log  string   // the file its output is appended to, shown when it does not come up
	// Ready tells whether the server answers as the tests need it to; its
	// error says why not.
	Ready func() error
}

// Process is a server started by Start or Run.
type Process struct {
	c   Command
	cmd *exec.Cmd
}

// Start runs c and waits until it is ready, for at most testutil.WaitBound.
func Start(t TB, c Command) *Process {
	t.Helper()
	p := Run(t, c)
	p.WaitReady(t, testutil.WaitBound)
	return p
}

// Run runs c without waiting for it: for servers that wait for each other
// (a cluster's members) before any is ready. It is stopped when the test
// ends, if not before.
func Run(t TB, c Command) *Process {
	t.Helper()
	log, err := os.OpenFile(c.Log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		t.Fatalf("%s: its log: %v", c.Name, err)
	}
	defer log.Close()
	cmd := exec.Command(c.Path, c.Args...)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = sysProcAttr()
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", c.Name, err)
	}
	p := &Process{c: c, cmd: cmd}
	t.Cleanup(p.Stop)
	return p
}

// WaitReady waits until the server is ready, for at most bound; if it is
// not, it is stopped and the test fails with Ready's last error and the
// server's log.
func (p *Process) WaitReady(t TB, bound time.Duration) {
	t.Helper()
	var err error
	if testutil.EventuallyWithin(bound, func() bool { err = p.c.Ready(); return err == nil }) {
		return
	}
	p.Stop()
	log, _ := os.ReadFile(p.c.Log)
	t.Fatalf("%s did not answer within %v: %v\n%s", p.c.Name, bound, err, log)
}

// Stop kills the server by its own PID (SIGKILL: as a crash would) and
// waits for it. Stopping a stopped server, or none (nil), does nothing.
func (p *Process) Stop() {
	if !p.Running() {
		return
	}
	_ = p.cmd.Process.Kill()
	_ = p.cmd.Wait()
	p.cmd = nil
}

// Running reports whether the server was started and not stopped.
func (p *Process) Running() bool { return p != nil && p.cmd != nil }
