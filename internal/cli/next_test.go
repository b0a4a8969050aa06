package cli

import (
	"errors"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/everycli/every/internal/ui"
	"github.com/everycli/every/schedule"
)

func TestDistance(t *testing.T) {
	tests := []struct {
		d    time.Duration
		want string
	}{
		{500 * time.Millisecond, "500ms"},
		{1500*time.Microsecond + 400*time.Nanosecond, "2ms"},
		{2500 * time.Millisecond, "2.5s"},
		{59*time.Second + 999*time.Millisecond, "59.999s"},
		{time.Minute, "1m"},
		{90 * time.Second, "1m30s"},
		{90*time.Second + 400*time.Millisecond, "1m30s"}, // to the second above a minute
		{15 * time.Hour, "15h"},
		{24 * time.Hour, "1d"},
		{24*time.Hour + 30*time.Minute, "1d30m"},
		{37*time.Hour + 30*time.Minute, "1d13h30m"},
		{2788*time.Hour + 26*time.Minute + 27*time.Second, "116d4h26m27s"},
		{100 * 365 * 24 * time.Hour, "36500d"},
	}
	for _, tt := range tests {
		if got := distance(tt.d); got != tt.want {
			t.Errorf("distance(%v) = %q, want %q", tt.d, got, tt.want)
		}
		// Above a minute, the text is every's own duration syntax.
		if tt.d >= time.Minute {
			if back, err := schedule.ParseDuration(distance(tt.d)); err != nil || back != tt.d.Round(time.Second) {
				t.Errorf("distance(%v) = %q parses back to %v, %v", tt.d, distance(tt.d), back, err)
			}
		}
	}
}

func TestParseFrom(t *testing.T) {
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct{ in, want string }{
		{"2026-03-07T12:00:00-05:00", "2026-03-07T12:00:00-05:00"},
		{"2026-03-07T12:00:00Z", "2026-03-07T12:00:00Z"},
		{"2026-03-07T12:00:00", "2026-03-07T12:00:00-05:00"},
		{"2026-03-07T12:00:00.5", "2026-03-07T12:00:00.5-05:00"},
		{"2026-03-07T12:00", "2026-03-07T12:00:00-05:00"},
		{"2026-03-07 12:00:00", "2026-03-07T12:00:00-05:00"},
		{"2026-03-07 12:00", "2026-03-07T12:00:00-05:00"},
		{"2026-07-07", "2026-07-07T00:00:00-04:00"},
		{"2026-03-08T02:30:00", "2026-03-08T03:00:00-04:00"}, // in the gap: its end
		{"2026-11-01T01:30", "2026-11-01T01:30:00-04:00"},    // twice: the first
	}
	for _, tt := range tests {
		got, err := parseFrom(tt.in, ny)
		want, _ := time.Parse(time.RFC3339Nano, tt.want)
		if err != nil || !got.Equal(want) {
			t.Errorf("parseFrom(%q) = %v, %v; want %v", tt.in, got, err, want)
		}
	}
	for _, bad := range []string{"yesterday", "2026-03-07T25:00", "2026-03-07T12", "12:00", "2026-02-30"} {
		if got, err := parseFrom(bad, ny); err == nil {
			t.Errorf("parseFrom(%q) = %v, want an error", bad, got)
		}
	}
}

// failingWriter fails each write with err, counting them.
type failingWriter struct {
	err    error
	writes int
}

func (w *failingWriter) Write(p []byte) (int, error) {
	w.writes++
	return 0, w.err
}

// countingSchedule counts the slots asked of a schedule.
type countingSchedule struct {
	schedule.Grid
	calls int
}

func (c *countingSchedule) Next(t time.Time) time.Time {
	c.calls++
	return c.Grid.Next(t)
}

// TestPrintNextStops: every next stops at the first write error, computing
// no more slots than one buffer holds, and says which error it was, so main
// can tell EPIPE from the others.
func TestPrintNextStops(t *testing.T) {
	for _, cause := range []error{syscall.EPIPE, syscall.ENOSPC} {
		w := &failingWriter{err: cause}
		slots := &countingSchedule{Grid: schedule.Grid{Interval: time.Second}}
		ns := NextSettings{slots: slots, loc: time.UTC, n: 10 * nextBuffer}
		err := PrintNext(ns, w)
		if !errors.Is(err, cause) {
			t.Errorf("printNext to a writer failing with %v = %v, want that error", cause, err)
		}
		if w.writes != 1 {
			t.Errorf("printNext wrote %d times after %v, want 1", w.writes, cause)
		}
		// A line is over 20 bytes: a buffer holds fewer lines than this.
		if slots.calls > nextBuffer/20 {
			t.Errorf("printNext computed %d slots of %d after the write failed, want it to stop within one buffer", slots.calls, ns.n)
		}
	}
}

// TestPrintNextNotes pins the notes on the slots a DST change shaped.
func TestPrintNextNotes(t *testing.T) {
	tests := []struct {
		expr, from string
		n          int
		want       string
	}{
		{"0-59/5 2 * * *", "2026-03-08T00:00:00-05:00", 1, "2026-03-08T03:00:00-04:00  Sun  in 2h  (12 times from 02:00 to 02:55 do not exist that day)\n"},
		{"0 30 2 * * *", "2026-03-08T00:00:00-05:00", 1, "2026-03-08T03:00:00-04:00  Sun  in 2h  (02:30 does not exist that day)\n"},
		{"20 30 2 * * *", "2026-03-08T00:00:00-05:00", 1, "2026-03-08T03:00:00-04:00  Sun  in 2h  (02:30:20 does not exist that day)\n"},
		{"30 1 * * *", "2026-11-01T00:00:00-04:00", 1, "2026-11-01T01:30:00-04:00  Sun  in 1h30m  (01:30 occurs twice that day: it runs at the first only)\n"},
		{"30 * * * *", "2026-11-01T01:00:00-04:00", 2, "2026-11-01T01:30:00-04:00  Sun  in 30m\n2026-11-01T01:30:00-05:00  Sun  in 1h30m  (01:30 again: the clocks went back)\n"},
	}
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		s, err := schedule.Parse(tt.expr, schedule.Options{Zone: ny})
		if err != nil {
			t.Fatal(err)
		}
		from, _ := time.Parse(time.RFC3339, tt.from)
		var b strings.Builder
		if err := PrintNext(NextSettings{slots: s, loc: ny, from: from, n: tt.n}, &b); err != nil {
			t.Fatal(err)
		}
		if b.String() != tt.want {
			t.Errorf("every next %q --from %s:\n got  %q\n want %q", tt.expr, tt.from, b.String(), tt.want)
		}
	}
}

// TestPrintNextHorizon: every next never wraps a slot into the past (a
// grid's slots past the span a time.Duration counts did: 100d -n 1100 from
// 2026 reached the year 1734) nor writes a year RFC 3339 cannot: it lists
// the slots it can, then stops with a usage error that says how many -n can
// ask for (or, when none, that --from is too late).
func TestPrintNextHorizon(t *testing.T) {
	utc := func(s string) time.Time {
		t.Helper()
		v, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	tests := []struct {
		sched   string
		from    string
		n       int
		lines   int    // slots printed
		last    string // the last one's time
		wantErr string // "": none
	}{
		{"100d", "2026-01-01T00:00:00Z", 1067, 1067, "2318-02-20T00:00:00Z", ""},
		{"100d", "2026-01-01T00:00:00Z", 1068, 1067, "2318-02-20T00:00:00Z",
			`bad -n "1068": the slots after the first 1067 lie more than 292 years after --from, further than every next counts; give -n 1067 or less`},
		{"100d", "2026-01-01T00:00:00Z", 1100, 1067, "2318-02-20T00:00:00Z",
			`bad -n "1100": the slots after the first 1067 lie more than 292 years after --from, further than every next counts; give -n 1067 or less`},
		{"106751d", "2026-01-01T00:00:00Z", 2, 1, "2318-04-12T00:00:00Z",
			`bad -n "2": the slots after the first 1 lie more than 292 years after --from, further than every next counts; give -n 1 or less`},
		{"@yearly", "2026-06-01T00:00:00Z", 293, 292, "2318-01-01T00:00:00Z",
			`bad -n "293": the slots after the first 292 lie more than 292 years after --from, further than every next counts; give -n 292 or less`},
		{"1h", "9999-12-31T21:30:00Z", 5, 2, "9999-12-31T23:30:00Z",
			`bad -n "5": the slots after the first 2 lie past the year 9999, which RFC 3339 cannot write; give -n 2 or less`},
		{"@hourly", "9999-12-31T23:30:00Z", 1, 0, "",
			`bad --from "9999-12-31T23:30:00Z": the next slot lies past the year 9999, which RFC 3339 cannot write; give an earlier time`},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s from %s -n %d", tt.sched, tt.from, tt.n), func(t *testing.T) {
			s, err := schedule.Parse(tt.sched, schedule.Options{Zone: time.UTC})
			if err != nil {
				t.Fatal(err)
			}
			from := utc(tt.from)
			var b strings.Builder
			err = PrintNext(NextSettings{slots: s.Anchored(from), loc: time.UTC, from: from, n: tt.n}, &b)
			switch {
			case tt.wantErr == "" && err != nil:
				t.Errorf("error %v, want none", err)
			case tt.wantErr != "" && (err == nil || err.Error() != tt.wantErr):
				t.Errorf("error %v, want %q", err, tt.wantErr)
			case tt.wantErr != "" && !errors.As(err, new(ui.UsageError)):
				t.Errorf("error %v is no usage error (exit 2)", err)
			}
			lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
			if b.Len() == 0 {
				lines = nil
			}
			if len(lines) != tt.lines {
				t.Fatalf("%d lines, want %d", len(lines), tt.lines)
			}
			prev := from
			for _, l := range lines {
				at := utc(strings.Fields(l)[0])
				if !at.After(prev) {
					t.Fatalf("slot %s not after %s: wrapped", l, prev)
				}
				prev = at
			}
			if tt.lines > 0 && !strings.HasPrefix(lines[len(lines)-1], tt.last+" ") {
				t.Errorf("last line %q, want the slot %s", lines[len(lines)-1], tt.last)
			}
		})
	}
}
