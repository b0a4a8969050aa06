package cli

import (
	"io"
	"regexp"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

func TestIsCronField(t *testing.T) {
	for _, tt := range []struct {
		field string
		want  bool
	}{
		{"*", true},
		{"5", true},
		{"*/15", true},
		{"1-5", true},
		{"1-30/5", true},
		{"mon-fri", true},
		{"MON-Fri", true},
		{"jan,jul", true},
		{"0,15,30,45", true},
		{"sat/2", true},
		{"1h", false},
		{"90s", false},
		{"500ms", false},
		{"", false},
		{"*-5", false},
		{"5-", false},
		{"-5", false},
		{"*/", false},
		{"*/x", false},
		{"1,", false},
		{",1", false},
		{"1//2", false},
		{"1-2-3", false},
		{"monday", true},
		{"L", true},
		{"lw", true},
		{"15W", true},
		{"5L", true},
		{"friL", true},
		{"5#2", true},
		{"?", true},
		{"L-3", false},
		{"#2", false},
		{"W", false},
		{"5~15", false},
		{"mo", false},
		{"5 * * * *", false},
		{"CRON_TZ=UTC", false},
	} {
		if got := isCronField(tt.field); got != tt.want {
			t.Errorf("isCronField(%q) = %v, want %v", tt.field, got, tt.want)
		}
	}
}

// cronFieldRE is the regular expression isCronField replaced: the two must
// agree on every input.
var cronFieldRE = func() *regexp.Regexp {
	const value = `(?:[0-9]+|(?i:january|february|march|april|june|july|august|september|october|november|december|` +
		`sunday|monday|tuesday|wednesday|thursday|friday|saturday|` +
		`jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec|sun|mon|tue|wed|thu|fri|sat))`
	const day = `(?i:l|lw|[0-9]+w|` + value + `l|` + value + `#[0-9]+)`
	const part = `(?:` + day + `|(?:\*|\?|` + value + `(?:-` + value + `)?)(?:/[0-9]+)?)`
	return regexp.MustCompile(`^` + part + `(?:,` + part + `)*$`)
}()

func FuzzIsCronField(f *testing.F) {
	for _, s := range []string{"*", "*/5", "1-5/2", "mon-fri", "JAN,feb", "1h", "", "1,,2", "ſun", "5-sat/3", "\u212a",
		"L", "lW", "15w", "friL", "5#2", "?/2", "monday-friday", "1,L"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := isCronField(s), cronFieldRE.MatchString(s); got != want {
			t.Errorf("isCronField(%q) = %v, the regular expression says %v", s, got, want)
		}
	})
}

// Parsing a one-shot's argv does not lay out the help of each flag:
// urfave/cli files the flags under their names (flagKey), which saved
// about 480 of 1393 allocations a parse, measured against the help line
// (flagHelp) in the same process.
func TestParseRunCheap(t *testing.T) {
	if line := cli.FlagStringer(runFlags[0]); strings.Contains(line, "\t") {
		t.Errorf("urfave/cli strings a flag as its help line %q, want its names", line)
	}
	args := []string{"1m", "--max-runs", "1", "-q", "--state-dir", t.TempDir(), "--name", "j", "--", "/usr/bin/true"}
	parseAllocs := func() float64 {
		return testing.AllocsPerRun(20, func() {
			if _, err := Parse(args, io.Discard, io.Discard); err != nil {
				t.Fatal(err)
			}
		})
	}
	cheap := parseAllocs()
	saved := cli.FlagStringer
	cli.FlagStringer = flagHelp
	full := parseAllocs()
	cli.FlagStringer = saved
	if full-cheap < 200 {
		t.Errorf("parse made %.0f allocations with the flags filed by name, %.0f by help line: want over 200 fewer", cheap, full)
	}
}
