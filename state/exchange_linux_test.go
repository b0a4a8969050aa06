package state

import (
	"context"
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

// TestFileSaveExchangesTheRecord checks that a Save puts its file in place
// with an exchange: the record it replaces is not freed on the path to exec
// (nor flushed to disk first, as ext4 does for a rename over a file) but
// left at a temporary name for Prepare to remove, and a reader that opened
// the old record reads it whole.
func TestFileSaveExchangesTheRecord(t *testing.T) {
	f, _ := newFile(t)
	ctx := context.Background()
	r := sample()
	if err := f.Save(ctx, r); err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(f.Path)
	if err != nil {
		t.Fatal(err)
	}
	old, err := os.Open(f.Path)
	if err != nil {
		t.Fatal(err)
	}
	defer old.Close()
	r.Runs++
	if err := f.Save(ctx, r); err != nil {
		t.Fatal(err)
	}
	var st unix.Stat_t
	if err := unix.Fstat(int(old.Fd()), &st); err != nil {
		t.Fatal(err)
	}
	if st.Nlink != 1 {
		t.Fatalf("the record replaced has %d links after the Save, want 1 (exchanged to a temporary name, not renamed over)", st.Nlink)
	}
	got := make([]byte, len(want)+10)
	n, _ := old.ReadAt(got, 0)
	if string(got[:n]) != string(want) {
		t.Fatalf("the old record reads %q after the Save, want it whole: %q", got[:n], want)
	}
	f.Prepare()
	if err := unix.Fstat(int(old.Fd()), &st); err != nil {
		t.Fatal(err)
	}
	if st.Nlink != 0 {
		t.Errorf("the record replaced has %d links after Prepare, want 0 (removed)", st.Nlink)
	}
	if rec, err := f.Load(ctx); err != nil || rec.Runs != r.Runs {
		t.Errorf("Load = %+v, %v; want runs %d", rec, err, r.Runs)
	}
}

// TestFileSaveWithoutExchange checks the writes of a filesystem that cannot
// exchange two files: a rename over the record, nothing left behind.
func TestFileSaveWithoutExchange(t *testing.T) {
	f, dir := newFile(t)
	writerOf(f.Path).noExchange = true
	ctx := context.Background()
	r := sample()
	for range 3 {
		r.Runs++
		if err := f.Save(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	if rec, err := f.Load(ctx); err != nil || rec.Runs != r.Runs {
		t.Errorf("Load = %+v, %v; want runs %d", rec, err, r.Runs)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("directory holds %d files after three renaming saves, want only the record", len(entries))
	}
}

// TestFileSaveBurstBoundsReplaced checks that writes with no Prepare between
// them leave at most maxKept replaced records behind.
func TestFileSaveBurstBoundsReplaced(t *testing.T) {
	f, dir := newFile(t)
	ctx := context.Background()
	r := sample()
	for range 10 {
		r.Runs++
		if err := f.Save(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1+maxKept {
		t.Errorf("directory holds %d files after ten saves, want the record and %d replaced", len(entries), maxKept)
	}
}
