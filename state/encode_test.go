package state

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"
)

// marshalIndent is Encode as it was before encode.go, and the encoding
// encode.go must write byte for byte: json.MarshalIndent of the canonical
// record, and a newline.
func marshalIndent(r *Record) ([]byte, error) {
	c := canonical(r)
	b, err := json.MarshalIndent(&c, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// checkEncode fails unless Encode(r) is marshalIndent(r), bytes or error,
// and the hand encoder wrote it itself whenever json could (the fallback to
// json, for a time json refuses, would otherwise hide an encoder that
// refuses too much).
func checkEncode(t *testing.T, r *Record) {
	t.Helper()
	want, wantErr := marshalIndent(r)
	got, err := Encode(r)
	switch {
	case wantErr != nil && (err == nil || err.Error() != wantErr.Error()):
		t.Fatalf("Encode: %v, %q; json.MarshalIndent: %v", err, got, wantErr)
	case wantErr != nil:
		return
	case err != nil:
		t.Fatalf("Encode: %v; json.MarshalIndent:\n%s", err, want)
	case !bytes.Equal(got, want):
		t.Fatalf("Encode and json.MarshalIndent differ: %s", diff(got, want))
	}
	c := canonical(r)
	hand, ok := appendRecord(nil, &c)
	if hand = append(hand, '\n'); !ok || !bytes.Equal(hand, want) {
		t.Fatalf("appendRecord (%v) and json.MarshalIndent differ: %s", ok, diff(hand, want))
	}
	// encodedSize bounds the length, but for what escaping adds.
	escaped := 0
	for _, s := range append([]string{c.Name, c.Schedule, c.LastResult, c.Host, c.Boot}, c.Command...) {
		escaped += len(appendString(nil, s)) - len(s) - 2
	}
	if n := encodedSize(&c) + escaped; n < len(want) {
		t.Fatalf("encodedSize %d and %d bytes escaped for %d bytes:\n%s", encodedSize(&c), escaped, len(want), want)
	}
}

// diff shows where got and want part, or both whole if they are short.
func diff(got, want []byte) string {
	if len(got)+len(want) < 2000 {
		return fmt.Sprintf("\n%s\n%s\nin Go syntax:\n%q\n%q", got, want, got, want)
	}
	i := 0
	for i < min(len(got), len(want)) && got[i] == want[i] {
		i++
	}
	from := max(i-40, 0)
	return fmt.Sprintf("from byte %d: %q, want %q", i, got[from:min(i+40, len(got))], want[from:min(i+40, len(want))])
}

// trickyStrings are strings whose escaping encoding/json decides byte by
// byte.
var trickyStrings = []string{
	"", "plain", `"quoted" \back\slash/`, "\b\f\n\r\t", "\x00\x01\x1f\x7f", "a\x00b",
	"<script>&amp;</script>", "\u2028\u2029", "x\u2027\u2028\u202a\u2029y",
	"\xff", "a\xffb", "\xfe\xff", "\xe2\x80", "\xe2\x80\xa8\xe2\x80", "\xed\xa0\x80", "\xc0\xaf",
	"\xf4\x90\x80\x80", "\uFFFD", "é日本🙂", "\U0010FFFF", "tail\xe2",
	strings.Repeat("<", 300) + strings.Repeat("\xff", 300),
}

func TestEncodeMatchesMarshalIndent(t *testing.T) {
	ns := func(sec int64, nsec int64) time.Time { return time.Unix(sec, nsec) }
	full := func() *Record {
		r := sample()
		r.Running, r.LastExitCode, r.ConsecutiveFailures, r.Reserved, r.Boot = true, 2, 5, 43, "6f1c3e0a-2b4d-4e8f-9a1b-3c5d7e9f0a2b"
		return r
	}
	tests := []struct {
		name   string
		change func(r *Record)
	}{
		{"sample", func(r *Record) {}},
		{"all omitempty fields set", func(r *Record) { *r = *full() }},
		{"the zero record", func(r *Record) { *r = Record{} }},
		{"all omitempty fields empty", func(r *Record) {
			r.LastSlot, r.LastRun, r.LastEnd, r.LastSuccess = time.Time{}, time.Time{}, time.Time{}, time.Time{}
			r.LastResult, r.Host, r.PID, r.Reserved, r.Boot = "", "", 0, 0, ""
		}},
		{"only the last field", func(r *Record) { *r = Record{Boot: "b"} }},
		{"only the last but one", func(r *Record) { *r = Record{Reserved: 1} }},
		{"nil command", func(r *Record) { r.Command = nil }},
		{"empty command", func(r *Record) { r.Command = []string{} }},
		{"one empty argument", func(r *Record) { r.Command = []string{""} }},
		{"tricky arguments", func(r *Record) { r.Command = trickyStrings }},
		{"negative ints", func(r *Record) {
			r.Version, r.LastExitCode, r.LastAttempts, r.ConsecutiveFailures = -1, -255, -2, -3
			r.Runs, r.Failures, r.Skipped, r.PID, r.Reserved = math.MinInt, -1, -9, -4242, -7
		}},
		{"largest ints", func(r *Record) {
			r.Version, r.LastExitCode, r.Runs, r.PID, r.Reserved = math.MaxInt, math.MaxInt32, math.MaxInt, math.MaxInt, MaxCount
		}},
		{"zero anchor", func(r *Record) { r.Anchor = time.Time{} }},
		{"zero instant, elsewhere", func(r *Record) {
			r.Anchor = time.Time{}.In(time.FixedZone("X", -3600))
			r.LastSlot = time.Time{}.In(time.FixedZone("Y", 3600))
		}},
		{"nanosecond times", func(r *Record) {
			r.Anchor, r.LastSlot, r.LastRun = ns(0, 1), ns(1764500000, 123456789), ns(1764500000, 100000000)
			r.LastEnd, r.LastSuccess = ns(1764500000, 999999999), ns(-1, 10)
		}},
		{"times elsewhere, monotonic", func(r *Record) {
			r.Anchor = r.Anchor.In(time.FixedZone("X", 5*3600+1800))
			r.LastRun, r.LastEnd = time.Now(), time.Now().Add(time.Second)
		}},
		{"year 0", func(r *Record) { r.LastEnd = time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC) }},
		{"year 9999, the last nanosecond", func(r *Record) { r.LastSuccess = lastWritable }},
		{"year 10000", func(r *Record) { r.LastSuccess = lastWritable.Add(1) }},
		{"year -1", func(r *Record) { r.LastSlot = time.Date(-1, 12, 31, 23, 59, 59, 0, time.UTC) }},
		{"year 10000 in UTC only", func(r *Record) {
			r.Anchor = lastWritable.Add(time.Hour).In(time.FixedZone("W", -2*3600))
		}},
		{"year 10000 in an omitted field's place", func(r *Record) {
			r.LastRun = time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)
			r.LastResult, r.Host = "", ""
		}},
		{"Durable is never written", func(r *Record) { r.Durable = true }},
	}
	for i, s := range trickyStrings {
		tests = append(tests, struct {
			name   string
			change func(r *Record)
		}{"tricky strings " + string(rune('a'+i)), func(r *Record) {
			r.Name, r.Schedule, r.LastResult, r.Host, r.Boot = s, s+"x", "<"+s, s+">", s
			r.Command = []string{s, s}
		}})
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := sample()
			tt.change(r)
			checkEncode(t, r)
		})
	}
}

// TestEncodeEscapesEveryByte writes each one-byte string and each BMP code
// point both alone and between others, against json's escaping.
func TestEncodeEscapesEveryByte(t *testing.T) {
	var b strings.Builder
	for c := 0; c < 256; c++ {
		b.WriteByte(byte(c))
	}
	for c := rune(0x80); c < 0x10000; c += 7 {
		b.WriteRune(c)
	}
	b.WriteString("\u2028\u2029")
	all := b.String()
	r := sample()
	r.Command = make([]string, 0, 256)
	for c := 0; c < 256; c++ {
		r.Command = append(r.Command, string([]byte{byte(c)}), "a"+string([]byte{byte(c)})+"z")
	}
	r.Name = all
	checkEncode(t, r)
}

// encodedFields are Record's fields as encode.go writes them: name, type
// and tag. A field added to Record, or a tag changed, fails
// TestEncodeKnowsEveryField until appendRecord writes it and it is listed
// here.
var encodedFields = []struct{ name, typ, tag string }{
	{"Version", "int", `json:"version"`},
	{"Name", "string", `json:"name"`},
	{"Command", "[]string", `json:"command"`},
	{"Schedule", "string", `json:"schedule"`},
	{"Anchor", "time.Time", `json:"anchor"`},
	{"LastSlot", "time.Time", `json:"last_slot,omitzero"`},
	{"LastRun", "time.Time", `json:"last_run,omitzero"`},
	{"LastEnd", "time.Time", `json:"last_end,omitzero"`},
	{"Running", "bool", `json:"running"`},
	{"LastResult", "string", `json:"last_result,omitempty"`},
	{"LastExitCode", "int", `json:"last_exit_code"`},
	{"LastAttempts", "int", `json:"last_attempts"`},
	{"LastSuccess", "time.Time", `json:"last_success,omitzero"`},
	{"ConsecutiveFailures", "int", `json:"consecutive_failures"`},
	{"Runs", "int", `json:"runs"`},
	{"Failures", "int", `json:"failures"`},
	{"Skipped", "int", `json:"skipped"`},
	{"Host", "string", `json:"host,omitempty"`},
	{"PID", "int", `json:"pid,omitempty"`},
	{"Reserved", "int", `json:"reserved,omitempty"`},
	{"Boot", "string", `json:"boot,omitempty"`},
	{"Durable", "bool", `json:"-"`},
	{"Behind", "bool", `json:"-"`},
}

// TestEncodeKnowsEveryField walks Record's fields: each is one encode.go
// was written for (name, type, tag, in order), and each, set alone to a
// value that is not its zero on an otherwise empty record, encodes as json
// encodes it.
func TestEncodeKnowsEveryField(t *testing.T) {
	rt := reflect.TypeFor[Record]()
	for i := range max(rt.NumField(), len(encodedFields)) {
		var got, want string
		if i < rt.NumField() {
			f := rt.Field(i)
			got = f.Name + " " + f.Type.String() + " " + string(f.Tag)
		}
		if i < len(encodedFields) {
			e := encodedFields[i]
			want = e.name + " " + e.typ + " " + e.tag
		}
		if got != want {
			t.Errorf("Record's field %d is %q, encode.go writes %q: write it in appendRecord, then list it in encodedFields", i, got, want)
		}
	}

	at := time.Date(2026, 11, 30, 10, 31, 30, 412, time.UTC)
	values := map[reflect.Type][]any{
		reflect.TypeFor[int]():       {1, -1, math.MaxInt},
		reflect.TypeFor[string]():    {"x", "<\u2028\xff\"", " "},
		reflect.TypeFor[bool]():      {true},
		reflect.TypeFor[[]string]():  {[]string{"a"}, []string{}, []string{"", "<"}},
		reflect.TypeFor[time.Time](): {at, at.In(time.FixedZone("X", 3600)), time.Unix(0, 0)},
	}
	for i := range rt.NumField() {
		f := rt.Field(i)
		vs, ok := values[f.Type]
		if !ok {
			t.Errorf("Record.%s is a %s, a type this test cannot set (nor, perhaps, encode.go write)", f.Name, f.Type)
			continue
		}
		for _, v := range vs {
			var r Record
			reflect.ValueOf(&r).Elem().Field(i).Set(reflect.ValueOf(v))
			t.Run(f.Name, func(t *testing.T) { checkEncode(t, &r) })
		}
	}
}

// FuzzEncode holds Encode to json.MarshalIndent on any record: any strings,
// arguments (nil, none, or split at NUL), counters and times from year
// -292277022657 to 292277026596, in any zone.
func FuzzEncode(f *testing.F) {
	s := sample()
	zero := time.Time{}.Unix()
	f.Add(s.Name, s.Schedule, s.LastResult, s.Host, "boot", "./sync-ledger.sh\x00--full", int8(1), false,
		int64(1), int64(0), int64(1), int64(0), int64(42), int64(3), int64(1), int64(4242), int64(43),
		s.Anchor.Unix(), int64(0), s.LastSlot.Unix(), int64(1), s.LastRun.Unix(), int64(412000), s.LastEnd.Unix(), int64(250000000), zero, int64(0), int16(0))
	for _, str := range trickyStrings {
		f.Add(str, str, str, str, str, str+"\x00"+str, int8(1), true,
			int64(-1), int64(-1), int64(0), int64(math.MaxInt64), int64(math.MinInt64), int64(0), int64(0), int64(0), int64(0),
			zero, int64(0), int64(0), int64(1), int64(-1), int64(999999999), lastWritable.Unix(), int64(999999999), lastWritable.Unix(), int64(0), int16(-300))
	}
	f.Add("", "", "", "", "", "", int8(1), false,
		int64(0), int64(0), int64(0), int64(0), int64(0), int64(0), int64(0), int64(0), int64(0),
		lastWritable.Unix()+1, int64(0), zero, int64(0), zero, int64(0), zero, int64(0), zero, int64(0), int16(0))
	f.Add("", "", "", "", "", "", int8(0), false,
		int64(0), int64(0), int64(0), int64(0), int64(0), int64(0), int64(0), int64(0), int64(0),
		zero, int64(0), zero, int64(0), zero, int64(0), zero, int64(0), zero, int64(0), int16(0))
	f.Add("", "", "", "", "", "", int8(-1), false,
		int64(0), int64(0), int64(0), int64(0), int64(0), int64(0), int64(0), int64(0), int64(0),
		time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC).Unix(), int64(0), time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC).Unix(), int64(0),
		zero, int64(0), zero, int64(0), zero, int64(0), int16(60*14))
	f.Fuzz(func(t *testing.T, name, schedule, result, host, boot, command string, commandMode int8, running bool,
		version, exitCode, attempts, consecutive, runs, failures, skipped, pid, reserved int64,
		anchorSec, anchorNsec, slotSec, slotNsec, runSec, runNsec, endSec, endNsec, successSec, successNsec int64, zoneMinutes int16) {
		zone := time.FixedZone("Z", int(zoneMinutes)*60)
		at := func(sec, nsec int64) time.Time { return time.Unix(sec, nsec).In(zone) }
		r := &Record{
			Version: int(version), Name: name, Schedule: schedule, Running: running,
			Anchor: at(anchorSec, anchorNsec), LastSlot: at(slotSec, slotNsec), LastRun: at(runSec, runNsec),
			LastEnd: at(endSec, endNsec), LastSuccess: at(successSec, successNsec),
			LastResult: result, LastExitCode: int(exitCode), LastAttempts: int(attempts),
			ConsecutiveFailures: int(consecutive), Runs: int(runs), Failures: int(failures), Skipped: int(skipped),
			Host: host, PID: int(pid), Reserved: int(reserved), Boot: boot,
		}
		switch {
		case commandMode < 0:
		case commandMode == 0:
			r.Command = []string{}
		default:
			r.Command = strings.Split(command, "\x00")
		}
		checkEncode(t, r)
	})
}

// benchRecord is a record as a run writes it: its start and end read from
// the clock to the nanosecond, all its fields set.
func benchRecord() *Record {
	r := sample()
	r.LastRun = r.LastRun.Add(123)
	r.LastEnd, r.LastSuccess = r.LastRun.Add(1250*time.Millisecond+4567), r.LastRun
	r.Running, r.Reserved, r.Boot = true, 43, "6f1c3e0a-2b4d-4e8f-9a1b-3c5d7e9f0a2b"
	return r
}

// BenchmarkEncode is Encode beside json.MarshalIndent, which Encode used
// before encode.go.
func BenchmarkEncode(b *testing.B) {
	r := benchRecord()
	for _, bb := range []struct {
		name   string
		encode func(*Record) ([]byte, error)
	}{{"hand", Encode}, {"MarshalIndent", marshalIndent}} {
		b.Run(bb.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := bb.encode(r); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestEncodedSize checks that a record as long as its strings allow (every
// field present, the longest counters and times) fits the encoding's
// first allocation, and that maxFixed is the least that does.
func TestEncodedSize(t *testing.T) {
	w, m := lastWritable, math.MinInt
	for _, command := range [][]string{nil, {}, {"x"}, {"", "ab", "cde"}} {
		r := &Record{Version: m, Name: "n", Schedule: "s", Command: command, Anchor: w, LastSlot: w, LastRun: w, LastEnd: w,
			LastResult: "r", LastExitCode: m, LastAttempts: m, LastSuccess: w, ConsecutiveFailures: m, Runs: m,
			Failures: m, Skipped: m, Host: "h", PID: m, Reserved: m, Boot: "b"}
		c := canonical(r)
		b, err := Encode(r)
		switch {
		case err != nil:
			t.Fatal(err)
		case cap(b) != encodedSize(&c):
			t.Errorf("command %q: %d bytes, over encodedSize's %d: the encoding grew", command, len(b), encodedSize(&c))
		case len(command) == 1 && len(b) != cap(b):
			t.Errorf("command %q: %d bytes, encodedSize %d: maxFixed could be %d", command, len(b), cap(b), maxFixed-(cap(b)-len(b)))
		}
	}
}
