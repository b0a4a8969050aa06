package cli

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"
)

// This file owns every completion SHELL: completion scripts for bash, zsh
// and fish, made from the same flag definitions as --help and every(1).
// Job names for every status come from the hidden every status --names,
// which lists the state directory's jobs (the --state-dir on the command
// line being completed, else the default), so the shells need not know
// where the state lives.

// shells are the shells every completion writes scripts for.
var shells = map[string]func(io.Writer){"bash": bashCompletion, "zsh": zshCompletion, "fish": fishCompletion}

// shellNames are the keys of shells, in the order messages list them.
var shellNames = []string{"bash", "zsh", "fish"}

// namesFlag is every status's hidden option that prints the job names.
const namesFlag = "names"

// completionUsage is every completion's help.
const completionUsage = `NAME:
   every completion - print a shell completion script

USAGE:
   every completion bash|zsh|fish

   bash: source <(every completion bash), or save it as
         /usr/share/bash-completion/completions/every
   zsh:  every completion zsh > "${fpath[1]}/_every"
   fish: every completion fish > ~/.config/fish/completions/every.fish
`

// completion prints the script for the shell every completion names, or its
// help; another shell is a usage error.
func completion(inv invocation, stdout io.Writer) error {
	if slices.Contains(inv.opts, "--help") || slices.Contains(inv.opts, "-h") || slices.Contains(inv.opts, "-help") {
		_, err := io.WriteString(stdout, completionUsage)
		return err
	}
	if len(inv.names) != 1 {
		return usagef("every completion takes one shell: %s; try: every completion bash", strings.Join(shellNames, ", "))
	}
	write, ok := shells[inv.names[0]]
	if !ok {
		return usagef("bad shell %q: use one of %s", inv.names[0], strings.Join(shellNames, ", "))
	}
	write(stdout)
	return nil
}

// printJobNames prints the names of the jobs in the state directory, one a
// line, for the completions: as every status finds them (NAME.json, not
// hidden, and the jobs whose every is alive but has not run them yet), and
// only valid job names (SPEC section 8's alphabet): a file named
// "$(cmd).json" is no job, and its name never reaches a shell. It is quiet:
// a directory it cannot read has no names.
func printJobNames(flag string, stdout io.Writer) error {
	dir, err := stateDir(flag)
	if err != nil {
		return nil
	}
	entries, _ := os.ReadDir(dir)
	states, markers := jobFileNames(entries)
	names := slices.Clone(states)
	for _, name := range markers {
		if on, _, err := probeActive(filepath.Join(dir, name+".json"+markerSuffix), func(uint32) bool { return true }); err == nil && on {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	for _, name := range names {
		if checkName(name) == nil {
			fmt.Fprintln(stdout, name)
		}
	}
	return nil
}

// compFlag is what the completions need of a flag.
type compFlag struct {
	long, short string // names without dashes; short may be ""
	value       string // "" for a switch, else what its value is completed with
	usage       string // its usage, without the placeholder's quotes
}

// What a flag's value is completed with.
const (
	valNone = "none" // anything: no completion
	valDir  = "dir"
	valFile = "file"
)

// valueWords are the flags whose values are a fixed list of words.
var valueWords = map[string][]string{
	"catch-up":   catchUpPolicies,
	"log-format": logFormats,
	"log-level":  logLevels,
	"signal":     signalNames,
}

// valueKinds are the flags whose values are paths.
var valueKinds = map[string]string{
	"state-dir": valDir, "state": valFile, "lock": valFile, "metrics-file": valFile,
}

// compFlags turns flag definitions into what the completions need; hidden
// flags are left out.
func compFlags(flags []cli.Flag) []compFlag {
	var out []compFlag
	for _, f := range flags {
		if vf, ok := f.(cli.VisibleFlag); ok && !vf.IsVisible() {
			continue
		}
		var cf compFlag
		for _, n := range f.Names() {
			if len(n) == 1 {
				cf.short = n
			} else {
				cf.long = n
			}
		}
		if df, ok := f.(cli.DocGenerationFlag); ok {
			cf.usage = strings.ReplaceAll(df.GetUsage(), "`", "")
			if df.TakesValue() {
				cf.value = valNone
				if k, ok := valueKinds[cf.long]; ok {
					cf.value = k
				}
				if _, ok := valueWords[cf.long]; ok {
					cf.value = "words"
				}
			}
		}
		out = append(out, cf)
	}
	return out
}

// spellings are a flag's spellings for bash: --long, -s.
func (f compFlag) spellings() []string {
	var s []string
	if f.long != "" {
		s = append(s, "--"+f.long)
	}
	if f.short != "" {
		s = append(s, "-"+f.short)
	}
	return s
}

// valuedSpellings are the spellings of the options that take a value, of
// every, every status and every next, so the scripts can tell a value from
// the schedule or the command.
func valuedSpellings() []string {
	var valued []string
	for _, fs := range [][]compFlag{
		compFlags(slices.Concat(runFlags, metaFlags)),
		compFlags(append(slices.Clone(statusFlags), metaFlags[0])),
		compFlags(append(slices.Clone(nextFlags), metaFlags[0])),
	} {
		for _, f := range fs {
			if f.value != "" {
				for _, s := range f.spellings() {
					if !slices.Contains(valued, s) {
						valued = append(valued, s)
					}
				}
			}
		}
	}
	return valued
}

// bashCompletion writes the bash script.
func bashCompletion(w io.Writer) {
	run := compFlags(slices.Concat(runFlags, metaFlags))
	status := compFlags(append(slices.Clone(statusFlags), metaFlags[0]))
	next := compFlags(append(slices.Clone(nextFlags), metaFlags[0]))
	words := func(fs []compFlag) string {
		var s []string
		for _, f := range fs {
			s = append(s, f.spellings()...)
		}
		return strings.Join(s, " ")
	}
	valued := valuedSpellings()
	fmt.Fprintf(w, `# bash completion for every(1). Generated by every completion bash; do not edit.
# Install: source <(every completion bash), or save it as
# /usr/share/bash-completion/completions/every.

# _every_add reads candidates, one a line, into COMPREPLY, each as it is:
# never split, globbed or expanded.
_every_add() {
    local line
    while IFS= read -r line; do COMPREPLY+=("$line"); done
}

_every() {
    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}
    # --flag=value: bash splits at "=".
    if [[ $prev == = ]] && ((COMP_CWORD >= 2)); then
        prev=${COMP_WORDS[COMP_CWORD-2]}
    fi
    [[ $cur == = ]] && cur=
    COMPREPLY=()

    # Where the words stand: the subcommand, or the schedule, then the command.
    local i w sub= sched= cmd= statedir=
    for ((i = 1; i < COMP_CWORD; i++)); do
        w=${COMP_WORDS[i]}
        if [[ $w == -- && -z $sub ]]; then
            cmd=$((i + 1)); break
        fi
        if [[ $w == --state-dir ]]; then
            statedir=${COMP_WORDS[i+1]}
            [[ $statedir == = ]] && statedir=${COMP_WORDS[i+2]}
        fi
        case $w in
        %[1]s)
            ((i++)); [[ ${COMP_WORDS[i]} == = ]] && ((i++)); continue ;;
        -*) continue ;;
        esac
        [[ $w == = ]] && continue
        if [[ -n $sub ]]; then
            continue
        elif [[ -z $sched && ( $w == status || $w == next || $w == completion ) ]]; then
            sub=$w
        elif [[ -z $sched ]]; then
            sched=$w
        else
            cmd=$i; break
        fi
    done
    # A typed word is never evaluated; only ~/ is taken as the shell would.
    [[ $statedir == "~/"* ]] && statedir=$HOME/${statedir#"~/"}

    if [[ -n $cmd ]]; then
        if declare -F _command_offset >/dev/null; then
            _command_offset "$cmd"
        elif ((cmd == COMP_CWORD)); then
            _every_add < <(compgen -c -- "$cur")
        else
            compopt -o filenames 2>/dev/null
            _every_add < <(compgen -f -- "$cur")
        fi
        return
    fi

    case $prev in
`, strings.Join(valued, "|"))
	for _, long := range []string{"catch-up", "log-format", "log-level", "signal"} {
		fmt.Fprintf(w, "    --%s) COMPREPLY=($(compgen -W '%s' -- \"$cur\")); return ;;\n", long, strings.Join(valueWords[long], " "))
	}
	var dirs, files []string
	for _, fs := range [][]compFlag{run, status} {
		for _, f := range fs {
			switch {
			case f.value == valDir && !slices.Contains(dirs, "--"+f.long):
				dirs = append(dirs, "--"+f.long)
			case f.value == valFile && !slices.Contains(files, "--"+f.long):
				files = append(files, "--"+f.long)
			}
		}
	}
	fmt.Fprintf(w, "    %s) compopt -o filenames 2>/dev/null; _every_add < <(compgen -d -- \"$cur\"); return ;;\n", strings.Join(dirs, "|"))
	fmt.Fprintf(w, "    %s) compopt -o filenames 2>/dev/null; _every_add < <(compgen -f -- \"$cur\"); return ;;\n", strings.Join(files, "|"))
	fmt.Fprintf(w, `    %[1]s) return ;;
    esac

    case $sub in
    status)
        if [[ $cur == -* ]]; then
            COMPREPLY=($(compgen -W '%[2]s' -- "$cur"))
        else
            # Job names only (SPEC section 8's alphabet), matched as strings:
            # never passed to compgen -W, which would expand them.
            local name
            while IFS= read -r name; do
                [[ $name =~ ^[A-Za-z0-9][A-Za-z0-9._-]*$ && ${#name} -le %[7]d && $name == "$cur"* ]] && COMPREPLY+=("$name")
            done < <(every status --%[5]s ${statedir:+--state-dir "$statedir"} 2>/dev/null)
        fi ;;
    next)
        [[ $cur == -* ]] && COMPREPLY=($(compgen -W '%[3]s' -- "$cur")) ;;
    completion)
        [[ $cur == -* ]] || COMPREPLY=($(compgen -W '%[6]s' -- "$cur")) ;;
    *)
        if [[ $cur == -* ]]; then
            COMPREPLY=($(compgen -W '%[4]s' -- "$cur"))
        elif [[ -z $sched ]]; then
            COMPREPLY=($(compgen -W 'status next completion' -- "$cur"))
        else
            _every_add < <(compgen -c -- "$cur") # the command, after the schedule
        fi ;;
    esac
}
complete -F _every every
`, strings.Join(valued, "|"), words(status), words(next), words(run), namesFlag, strings.Join(shellNames, " "), maxName)
}

// switches are the spellings of every's options that take no value, in
// every, every status and every next.
func switches() []string {
	var s []string
	for _, f := range compFlags(slices.Concat(runFlags, metaFlags, statusFlags, nextFlags)) {
		if f.value == "" {
			for _, sp := range f.spellings() {
				if !slices.Contains(s, sp) {
					s = append(s, sp)
				}
			}
		}
	}
	return s
}

// zshQuote escapes a description for a zsh _arguments spec in single quotes.
func zshQuote(s string) string {
	s = strings.NewReplacer("'", `'\''`, "[", `\[`, "]", `\]`, ":", `\:`).Replace(s)
	return s
}

// zshSpecs are the _arguments specs of flags.
func zshSpecs(fs []compFlag) []string {
	var specs []string
	for _, f := range fs {
		action := ""
		switch f.value {
		case "":
		case valDir:
			action = ":dir:_directories"
		case valFile:
			action = ":file:_files"
		case "words":
			action = fmt.Sprintf(":value:(%s)", strings.Join(valueWords[f.long], " "))
		default:
			action = ":value: "
		}
		desc := "[" + zshQuote(f.usage) + "]"
		switch {
		case f.long != "" && f.short != "":
			specs = append(specs, fmt.Sprintf("'(-%s --%s)'{-%s,--%s}'%s%s'", f.short, f.long, f.short, f.long, desc, action))
		case f.long != "":
			specs = append(specs, fmt.Sprintf("'--%s%s%s'", f.long, desc, action))
		default:
			specs = append(specs, fmt.Sprintf("'-%s%s%s'", f.short, desc, action))
		}
	}
	return specs
}

// zshCompletion writes the zsh script.
func zshCompletion(w io.Writer) {
	list := func(fs []compFlag) string {
		return "\n        " + strings.Join(zshSpecs(fs), "\n        ") + "\n    "
	}
	fmt.Fprintf(w, `#compdef every
# zsh completion for every(1). Generated by every completion zsh; do not edit.
# Install: every completion zsh > "${fpath[1]}/_every"

_every_jobs() {
    local -a jobs dir
    local i name
    dir=($statedir) # given before the subcommand (_every)
    for ((i = 1; i < CURRENT; i++)); do
        case ${words[i]} in
        --state-dir) dir=(--state-dir "${words[i+1]/#\~\//$HOME/}") ;;
        --state-dir=*) dir=("${words[i]}") ;;
        esac
    done
    # Job names only (SPEC section 8's alphabet), added as words, never
    # evaluated; compadd quotes what it inserts.
    for name in ${(f)"$(every status --%[4]s $dir 2>/dev/null)"}; do
        [[ $name =~ '^[A-Za-z0-9][A-Za-z0-9._-]*$' ]] && (( $#name <= %[7]d )) && jobs+=("$name")
    done
    compadd -a jobs
}

_every() {
    local -a run_opts status_opts next_opts
    run_opts=(%[1]s)
    status_opts=(%[2]s)
    next_opts=(%[3]s)

    # The first word that is neither an option nor its value is a
    # subcommand or the schedule; after "--", or the next such word, comes
    # the command.
    local i=2 w sched=
    local -a statedir
    while ((i < CURRENT)); do
        w=${words[i]}
        case $w in
        --state-dir) statedir=(--state-dir "${words[i+1]/#\~\//$HOME/}") ;;
        --state-dir=*) statedir=("$w") ;;
        esac
        case $w in
        --)
            shift $i words
            ((CURRENT -= i))
            _normal
            return ;;
        --*=*|%[6]s) ;;
        -*) ((i++)) ;;
        *)
            if [[ -n $sched ]]; then
                shift $((i - 1)) words
                ((CURRENT -= i - 1))
                _normal
                return
            fi
            case $w in
            status|next|completion)
                shift $((i - 1)) words
                ((CURRENT -= i - 1))
                case $w in
                status) _arguments -s $status_opts '*:job:_every_jobs' ;;
                next) _arguments -s $next_opts '1:schedule: ' ;;
                completion) _arguments '1:shell:(%[5]s)' ;;
                esac
                return ;;
            esac
            sched=$w ;;
        esac
        ((i++))
    done
    _arguments -s $run_opts \
        '1:schedule:(status next completion)' \
        '2:command:_command_names -e'
}

if [[ $zsh_eval_context[-1] == loadautofunc ]]; then
    _every "$@"
else
    compdef _every every
fi
`, list(compFlags(slices.Concat(runFlags, metaFlags))), list(compFlags(append(slices.Clone(statusFlags), metaFlags[0]))),
		list(compFlags(append(slices.Clone(nextFlags), metaFlags[0]))), namesFlag, strings.Join(shellNames, " "),
		strings.Join(switches(), "|"), maxName)
}

// fishQuote quotes a string for fish, in single quotes.
func fishQuote(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, "'", `\'`).Replace(s) + "'"
}

// fishCompletion writes the fish script.
func fishCompletion(w io.Writer) {
	fmt.Fprintf(w, `# fish completion for every(1). Generated by every completion fish; do not edit.
# Install: every completion fish > ~/.config/fish/completions/every.fish

# __every_where says where the command line stands: run (before the
# schedule), sched (after it), command (the command: after -- or after the
# schedule), or the subcommand (status, next, completion). With --rest, it
# prints the command's words typed so far instead.
function __every_where
    set -l tokens (commandline -opc)
    set -e tokens[1]
    set -l sched
    while set -q tokens[1]
        set -l w $tokens[1]
        set -e tokens[1]
        switch $w
            case --
                test "$argv[1]" = --rest; and printf '%%s\n' $tokens; or echo command
                return
            case %[1]s
                set -q tokens[1]; and set -e tokens[1]
            case '-*'
            case '*'
                if set -q sched[1]
                    test "$argv[1]" = --rest; and printf '%%s\n' $w $tokens; or echo command
                    return
                else if contains -- $w status next completion
                    test "$argv[1]" = --rest; or echo $w
                    return
                end
                set sched $w
        end
    end
    test "$argv[1]" = --rest; and return
    set -q sched[1]; and echo sched; or echo run
end

function __every_in
    contains -- (__every_where) $argv
end

# __every_command completes the command as a command line of its own.
function __every_command
    __fish_complete_subcommand --commandline (__every_where --rest) (commandline -ct)
end

# __every_jobs prints the job names of the state directory on the line.
# Job names only (SPEC section 8's alphabet): nothing else reaches the line.
function __every_jobs
    set -l tokens (commandline -opc)
    set -l dir
    for i in (seq (count $tokens))
        switch $tokens[$i]
            case --state-dir
                set dir --state-dir $tokens[(math $i + 1)]
            case '--state-dir=*'
                set dir $tokens[$i]
        end
    end
    every status --%[2]s $dir 2>/dev/null | string match -r -- '^[A-Za-z0-9][A-Za-z0-9._-]{0,%[4]d}$'
end

complete -c every -n '__every_in run' -f -a status -d 'list the jobs of a state directory or a fleet'\''s Redis'
complete -c every -n '__every_in run' -f -a next -d 'print the next slots of a schedule'
complete -c every -n '__every_in run' -f -a completion -d 'print a shell completion script'
complete -c every -n '__every_in sched' -x -a '(__fish_complete_command)'
complete -c every -n '__every_in command' -x -a '(__every_command)'
complete -c every -n '__every_in status' -f -a '(__every_jobs)'
complete -c every -n '__every_in completion' -f -a %[3]s
`, strings.Join(valuedSpellings(), " "), namesFlag, fishQuote(strings.Join(shellNames, " ")), maxName-1)
	groups := []struct {
		cond  string
		flags []cli.Flag
	}{
		{"'__every_in run sched'", slices.Concat(runFlags, metaFlags)},
		{"'__every_in status'", append(slices.Clone(statusFlags), metaFlags[0])},
		{"'__every_in next'", append(slices.Clone(nextFlags), metaFlags[0])},
	}
	for _, g := range groups {
		for _, f := range compFlags(g.flags) {
			var b strings.Builder
			fmt.Fprintf(&b, "complete -c every -n %s", g.cond)
			switch {
			case f.long != "" && f.short != "":
				fmt.Fprintf(&b, " -l %s -s %s", f.long, f.short)
			case f.long != "":
				fmt.Fprintf(&b, " -l %s", f.long)
			default:
				// -n N: an old-style option, one dash and one letter.
				fmt.Fprintf(&b, " -o %s", f.short)
			}
			switch f.value {
			case "":
			case valDir:
				b.WriteString(" -x -a '(__fish_complete_directories)'")
			case valFile:
				b.WriteString(" -r -F")
			case "words":
				fmt.Fprintf(&b, " -x -a %s", fishQuote(strings.Join(valueWords[f.long], " ")))
			default:
				b.WriteString(" -x")
			}
			fmt.Fprintf(&b, " -d %s\n", fishQuote(f.usage))
			io.WriteString(w, b.String())
		}
	}
}
