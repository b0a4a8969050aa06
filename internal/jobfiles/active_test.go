package jobfiles

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
	"github.com/everycli/every/internal/testutil"
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
	if _, err := Hold(path, MarkerInfo{Name: os.Getenv("EVERY_TEST_NAME")}); err != nil {
		t.Fatalf("hold: %v", err)
	}
	if pidFile := os.Getenv("EVERY_TEST_CHILD"); pidFile != "" {
		// A command every starts: it must not inherit the marker.
		child := exec.Command("sleep", "60")
		if err := child.Start(); err != nil {
			t.Fatalf("start child: %v", err)
		}
		writeAtomic(t, pidFile, strconv.Itoa(child.Process.Pid))
	}
	writeAtomic(t, os.Getenv("EVERY_TEST_READY"), "")
	time.Sleep(testutil.WaitBound)
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
	if !testutil.Eventually(func() bool {
		select {
		case <-done:
			return true
		default:
		}
		_, err := os.Stat(ready)
		return err == nil
	}) {
		t.Fatalf("holder not ready within %v", testutil.WaitBound)
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
	if _, ok := testutil.Receive(h.done); !ok {
		t.Errorf("holder %d not reaped within %v", h.cmd.Process.Pid, testutil.WaitBound)
	}
}

// anyone trusts a marker whoever owns it.
func anyone(uint32) bool { return true }

func probe(t *testing.T, path string) bool {
	t.Helper()
	on, _, err := ProbeActive(path, anyone)
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
	pid, err := strconv.Atoi(strings.TrimSpace(readFileString(t, childPid)))
	if err != nil || pid <= 0 {
		t.Fatalf("the holder's child's pid: %d, %v", pid, err)
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
	_, err := Hold(path, MarkerInfo{})
	if !errors.Is(err, regular.ErrNotRegular) {
		t.Fatalf("hold through a link: %v, want a refusal", err)
	}
	if _, err := os.Lstat(target); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the link's target was created: %v", err)
	}
	if _, _, err := ProbeActive(path, anyone); !errors.Is(err, regular.ErrNotRegular) {
		t.Fatalf("probe through a link: %v, want a refusal", err)
	}
	// A directory or a FIFO is refused too, without blocking.
	fifo := filepath.Join(dir, "fifo.active")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{dir, fifo} {
		if _, err := Hold(p, MarkerInfo{}); !errors.Is(err, regular.ErrNotRegular) {
			t.Errorf("hold %s: %v, want a refusal", p, err)
		}
		if _, _, err := ProbeActive(p, anyone); !errors.Is(err, regular.ErrNotRegular) {
			t.Errorf("probe %s: %v, want a refusal", p, err)
		}
	}
}

// writeAtomic writes a file aside and renames it into place, so a reader
// never sees it half written.
func writeAtomic(t *testing.T, name, content string) {
	t.Helper()
	if err := os.WriteFile(name+".tmp", []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(name+".tmp", name); err != nil {
		t.Fatal(err)
	}
}

func readFileString(t *testing.T, name string) string {
	t.Helper()
	if !testutil.Eventually(func() bool { _, err := os.Stat(name); return err == nil }) {
		t.Fatalf("%s did not appear within %v", name, testutil.WaitBound)
	}
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// startNamedHolder is startHolder whose marker content names the job name.
func startNamedHolder(t *testing.T, path, name string) holder {
	t.Helper()
	t.Setenv("EVERY_TEST_NAME", name)
	return startHolder(t, path, "")
}

func probeInfo(t *testing.T, path string) MarkerInfo {
	t.Helper()
	on, info, err := ProbeActive(path, anyone)
	if err != nil || !on {
		t.Fatalf("probe %s: active %v, %v; want active", path, on, err)
	}
	return info
}

// TestActiveMarkerContent: the first holder of a marker writes what every
// status shows before the first run; a later holder, finding it held,
// leaves it alone; once nobody holds it, the next holder writes its own.
func TestActiveMarkerContent(t *testing.T) {
	path := filepath.Join(t.TempDir(), "job.json.active")
	first := startNamedHolder(t, path, "a-rather-long-first-name")
	if got := probeInfo(t, path).Name; got != "a-rather-long-first-name" {
		t.Fatalf("marker names %q, want the first holder's", got)
	}
	second := startNamedHolder(t, path, "second")
	if got := probeInfo(t, path).Name; got != "a-rather-long-first-name" {
		t.Fatalf("a second holder rewrote the marker: %q", got)
	}
	first.kill(t)
	second.kill(t)
	startNamedHolder(t, path, "third") // shorter: the old line's tail is cut
	if got := probeInfo(t, path); got.Name != "third" || got.Version != markerVersion {
		t.Fatalf("marker says %+v, want the new sole holder's", got)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Count(string(b), "\n") != 1 || !strings.HasSuffix(string(b), "\n") {
		t.Errorf("marker content %q, want one line", b)
	}
}

// TestActiveMarkerSlots: the holder that writes the marker keeps its first
// and next slots, as the loop tells them, until the first run starts.
func TestActiveMarkerSlots(t *testing.T) {
	path := filepath.Join(t.TempDir(), "job.json.active")
	m, err := Hold(path, MarkerInfo{Name: "job", Schedule: "*/5 * * * *"})
	if err != nil {
		t.Fatal(err)
	}
	read := func() MarkerInfo {
		fd, err := openMarker(path, os.O_RDONLY)
		if err != nil {
			t.Fatal(err)
		}
		defer syscall.Close(fd)
		return readMarker(fd)
	}
	first := time.Date(2026, 11, 30, 12, 5, 0, 0, time.UTC)
	m.Began(first)
	if got := read(); !got.FirstSlot.Equal(first) || !got.NextSlot.Equal(first) || got.Schedule != "*/5 * * * *" {
		t.Fatalf("after Began: %+v, want first and next slot %v", got, first)
	}
	later := first.Add(10 * time.Minute)
	m.Skipped(later) // within a second of the last write: not written
	if got := read(); !got.NextSlot.Equal(first) {
		t.Fatalf("a skip within the second was written: %+v", got)
	}
	m.wrote = time.Time{}
	m.Skipped(later)
	if got := read(); !got.NextSlot.Equal(later) || !got.FirstSlot.Equal(first) {
		t.Fatalf("after a skip: %+v, want next %v, first %v", got, later, first)
	}
	m.Ran()
	m.wrote = time.Time{}
	m.Skipped(later.Add(time.Hour))
	if got := read(); !got.NextSlot.Equal(later) {
		t.Fatalf("a skip after the first run was written: %+v", got)
	}
}

// TestReadMarker: what a marker says is its first line, if that is one of
// its kind; anything else (an older every's empty marker, a write caught
// half done, garbage) says nothing.
func TestReadMarker(t *testing.T) {
	good := `{"version":1,"name":"job","schedule":"1h","first_slot":"2026-11-30T12:00:00Z"}`
	for _, tc := range []struct {
		content string
		want    string // the name read
	}{
		{good + "\n", "job"},
		{good + "\n" + `ule":"1h"}` + "\n", "job"}, // a longer old line's tail, not cut yet
		{"", ""},
		{good, ""}, // no end of line: a write under way
		{`{"version":1,"na` + "\n", ""},
		{`{"version":2,"name":"job"}` + "\n", ""},
		{"\x00\x00garbage\n", ""},
	} {
		path := filepath.Join(t.TempDir(), "m")
		if err := os.WriteFile(path, []byte(tc.content), 0o600); err != nil {
			t.Fatal(err)
		}
		fd, err := openMarker(path, os.O_RDONLY)
		if err != nil {
			t.Fatal(err)
		}
		if got := readMarker(fd).Name; got != tc.want {
			t.Errorf("readMarker(%q) names %q, want %q", tc.content, got, tc.want)
		}
		syscall.Close(fd)
	}
}

// nobody is a uid that is not root's, for the tests of markers owned by
// another user.
const nobody = 65534

// TestActiveForeignMarker: in a shared directory, a marker owned by
// another user is never trusted: it is never held, and a probe that trusts
// only the state's owner does not count it, even held by a live process, so
// nobody else can make a dead job look active (internal/job's
// TestActiveForeignMarkerRun runs every and every status on one). As root,
// which can hand a file to another user.
func TestActiveForeignMarker(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root, to make files of another user")
	}
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o1777); err != nil { // a shared directory
		t.Fatal(err)
	}
	path := filepath.Join(dir, "job.json.active")

	// Held by a live process, then given to another user: not counted.
	h := startHolder(t, path, "")
	if err := os.Chown(path, nobody, nobody); err != nil {
		t.Fatal(err)
	}
	if on, _, err := ProbeActive(path, func(uid uint32) bool { return uid == 0 }); err != nil || on {
		t.Errorf("a marker of uid %d, held, probed for uid 0: active %v, %v; want inactive", nobody, on, err)
	}
	if !probe(t, path) {
		t.Fatal("the marker is not held: the test proves nothing")
	}
	// Never held by this user's every.
	if _, err := Hold(path, MarkerInfo{}); !errors.Is(err, ErrForeignMarker) {
		t.Errorf("hold a marker of uid %d: %v, want a refusal", nobody, err)
	}
	h.kill(t)
	if _, err := Hold(path, MarkerInfo{}); !errors.Is(err, ErrForeignMarker) {
		t.Errorf("hold a marker of uid %d, not held: %v, want a refusal", nobody, err)
	}
}
