package main

import (
	"fmt"
	"io"
	"os"
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
// hidden). It is quiet: a directory it cannot read has no names.
func printJobNames(flag string, stdout io.Writer) error {
	dir, err := stateDir(flag)
	if err != nil {
		return nil
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if name, ok := strings.CutSuffix(e.Name(), ".json"); ok && name != "" && !strings.HasPrefix(name, ".") {
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
	// The spellings of the options that take a value, so the script can
	// tell a value from the schedule or the command.
	var valued []string
	for _, fs := range [][]compFlag{run, status, next} {
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
	fmt.Fprintf(w, `# bash completion for every(1). Generated by every completion bash; do not edit.
# Install: source <(every completion bash), or save it as
# /usr/share/bash-completion/completions/every.

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

    if [[ -n $cmd ]]; then
        if declare -F _command_offset >/dev/null; then
            _command_offset "$cmd"
        elif ((cmd == COMP_CWORD)); then
            COMPREPLY=($(compgen -c -- "$cur"))
        else
            COMPREPLY=($(compgen -f -- "$cur"))
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
	fmt.Fprintf(w, "    %s) COMPREPLY=($(compgen -d -- \"$cur\")); return ;;\n", strings.Join(dirs, "|"))
	fmt.Fprintf(w, "    %s) COMPREPLY=($(compgen -f -- \"$cur\")); return ;;\n", strings.Join(files, "|"))
	fmt.Fprintf(w, `    %[1]s) return ;;
    esac

    case $sub in
    status)
        if [[ $cur == -* ]]; then
            COMPREPLY=($(compgen -W '%[2]s' -- "$cur"))
        else
            COMPREPLY=($(compgen -W "$(every status --%[5]s ${statedir:+--state-dir "$statedir"} 2>/dev/null)" -- "$cur"))
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
        fi ;;
    esac
}
complete -F _every every
`, strings.Join(valued, "|"), words(status), words(next), words(run), namesFlag, strings.Join(shellNames, " "))
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
    local i
    for ((i = 1; i < CURRENT; i++)); do
        case ${words[i]} in
        --state-dir) dir=(--state-dir "${words[i+1]}") ;;
        --state-dir=*) dir=("${words[i]}") ;;
        esac
    done
    jobs=(${(f)"$(every status --%[4]s $dir 2>/dev/null)"})
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
    while ((i < CURRENT)); do
        w=${words[i]}
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
		strings.Join(switches(), "|"))
}

// fishQuote quotes a string for fish, in single quotes.
func fishQuote(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, "'", `\'`).Replace(s) + "'"
}

// fishCompletion writes the fish script.
func fishCompletion(w io.Writer) {
	fmt.Fprintf(w, `# fish completion for every(1). Generated by every completion fish; do not edit.
# Install: every completion fish > ~/.config/fish/completions/every.fish

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
    every status --%s $dir 2>/dev/null
end

complete -c every -n __fish_use_subcommand -f -a status -d 'list the jobs of a state directory or a fleet'\''s Redis'
complete -c every -n __fish_use_subcommand -f -a next -d 'print the next slots of a schedule'
complete -c every -n __fish_use_subcommand -f -a completion -d 'print a shell completion script'
complete -c every -n '__fish_seen_subcommand_from status' -f -a '(__every_jobs)'
complete -c every -n '__fish_seen_subcommand_from completion' -f -a %s
`, namesFlag, fishQuote(strings.Join(shellNames, " ")))
	groups := []struct {
		cond  string
		flags []cli.Flag
	}{
		{"'not __fish_seen_subcommand_from status next completion'", slices.Concat(runFlags, metaFlags)},
		{"'__fish_seen_subcommand_from status'", append(slices.Clone(statusFlags), metaFlags[0])},
		{"'__fish_seen_subcommand_from next'", append(slices.Clone(nextFlags), metaFlags[0])},
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
