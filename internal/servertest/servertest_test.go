package servertest

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/everycli/every/internal/testutil"
)

// sleeper is a server that says it is up and then only sleeps: enough to
// be started, awaited, and killed.
func sleeper(t *testing.T, ready func() error) Command {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	return Command{Name: "a sleeper", Path: sh, Args: []string{"-c", "echo up; exec sleep 3600"},
		Log: filepath.Join(t.TempDir(), "server.log"), Ready: ready}
}

// gone reports whether the process pid no longer runs: reaped, or a zombie
// (when its parent is not this process).
func gone(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
	}
	// pid (comm) S ...: the state follows the last parenthesis.
	s := string(b)
	return strings.HasPrefix(s[strings.LastIndexByte(s, ')')+1:], " Z")
}

func TestStartWaitsUntilReadyAndStopKills(t *testing.T) {
	calls := 0
	p := Start(t, sleeper(t, func() error {
		if calls++; calls < 3 {
			return errors.New("not yet")
		}
		return nil
	}))
	if calls != 3 {
		t.Fatalf("Ready asked %d times when Start returned, want 3: Start returns once it holds, not before", calls)
	}
	pid := p.cmd.Process.Pid
	if !p.Running() || gone(pid) {
		t.Fatalf("server %d not running after Start", pid)
	}
	p.Stop()
	if p.Running() || !gone(pid) {
		t.Fatalf("server %d still running after Stop", pid)
	}
	p.Stop() // again: nothing
}

func TestStoppedWhenTheTestEnds(t *testing.T) {
	var pid int
	t.Run("server", func(t *testing.T) {
		pid = Start(t, sleeper(t, func() error { return nil })).cmd.Process.Pid
	})
	if !gone(pid) {
		t.Fatalf("server %d outlived its test", pid)
	}
}

// fakeTB records a failure or a skip, ending the goroutine as testing's do.
type fakeTB struct {
	*testing.T
	failed, skipped string
}

func (f *fakeTB) Fatalf(format string, args ...any) {
	f.failed = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

func (f *fakeTB) Skip(args ...any) {
	f.skipped = fmt.Sprint(args...)
	runtime.Goexit()
}

// run calls fn with f in a goroutine of its own, as a test's body.
func (f *fakeTB) run(fn func(TB)) {
	f.Helper()
	done := make(chan struct{})
	go func() { defer close(done); fn(f) }()
	if _, ok := testutil.Receive(done); !ok {
		f.T.Fatalf("blocked for %v", testutil.WaitBound)
	}
}

func TestNotReadyFailsWithItsLog(t *testing.T) {
	c := sleeper(t, func() error { return errors.New("no answer yet") })
	if err := os.WriteFile(c.Log, []byte("a line from before\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	f := &fakeTB{T: t}
	var p *Process
	f.run(func(tb TB) {
		p = Run(tb, c)
		p.WaitReady(tb, 100*time.Millisecond)
	})
	for _, want := range []string{"a sleeper did not answer within 100ms", "no answer yet", "a line from before"} {
		if !strings.Contains(f.failed, want) {
			t.Errorf("failure %q, want it to hold %q", f.failed, want)
		}
	}
	if p.Running() {
		t.Error("a server that did not come up is left running")
	}
}

func TestPath(t *testing.T) {
	const missing = "every-no-such-server"
	f := &fakeTB{T: t}
	f.run(func(tb TB) { Path(tb, missing, "EVERY_REQUIRE_NOTHING", "Debian: nothing") })
	if f.failed != "" || !strings.Contains(f.skipped, "install it (Debian: nothing)") {
		t.Errorf("without %s: failed %q, skipped %q; want skipped, with how to install it", missing, f.failed, f.skipped)
	}
	t.Setenv("EVERY_REQUIRE_NOTHING", "1")
	f = &fakeTB{T: t}
	f.run(func(tb TB) { Path(tb, missing, "EVERY_REQUIRE_NOTHING", "Debian: nothing") })
	if f.skipped != "" || !strings.Contains(f.failed, "EVERY_REQUIRE_NOTHING=1") {
		t.Errorf("without %s, required: failed %q, skipped %q; want failed", missing, f.failed, f.skipped)
	}
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	if got := Path(t, "sh", "EVERY_REQUIRE_NOTHING", ""); got != sh {
		t.Errorf("Path(sh) = %q, want %q", got, sh)
	}
}

func TestFreeAddrs(t *testing.T) {
	addrs := FreeAddrs(t, 20)
	seen := map[string]bool{}
	for _, a := range addrs {
		if seen[a] || !strings.HasPrefix(a, "127.0.0.1:") {
			t.Fatalf("FreeAddrs = %v: want 20 different loopback addresses", addrs)
		}
		seen[a] = true
	}
}
