package state

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// countSyncs counts the syncs of files and of directories for the test,
// by what each descriptor names.
func countSyncs(t *testing.T) (files, dirs *[]string) {
	files, dirs = new([]string), new([]string)
	was := fsync
	fsync = func(fd int) error {
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err != nil {
			t.Fatal(err)
		}
		name, _ := os.Readlink("/proc/self/fd/" + itoa(fd))
		if st.Mode&unix.S_IFMT == unix.S_IFDIR {
			*dirs = append(*dirs, name)
		} else {
			*files = append(*files, name)
		}
		return was(fd)
	}
	t.Cleanup(func() { fsync = was })
	return files, dirs
}

func itoa(n int) string { return strconv.Itoa(n) }

// SPEC 9 [durability]: Save is atomic, never synced; Sync puts the data on
// disk before the directory, and links the record as its synced copy.
func TestFileSaveSyncsNothingSyncDoes(t *testing.T) {
	files, dirs := countSyncs(t)
	dir := t.TempDir()
	f := File{Path: filepath.Join(dir, "job.json")}
	ctx := context.Background()
	r := sample()
	for range 3 {
		if err := f.Save(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	if len(*files)+len(*dirs) != 0 {
		t.Fatalf("Save synced %v %v, want nothing", *files, *dirs)
	}
	got, err := f.Sync()
	if err != nil || got.Runs != r.Runs {
		t.Fatalf("Sync = %+v, %v", got, err)
	}
	if len(*files) != 1 || len(*dirs) != 1 || *dirs == nil || (*dirs)[0] != dir {
		t.Fatalf("Sync synced files %v, directories %v; want the record's data, then %s", *files, *dirs, dir)
	}
	var a, b unix.Stat_t
	if err := unix.Stat(f.Path, &a); err != nil {
		t.Fatal(err)
	}
	if err := unix.Stat(f.SyncedPath(), &b); err != nil || a.Ino != b.Ino {
		t.Fatalf("the synced copy %s is not the record (%v)", f.SyncedPath(), err)
	}
	if rec, err := f.Load(ctx); err != nil || !rec.Durable {
		t.Fatalf("Load of the synced record: %+v, %v; want it Durable", rec, err)
	}
	r.Runs++
	if err := f.Save(ctx, r); err != nil {
		t.Fatal(err)
	}
	if rec, err := f.Load(ctx); err != nil || rec.Durable || rec.Runs != r.Runs {
		t.Fatalf("Load of a record saved since: %+v, %v; want it not Durable", rec, err)
	}
}

// A power loss can leave a record renamed into place but never synced empty
// (XFS) or torn: Load and Read go on from the synced copy; the file is set
// aside.
func TestFileLoadAfterPowerLossRestoresSyncedCopy(t *testing.T) {
	for _, tt := range []struct {
		name   string
		damage func(path string, b []byte) []byte
	}{
		{"empty", func(string, []byte) []byte { return nil }},
		{"torn", func(_ string, b []byte) []byte { return b[:len(b)/2] }},
		{"zeros", func(_ string, b []byte) []byte { return make([]byte, len(b)) }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			f := File{Path: filepath.Join(dir, "job.json")}
			ctx := context.Background()
			r := sample()
			if err := f.Save(ctx, r); err != nil {
				t.Fatal(err)
			}
			if _, err := f.Sync(); err != nil {
				t.Fatal(err)
			}
			r.Runs, r.Running = 43, true
			if err := f.Save(ctx, r); err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(f.Path)
			if err != nil {
				t.Fatal(err)
			}
			// What the disk may hold of the unsynced file after the power loss.
			if err := os.WriteFile(f.Path, tt.damage(f.Path, b), 0o600); err != nil {
				t.Fatal(err)
			}
			if rec, err := f.Read(time.Now()); err != nil || rec.Runs != 42 {
				t.Fatalf("Read = %+v, %v; want the synced copy, 42 runs", rec, err)
			}
			rec, err := f.Load(ctx)
			var corrupt *CorruptError
			if !errors.As(err, &corrupt) || corrupt.Restored != f.SyncedPath() || rec == nil || rec.Runs != 42 || !rec.Durable {
				t.Fatalf("Load = %+v, %v; want the synced copy's record (42 runs, Durable) with a CorruptError naming it", rec, err)
			}
			if _, err := os.Stat(corrupt.MovedTo); err != nil {
				t.Fatalf("the file left by the power loss was not set aside: %v", err)
			}
		})
	}
}

// A record removed by hand starts the job afresh: its synced copy goes too,
// and never brings it back.
func TestFileRemovedRecordDropsSyncedCopy(t *testing.T) {
	dir := t.TempDir()
	f := File{Path: filepath.Join(dir, "job.json")}
	ctx := context.Background()
	if err := f.Save(ctx, sample()); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(f.Path); err != nil {
		t.Fatal(err)
	}
	if rec, err := f.Load(ctx); rec != nil || err != nil {
		t.Fatalf("Load = %+v, %v; want none", rec, err)
	}
	if _, err := os.Lstat(f.SyncedPath()); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the synced copy is still there: %v", err)
	}
	if err := os.WriteFile(f.Path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if rec, err := f.Load(ctx); rec != nil {
		t.Fatalf("Load of an empty record with no synced copy = %+v, %v; want none", rec, err)
	}
}

// A record written under another boot id was read from the disk: Durable.
func TestFileLoadRecordOfAnotherBootIsDurable(t *testing.T) {
	if BootID() == "" {
		t.Skip("no boot id on this system")
	}
	dir := t.TempDir()
	f := File{Path: filepath.Join(dir, "job.json")}
	ctx := context.Background()
	r := sample()
	r.Boot = BootID()
	if err := f.Save(ctx, r); err != nil {
		t.Fatal(err)
	}
	if rec, _ := f.Load(ctx); rec.Durable {
		t.Fatalf("a record of this boot, never synced, is Durable")
	}
	r.Boot = "0b8d3a4e-0000-4000-8000-000000000000"
	if err := f.Save(ctx, r); err != nil {
		t.Fatal(err)
	}
	if rec, _ := f.Load(ctx); !rec.Durable || rec.Boot != r.Boot {
		t.Fatalf("a record of another boot is not Durable: %+v", rec)
	}
}

// asAnotherProcess makes f's process forget what it wrote and marked at
// f's path: its next Load is another process's.
func asAnotherProcess(f File) {
	_ = f.Close()
	writers.Delete(f.Path)
}

// MarkBehind marks the record, and nothing else: a Load and a Read by
// another process then say Behind (its writer handed out numbers past its
// runs), the record itself unchanged; the marking process's own do not
// (it knows its numbers); the next Save puts an unmarked record in place.
func TestFileMarkBehind(t *testing.T) {
	f, _ := newFile(t)
	ctx := context.Background()
	r := sample()
	r.Reserved = r.Runs + 6
	if err := f.Save(ctx, r); err != nil {
		t.Fatal(err)
	}
	load := func() *Record {
		t.Helper()
		got, err := f.Load(ctx)
		if err != nil || got == nil {
			t.Fatalf("Load = %+v, %v", got, err)
		}
		return got
	}
	if got := load(); got.Behind {
		t.Fatal("a record just written reads as behind its writer")
	}
	before, err := os.ReadFile(f.Path)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 { // a second mark changes nothing
		if err := f.MarkBehind(); err != nil {
			t.Fatal(err)
		}
	}
	if got := load(); got.Behind || got.Runs != r.Runs {
		t.Fatalf("the marking process's Load after MarkBehind = %+v, want the record, not Behind", got)
	}
	asAnotherProcess(f)
	if got := load(); !got.Behind || got.Runs != r.Runs || got.Reserved != r.Reserved {
		t.Fatalf("another process's Load after MarkBehind = %+v, want the record, Behind", got)
	}
	if got, err := f.Read(time.Now()); err != nil || !got.Behind {
		t.Fatalf("Read after MarkBehind = %+v, %v; want Behind", got, err)
	}
	if after, err := os.ReadFile(f.Path); err != nil || string(after) != string(before) {
		t.Fatalf("MarkBehind changed the record:\n%s\nwas\n%s (%v)", after, before, err)
	}
	if fi, err := os.Stat(f.Path); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("marked record's mode %v (%v), want 0700", fi.Mode(), err)
	}
	if _, err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	if got := load(); !got.Behind || !got.Durable {
		t.Fatalf("Load after a Sync of a marked record = %+v, want Behind and Durable", got)
	}
	if err := f.Save(ctx, r); err != nil {
		t.Fatal(err)
	}
	if got := load(); got.Behind {
		t.Fatal("a record written after the mark still reads as behind")
	}
}

// A record replaced while Sync syncs it (another instance wrote it, under
// the lock, while this one's Sync needs none) is no error: Sync syncs the
// new one. Only a record replaced at each try is ErrReplaced.
func TestFileSyncOfARecordReplacedMeanwhile(t *testing.T) {
	for _, tt := range []struct {
		name     string
		replaces int
		err      error
	}{
		{"once", 1, nil},
		{"twice", 2, nil},
		{"at each try", 100, ErrReplaced},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f, _ := newFile(t)
			other := File{Path: f.Path}
			ctx := context.Background()
			r := sample()
			if err := f.Save(ctx, r); err != nil {
				t.Fatal(err)
			}
			was := fsync
			t.Cleanup(func() { fsync = was })
			replaced := 0
			fsync = func(fd int) error {
				var st unix.Stat_t
				if err := unix.Fstat(fd, &st); err != nil {
					return err
				}
				if st.Mode&unix.S_IFMT == unix.S_IFREG && replaced < tt.replaces {
					// Another writer's record, put in place in the middle
					// of the sync.
					replaced++
					n := *r
					n.Runs += replaced
					if err := other.Save(ctx, &n); err != nil {
						t.Error(err)
					}
				}
				return was(fd)
			}
			got, err := f.Sync()
			if !errors.Is(err, tt.err) {
				t.Fatalf("Sync = %+v, %v; want error %v", got, err, tt.err)
			}
			if tt.err == nil && got.Runs != r.Runs+replaced {
				t.Fatalf("Sync synced runs %d, want the newest record's %d", got.Runs, r.Runs+replaced)
			}
		})
	}
}
