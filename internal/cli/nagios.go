package cli

import (
	"strconv"
	"strings"
)

// nagiosAsked reports whether argv (or EVERY_NAGIOS) asks for every status
// --nagios, read without parsing it, for an argv that does not parse: a
// monitoring plugin's usage error is still its one UNKNOWN line and exit 3.
// It skips the values of the options that take one, as split does.
func NagiosAsked(args []string, getenv func(string) string) bool {
	i, arity := 0, flagArity(runFlags)
	before := false // --nagios before status: misplaced, but asked for
	for ; i < len(args) && args[i] != "status"; i++ {
		a := args[i]
		if a == "--" || len(a) < 2 || a[0] != '-' {
			return false // a run's schedule or command, not every status
		}
		name, _, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		before = before || name == "nagios"
		if arity[name] && !hasValue {
			i++
		}
	}
	if i >= len(args) {
		return false
	}
	asked, _ := strconv.ParseBool(getenv(envName("nagios")))
	asked = asked || before
	arity = flagArity(statusFlags)
	for i++; i < len(args) && args[i] != "--"; i++ {
		a := args[i]
		if len(a) < 2 || a[0] != '-' {
			continue
		}
		name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		switch {
		case name == "nagios":
			// --nagios=junk asks for the plugin too: the value is the error.
			off, err := strconv.ParseBool(value)
			asked = !hasValue || err != nil || off
		case arity[name] && !hasValue:
			i++
		}
	}
	return asked
}
