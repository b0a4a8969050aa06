package state

import (
	"context"
	"os"
	"reflect"
	"testing"
	"time"
)

// TestFileLoadKnownIsWhatAReadGives checks that a Load after this
// process's own Save, which skips the read, returns what reading the file
// gives: times with a monotonic reading and in another zone, the command.
func TestFileLoadKnownIsWhatAReadGives(t *testing.T) {
	f, _ := newFile(t)
	ctx := context.Background()
	r := sample()
	r.LastRun = time.Now() // a monotonic reading
	r.LastEnd = r.LastRun.In(time.FixedZone("X", 3600)).Add(time.Millisecond)
	r.Running, r.Boot, r.Reserved = true, BootID(), 50
	if err := f.Save(ctx, r); err != nil {
		t.Fatal(err)
	}
	got, err := f.Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(f.Path)
	if err != nil {
		t.Fatal(err)
	}
	want, err := Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Load after Save = %+v\nwant what a read gives: %+v", got, want)
	}
	got.Command[0] = "changed"
	if again, _ := f.Load(ctx); again.Command[0] == "changed" {
		t.Error("a Load's record shares its command with the next Load's")
	}
}

// TestFileLoadReadsAChangedRecord checks that a record changed behind the
// writer's back is read, not taken from what the writer knows: written in
// place, replaced, linked by a Sync.
func TestFileLoadReadsAChangedRecord(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name   string
		change func(t *testing.T, f File, r *Record)
		check  func(t *testing.T, got *Record)
	}{
		{"written in place", func(t *testing.T, f File, r *Record) {
			r.Runs = 12345
			b, _ := Encode(r)
			if err := os.WriteFile(f.Path, b, 0o600); err != nil {
				t.Fatal(err)
			}
		}, func(t *testing.T, got *Record) {
			if got.Runs != 12345 {
				t.Errorf("runs %d, want 12345 (the record written in place)", got.Runs)
			}
		}},
		{"replaced", func(t *testing.T, f File, r *Record) {
			r.Runs = 7
			b, _ := Encode(r)
			tmp := f.Path + ".other"
			if err := os.WriteFile(tmp, b, 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(tmp, f.Path); err != nil {
				t.Fatal(err)
			}
		}, func(t *testing.T, got *Record) {
			if got.Runs != 7 {
				t.Errorf("runs %d, want 7 (the record renamed over it)", got.Runs)
			}
		}},
		{"synced", func(t *testing.T, f File, _ *Record) {
			if _, err := f.Sync(); err != nil {
				t.Fatal(err)
			}
		}, func(t *testing.T, got *Record) {
			if !got.Durable {
				t.Error("the record synced loads as not durable")
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, _ := newFile(t)
			r := sample()
			if err := f.Save(ctx, r); err != nil {
				t.Fatal(err)
			}
			tc.change(t, f, r)
			got, err := f.Load(ctx)
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, got)
		})
	}
}
