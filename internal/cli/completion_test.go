package cli

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/everycli/every/internal/jobfiles"
	"github.com/everycli/every/internal/status"
	"github.com/everycli/every/internal/testutil"
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
				testutil.SkipWithout(t, tt.shell, "its completion script is not checked")
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
// terminal echoes what is typed: HI""TS keeps the echo from matching). The
// line is then killed, never run (every jobs DIR would run until killed),
// by ^G: ^U would be the terminal's, erasing the line typed before zle
// reads it.
const zshDriver = `zmodload zsh/zpty
zpty z 'zsh -f -i'
zpty -w z 'PROMPT=; fpath=("$EVERY_COMPLETIONS" $fpath); autoload -Uz compinit; compinit -u -D
compadd() {
    if [[ ${@[1,(i)(-|--)]} == *-(O|A|D)\ * ]]; then builtin compadd "$@"; return; fi
    local -a hits; builtin compadd -A hits "$@"; local ret=$?
    (( $#hits )) && print -n -- "HI""TS[${(j:|:)hits}]" >&2
    return ret
}
bindkey "^I" complete-word; bindkey "^G" kill-whole-line'
zpty -w -n z "$1"$'\t'
zpty -w z $'\C-g\nprint END""MARK'
zpty -r -m z out '*ENDMARK*'
print -r -- $out
zpty -d z
`

// completeWith returns the candidates a shell's completion script offers
// for line, the cursor at its end, the shell working in the current
// directory.
func completeWith(t *testing.T, shell, line string) []string {
	t.Helper()
	return completeIn(t, "", shell, line)
}

// completeIn is completeWith with the shell working in dir ("": the
// package's directory).
func completeIn(t *testing.T, dir, shell, line string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testutil.WaitBound)
	defer cancel()
	abs, err := filepath.Abs("completions")
	if err != nil {
		t.Fatal(err)
	}
	var cmd *exec.Cmd
	switch shell {
	case "bash":
		cmd = exec.CommandContext(ctx, "bash", "--norc", "--noprofile", "-c", `source "$2/every.bash"
read -ra COMP_WORDS <<<"$1"; [[ $1 == *' ' ]] && COMP_WORDS+=('')
COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); _every; printf '%s\n' "${COMPREPLY[@]}"`, "bash", line, abs)
	case "fish":
		cmd = exec.CommandContext(ctx, "fish", "--no-config", "-c", "source $argv[2]/every.fish; complete -C$argv[1] | cut -f1", line, abs)
	case "zsh":
		cmd = exec.CommandContext(ctx, "zsh", "-f", "-c", zshDriver, "zsh", line)
		cmd.Env = append(os.Environ(), "EVERY_COMPLETIONS="+abs)
	}
	cmd.Dir = dir
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
// completion, the job names of the state directory for every status, and
// every jobs: the subcommand, its own options (not a run's) and their
// values, wherever the options stand.
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
		{"every jo", []string{"jobs"}},
		{"every jobs --max", []string{"--max-concurrent"}},
		{"every jobs --che", []string{"--check"}},
		{"every jobs -q --o", []string{"--output"}},
		{"every jobs --output ", []string{"prefixed", "raw"}},
		{"every jobs --log-format ", []string{"json", "text"}},
		{"every jobs --log-level ", []string{"debug", "error", "info", "warn"}},
		{"every --watch jobs --output ", []string{"prefixed", "raw"}},
		{"every jobs --check --from 2026-03-08T00:00:00 --w", []string{"--watch"}},
	}
	for _, shell := range shellNames {
		t.Run(shell, func(t *testing.T) {
			if _, err := exec.LookPath(shell); err != nil {
				testutil.SkipWithout(t, shell, "its completion is not driven")
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

// planted are file names of a state directory that are no job names, each
// of which would run a command if a shell evaluated it: it would create a
// file named PWNED... in the shell's working directory.
var planted = []string{
	"$(touch PWNED1).json",
	"`touch PWNED2`.json",
	"x;touch PWNED3.json",
	"$(touch PWNED4)x.json" + jobfiles.MarkerSuffix,
	"${IFS}$(touch${IFS}PWNED5).json",
}

// plantedDir is a state directory with the jobs alpha and beta, and the
// planted names.
func plantedDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, f := range append([]string{"alpha.json", "beta.json", "beta.lock"}, planted...) {
		if err := os.WriteFile(filepath.Join(dir, f), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// noneRan fails the test if a planted name ran its command in dir.
func noneRan(t *testing.T, dirs ...string) {
	t.Helper()
	for _, dir := range dirs {
		m, _ := filepath.Glob(filepath.Join(dir, "PWNED*"))
		if len(m) > 0 {
			t.Errorf("a planted name or a typed word ran a command: %q", m)
		}
	}
}

// TestJobNamesValidOnly: every status --names, what the completions offer,
// prints job names only, never a file name that is none.
func TestJobNamesValidOnly(t *testing.T) {
	dir := plantedDir(t)
	long := strings.Repeat("a", jobfiles.MaxName+1)
	for _, f := range []string{".hidden.json", "-dash.json", "sp ace.json", long + ".json", strings.Repeat("b", jobfiles.MaxName) + ".json"} {
		if err := os.WriteFile(filepath.Join(dir, f), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	var b strings.Builder
	if err := status.PrintJobNames([]string{dir}, &b); err != nil {
		t.Fatal(err)
	}
	want := "alpha\n" + strings.Repeat("b", jobfiles.MaxName) + "\nbeta\n"
	if b.String() != want {
		t.Errorf("every status --names printed %q, want %q", b.String(), want)
	}
}

// TestCompletionInert drives each shell's completion of job names in a
// state directory with planted names: each shell offers the jobs, and no
// planted name runs anything, neither where the shell works nor in the
// state directory (SPEC section 14). Nor does a planted name offered as a
// file for every jobs, or a typed word that would run a command if
// evaluated.
func TestCompletionInert(t *testing.T) {
	dir := plantedDir(t)
	for _, shell := range shellNames {
		t.Run(shell, func(t *testing.T) {
			if _, err := exec.LookPath(shell); err != nil {
				testutil.SkipWithout(t, shell, "its completion is not driven")
			}
			work := t.TempDir()
			for _, line := range []string{"every status --state-dir " + dir + " ", "every --state-dir " + dir + " status "} {
				got := completeIn(t, work, shell, line)
				slices.Sort(got)
				if want := []string{"alpha", "beta"}; !slices.Equal(got, want) {
					t.Errorf("%s completes %q with %q, want %q", shell, line, got, want)
				}
			}
			line := "every jobs " + dir + "/"
			if got := baseNames(completeIn(t, work, shell, line)); !slices.Contains(got, "alpha.json") || !slices.Contains(got, "beta.json") {
				t.Errorf("%s completes %q with %q, want alpha.json and beta.json among them", shell, line, got)
			}
			for _, line := range []string{
				"every jobs " + dir + "/$(>PWNED6)",
				"every jobs `>PWNED7`",
				"every jobs --output $(>PWNED8)",
				"every jobs (touch PWNED9)", // fish's
			} {
				completeIn(t, work, shell, line)
			}
			noneRan(t, work, dir)
		})
	}
}

// TestCompletionCommand: after "--", or after the schedule, each shell
// completes the command, as a command: its name among the commands.
func TestCompletionCommand(t *testing.T) {
	for _, shell := range shellNames {
		t.Run(shell, func(t *testing.T) {
			if _, err := exec.LookPath(shell); err != nil {
				testutil.SkipWithout(t, shell, "its completion is not driven")
			}
			for _, line := range []string{"every 1s -- ech", "every --retries 2 1s -q -- ech", "every 1s ech"} {
				if got := completeWith(t, shell, line); !slices.Contains(got, "echo") {
					t.Errorf("%s completes %q with %q, want echo among them", shell, line, got)
				}
			}
			// Not a job name, nor an option of every, after "--".
			if got := completeWith(t, shell, "every 1s -- --ret"); slices.Contains(got, "--retries") {
				t.Errorf("%s completes every's options after --: %q", shell, got)
			}
		})
	}
}

// TestCompletionJobsFiles: after every jobs, each shell completes the
// files of jobs and the directories, any name, past its options and their
// values and past the files already given.
func TestCompletionJobsFiles(t *testing.T) {
	work := t.TempDir()
	if err := os.Mkdir(filepath.Join(work, "jobs.d"), 0o700); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"jobs.tab", "hosts.txt", "jobs.d/a.tab"} {
		if err := os.WriteFile(filepath.Join(work, f), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		line string
		want []string // base names: shells differ in how they show a path
	}{
		{"every jobs ", []string{"hosts.txt", "jobs.d", "jobs.tab"}},
		{"every jobs j", []string{"jobs.d", "jobs.tab"}},
		{"every jobs jobs.d/", []string{"a.tab"}},
		{"every jobs jobs.tab h", []string{"hosts.txt"}},
		{"every jobs --output raw --max-concurrent 2 h", []string{"hosts.txt"}},
		{"every --watch jobs -q jobs.t", []string{"jobs.tab"}},
		{"every jobs --check --from 2026-03-08T00:00:00 h", []string{"hosts.txt"}},
	}
	for _, shell := range shellNames {
		t.Run(shell, func(t *testing.T) {
			if _, err := exec.LookPath(shell); err != nil {
				testutil.SkipWithout(t, shell, "its completion is not driven")
			}
			for _, tt := range tests {
				got := baseNames(completeIn(t, work, shell, tt.line))
				if !slices.Equal(got, tt.want) {
					t.Errorf("%s completes %q with %q, want %q", shell, tt.line, got, tt.want)
				}
			}
		})
	}
}

// baseNames are the last elements of paths, sorted: dir/a for a, b/ for b.
func baseNames(paths []string) []string {
	var names []string
	for _, p := range paths {
		names = append(names, filepath.Base(p))
	}
	slices.Sort(names)
	return names
}
