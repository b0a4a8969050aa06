package state

import (
	"bytes"
	"math"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"
)

// fuzzNow is the clock of the seeds: 2026-01-02T03:04:05Z.
var fuzzNow = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// recordSeeds are state files a damaged disk or a hostile user could leave.
func recordSeeds() []string {
	good := `{"version":1,"name":"backup","command":["sh","-c","x"],"schedule":"1h","anchor":"2026-01-01T00:00:00Z",` +
		`"last_slot":"2026-01-02T03:00:00Z","last_run":"2026-01-02T03:00:00.5Z","last_end":"2026-01-02T03:00:01Z",` +
		`"running":false,"last_result":"success","last_exit_code":0,"last_attempts":1,` +
		`"last_success":"2026-01-02T03:00:01Z","consecutive_failures":0,"runs":7,"failures":1,"skipped":2,"host":"h","pid":42}`
	min := `{"version":1,"anchor":"2026-01-01T00:00:00Z"}`
	with := func(field, value string) string {
		return strings.Replace(min, "{", `{"`+field+`":`+value+",", 1)
	}
	return []string{
		good, min, "", "{}", "null", "[]", "1", `"x"`, "{", `{"version":1}`,
		`{"version":2,"anchor":"2026-01-01T00:00:00Z"}`,
		`{"version":1.5,"anchor":"2026-01-01T00:00:00Z"}`,
		`{"version":1,"anchor":"0001-01-01T00:00:00Z"}`,
		`{"version":1,"anchor":"0001-01-01T00:00:01Z"}`,
		`{"version":1,"anchor":"1969-12-31T23:59:59.999999999Z"}`,
		`{"version":1,"anchor":"1970-01-01T00:00:00Z"}`,
		`{"version":1,"anchor":"1970-01-01T00:00:00+01:00"}`,
		`{"version":1,"anchor":"2900-01-01T00:00:00Z"}`,
		`{"version":1,"anchor":"9999-12-31T23:59:59.999999999Z"}`,
		`{"version":1,"anchor":"9999-12-31T23:59:59-23:59"}`,
		`{"version":1,"anchor":"2026-01-01T00:00:00+14:00"}`,
		`{"version":1,"anchor":"2026-01-01T00:00:00.123456789123Z"}`,
		`{"version":1,"anchor":"2026-01-01T00:00:00Z","version":2}`,
		`{"VERSION":1,"Anchor":"2026-01-01T00:00:00Z"}`,
		with("runs", "-1"), with("runs", "-0"), with("runs", "1e400"), with("runs", "1e3"),
		with("runs", "9007199254740992"), with("runs", "9007199254740993"),
		with("runs", "9223372036854775807"), with("runs", "9223372036854775808"),
		with("failures", "-9"), with("skipped", "-1"), with("consecutive_failures", "-1"),
		with("last_attempts", "-1"), with("pid", "-1"), with("pid", "4194304"), with("pid", "4194305"),
		with("last_exit_code", "-2147483649"), with("running", `"true"`), with("name", `"\ud800"`),
		with("name", "\"\xff\xfe\""), with("command", "null"), with("command", `[null]`),
		with("command", "["+strings.Repeat(`"",`, 10000)+`""]`),
		with("host", `{"a":`+strings.Repeat("[", 5000)+strings.Repeat("]", 5000)+"}"),
		with("last_slot", `"0001-01-01T00:00:00Z"`), with("last_run", `"1900-01-01T00:00:00Z"`),
		with("last_end", `"2900-01-01T00:00:00Z"`), with("last_success", `"2026-01-02T04:05:05Z"`),
		with("last_success", `"2026-01-02T04:05:06Z"`), with("last_slot", `null`), with("last_slot", `""`),
		with("x", strings.Repeat("[", 20000)+strings.Repeat("]", 20000)),
	}
}

// FuzzDecode checks Decode and Sane on any bytes and clock: no panic; what
// Decode accepts has the right version, an anchor, counters in range and no
// time before 1970, is Sane at any clock, and survives Encode and Decode
// unchanged.
func FuzzDecode(f *testing.F) {
	for _, s := range recordSeeds() {
		for _, period := range []int64{0, -1, int64(time.Hour), math.MaxInt64} {
			f.Add([]byte(s), fuzzNow.UnixNano(), period)
		}
	}
	f.Add([]byte(recordSeeds()[0]), int64(0), int64(0))
	f.Add([]byte(recordSeeds()[0]), int64(math.MaxInt64), int64(math.MaxInt64))
	f.Add([]byte(recordSeeds()[0]), int64(math.MinInt64), int64(time.Millisecond))
	f.Fuzz(func(t *testing.T, b []byte, nowNanos, periodNanos int64) {
		r, err := Decode(b)
		if err != nil {
			if r != nil {
				t.Fatalf("Decode returned a record and the error %v", err)
			}
			return
		}
		checkDecoded(t, r)

		// Whatever the clock and the period, a record Decode accepts is
		// Sane: one from the future included (SPEC 9).
		now, period := time.Unix(0, nowNanos), time.Duration(periodNanos)
		if err := r.Sane(now, period); err != nil {
			t.Fatalf("Decode accepted a record Sane refuses at %v, period %v: %v", now, period, err)
		}

		// Save and Load bring it back unchanged, and saving again writes the same.
		enc, err := Encode(r)
		if err != nil {
			t.Fatalf("Encode of a sane record: %v", err)
		}
		back, err := Decode(enc)
		if err != nil {
			t.Fatalf("Decode of Encode: %v\n%s", err, enc)
		}
		if !sameRecord(r, back) {
			t.Fatalf("Decode of Encode changed the record:\n%+v\n%+v", *r, *back)
		}
		for _, at := range []time.Time{back.Anchor, back.LastSlot, back.LastRun, back.LastEnd, back.LastSuccess} {
			if !at.IsZero() && at.Location() != time.UTC {
				t.Fatalf("Encode wrote a time not in UTC: %v\n%s", at, enc)
			}
		}
		if err := back.Sane(now, period); err != nil {
			t.Fatalf("Sane before Encode, not after: %v", err)
		}
		again, err := Encode(back)
		if err != nil || !bytes.Equal(enc, again) {
			t.Fatalf("Encode not stable (%v):\n%s\n%s", err, enc, again)
		}
	})
}

// checkDecoded checks what Decode promises of a record it returns.
func checkDecoded(t *testing.T, r *Record) {
	t.Helper()
	if r.Version != Version || r.Anchor.IsZero() {
		t.Fatalf("Decode accepted version %d, anchor %v", r.Version, r.Anchor)
	}
	for name, n := range map[string]int{"runs": r.Runs, "failures": r.Failures, "skipped": r.Skipped,
		"consecutive_failures": r.ConsecutiveFailures, "last_attempts": r.LastAttempts} {
		if n < 0 || n > MaxCount {
			t.Fatalf("Decode accepted %s %d", name, n)
		}
	}
	if r.PID < 0 || r.PID > 1<<22 {
		t.Fatalf("Decode accepted pid %d", r.PID)
	}
	for _, at := range []time.Time{r.Anchor, r.LastSlot, r.LastRun, r.LastEnd, r.LastSuccess} {
		if !at.IsZero() && (at.Unix() < 0 || at.UTC().Year() > 9999) {
			t.Fatalf("Decode accepted a time before 1970 or after 9999: %v", at)
		}
	}
}

// sameRecord compares records, their times as instants.
func sameRecord(a, b *Record) bool {
	for _, p := range [][2]time.Time{{a.Anchor, b.Anchor}, {a.LastSlot, b.LastSlot}, {a.LastRun, b.LastRun},
		{a.LastEnd, b.LastEnd}, {a.LastSuccess, b.LastSuccess}} {
		if !p[0].Equal(p[1]) || p[0].IsZero() != p[1].IsZero() {
			return false
		}
	}
	x, y := *a, *b
	x.Anchor, x.LastSlot, x.LastRun, x.LastEnd, x.LastSuccess = time.Time{}, time.Time{}, time.Time{}, time.Time{}, time.Time{}
	y.Anchor, y.LastSlot, y.LastRun, y.LastEnd, y.LastSuccess = time.Time{}, time.Time{}, time.Time{}, time.Time{}, time.Time{}
	return reflect.DeepEqual(x, y)
}

// TestDecodeMemory bounds what Decode allocates for the largest state file
// read (MaxSize) of the shapes that cost the most per byte: it stays within
// a small multiple of the file, so a hostile file cannot balloon every.
func TestDecodeMemory(t *testing.T) {
	fill := func(prefix, unit, suffix string) []byte {
		n := (MaxSize - len(prefix) - len(suffix)) / len(unit)
		s := prefix + strings.Repeat(unit, n)
		return []byte(strings.TrimSuffix(s, ",") + suffix)
	}
	for name, b := range map[string][]byte{
		"empty strings": fill(`{"version":1,"anchor":"2026-01-01T00:00:00Z","command":[`, `"",`, `]}`),
		"short strings": fill(`{"version":1,"anchor":"2026-01-01T00:00:00Z","command":[`, `"a",`, `]}`),
		"nesting":       fill(`{"version":1,"anchor":"2026-01-01T00:00:00Z","x":`, `[`, ``),
		"unknown keys":  fill(`{"version":1,"anchor":"2026-01-01T00:00:00Z",`, `"a":[0],`, `}`),
	} {
		if len(b) > MaxSize {
			t.Fatalf("%s: %d bytes, over MaxSize", name, len(b))
		}
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		_, err := Decode(b)
		runtime.ReadMemStats(&after)
		alloc := after.TotalAlloc - before.TotalAlloc
		t.Logf("%s: %d bytes decoded with %d bytes allocated (%v)", name, len(b), alloc, err)
		if alloc > 64*MaxSize {
			t.Errorf("%s: Decode of %d bytes allocated %d bytes", name, len(b), alloc)
		}
	}
}
