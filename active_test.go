package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/everycli/every/internal/regular"
)

// The holders of these tests are the test binary itself, run again as
// TestActiveHolder with EVERY_TEST_HOLD set: a real process that holds a
// marker until it is killed, as every does.

// TestActiveHolder is not a test but the holder process: it holds the marker
// named by EVERY_TEST_HOLD, optionally starts a child that outlives it
// (EVERY_TEST_CHILD, a file for the child's pid), says it is ready by
// creating EVERY_TEST_READY, and waits to be killed (at most the wait bound).
func TestActiveHolder(t *testing.T) {
	path := os.Getenv("EVERY_TEST_HOLD")
	if path == "" {
		t.Skip("only the holder process of the active tests")
	}
	if err := holdActive(path); err != nil {
		t.Fatalf("hold: %v", err)
	}
	if pidFile := os.Getenv("EVERY_TEST_CHILD"); pidFile != "" {
		// A command every starts: it must not inherit the marker.
		child := exec.Command("sleep", "60")
		if err := child.Start(); err != nil {
			t.Fatalf("start child: %v", err)
		}
		writeFile(pidFile, strconv.Itoa(child.Process.Pid))
	}
	writeFile(os.Getenv("EVERY_TEST_READY"), "")
	time.Sleep(waitBound)
}

// holder is a process that holds a marker.
type holder struct {
	cmd  *exec.Cmd
	done chan struct{} // closed once it has been reaped
}

// startHolder runs a holder of the marker at path and waits until it holds
// it. It is killed at the end of the test, whatever happens.
func startHolder(t *testing.T, path string, childPid string) holder {
	t.Helper()
	ready := filepath.Join(t.TempDir(), "ready")
	cmd := exec.Command(os.Args[0], "-test.run=^TestActiveHolder$", "-test.count=1")
	cmd.Env = append(os.Environ(), "EVERY_TEST_HOLD="+path, "EVERY_TEST_READY="+ready, "EVERY_TEST_CHILD="+childPid)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	h := holder{cmd, done}
	t.Cleanup(func() { h.kill(t) })
	if !poll(func() bool {
		select {
		case <-done:
			return true
		default:
		}
		_, err := os.Stat(ready)
		return err == nil
	}) {
		t.Fatalf("holder not ready within %v", waitBound)
	}
	select {
	case <-done:
		t.Fatalf("holder ended before it was ready")
	default:
	}
	return h
}

// kill ends a holder with SIGKILL, as the kernel or an OOM killer would, and
// waits (bounded) until it has been reaped.
func (h holder) kill(t *testing.T) {
	t.Helper()
	_ = h.cmd.Process.Signal(syscall.SIGKILL)
	select {
	case <-h.done:
	case <-time.After(waitBound):
		t.Errorf("holder %d not reaped within %v", h.cmd.Process.Pid, waitBound)
	}
}

func probe(t *testing.T, path string) bool {
	t.Helper()
	on, err := probeActive(path)
	if err != nil {
		t.Fatalf("probe %s: %v", path, err)
	}
	return on
}

func TestActiveHeldUntilKilled(t *testing.T) {
	path := filepath.Join(t.TempDir(), "job.json.active")
	if probe(t, path) {
		t.Fatal("a marker that does not exist: active")
	}
	if _, err := os.Lstat(path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the probe created the marker: %v", err)
	}
	h := startHolder(t, path, "")
	if !probe(t, path) {
		t.Fatal("held by a live process: inactive")
	}
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 || !fi.Mode().IsRegular() {
		t.Errorf("marker mode %v, want a regular file 0600", fi.Mode())
	}
	h.kill(t)
	if probe(t, path) {
		t.Fatal("holder killed with SIGKILL: still active")
	}
}

func TestActiveSeveralHolders(t *testing.T) {
	path := filepath.Join(t.TempDir(), "job.json.active")
	h1 := startHolder(t, path, "")
	h2 := startHolder(t, path, "") // a second every of the same job holds it too
	if !probe(t, path) {
		t.Fatal("two holders: inactive")
	}
	h1.kill(t)
	if !probe(t, path) {
		t.Fatal("one of two holders killed: inactive, though the other lives")
	}
	h2.kill(t)
	if probe(t, path) {
		t.Fatal("both holders killed: still active")
	}
}

// TestActiveNotInherited: a command started by every (here one that
// outlives it) must not keep the marker, or a dead every would look alive.
func TestActiveNotInherited(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "job.json.active")
	childPid := filepath.Join(dir, "child.pid")
	h := startHolder(t, path, childPid)
	pid, err := parsePid(readFileString(t, childPid))
	if err != nil {
		t.Fatal(err)
	}
	// Held by a pidfd from here (it sleeps for a minute): should it end
	// before the cleanup, its pid may be anyone's by then.
	child, err := os.FindProcess(pid)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = child.Kill(); _ = child.Release() })
	h.kill(t)
	if err := syscall.Kill(pid, 0); err != nil {
		t.Fatalf("the holder's child %d is gone already (%v): the test proves nothing", pid, err)
	}
	if probe(t, path) {
		t.Fatal("holder killed, its child alive: still active (the child inherited the marker)")
	}
}

func TestActiveRefusesLinks(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "target")
	path := filepath.Join(dir, "job.json.active")
	if err := os.Symlink(target, path); err != nil {
		t.Fatal(err)
	}
	err := holdActive(path)
	if !errors.Is(err, regular.ErrNotRegular) {
		t.Fatalf("hold through a link: %v, want a refusal", err)
	}
	if _, err := os.Lstat(target); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the link's target was created: %v", err)
	}
	if _, err := probeActive(path); !errors.Is(err, regular.ErrNotRegular) {
		t.Fatalf("probe through a link: %v, want a refusal", err)
	}
	// A directory or a FIFO is refused too, without blocking.
	fifo := filepath.Join(dir, "fifo.active")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{dir, fifo} {
		if err := holdActive(p); !errors.Is(err, regular.ErrNotRegular) {
			t.Errorf("hold %s: %v, want a refusal", p, err)
		}
		if _, err := probeActive(p); !errors.Is(err, regular.ErrNotRegular) {
			t.Errorf("probe %s: %v, want a refusal", p, err)
		}
	}
}

func readFileString(t *testing.T, name string) string {
	t.Helper()
	if !waitForFile(name) {
		t.Fatalf("%s did not appear within %v", name, waitBound)
	}
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestShort(t *testing.T) {
	for d, want := range map[time.Duration]string{
		12 * time.Second:                                   "12s",
		2*time.Hour + 3*time.Minute:                        "2h3m",
		2*time.Hour + 3*time.Minute + 400*time.Millisecond: "2h3m",
		time.Hour:                 "1h",
		90 * time.Minute:          "1h30m",
		10 * time.Minute:          "10m",
		time.Hour + 5*time.Second: "1h0m5s",
		250 * time.Millisecond:    "250ms",
	} {
		if got := short(d); got != want {
			t.Errorf("short(%v) = %q, want %q", d, got, want)
		}
	}
}

func TestJudge(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	ago := func(d time.Duration) *time.Time { t := now.Add(-d); return &t }
	probe := statusSettings{maxAge: time.Hour}
	nagios := statusSettings{maxAge: time.Hour, warnAge: 30 * time.Minute, nagios: true}
	lenient := statusSettings{maxAge: time.Hour, allowInactive: true}
	for _, tc := range []struct {
		name string
		j    jobStatus
		ss   statusSettings
		want health
		why  string
	}{
		{"fresh and active", jobStatus{LastSuccess: ago(time.Minute), Active: true}, probe, healthy, ""},
		{"exactly max-age", jobStatus{LastSuccess: ago(time.Hour), Active: true}, probe, healthy, ""},
		{"just older", jobStatus{LastSuccess: ago(time.Hour + time.Second), Active: true}, probe, critical,
			"last success 1h0m1s ago, older than 1h"},
		{"older by less than shows", jobStatus{LastSuccess: ago(time.Hour + 300*time.Millisecond), Active: true}, probe, critical,
			"last success 1h0m0.3s ago, older than 1h"},
		{"never", jobStatus{Active: true}, probe, critical, "never succeeded"},
		{"inactive", jobStatus{LastSuccess: ago(time.Minute)}, probe, critical, "no every running for it"},
		{"inactive allowed", jobStatus{LastSuccess: ago(time.Minute)}, lenient, healthy, ""},
		{"old and inactive", jobStatus{LastSuccess: ago(2 * time.Hour)}, probe, critical,
			"last success 2h ago, older than 1h; no every running for it"},
		{"failing within max-age passes the probe", jobStatus{LastSuccess: ago(time.Minute), Active: true, LastResult: "failure", LastExitCode: 3}, probe, healthy, ""},
		{"failing is critical for nagios", jobStatus{LastSuccess: ago(time.Minute), Active: true, LastResult: "failure", LastExitCode: 3}, nagios, critical,
			"last run failure (3)"},
		{"warn-age", jobStatus{LastSuccess: ago(45 * time.Minute), Active: true, LastResult: "success"}, nagios, warning,
			"last success 45m ago, older than 30m"},
		{"warn-age and inactive", jobStatus{LastSuccess: ago(45 * time.Minute), LastResult: "success"}, nagios, critical,
			"last success 45m ago, older than 30m; no every running for it"},
		{"a success in the future is fresh", jobStatus{LastSuccess: ago(-time.Minute), Active: true}, probe, healthy, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, why := judge(tc.j, tc.ss, now)
			if h != tc.want || strings.Join(why, "; ") != tc.why {
				t.Errorf("judge = %v %q, want %v %q", h, strings.Join(why, "; "), tc.want, tc.why)
			}
		})
	}
}
