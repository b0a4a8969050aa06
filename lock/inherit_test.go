package lock

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// Inherited gives the very open file that holds the lock: another open of
// the path cannot take the lock while it is open, even once the lease's own
// descriptor is closed, and can after Unlock (LOCK_UN frees the open file's
// lock, whoever else has it open). It fails on a gofrs/flock upgrade that
// renames or retypes the field it reads.
func TestInheritedIsTheLockedFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "job.lock")
	lease, err := (&File{Path: path}).Lock(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	f := Inherited(lease)
	if f == nil {
		t.Fatal("Inherited of a file lease is nil: gofrs/flock no longer keeps its *os.File in fh")
	}
	// What a command holds: a descriptor of its own on the same open file.
	held, err := unix.Dup(int(f.Fd()))
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(held)
	// flock(2) on the open file that holds the lock succeeds (it holds it
	// already); on any other open of the path it would fail.
	if err := unix.Flock(held, unix.LOCK_EX|unix.LOCK_NB); err != nil {
		t.Fatalf("flock through the inherited file = %v: it is not the open file that holds the lock", err)
	}
	other, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if err := unix.Flock(int(other.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != unix.EWOULDBLOCK {
		t.Fatalf("flock of another open file while the lease holds it = %v, want EWOULDBLOCK", err)
	}
	if err := lease.Unlock(); err != nil {
		t.Fatal(err)
	}
	if err := unix.Flock(int(other.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		t.Fatalf("flock after Unlock, the inherited descriptor still open = %v, want the lock free", err)
	}
}

// Leases that hold no file give none.
func TestInheritedNone(t *testing.T) {
	var l Lease
	if Inherited(l) != nil {
		t.Error("Inherited(nil) is not nil")
	}
}
