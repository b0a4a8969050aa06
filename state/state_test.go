package state

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"
)

func sample() *Record {
	at := func(s string) time.Time {
		t, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			panic(err)
		}
		return t
	}
	return &Record{
		Version:             Version,
		Name:                "sync-ledger.sh-3f2a9c1e",
		Command:             []string{"./sync-ledger.sh", "--full"},
		Schedule:            "90s",
		Anchor:              at("2026-11-30T10:00:00Z"),
		LastSlot:            at("2026-11-30T10:31:30Z"),
		LastRun:             at("2026-11-30T10:31:30.000412Z"),
		LastEnd:             at("2026-11-30T10:31:31.25Z"),
		LastResult:          "success",
		LastAttempts:        1,
		LastSuccess:         at("2026-11-30T10:31:30.000412Z"),
		Runs:                42,
		Failures:            3,
		Skipped:             1,
		Host:                "web-1",
		PID:                 4242,
		ConsecutiveFailures: 0,
	}
}

func TestEncodeDecodeRoundTrip(t *testing.T) {
	r := sample()
	b, err := Encode(r)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, r) {
		t.Fatalf("round trip:\n got %+v\nwant %+v", got, r)
	}
	// The SPEC's field names, in UTC.
	for _, want := range []string{`"version": 1`, `"anchor": "2026-11-30T10:00:00Z"`, `"last_slot": "2026-11-30T10:31:30Z"`,
		`"last_run": "2026-11-30T10:31:30.000412Z"`, `"running": false`, `"last_result": "success"`,
		`"last_exit_code": 0`, `"consecutive_failures": 0`, `"runs": 42`, `"host": "web-1"`, `"pid": 4242`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("encoded record lacks %s:\n%s", want, b)
		}
	}
}

func TestEncodeWritesUTC(t *testing.T) {
	r := sample()
	r.Anchor = r.Anchor.In(time.FixedZone("X", 5*3600))
	r.LastRun = time.Now() // with a monotonic reading, which must not leak
	b, err := Encode(r)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"anchor": "2026-11-30T10:00:00Z"`) || strings.Contains(string(b), "+05:00") {
		t.Fatalf("times not in UTC:\n%s", b)
	}
}

func TestDecodeRejects(t *testing.T) {
	for _, tt := range []struct{ name, in string }{
		{"empty", ""},
		{"torn", `{"version": 1, "name": "x", "anch`},
		{"not json", "hello"},
		{"other version", `{"version": 2, "anchor": "2026-11-30T10:00:00Z"}`},
		{"no anchor", `{"version": 1, "name": "x"}`},
		{"bad time", `{"version": 1, "anchor": "yesterday"}`},
	} {
		if r, err := Decode([]byte(tt.in)); err == nil {
			t.Errorf("%s: Decode(%q) = %+v, want an error", tt.name, tt.in, r)
		}
	}
}

func TestFileSaveLoad(t *testing.T) {
	dir := t.TempDir()
	f := File{Path: filepath.Join(dir, "job.json")}
	ctx := context.Background()
	if r, err := f.Load(ctx); r != nil || err != nil {
		t.Fatalf("Load of no file = %v, %v; want nil, nil", r, err)
	}
	r := sample()
	if err := f.Save(ctx, r); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(f.Path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", fi.Mode().Perm())
	}
	// A run's start (running, saved without the directory's fsync) reads back
	// like any other.
	r.Runs, r.Running = 43, true
	if err := f.Save(ctx, r); err != nil {
		t.Fatal(err)
	}
	got, err := f.Load(ctx)
	if err != nil || got.Runs != 43 || !got.Running {
		t.Fatalf("Load = %+v, %v; want runs 43, running", got, err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("directory holds %d files after two saves, want only the record", len(entries))
	}
}

func TestFileLoadCorrupt(t *testing.T) {
	dir := t.TempDir()
	f := File{Path: filepath.Join(dir, "job.json")}
	if err := os.WriteFile(f.Path, []byte(`{"version": 1, "na`), 0o600); err != nil {
		t.Fatal(err)
	}
	before := time.Now().Unix()
	r, err := f.Load(context.Background())
	var corrupt *CorruptError
	if r != nil || !errors.As(err, &corrupt) {
		t.Fatalf("Load = %v, %v; want nil and a CorruptError", r, err)
	}
	suffix, ok := strings.CutPrefix(corrupt.MovedTo, f.Path+".corrupt-")
	if n, err := strconv.ParseInt(suffix, 10, 64); !ok || err != nil || n < before || n > time.Now().Unix() {
		t.Fatalf("moved to %q, want %s.corrupt-<unix seconds now>", corrupt.MovedTo, f.Path)
	}
	if b, err := os.ReadFile(corrupt.MovedTo); err != nil || string(b) != `{"version": 1, "na` {
		t.Errorf("the corrupt file was not kept as it was: %q, %v", b, err)
	}
	if _, err := os.Stat(f.Path); !os.IsNotExist(err) {
		t.Errorf("the corrupt file is still in place: %v", err)
	}
	if !strings.Contains(err.Error(), f.Path) || !strings.Contains(err.Error(), corrupt.MovedTo) {
		t.Errorf("error %q does not name both files", err)
	}
}

func TestCheckWritableRemovesLeftoversOfDeadWriters(t *testing.T) {
	dir := t.TempDir()
	f := File{Path: filepath.Join(dir, "job.json")}
	// A pid that cannot be alive (above pid_max), and one that is (ours: its
	// own leftover from a failed write), and one of a live other process (1).
	dead := filepath.Join(dir, ".job.json.tmp-99999999-123")
	own := filepath.Join(dir, ".job.json.tmp-"+strconv.Itoa(os.Getpid())+"-456")
	live := filepath.Join(dir, ".job.json.tmp-1-789")
	other := filepath.Join(dir, ".other.json.tmp-99999999-1")
	for _, p := range []string{dead, own, live, other} {
		if err := os.WriteFile(p, []byte("{"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.CheckWritable(); err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]bool{dead: false, own: false, live: true, other: true} {
		_, err := os.Stat(p)
		if exists := err == nil; exists != want {
			t.Errorf("%s exists = %v, want %v", filepath.Base(p), exists, want)
		}
	}
}

func TestFileSaveFailureKeepsOldRecord(t *testing.T) {
	dir := t.TempDir()
	f := File{Path: filepath.Join(dir, "job.json")}
	ctx := context.Background()
	if err := f.Save(ctx, sample()); err != nil {
		t.Fatal(err)
	}
	// A directory where the record goes: the rename fails, the write is
	// reported, nothing is left behind.
	g := File{Path: filepath.Join(dir, "sub")}
	if err := os.Mkdir(g.Path, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := g.Save(ctx, sample()); err == nil {
		t.Fatal("Save over a directory succeeded")
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 2 {
		t.Errorf("directory holds %d entries after a failed save, want 2", len(entries))
	}
	if r, err := f.Load(ctx); err != nil || r.Runs != 42 {
		t.Errorf("the other record changed: %+v, %v", r, err)
	}
}

func TestCheckWritable(t *testing.T) {
	dir := t.TempDir()
	f := File{Path: filepath.Join(dir, "a", "b", "job.json")}
	if err := f.CheckWritable(); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(filepath.Join(dir, "a", "b"))
	if err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("state directory %v, %v; want mode 0700", fi, err)
	}
	if entries, _ := os.ReadDir(filepath.Dir(f.Path)); len(entries) != 0 {
		t.Errorf("the check left %d files", len(entries))
	}
	blocker := filepath.Join(dir, "file")
	if err := os.WriteFile(blocker, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := (File{Path: filepath.Join(blocker, "job.json")}).CheckWritable(); err == nil {
		t.Error("a state directory under a regular file passed the check")
	}
}
