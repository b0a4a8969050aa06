package ui

import "testing"

func TestEscape(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"plain name", "plain name"},
		{"é and 日本", "é and 日本"},
		{"tab\there", `tab\there`},
		{"\x1b[31mred", `\x1b[31mred`},
		{"bad\xffbyte", `bad\xffbyte`},
		{"nl\n", `nl\n`},
	} {
		if got := Escape(tt.in); got != tt.want {
			t.Errorf("Escape(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
