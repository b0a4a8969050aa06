package jobsfile

import (
	"slices"
	"strings"
	"testing"
)

func TestShellWords(t *testing.T) {
	tests := []struct {
		line string
		want []string
		err  string // a part of the error; "" for none
	}{
		{line: "every 90s -- ./sync.sh --full", want: []string{"every", "90s", "--", "./sync.sh", "--full"}},
		{line: "every\t90s  --\t x", want: []string{"every", "90s", "--", "x"}},
		{line: `every '0 3 * * *' -- a`, want: []string{"every", "0 3 * * *", "--", "a"}},
		{line: `every 1h -- sh -c 'echo "$HOME" | tr a b; x'`, want: []string{"every", "1h", "--", "sh", "-c", `echo "$HOME" | tr a b; x`}},
		{line: `a "b c" "d\"e" "f\\g" "h\i" "\$x" "\` + "`" + `"`, want: []string{"a", "b c", `d"e`, `f\g`, `h\i`, "$x", "`"}},
		{line: `a\ b \'c \$d \\e`, want: []string{"a b", "'c", "$d", `\e`}},
		{line: `'a'"b"c 'd''e'`, want: []string{"abc", "de"}},
		{line: `a '' "" b`, want: []string{"a", "", "", "b"}},
		{line: "a # a comment, $ and all", want: []string{"a"}},
		{line: "a#b 'c'#d", want: []string{"a#b", "c#d"}},
		{line: "a ~b c~ d/~e", err: "leading ~"},
		{line: "a b~ c/~", want: []string{"a", "b~", "c/~"}},
		{line: `a '~/x' "~y" \~z`, want: []string{"a", "~/x", "~y", "~z"}},
		{line: "a 'bc", err: "single quote at column 3 is never closed"},
		{line: `a "b\"c`, err: "double quote at column 3 is never closed"},
		{line: `a b\`, err: "ends with a backslash"},
		{line: "a $HOME", err: `"$" would be expanded`},
		{line: `a "$HOME"`, err: `"$" would be expanded`},
		{line: "a `date`", err: "\"`\" would be expanded"},
		{line: "a '$HOME' '`x`'", want: []string{"a", "$HOME", "`x`"}},
		{line: "a | b", err: `"|" is shell syntax`},
		{line: "a >/dev/null", err: `">" is shell syntax`},
		{line: "a 2>&1", err: `">" is shell syntax`},
		{line: "a; b", err: `";" is shell syntax`},
		{line: "a && b", err: `"&" is shell syntax`},
		{line: "(a)", err: `"(" is shell syntax`},
		{line: "a <in", err: `"<" is shell syntax`},
		{line: "a *.log", err: `"*" would be a file name pattern`},
		{line: "a https://x/?y", err: `"?" would be a file name pattern`},
		{line: "a [ab]", err: `"[" would be a file name pattern`},
		{line: `a '*.log' "?" \[`, want: []string{"a", "*.log", "?", "["}},
	}
	for _, tt := range tests {
		got, err := shellWords(tt.line, 0)
		switch {
		case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
			t.Errorf("shellWords(%q) = %q, %v; want an error with %q", tt.line, got, err, tt.err)
		case tt.err == "" && err != nil:
			t.Errorf("shellWords(%q): %v", tt.line, err)
		case tt.err == "" && !slices.Equal(got, tt.want):
			t.Errorf("shellWords(%q) = %q, want %q", tt.line, got, tt.want)
		}
	}
}

func TestEnvLine(t *testing.T) {
	tests := []struct {
		line        string
		name, value string
		ok          bool
		problem     string // a part of it
	}{
		{line: "A=b", name: "A", value: "b", ok: true},
		{line: "A = b", name: "A", value: "b", ok: true},
		{line: "A\t=\tb", name: "A", value: "b", ok: true},
		{line: "A=b c  d", name: "A", value: "b c  d", ok: true},
		{line: "A=b  \t", name: "A", value: "b", ok: true},
		{line: `A="b c "`, name: "A", value: "b c ", ok: true},
		{line: `A=' b'  `, name: "A", value: " b", ok: true},
		{line: `A=x"y"`, name: "A", value: `x"y"`, ok: true},
		{line: `A="x'y"`, name: "A", value: `x'y`, ok: true},
		{line: "A=", name: "A", value: "", ok: true},
		{line: "A=  ", name: "A", value: "", ok: true},
		{line: `A=""`, name: "A", value: "", ok: true},
		{line: `"A B"=c`, name: "A B", value: "c", ok: true},
		{line: "A=b=c", name: "A", value: "b=c", ok: true},
		{line: "PATH=/usr/bin:/bin", name: "PATH", value: "/usr/bin:/bin", ok: true},
		{line: "every=1h", name: "every", value: "1h", ok: true},
		{line: `A="x" y`, problem: "quoted value must end the line"},
		{line: `A="x" # c`, problem: "quoted value must end the line"},
		{line: `A='' y`, problem: "quoted value must end the line"},
		{line: `A="x`, problem: "never closed"},
		{line: `A='`, problem: "never closed"},
		{line: `"A=B"=c`},
		{line: "A"},
		{line: "A b=c"},
		{line: "*/5 * * * * a=b"},
		{line: "@daily FOO=1 x"},
		{line: "every 1h -- a=b"},
	}
	for _, tt := range tests {
		name, value, ok, problem := envLine(tt.line)
		switch {
		case ok != tt.ok || name != tt.name || value != tt.value:
			t.Errorf("envLine(%q) = %q, %q, %v; want %q, %q, %v", tt.line, name, value, ok, tt.name, tt.value, tt.ok)
		case tt.problem == "" && problem != "":
			t.Errorf("envLine(%q): problem %q, want none", tt.line, problem)
		case !strings.Contains(problem, tt.problem):
			t.Errorf("envLine(%q): problem %q, want one with %q", tt.line, problem, tt.problem)
		}
	}
}
