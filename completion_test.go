package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestCompletionScriptsLoad checks the committed completion scripts with
// their shells: bash parses the bash script and, sourced, it registers a
// completion for every; zsh and fish check theirs where installed.
func TestCompletionScriptsLoad(t *testing.T) {
	tests := []struct {
		shell  string
		args   []string
		stdout string // a line the shell must print
	}{
		{"bash", []string{"-n", "completions/every.bash"}, ""},
		{"bash", []string{"--norc", "--noprofile", "-c", "source completions/every.bash && complete -p every"}, "complete -F _every every"},
		{"zsh", []string{"-n", "completions/_every"}, ""},
		{"zsh", []string{"-f", "-c", "autoload -Uz compinit && compinit -u -D && source completions/_every && print -r -- ${_comps[every]}"}, "_every"},
		{"fish", []string{"--no-config", "-n", "completions/every.fish"}, ""},
		{"fish", []string{"--no-config", "-c", "source completions/every.fish; complete -C'every --catch-up '"}, "once"},
	}
	for _, tt := range tests {
		t.Run(tt.shell+" "+strings.Join(tt.args, " "), func(t *testing.T) {
			path, err := exec.LookPath(tt.shell)
			if err != nil {
				t.Skipf("%s is not installed: its completion script is not checked", tt.shell)
			}
			out, err := exec.Command(path, tt.args...).CombinedOutput()
			if err != nil {
				t.Fatalf("%s %q: %v\n%s", tt.shell, tt.args, err, out)
			}
			if !strings.Contains(string(out), tt.stdout) || (tt.stdout == "" && len(out) > 0) {
				t.Fatalf("%s %q printed %q, want %q", tt.shell, tt.args, out, tt.stdout)
			}
		})
	}
}
