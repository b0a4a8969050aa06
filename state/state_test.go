package state

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"math"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/everycli/every/internal/testutil"
)

// newFile returns a File for a record in a directory of its own, dir,
// closed when the test ends.
func newFile(t *testing.T) (f File, dir string) {
	t.Helper()
	dir = t.TempDir()
	f = File{Path: filepath.Join(dir, "job.json")}
	t.Cleanup(func() { f.Close() })
	return f, dir
}

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
		{"before 1970", `{"version": 1, "anchor": "1969-12-31T23:59:59Z"}`},
		{"negative runs", `{"version": 1, "anchor": "2026-11-30T10:00:00Z", "runs": -9}`},
		{"overflowing runs", `{"version": 1, "anchor": "2026-11-30T10:00:00Z", "runs": 9223372036854775807}`},
		{"runs beyond an int64", `{"version": 1, "anchor": "2026-11-30T10:00:00Z", "runs": 92233720368547758070}`},
		{"negative pid", `{"version": 1, "anchor": "2026-11-30T10:00:00Z", "pid": -1}`},
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
	// The record replaced waits at a temporary name for the next Prepare,
	// off the path to exec; Close removes it too.
	f.Prepare()
	if entries, _ := os.ReadDir(dir); len(entries) != 2 {
		t.Errorf("directory holds %d files after two saves and a Prepare, want the record and the next temporary file", len(entries))
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("directory holds %d files after two saves and Close, want only the record", len(entries))
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
	own, ns := strconv.Itoa(os.Getpid()), selfNS()
	if ns == unknownNS {
		t.Skip("this process's PID namespace cannot be named here")
	}
	inode, err := strconv.ParseUint(strings.Split(ns, ".")[0], 36, 64)
	if err != nil {
		t.Fatal(err)
	}
	otherBoot, ok := nsToken(inode, "01234567-89ab-cdef-0123-456789abcdef")
	if !ok || otherBoot == ns {
		t.Fatalf("this namespace on another boot is named %q (%v), as here: %q", otherBoot, ok, ns)
	}
	// Writers: a pid that cannot be alive (above pid_max), ours (with another
	// tag: a process before this one; with ours: this one's), and a live
	// other process (1). In this PID namespace a dead writer's file goes at
	// once, as does an earlier process's of our pid; a live writer's stays
	// for a minute. In another namespace, or an unknown one, or with the
	// names of before namespaces were named, pids mean nothing: a file just
	// made stays (a write in flight), one a second old goes if its pid looks
	// dead or ours here. A namespace is named with its kernel's boot: the
	// same namespace number on another host is another namespace.
	now, second, minute := time.Time{}, time.Now().Add(-3*time.Second), time.Now().Add(-2*time.Minute)
	files := []struct {
		name string
		age  time.Time
		kept bool
	}{
		{".job.json.tmp-99999999-" + ns + "-t-1", now, false},
		{".job.json.tmp-" + own + "-" + ns + "-t-2", now, false},
		{".job.json.tmp-" + own + "-" + ns + "-" + selfTag + "-999999", second, true},
		{".job.json.tmp-1-" + ns + "-t-4", second, true},
		{".job.json.tmp-1-" + ns + "-t-5", minute, false},
		{".job.json.tmp-99999999-zz-t-6", now, true},
		{".job.json.tmp-99999999-" + otherBoot + "-t-16", now, true}, // this namespace's number on another host
		{".job.json.tmp-99999999-" + otherBoot + "-t-17", second, false},
		{".job.json.tmp-99999999-zz-t-7", second, false},
		{".job.json.tmp-" + own + "-zz-t-8", now, true},
		{".job.json.tmp-1-zz-t-9", second, true},
		{".job.json.tmp-99999999-x-t-10", now, true},
		{".job.json.tmp-99999999-x-11", now, true}, // named before namespaces were
		{".job.json.tmp-99999999-x-12", second, false},
		{".job.json.tmp-" + own + "-y-13", second, false},
		{".job.json.tmp-1-y-14", minute, false},
		{".other.json.tmp-99999999-" + ns + "-t-1", minute, true},
	}
	for _, tf := range files {
		p := filepath.Join(dir, tf.name)
		if err := os.WriteFile(p, []byte("{"), 0o600); err != nil {
			t.Fatal(err)
		}
		if tf.age.IsZero() {
			continue
		}
		if err := os.Chtimes(p, tf.age, tf.age); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.CheckWritable(); err != nil {
		t.Fatal(err)
	}
	for _, tf := range files {
		_, err := os.Stat(filepath.Join(dir, tf.name))
		if exists := err == nil; exists != tf.kept {
			t.Errorf("%s exists = %v, want %v", tf.name, exists, tf.kept)
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

// The jobs of one directory (every jobs) probe it once, not once each: a
// file made and removed per job would cost every later create in it.
func TestCheckWritableProbesADirectoryOnce(t *testing.T) {
	dir := t.TempDir()
	if err := (File{Path: filepath.Join(dir, "a.json")}).CheckWritable(); err != nil {
		t.Fatal(err)
	}
	listings.mu.Lock()
	first, ok := listings.probed[dir]
	listings.mu.Unlock()
	if !ok {
		t.Fatal("the directory was not probed")
	}
	if err := (File{Path: filepath.Join(dir, "b.json")}).CheckWritable(); err != nil {
		t.Fatal(err)
	}
	listings.mu.Lock()
	again := listings.probed[dir]
	listings.probed[dir] = first.Add(-listingAge) // an old probe
	listings.mu.Unlock()
	if !again.Equal(first) {
		t.Errorf("the second job of the directory probed it again (%v, then %v)", first, again)
	}
	if err := (File{Path: filepath.Join(dir, "c.json")}).CheckWritable(); err != nil {
		t.Fatal(err)
	}
	listings.mu.Lock()
	last := listings.probed[dir]
	listings.mu.Unlock()
	if !last.After(first) {
		t.Errorf("a probe %v old was taken again (%v)", listingAge, last)
	}
}

// Only a record, or what is left of one, is replaced by a record: a file of
// another kind at the state path is refused, byte-identical, and the check
// says so (ErrNotRecord).
func TestCheckWritableRefusesWhatIsNotARecord(t *testing.T) {
	written, err := Encode(sample())
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		content string
		record  bool
	}{
		{"as every writes it", string(written), true},
		{"cut short", `{"version": 1, "name": "j", "anch`, true},
		{"corrupt, its keys sorted", `{"anchor": "2900-01-01T00:00:00Z", "runs": -9, "version": 1}`, true},
		{"white space first", "\n\t {\"version\": 1}", true},
		{"empty (a lock file, a marker)", "", false},
		{"a script", "#!/bin/sh\necho backup\n", false},
		{"metrics", "# HELP every_runs_total Runs started.\n", false},
		{"a JSON array", `[{"version": 1}]`, false},
		{"text", "root:x:0:0:root:/root:/bin/sh\n", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "job.json")
			if err := os.WriteFile(path, []byte(tc.content), 0o600); err != nil {
				t.Fatal(err)
			}
			err := File{Path: path}.CheckWritable()
			switch {
			case tc.record && err != nil:
				t.Errorf("CheckWritable of %q: %v, want nil", tc.content, err)
			case !tc.record && !errors.Is(err, ErrNotRecord):
				t.Errorf("CheckWritable of %q: %v, want ErrNotRecord", tc.content, err)
			}
			if b, _ := os.ReadFile(path); string(b) != tc.content {
				t.Errorf("the file changed: %q", b)
			}
		})
	}
}

func TestSane(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	const period = time.Hour
	for _, tt := range []struct {
		name   string
		change func(*Record)
		period time.Duration
		ok     bool
	}{
		{"as written", func(*Record) {}, period, true},
		// A time ahead of now is a clock set back, or a writer's clock that
		// runs ahead: not corruption (SPEC 9), however far.
		{"last_slot one period ahead", func(r *Record) { r.LastSlot = now.Add(period) }, period, true},
		{"last_slot two periods ahead", func(r *Record) { r.LastSlot = now.Add(2 * period) }, period, true},
		{"anchor in 2900", func(r *Record) { r.Anchor = now.AddDate(874, 0, 0) }, period, true},
		{"anchor in 2900, period unknown", func(r *Record) { r.Anchor = now.AddDate(874, 0, 0) }, 0, true},
		{"last_run ahead", func(r *Record) { r.LastRun = now.Add(2 * period) }, period, true},
		{"last_end ahead", func(r *Record) { r.LastEnd = now.Add(2 * period) }, period, true},
		{"last_success ahead", func(r *Record) { r.LastSuccess = now.Add(2 * period) }, period, true},
		{"anchor at 1970", func(r *Record) { r.Anchor = time.Unix(0, 0) }, period, true},
		{"anchor before 1970", func(r *Record) { r.Anchor = time.Unix(-1, 0) }, period, false},
		{"last_success before 1970", func(r *Record) { r.LastSuccess = time.Unix(-1, 0) }, period, false},
		{"last_slot at the end of 9999", func(r *Record) { r.LastSlot = time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC) }, period, true},
		{"last_success in 10000 in UTC, 9999 where it was written", func(r *Record) {
			r.LastSuccess = time.Date(9999, 12, 31, 23, 0, 0, 0, time.FixedZone("", -2*3600))
		}, period, false},
		{"runs at the limit", func(r *Record) { r.Runs = MaxCount }, period, true},
		{"runs over the limit", func(r *Record) { r.Runs = MaxCount + 1 }, period, false},
		{"runs at 2^53", func(r *Record) { r.Runs = 1 << 53 }, period, false},
		// Near 2^53, where JSON numbers stop being exact: corrupt, never
		// counted on (SPEC 9 [safety]).
		{"runs at 2^53-1", func(r *Record) { r.Runs = 1<<53 - 1 }, period, false},
		{"runs near 2^53", func(r *Record) { r.Runs = 9007199254740000 }, period, false},
		{"reserved near 2^53", func(r *Record) { r.Reserved = 1<<53 - 1<<20 }, period, false},
		{"skipped near 2^53", func(r *Record) { r.Skipped = 1<<53 - 2 }, period, false},
		{"failures at 2^53", func(r *Record) { r.Failures = 1 << 53 }, period, false},
		{"runs at the largest int", func(r *Record) { r.Runs = math.MaxInt }, period, false},
		{"negative runs", func(r *Record) { r.Runs = -9 }, period, false},
		{"negative failures", func(r *Record) { r.Failures = -1 }, period, false},
		{"negative skipped", func(r *Record) { r.Skipped = -1 }, period, false},
		{"negative consecutive_failures", func(r *Record) { r.ConsecutiveFailures = -1 }, period, false},
		{"overflowing consecutive_failures", func(r *Record) { r.ConsecutiveFailures = math.MaxInt }, period, false},
		{"negative last_attempts", func(r *Record) { r.LastAttempts = -1 }, period, false},
		{"reserved at the limit", func(r *Record) { r.Reserved = MaxCount }, period, true},
		{"reserved at 2^53", func(r *Record) { r.Reserved = 1 << 53 }, period, false},
		{"negative reserved", func(r *Record) { r.Reserved = -1 }, period, false},
		{"negative pid", func(r *Record) { r.PID = -1 }, period, false},
		{"pid beyond pid_max", func(r *Record) { r.PID = 1<<22 + 1 }, period, false},
	} {
		r := sample()
		tt.change(r)
		err := r.Sane(now, tt.period)
		if (err == nil) != tt.ok {
			t.Errorf("%s: Sane = %v, want ok %v", tt.name, err, tt.ok)
		}
	}
}

// writeRecord writes a record as JSON, with changes made to its fields.
func writeRecord(t *testing.T, path string, change func(map[string]any)) []byte {
	t.Helper()
	b, err := Encode(sample())
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	change(m)
	if b, err = json.Marshal(m); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return b
}

// A record that cannot be trusted is set aside as corrupt: the job starts
// fresh, never obeying it into a stall or a negative EVERY_RUN.
func TestFileLoadUntrusted(t *testing.T) {
	for _, tt := range []struct {
		name   string
		period time.Duration
		write  func(path string) []byte
	}{
		{"negative runs", 0, func(p string) []byte {
			return writeRecord(t, p, func(m map[string]any) { m["runs"] = -9 })
		}},
		{"runs at the largest int64", 0, func(p string) []byte {
			return writeRecord(t, p, func(m map[string]any) { m["runs"] = json.Number("9223372036854775807") })
		}},
		{"2 MiB", 0, func(p string) []byte {
			b := writeRecord(t, p, func(m map[string]any) { m["command"] = []string{strings.Repeat("x", 2<<20)} })
			if len(b) <= MaxSize {
				t.Fatalf("the big record is only %d bytes", len(b))
			}
			return b
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := File{Path: filepath.Join(t.TempDir(), "job.json"), Period: tt.period}
			content := tt.write(f.Path)
			r, err := f.Load(context.Background())
			var corrupt *CorruptError
			if r != nil || !errors.As(err, &corrupt) {
				t.Fatalf("Load = a record (%v), %v; want nil and a CorruptError", r != nil, err)
			}
			if b, err := os.ReadFile(corrupt.MovedTo); err != nil || !bytes.Equal(b, content) {
				t.Errorf("the record was not set aside as it was: %d bytes, %v", len(b), err)
			}
			if _, err := os.Lstat(f.Path); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("the record is still in place: %v", err)
			}
		})
	}
	// A time ahead, however far, is a clock set back or another host's
	// clock: trusted, its counters kept (SPEC 9, "a clock set back is not
	// corruption"), and nothing set aside.
	for name, change := range map[string]func(map[string]any){
		"last_slot two periods ahead": func(m map[string]any) {
			m["last_slot"] = time.Now().Add(2 * time.Hour).UTC().Format(time.RFC3339)
		},
		"anchor and last_slot in 2900": func(m map[string]any) { m["anchor"], m["last_slot"] = "2900-01-01T00:00:00Z", "2900-01-01T00:00:00Z" },
	} {
		f := File{Path: filepath.Join(t.TempDir(), "job.json"), Period: time.Hour}
		writeRecord(t, f.Path, change)
		if r, err := f.Load(context.Background()); err != nil || r == nil || r.Runs != sample().Runs {
			t.Errorf("%s: Load = %+v, %v; want it, with its counters", name, r, err)
		}
		if r, err := f.Read(time.Now()); err != nil || r == nil {
			t.Errorf("%s: Read (every status) = %+v, %v; want it", name, r, err)
		}
		if aside, _ := filepath.Glob(f.Path + ".corrupt-*"); len(aside) != 0 {
			t.Errorf("%s: set aside as %v", name, aside)
		}
	}
}

// nonRegular makes, in dir, each kind of path that is not a regular file,
// with a target file for the links; it returns them and the target.
func nonRegular(t *testing.T, dir string) (paths map[string]string, target, missing string, content []byte) {
	t.Helper()
	target = filepath.Join(dir, "target")
	content = []byte("do not touch\n")
	if err := os.WriteFile(target, content, 0o644); err != nil {
		t.Fatal(err)
	}
	missing = filepath.Join(dir, "nologin")
	fifo := filepath.Join(dir, "fifo.json")
	if err := unix.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	paths = map[string]string{
		"link to a file": filepath.Join(dir, "link.json"),
		"dangling link":  filepath.Join(dir, "dangling.json"),
		"link to a FIFO": filepath.Join(dir, "fifolink.json"),
		"directory":      filepath.Join(dir, "dir.json"),
		"FIFO":           fifo,
		"socket":         filepath.Join(dir, "sock.json"),
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
	t.Cleanup(func() { ln.Close() })
	dev := filepath.Join(dir, "null.json")
	if err := mknodNull(dev); err == nil {
		paths["device"] = dev
	} else {
		t.Logf("no device node (mknod: %v)", err)
	}
	return paths, target, missing, content
}

// A state path that is not a regular file is refused, by CheckWritable, Load
// and Read: never set aside as corrupt, never blocking, never touching what
// a link points to.
func TestFileRefusesWhatIsNotARegularFile(t *testing.T) {
	dir := t.TempDir()
	paths, target, missing, content := nonRegular(t, dir)
	if os.Geteuid() != 0 {
		// Only where a broken build could not rename or replace it.
		paths["device (/dev/null)"] = "/dev/null"
	}
	before, _ := os.ReadDir(dir)
	for name, path := range paths {
		t.Run(name, func(t *testing.T) {
			f := File{Path: path}
			for what, call := range map[string]func() error{
				"CheckWritable": f.CheckWritable,
				"Load": func() error {
					r, err := f.Load(context.Background())
					if r != nil {
						t.Errorf("Load returned a record")
					}
					return err
				},
				"Read": func() error { _, err := f.Read(time.Now()); return err },
			} {
				err := testutil.Bounded(t, call)
				if !errors.Is(err, ErrNotRegular) {
					t.Errorf("%s(%s) = %v, want ErrNotRegular", what, path, err)
				}
				var corrupt *CorruptError
				if errors.As(err, &corrupt) {
					t.Errorf("%s(%s) set it aside as corrupt", what, path)
				}
			}
		})
	}
	after, _ := os.ReadDir(dir)
	if len(after) != len(before) {
		t.Errorf("the directory held %d entries, now %d: something was renamed or created", len(before), len(after))
	}
	if got, err := os.ReadFile(target); err != nil || !bytes.Equal(got, content) {
		t.Errorf("link target = %q, %v; want it untouched", got, err)
	}
	if _, err := os.Lstat(missing); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the dangling link's target was created: %v", err)
	}
}

// Save replaces a link at the path with the record, never writing through
// it; it never replaces a FIFO, a device, a socket or a directory.
func TestFileSaveNeverWritesThroughALink(t *testing.T) {
	dir := t.TempDir()
	paths, target, missing, content := nonRegular(t, dir)
	ctx := context.Background()
	for name, path := range paths {
		t.Run(name, func(t *testing.T) {
			err := testutil.Bounded(t, func() error { return File{Path: path}.Save(ctx, sample()) })
			fi, lerr := os.Lstat(path)
			if strings.Contains(name, "link") {
				if err != nil {
					t.Fatalf("Save over %s: %v", name, err)
				}
				if lerr != nil || !fi.Mode().IsRegular() {
					t.Errorf("after Save, %s is %v, %v; want the record, a regular file", path, fi, lerr)
				}
				return
			}
			if !errors.Is(err, ErrNotRegular) {
				t.Errorf("Save over %s = %v, want ErrNotRegular", name, err)
			}
			if lerr != nil || fi.Mode().IsRegular() {
				t.Errorf("after Save, %s is %v, %v; want it left alone", path, fi, lerr)
			}
		})
	}
	if got, err := os.ReadFile(target); err != nil || !bytes.Equal(got, content) {
		t.Errorf("link target = %q, %v; want it untouched", got, err)
	}
	if _, err := os.Lstat(missing); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the dangling link's target was created: %v", err)
	}
}

// A corrupt record replaced since it was read (by a writer, or by something
// that is not a regular file) is not set aside unseen.
func TestSetAsideOnlyWhatWasRead(t *testing.T) {
	dir := t.TempDir()
	f := File{Path: filepath.Join(dir, "job.json")}
	if err := os.WriteFile(f.Path, []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	var read unix.Stat_t
	if err := unix.Lstat(f.Path, &read); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(f.Path, f.Path+".old"); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mkfifo(f.Path, 0o600); err != nil {
		t.Fatal(err)
	}
	err := f.setAside(&read, errors.New("torn"))
	var corrupt *CorruptError
	if err == nil || errors.As(err, &corrupt) {
		t.Errorf("setAside of a replaced file = %v, want a plain error", err)
	}
	if fi, err := os.Lstat(f.Path); err != nil || fi.Mode()&fs.ModeNamedPipe == 0 {
		t.Errorf("what replaced the record was moved: %v, %v", fi, err)
	}
}

// Files set aside never pile up, and never replace one another: five
// corrupt records in a row (within a second, mostly) leave the three newest,
// each as it was; an older one is removed, and files every did not name so
// are left alone.
func TestFileSetAsideKeepsThree(t *testing.T) {
	dir := t.TempDir()
	f := File{Path: filepath.Join(dir, "job.json")}
	for name, content := range map[string]string{
		"job.json.corrupt-1000":   "oldest",
		"job.json.corrupt-keep":   "not every's",
		"job.json.corrupt-01":     "not every's either",
		"other.json.corrupt-1000": "another job's",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "job.json.corrupt-999"), 0o700); err != nil {
		t.Fatal(err)
	}
	var moved []string
	for k := 1; k <= 5; k++ {
		if err := os.WriteFile(f.Path, []byte("garbage "+strconv.Itoa(k)), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := f.Load(context.Background())
		var corrupt *CorruptError
		if !errors.As(err, &corrupt) {
			t.Fatalf("load %d: %v, want a CorruptError", k, err)
		}
		moved = append(moved, corrupt.MovedTo)
	}
	for k, name := range moved {
		b, err := os.ReadFile(name)
		switch {
		case k < 2 && err == nil:
			t.Errorf("%s (garbage %d) is kept: more than 3 set aside", name, k+1)
		case k >= 2 && (err != nil || string(b) != "garbage "+strconv.Itoa(k+1)):
			t.Errorf("%s = %q, %v; want garbage %d (none replaced)", name, b, err, k+1)
		}
	}
	aside, _ := filepath.Glob(f.Path + ".corrupt-*")
	slices.Sort(aside)
	want := []string{"job.json.corrupt-01", "job.json.corrupt-999", "job.json.corrupt-keep"}
	for _, m := range moved[2:] {
		want = append(want, filepath.Base(m))
	}
	slices.Sort(want)
	var got []string
	for _, a := range aside {
		got = append(got, filepath.Base(a))
	}
	if !slices.Equal(got, want) {
		t.Errorf("set aside: %v, want %v", got, want)
	}
	if _, err := os.Stat(filepath.Join(dir, "other.json.corrupt-1000")); err != nil {
		t.Errorf("another job's file set aside was removed: %v", err)
	}
}

func TestAsideOrder(t *testing.T) {
	for _, tt := range []struct {
		rest string
		sec  int64
		n    int
		ok   bool
	}{
		{"1767225600", 1767225600, 1, true},
		{"1767225600-2", 1767225600, 2, true},
		{"1767225600-17", 1767225600, 17, true},
		{"0", 0, 1, true},
		{"1767225600-1", 0, 0, false},
		{"1767225600-02", 0, 0, false},
		{"01767225600", 0, 0, false},
		{"-5", 0, 0, false},
		{"1767225600-", 0, 0, false},
		{"1767225600.json", 0, 0, false},
		{"keep", 0, 0, false},
		{"", 0, 0, false},
	} {
		sec, n, ok := asideOrder(tt.rest)
		if sec != tt.sec || n != tt.n || ok != tt.ok {
			t.Errorf("asideOrder(%q) = %d, %d, %v; want %d, %d, %v", tt.rest, sec, n, ok, tt.sec, tt.n, tt.ok)
		}
	}
}

func TestAddCount(t *testing.T) {
	for _, tt := range []struct{ n, d, want int }{
		{0, 1, 1},
		{41, 1, 42},
		{10, 5, 15},
		{MaxCount - 1, 1, MaxCount},
		{MaxCount, 1, MaxCount},
		{MaxCount - 2, 5, MaxCount},
		{MaxCount, math.MaxInt, MaxCount},
		{3, 0, 3},
		{3, -5, 0},
	} {
		if got := AddCount(tt.n, tt.d); got != tt.want {
			t.Errorf("AddCount(%d, %d) = %d, want %d", tt.n, tt.d, got, tt.want)
		}
	}
	// What it counts up to is what Decode reads back.
	r := sample()
	r.Runs, r.Failures, r.Skipped = AddCount(MaxCount, 1), AddCount(MaxCount, 1), AddCount(MaxCount, 7)
	// A reservation block on top of a count at the limit, the largest
	// block there is (see runner's block), too.
	r.Reserved = AddCount(r.Runs, 1<<20+2)
	b, err := Encode(r)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Decode(b); err != nil {
		t.Errorf("a record with counters at their limit does not read back: %v", err)
	}
}
