package cli

import (
	"slices"
	"strings"

	"github.com/urfave/cli/v2"
)

// envVars are the environment variables the flags read.
func envVars(sets ...[]cli.Flag) map[string]bool {
	m := map[string]bool{}
	for _, flags := range sets {
		for _, f := range flags {
			if e, ok := f.(interface{ GetEnvVars() []string }); ok {
				for _, v := range e.GetEnvVars() {
					m[v] = true
				}
			}
		}
	}
	return m
}

// outputVars are what every sets for its command, and hookVars what it sets
// for its hooks besides (docs/REFERENCE.md, Environment); inherited ones (of
// an outer every, or of its hook) are dropped, so the command and its hooks
// see only this job's.
var (
	outputVars = []string{"EVERY_NAME", "EVERY_RUN", "EVERY_ATTEMPT", "EVERY_SLOT", "EVERY_LAST_SUCCESS", "EVERY_FENCING_TOKEN"}
	hookVars   = []string{"EVERY_RESULT", "EVERY_EXIT_CODE", "EVERY_SIGNAL", "EVERY_DURATION_MS", "EVERY_ATTEMPTS", "EVERY_CONSECUTIVE_FAILURES", "EVERY_OUTPUT"}
)

// childEnv is the environment the command inherits: every's own, less the
// options every reads and the outputs of an outer every.
//
// No variable every reads as an option is passed on (docs/GUIDE.md, The
// command line: inputs are not inherited), those of a run, of every status
// and of every next: an every inside a job takes nothing of the outer job's
// options, neither its identity (EVERY_STATE, EVERY_LOCK, EVERY_STATE_DIR,
// EVERY_STORE: it would find the outer job's lock busy or its slot done) nor
// how it is told and bounded (EVERY_PING, EVERY_ON_FAILURE,
// EVERY_METRICS_FILE, EVERY_TIMEOUT...: it would ping the outer check, run
// the outer hook and overwrite the outer metrics).
func childEnv(environ []string) []string {
	return withoutInputs(environ, runFlags, statusFlags, nextFlags)
}

// withoutInputs is environ less the variables the flags read (worked out
// from them, so that a new option's is never left out), and the outputs of
// an outer every.
func withoutInputs(environ []string, flags ...[]cli.Flag) []string {
	inputs := envVars(flags...)
	return slices.DeleteFunc(slices.Clone(environ), func(kv string) bool {
		k, _, _ := strings.Cut(kv, "=")
		return strings.HasPrefix(k, "EVERY_") &&
			(inputs[k] || slices.Contains(outputVars, k) || slices.Contains(hookVars, k))
	})
}
