package cli

import (
	"strings"

	"github.com/urfave/cli/v2"
)

// flagHelp is urfave/cli's FlagStringer: a flag's line in --help and in the
// man page, its names, usage, default and environment variable.
var flagHelp = cli.FlagStringer

// urfave/cli's App.Setup strings every flag that has a category, on every
// start, to file it in categories that only urfave/cli's own help template
// would show; every lays out its help itself (optionsHelp, with flagHelp).
// With the names alone for that, a one-shot no longer lays out the help of
// fifty flags it will not print: that was over a third of its parsing.
func init() { cli.FlagStringer = flagKey }

// flagKey is what urfave/cli's categories file a flag under: its names,
// unique to it.
func flagKey(f cli.Flag) string { return strings.Join(f.Names(), ", ") }
