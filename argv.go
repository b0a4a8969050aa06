package main

import (
	"slices"
	"strings"
)

// This file owns the splitting of argv into options, the schedule and the
// command, before urfave/cli sees the options.

// invocation is argv split into its parts.
type invocation struct {
	opts       []string        // option tokens, in their order, values included
	given      map[string]bool // the options given on the command line, by canonical name
	schedule   string
	command    []string
	help       bool     // --help: no schedule needed
	version    bool     // --version: no schedule needed either
	status     bool     // every status
	next       bool     // every next
	completion bool     // every completion
	names      []string // every status NAME..., every next SCHEDULE, every completion SHELL
}

// split separates options, the schedule and the command. urfave/cli stops
// parsing options at the first positional argument, so options may stand on
// either side of the schedule only if they are gathered here first. Everything
// after "--" is the command; without "--", the first positional after the
// schedule starts it.
func split(args []string, arity map[string]bool) (invocation, error) {
	var inv invocation
	positional := 0
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			inv.command = args[i+1:]
			break
		}
		if len(a) < 2 || a[0] != '-' {
			if positional == 0 && (a == "status" || a == "next" || a == "completion") {
				// Options before the subcommand are its own: every --state-dir D status.
				return splitSub(a, append(slices.Clone(inv.opts), args[i+1:]...))
			}
			if positional == 0 {
				inv.schedule = a
				positional++
				continue
			}
			inv.command = args[i:]
			break
		}
		tokens, name, err := option(args, i, arity, "every")
		if err != nil {
			return inv, err
		}
		if inv.given == nil {
			inv.given = map[string]bool{}
		}
		i += len(tokens) - 1
		if name == "version" {
			// every's own, not urfave/cli's: printed by parse.
			inv.version = true
			continue
		}
		inv.given[canonical()[name]] = true
		inv.opts = append(inv.opts, tokens...)
		if name == "help" || name == "h" {
			inv.help = true
		}
	}
	if inv.help || inv.version {
		return inv, nil
	}
	if inv.schedule == "" {
		return inv, usagef("missing schedule; try: every 90s -- COMMAND")
	}
	if len(inv.command) == 0 {
		return inv, usagef("missing command after schedule %q; try: every %s -- COMMAND", inv.schedule, inv.schedule)
	}
	return inv, nil
}

// splitSub gathers the options of every status, every next or every
// completion, wherever they stand, from the job names, the schedule or the
// shell.
func splitSub(sub string, args []string) (invocation, error) {
	inv := invocation{status: sub == "status", next: sub == "next", completion: sub == "completion"}
	arity := flagArity(statusFlags)
	switch {
	case inv.next:
		arity = flagArity(nextFlags)
	case inv.completion:
		arity = flagArity(nil)
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			inv.names = append(inv.names, args[i+1:]...)
			break
		}
		if len(a) < 2 || a[0] != '-' {
			inv.names = append(inv.names, a)
			continue
		}
		tokens, _, err := option(args, i, arity, "every "+sub)
		if err != nil {
			return inv, err
		}
		inv.opts = append(inv.opts, tokens...)
		i += len(tokens) - 1
	}
	return inv, nil
}

// option reads the option at args[i]: its tokens (with its value, when it
// takes one not given with "="), and its name.
func option(args []string, i int, arity map[string]bool, cmd string) ([]string, string, error) {
	a := args[i]
	name, _, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
	takesValue, known := arity[name]
	switch {
	case !known:
		return nil, name, usagef("unknown option %s; see %s --help", a, cmd)
	case !takesValue || hasValue:
		return []string{a}, name, nil
	case i+1 >= len(args):
		return nil, name, usagef("option %s needs a value; see %s --help", a, cmd)
	}
	return []string{a, args[i+1]}, name, nil
}
