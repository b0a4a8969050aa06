package lock

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

func TestFileLockExcludes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "job.lock")
	a := File{Path: path, Host: "web-1"}
	ctx := context.Background()
	lease, err := a.Lock(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	// The holder is named while the run starts.
	for deadline := time.Now().Add(10 * time.Second); ReadHolder(path) == (Holder{}); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the holder was never written")
		}
	}
	// flock(2) locks belong to the open file description: a second Lock in
	// the same process is excluded, as another process would be.
	_, err = a.Lock(ctx, 0)
	var busy *BusyError
	if !errors.As(err, &busy) || !errors.Is(err, ErrBusy) {
		t.Fatalf("second Lock = %v, want a BusyError", err)
	}
	if busy.Holder != (Holder{PID: os.Getpid(), Host: "web-1"}) {
		t.Errorf("holder %+v, want this pid on web-1", busy.Holder)
	}
	if err := lease.Unlock(); err != nil {
		t.Fatal(err)
	}
	if h := ReadHolder(path); h != (Holder{}) {
		t.Errorf("holder %+v after unlock, want none", h)
	}
	lease, err = a.Lock(ctx, 0)
	if err != nil {
		t.Fatalf("Lock after Unlock: %v", err)
	}
	lease.Unlock()
}

func TestFileLockWaits(t *testing.T) {
	path := filepath.Join(t.TempDir(), "job.lock")
	f := File{Path: path}
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
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if _, err := os.Stat(ready); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("flock(1) did not take the lock")
		}
	}
	_, err = File{Path: path}.Lock(context.Background(), 0)
	var busy *BusyError
	if !errors.As(err, &busy) {
		t.Fatalf("Lock while flock(1) holds it = %v, want busy", err)
	}
	if busy.Holder != (Holder{}) {
		t.Errorf("holder %+v, want unknown: flock(1) names nobody", busy.Holder)
	}
}

func TestReadHolder(t *testing.T) {
	path := filepath.Join(t.TempDir(), "job.lock")
	for content, want := range map[string]Holder{
		"":                 {},
		"garbage":          {},
		"4242 web-1\n":     {PID: 4242, Host: "web-1"},
		"17\n":             {PID: 17},
		"-":                {},
		strconv.Itoa(9999): {PID: 9999},
	} {
		os.WriteFile(path, []byte(content), 0o600)
		if got := ReadHolder(path); got != want {
			t.Errorf("ReadHolder(%q) = %+v, want %+v", content, got, want)
		}
	}
	if got := ReadHolder(filepath.Join(t.TempDir(), "none")); got != (Holder{}) {
		t.Errorf("ReadHolder of a missing file = %+v", got)
	}
	if s := (Holder{PID: 1, Host: "h"}).String(); s != "pid 1 on h" {
		t.Errorf("Holder.String() = %q", s)
	}
}
