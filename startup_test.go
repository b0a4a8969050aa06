package main

import (
	"io"
	"regexp"
	"testing"
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
		{"monday", false},
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
	const value = `(?:[0-9]+|(?i:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec|sun|mon|tue|wed|thu|fri|sat))`
	const part = `(?:\*|` + value + `(?:-` + value + `)?)(?:/[0-9]+)?`
	return regexp.MustCompile(`^` + part + `(?:,` + part + `)*$`)
}()

func FuzzIsCronField(f *testing.F) {
	for _, s := range []string{"*", "*/5", "1-5/2", "mon-fri", "JAN,feb", "1h", "", "1,,2", "ſun", "5-sat/3", "\u212a"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := isCronField(s), cronFieldRE.MatchString(s); got != want {
			t.Errorf("isCronField(%q) = %v, the regular expression says %v", s, got, want)
		}
	})
}

// Parsing a one-shot's argv stays cheap: urfave/cli files the flags under
// their names (flagKey), not under the help line of each (1393 allocations
// a parse with it, 915 without), and the schedule is matched without a
// regular expression.
func TestParseRunCheap(t *testing.T) {
	args := []string{"1m", "--max-runs", "1", "-q", "--state-dir", t.TempDir(), "--name", "j", "--", "/usr/bin/true"}
	allocs := testing.AllocsPerRun(20, func() {
		if _, err := parse(args, io.Discard, io.Discard); err != nil {
			t.Fatal(err)
		}
	})
	if allocs > 1100 {
		t.Errorf("parse of a one-shot made %.0f allocations, want at most 1100: is each flag's help laid out again?", allocs)
	}
}
