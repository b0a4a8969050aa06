package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
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
				skipWithout(t, tt.shell, "its completion script is not checked")
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

// zshDriver completes a line in an interactive zsh on a pseudo-terminal
// (zpty), with compadd wrapped to print the candidates as HITS[a|b|c] (the
// terminal echoes what is typed: HI""TS keeps the echo from matching).
const zshDriver = `zmodload zsh/zpty
zpty z 'zsh -f -i'
zpty -w z 'PROMPT=; fpath=("$EVERY_COMPLETIONS" $fpath); autoload -Uz compinit; compinit -u -D
compadd() {
    if [[ ${@[1,(i)(-|--)]} == *-(O|A|D)\ * ]]; then builtin compadd "$@"; return; fi
    local -a hits; builtin compadd -A hits "$@"; local ret=$?
    (( $#hits )) && print -n -- "HI""TS[${(j:|:)hits}]" >&2
    return ret
}
bindkey "^I" complete-word'
zpty -w -n z "$1"$'\t'
zpty -w z $'\nprint END""MARK'
zpty -r -m z out '*ENDMARK*'
print -r -- $out
zpty -d z
`

// completeWith returns the candidates a shell's completion script offers
// for line, the cursor at its end.
func completeWith(t *testing.T, shell, line string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitBound)
	defer cancel()
	abs, err := filepath.Abs("completions")
	if err != nil {
		t.Fatal(err)
	}
	var cmd *exec.Cmd
	switch shell {
	case "bash":
		cmd = exec.CommandContext(ctx, "bash", "--norc", "--noprofile", "-c", `source completions/every.bash
read -ra COMP_WORDS <<<"$1"; [[ $1 == *' ' ]] && COMP_WORDS+=('')
COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); _every; printf '%s\n' "${COMPREPLY[@]}"`, "bash", line)
	case "fish":
		cmd = exec.CommandContext(ctx, "fish", "--no-config", "-c", "source completions/every.fish; complete -C$argv[1] | cut -f1", line)
	case "zsh":
		cmd = exec.CommandContext(ctx, "zsh", "-f", "-c", zshDriver, "zsh", line)
		cmd.Env = append(os.Environ(), "EVERY_COMPLETIONS="+abs)
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s completing %q: %v\n%s", shell, line, err, out)
	}
	if shell == "zsh" {
		// The candidates of the first compadd that found some.
		m := regexp.MustCompile(`HITS\[([^]]*)\]`).FindStringSubmatch(string(out))
		if m == nil {
			return nil
		}
		return strings.Split(m[1], "|")
	}
	return strings.Fields(string(out))
}

// TestCompletionsComplete drives each shell's completion: option names,
// the values of --catch-up, --log-format and --signal, the shells of every
// completion, and the job names of the state directory for every status.
func TestCompletionsComplete(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"alpha.json", "beta.json", "beta.lock"} {
		if err := os.WriteFile(filepath.Join(dir, f), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		line string
		want []string
	}{
		{"every --ret", []string{"--retries", "--retry-on"}},
		{"every --catch-up ", []string{"all", "none", "once"}},
		{"every 1s --log-format ", []string{"json", "text"}},
		{"every --signal ", []string{"HUP", "INT", "KILL", "QUIT", "TERM", "USR1", "USR2"}},
		{"every completion ", []string{"bash", "fish", "zsh"}},
		{"every status --state-dir " + dir + " ", []string{"alpha", "beta"}},
		{"every status --state-dir " + dir + " b", []string{"beta"}},
	}
	for _, shell := range shellNames {
		t.Run(shell, func(t *testing.T) {
			if _, err := exec.LookPath(shell); err != nil {
				skipWithout(t, shell, "its completion is not driven")
			}
			for _, tt := range tests {
				got := completeWith(t, shell, tt.line)
				slices.Sort(got)
				if !slices.Equal(got, tt.want) {
					t.Errorf("%s completes %q with %q, want %q", shell, tt.line, got, tt.want)
				}
			}
		})
	}
}

// skipWithout skips a test whose tool is not installed, or fails it when
// EVERY_REQUIRE_SHELLS is set, as in CI, where a skip would hide a check.
func skipWithout(t *testing.T, tool, what string) {
	t.Helper()
	if os.Getenv("EVERY_REQUIRE_SHELLS") != "" {
		t.Fatalf("%s is not installed and EVERY_REQUIRE_SHELLS is set: %s", tool, what)
	}
	t.Skipf("%s is not installed: %s", tool, what)
}
