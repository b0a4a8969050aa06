package scripttest

import (
	"slices"
	"testing"
)

func TestShellWords(t *testing.T) {
	tests := []struct {
		line string
		want []string
	}{
		{`every 90s -- ./x --full`, []string{"every", "90s", "--", "./x", "--full"}},
		{`every '30 2 * * *' --tz Europe/Berlin`, []string{"every", "30 2 * * *", "--tz", "Europe/Berlin"}},
		{`sh -c 'date >> "$HOME/ticks"'`, []string{"sh", "-c", `date >> "$HOME/ticks"`}},
		{`a "b \" c" d\ e ''`, []string{"a", `b " c`, "d e", ""}},
	}
	for _, tt := range tests {
		got, err := ShellWords(tt.line)
		if err != nil || !slices.Equal(got, tt.want) {
			t.Errorf("ShellWords(%q) = %q, %v; want %q", tt.line, got, err, tt.want)
		}
	}
	if _, err := ShellWords(`a 'b`); err == nil {
		t.Error("shellWords accepted an unterminated quote")
	}
}

// TestHelpExamplesParse runs each example of --help through parse: each is
// a valid run or every next, with the schedule and command it shows.
// (testdata/script/cli_examples.txtar runs them.)
