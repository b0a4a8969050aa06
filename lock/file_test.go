package lock

import (
	"context"
	"errors"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/everycli/every/internal/testutil"
)

func TestFileLockExcludes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "job.lock")
	a := &File{Path: path}
	ctx := context.Background()
	lease, err := a.Lock(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	// flock(2) locks belong to the open file description: a second Lock in
	// the same process is excluded, as another process would be.
	_, err = a.Lock(ctx, 0)
	var busy *BusyError
	if !errors.As(err, &busy) || !errors.Is(err, ErrBusy) {
		t.Fatalf("second Lock = %v, want a BusyError", err)
	}
	if busy.Holder != (Holder{}) {
		t.Errorf("holder %+v, want unknown: a lock file names nobody", busy.Holder)
	}
	if err := lease.Unlock(); err != nil {
		t.Fatal(err)
	}
	lease, err = a.Lock(ctx, 0)
	if err != nil {
		t.Fatalf("Lock after Unlock: %v", err)
	}
	lease.Unlock()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 || fi.Size() != 0 {
		t.Errorf("lock file mode %v size %d, want 0600 and empty", fi.Mode().Perm(), fi.Size())
	}
}

func TestFileLockWaits(t *testing.T) {
	path := filepath.Join(t.TempDir(), "job.lock")
	f := &File{Path: path}
	ctx := context.Background()
	held, err := f.Lock(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	// Closed just before the release: the waiter cannot have the lock
	// before it is closed.
	releasing := make(chan struct{})
	released := make(chan struct{})
	go func(held Lease) {
		defer close(released)
		time.Sleep(50 * time.Millisecond)
		close(releasing)
		held.Unlock()
	}(held)
	lease, err := f.Lock(ctx, time.Minute)
	if err != nil {
		t.Fatalf("Lock with a wait: %v", err)
	}
	select {
	case <-releasing:
	default:
		t.Fatal("got the lock while it was held")
	}
	<-released
	lease.Unlock()

	// A wait that runs out is a busy lock; a context that ends, too.
	held, _ = f.Lock(ctx, 0)
	defer held.Unlock()
	if _, err := f.Lock(ctx, 20*time.Millisecond); !errors.Is(err, ErrBusy) {
		t.Errorf("Lock after the wait ran out = %v, want ErrBusy", err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := f.Lock(cctx, time.Minute); !errors.Is(err, ErrBusy) {
		t.Errorf("Lock with an ended context = %v, want ErrBusy", err)
	}
}

func TestFileLockExcludesFlockCommand(t *testing.T) {
	flock, err := exec.LookPath("flock")
	if err != nil {
		t.Skip("util-linux flock is not installed")
	}
	path := filepath.Join(t.TempDir(), "job.lock")
	ready := path + ".ready"
	cmd := exec.Command(flock, path, "sh", "-c", "touch "+ready+"; sleep 60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	if !testutil.Eventually(func() bool { _, err := os.Stat(ready); return err == nil }) {
		t.Fatalf("flock(1) did not take the lock within %v", testutil.WaitBound)
	}
	_, err = (&File{Path: path}).Lock(context.Background(), 0)
	var busy *BusyError
	if !errors.As(err, &busy) {
		t.Fatalf("Lock while flock(1) holds it = %v, want busy", err)
	}
	if busy.Holder != (Holder{}) {
		t.Errorf("holder %+v, want unknown: flock(1) names nobody", busy.Holder)
	}
}

func TestHolderString(t *testing.T) {
	for h, want := range map[Holder]string{
		{}:                  "unknown",
		{PID: 17}:           "pid 17",
		{PID: 1, Host: "h"}: "pid 1 on h",
	} {
		if got := h.String(); got != want {
			t.Errorf("%+v.String() = %q, want %q", h, got, want)
		}
	}
}

// A lock file's content is never touched: flock(1) users share lock files,
// and --lock "$0" locks the job's own script.
func TestFileLockLeavesContent(t *testing.T) {
	path := filepath.Join(t.TempDir(), "data.db")
	content := []byte("#!/bin/sh\necho precious data\n")
	if err := os.WriteFile(path, content, 0o640); err != nil {
		t.Fatal(err)
	}
	f := &File{Path: path}
	for range 3 {
		if err := Check(path); err != nil {
			t.Fatal(err)
		}
		lease, err := f.Lock(context.Background(), 0)
		if err != nil {
			t.Fatal(err)
		}
		if err := lease.Unlock(); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(content) {
		t.Errorf("content after locking = %q, want it untouched: %q", got, content)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o640 {
		t.Errorf("mode after locking = %v, want 0640 untouched", fi.Mode().Perm())
	}
}

// A file that cannot be opened for writing is locked read-only, as flock(1)
// does. The running test binary cannot be opened for writing even by root
// (ETXTBSY), so it stands for a read-only script.
func TestFileLockReadOnlyFile(t *testing.T) {
	paths := map[string]string{}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	paths["running executable"] = exe
	if os.Geteuid() != 0 {
		ro := filepath.Join(t.TempDir(), "script.sh")
		if err := os.WriteFile(ro, []byte("#!/bin/sh\n"), 0o400); err != nil {
			t.Fatal(err)
		}
		paths["mode 0400"] = ro
	}
	for name, path := range paths {
		t.Run(name, func(t *testing.T) {
			if fd, err := unix.Open(path, unix.O_RDWR, 0); err == nil {
				unix.Close(fd)
				t.Skipf("%s can be opened for writing here", path)
			}
			before, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if err := Check(path); err != nil {
				t.Fatalf("Check of a read-only file: %v", err)
			}
			f := &File{Path: path}
			lease, err := f.Lock(context.Background(), 0)
			if err != nil {
				t.Fatalf("Lock of a read-only file: %v", err)
			}
			if _, err := f.Lock(context.Background(), 0); !errors.Is(err, ErrBusy) {
				t.Errorf("second Lock = %v, want ErrBusy", err)
			}
			lease.Unlock()
			after, _ := os.ReadFile(path)
			if string(after) != string(before) {
				t.Error("the read-only file changed")
			}
		})
	}
}

// Paths that exist but are not regular files are refused, by Check and by
// Lock, without blocking and without creating or changing anything at the
// target of a link.
func TestFileRefusesWhatIsNotARegularFile(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "target")
	content := []byte("do not touch\n")
	if err := os.WriteFile(target, content, 0o644); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "nologin")
	fifo := filepath.Join(dir, "fifo")
	if err := unix.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	paths := map[string]string{
		"link to a file": filepath.Join(dir, "link.lock"),
		"dangling link":  filepath.Join(dir, "dangling.lock"),
		"link to a FIFO": filepath.Join(dir, "fifolink.lock"),
		"directory":      filepath.Join(dir, "dir.lock"),
		"FIFO":           fifo,
		"socket":         filepath.Join(dir, "sock"),
	}
	if os.Geteuid() != 0 {
		// Only where a broken build could not change it (see
		// TestFileRefusesDeviceNode for root).
		paths["device (/dev/null)"] = "/dev/null"
	}
	for link, to := range map[string]string{paths["link to a file"]: target, paths["dangling link"]: missing, paths["link to a FIFO"]: fifo} {
		if err := os.Symlink(to, link); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(paths["directory"], 0o700); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("unix", paths["socket"])
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()

	for name, path := range paths {
		t.Run(name, func(t *testing.T) {
			check := []struct {
				what string
				call func() error
			}{
				{"Check", func() error { return Check(path) }},
				{"Lock", func() error {
					l, err := (&File{Path: path}).Lock(context.Background(), 0)
					if err == nil {
						l.Unlock()
					}
					return err
				}},
				// Without the Lstat in front: O_NOFOLLOW, O_NONBLOCK and the
				// fstat must refuse on their own (a link or a FIFO put there
				// between the two).
				{"lockPath", func() error {
					l, err := lockPath(context.Background(), path, 0)
					if err == nil {
						l.Unlock()
					}
					return err
				}},
				{"checkOpen", func() error { return checkOpen(path) }},
			}
			for _, c := range check {
				err := testutil.Bounded(t, c.call)
				if !errors.Is(err, ErrNotRegular) {
					t.Errorf("%s(%s) = %v, want ErrNotRegular", c.what, path, err)
				}
				var pe *fs.PathError
				if !errors.As(err, &pe) || pe.Path != path {
					t.Errorf("%s(%s) = %v, want a *fs.PathError naming the path", c.what, path, err)
				}
			}
		})
	}
	if got, err := os.ReadFile(target); err != nil || string(got) != string(content) {
		t.Errorf("link target = %q, %v; want it untouched: %q", got, err, content)
	}
	if fi, _ := os.Stat(target); fi.Mode().Perm() != 0o644 {
		t.Errorf("link target mode = %v, want 0644 untouched", fi.Mode().Perm())
	}
	if _, err := os.Lstat(missing); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the dangling link's target was created: %v", err)
	}
}

// A device node made in the test's directory, where mknod is permitted.
func TestFileRefusesDeviceNode(t *testing.T) {
	path := filepath.Join(t.TempDir(), "null.lock")
	if err := mknodNull(path); err != nil {
		t.Skipf("cannot make a device node here: %v", err)
	}
	for _, err := range []error{
		testutil.Bounded(t, func() error { return Check(path) }),
		testutil.Bounded(t, func() error { return checkOpen(path) }),
		testutil.Bounded(t, func() error {
			l, err := lockPath(context.Background(), path, 0)
			if err == nil {
				l.Unlock()
			}
			return err
		}),
	} {
		if !errors.Is(err, ErrNotRegular) {
			t.Errorf("device node: %v, want ErrNotRegular", err)
		}
	}
}

// flockN runs flock(1) -n on path: whether it got the lock.
func flockN(t *testing.T, path string) bool {
	t.Helper()
	flock, err := exec.LookPath("flock")
	if err != nil {
		t.Skip("util-linux flock is not installed")
	}
	err = exec.Command(flock, "-n", "-E", "75", path, "true").Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return true
	case errors.As(err, &exit) && exit.ExitCode() == 75:
		return false
	}
	t.Fatalf("flock -n %s: %v", path, err)
	return false
}

// Run after run, flock(1) and another File are shut out while the lock is
// held, and let in once it is released; and nothing is left open between
// runs (each Lock opens the file, each Unlock closes it).
func TestFileLockRunAfterRun(t *testing.T) {
	path := filepath.Join(t.TempDir(), "job.lock")
	f, other := &File{Path: path}, &File{Path: path}
	ctx := context.Background()
	for run := range 3 {
		lease, err := f.Lock(ctx, 0)
		if err != nil {
			t.Fatal(err)
		}
		if !openTo(t, path) {
			t.Errorf("run %d: no descriptor of %s open while the lock is held", run, path)
		}
		if flockN(t, path) {
			t.Fatalf("run %d: flock(1) got the lock while it was held", run)
		}
		if _, err := other.Lock(ctx, 0); !errors.Is(err, ErrBusy) {
			t.Fatalf("run %d: another File's Lock while held = %v, want ErrBusy", run, err)
		}
		if err := lease.Unlock(); err != nil {
			t.Fatal(err)
		}
		if openTo(t, path) {
			t.Errorf("run %d: a descriptor of %s still open after the release", run, path)
		}
		if !flockN(t, path) {
			t.Fatalf("run %d: flock(1) shut out after the release", run)
		}
	}
}

// openTo reports whether this process has a descriptor open on path, or on
// a file deleted from it.
func openTo(t *testing.T, path string) bool {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("cannot list this process's descriptors: %v", err)
	}
	for _, fd := range fds {
		// A file deleted since (replaced) is still open, by this name.
		if link, err := os.Readlink(filepath.Join("/proc/self/fd", fd.Name())); err == nil && (link == path || link == path+" (deleted)") {
			return true
		}
	}
	return false
}

// A lock file deleted, or replaced by another file, while its descriptor is
// kept is let go: the next Lock locks the file at the path, so it excludes
// (and is excluded by) whoever locks the path now.
func TestFileKeptDescriptorFollowsPath(t *testing.T) {
	for _, how := range []string{"deleted", "replaced"} {
		t.Run(how, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "job.lock")
			f := keptFile(t, path)
			ctx := context.Background()
			if err := os.Remove(path); err != nil {
				t.Fatal(err)
			}
			if how == "replaced" {
				if err := os.WriteFile(path+".new", nil, 0o600); err != nil {
					t.Fatal(err)
				}
				if err := os.Rename(path+".new", path); err != nil {
					t.Fatal(err)
				}
			}
			// Another instance locks the file now at the path.
			other, err := (&File{Path: path}).Lock(ctx, 0)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := f.Lock(ctx, 0); !errors.Is(err, ErrBusy) {
				t.Fatalf("Lock on the kept descriptor of a %s file = %v, want ErrBusy: two holders", how, err)
			}
			other.Unlock()
			lease, err := f.Lock(ctx, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer lease.Unlock()
			if flockN(t, path) {
				t.Error("flock(1) got the lock of the file at the path while the kept File held it")
			}
		})
	}
}

// A link put at the path while the descriptor is kept is refused, as at
// start-up: never locked through, never followed.
func TestFileKeptDescriptorRefusesLink(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "job.lock")
	f := keptFile(t, path)
	if err := os.WriteFile(filepath.Join(dir, "target"), []byte("keep"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "target"), path); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Lock(context.Background(), 0); !errors.Is(err, ErrNotRegular) {
		t.Fatalf("Lock with a link at the path = %v, want ErrNotRegular", err)
	}
}

// An executable lock file (--lock "$0") is not kept open between runs: a
// descriptor open for writing would make its exec fail (ETXTBSY) while every
// is idle.
func TestFileExecutableNotKept(t *testing.T) {
	path := filepath.Join(t.TempDir(), "job.sh")
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	f := &File{Path: path}
	lease, err := f.Lock(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := lease.Unlock(); err != nil {
		t.Fatal(err)
	}
	if openTo(t, path) {
		t.Fatal("a descriptor of the executable lock file kept open after the release")
	}
	if err := exec.Command(path).Run(); err != nil {
		t.Errorf("exec of the lock file after the release: %v", err)
	}
}

// A kept descriptor whose file was deleted while every was idle, and is
// still locked by whoever holds the old file, does not make the new file at
// the path look busy: the path decides.
func TestFileKeptDescriptorOldFileHeld(t *testing.T) {
	path := filepath.Join(t.TempDir(), "job.lock")
	f := keptFile(t, path)
	ctx := context.Background()
	// Someone keeps the old file locked (as a long flock(1) would), then
	// the file is deleted.
	old, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(old)
	if err := unix.Flock(old, unix.LOCK_EX|unix.LOCK_NB); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	lease, err := f.Lock(ctx, 0)
	if err != nil {
		t.Fatalf("Lock with the old file held elsewhere and none at the path = %v, want the new file locked", err)
	}
	defer lease.Unlock()
	if flockN(t, path) {
		t.Error("flock(1) got the lock of the file at the path while the kept File held it")
	}
}

// An executable lock file (`every --lock ./job.sh -- ./job.sh`) can be
// executed while it is locked: it is not held open for writing.
func TestFileExecutableRunsWhileLocked(t *testing.T) {
	path := filepath.Join(t.TempDir(), "job.sh")
	if err := os.WriteFile(path, []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	lease, err := (&File{Path: path}).Lock(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	defer lease.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if out, err := exec.CommandContext(ctx, path).CombinedOutput(); err != nil {
		t.Fatalf("running the locked script: %v\n%s", err, out)
	}
	if flockN(t, path) {
		t.Error("flock(1) got the lock of the script while File held it")
	}
}

// keptFile returns a File for path that has locked and unlocked it once:
// idle, its descriptor kept.
func keptFile(t *testing.T, path string) *File {
	t.Helper()
	f := &File{Path: path}
	lease, err := f.Lock(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	lease.Unlock()
	return f
}

// A lock file replaced between its lock and the check of the path is let
// go, and the file now at the path locked instead; replaced at each try, it
// is an error. Either way the lock is never left on a file no longer at the
// path.
func TestFileReplacedWhileLocking(t *testing.T) {
	path := filepath.Join(t.TempDir(), "job.lock")
	replace := func(string) {
		if err := os.WriteFile(path+".new", nil, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(path+".new", path); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { lockedHook = nil })

	replaced := 0
	lockedHook = func(p string) {
		if replaced == 0 {
			replace(p)
		}
		replaced++
	}
	lease, err := (&File{Path: path}).Lock(context.Background(), 0)
	if err != nil {
		t.Fatalf("Lock with the file replaced once = %v, want the new file locked", err)
	}
	if replaced != 2 {
		t.Errorf("locked %d times, want 2: the replaced file, then the new one", replaced)
	}
	if flockN(t, path) {
		t.Error("flock(1) got the lock of the file at the path: the lock was left on the replaced one")
	}
	lease.Unlock()

	lockedHook = replace
	if _, err := (&File{Path: path}).Lock(context.Background(), 0); err == nil || errors.Is(err, ErrBusy) {
		t.Fatalf("Lock with the file replaced at each try = %v, want an error", err)
	}
	if openTo(t, path) {
		t.Error("a descriptor left open after a Lock that failed: a replaced file's lock was kept")
	}
}

// BenchmarkFileLock is one run's lock and unlock of a lock file, as the
// loop takes it.
func BenchmarkFileLock(b *testing.B) {
	f := &File{Path: filepath.Join(b.TempDir(), "job.lock")}
	ctx := context.Background()
	for b.Loop() {
		lease, err := f.Lock(ctx, 0)
		if err != nil {
			b.Fatal(err)
		}
		if err := lease.Unlock(); err != nil {
			b.Fatal(err)
		}
	}
}
