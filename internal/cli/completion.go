package cli

import (
	"io"
	"slices"
	"strings"

	"github.com/everycli/every/internal/ui"
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
		return ui.Usagef("completion takes one shell: %s; try: every completion bash", strings.Join(shellNames, ", "))
	}
	write, ok := shells[inv.names[0]]
	if !ok {
		return ui.Usagef("bad shell %q: use one of %s", inv.names[0], strings.Join(shellNames, ", "))
	}
	write(stdout)
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
	"output":     outputModes,
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
// every, every status, every next and every jobs, so the scripts can tell a
// value from the schedule, the command or a file.
func valuedSpellings() []string {
	var valued []string
	for _, fs := range [][]compFlag{
		compFlags(slices.Concat(runFlags, metaFlags)),
		compFlags(append(slices.Clone(statusFlags), metaFlags[0])),
		compFlags(append(slices.Clone(nextFlags), metaFlags[0])),
		compFlags(append(slices.Clone(jobsFlags), metaFlags[0])),
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

// switches are the spellings of every's options that take no value, in
// every, every status, every next and every jobs.
func switches() []string {
	var s []string
	for _, f := range compFlags(slices.Concat(runFlags, metaFlags, statusFlags, nextFlags, jobsFlags)) {
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
