package cli

import (
	"fmt"
	"time"

	"github.com/everycli/every/internal/status"
	"github.com/everycli/every/internal/ui"
	"github.com/urfave/cli/v2"
)

// statusConfig checks every status's command line.
func statusConfig(c *cli.Context, inv invocation) (status.Settings, error) {
	o := &options{c: c, given: map[string]bool{}}
	ss := status.Settings{StateDirs: stateDirs(c, inv), Store: c.String("store"), JSON: c.Bool("json"), Names: inv.names,
		AllowInactive: c.Bool("allow-inactive"), Nagios: c.Bool("nagios")}
	for _, d := range []struct {
		name string
		to   *time.Duration
	}{{"max-age", &ss.MaxAge}, {"warn-age", &ss.WarnAge}} {
		if o.get(d.name) == "" {
			continue
		}
		if *d.to = o.duration(d.name); o.err == nil && *d.to == 0 {
			o.err = ui.BadFlag(o.label(d.name), o.get(d.name), "give an age such as 1h", "")
		}
	}
	switch {
	case o.err != nil:
		return ss, o.err
	case ss.Nagios && ss.MaxAge == 0:
		return ss, ui.Usagef("--nagios needs --max-age, the age that is CRITICAL (and --warn-age, WARNING)")
	case ss.WarnAge > 0 && !ss.Nagios:
		return ss, ui.Usagef("--warn-age is for --nagios (its WARNING); --max-age alone passes or fails")
	case ss.AllowInactive && ss.MaxAge == 0:
		return ss, ui.Usagef("--allow-inactive is for --max-age: give the age too, as in --max-age 2h --allow-inactive")
	case ss.JSON && ss.MaxAge > 0:
		return ss, ui.Usagef("--json and --max-age: choose one; --max-age prints a line per stale job, --json the listing")
	case ss.WarnAge > 0 && ss.MaxAge > 0 && ss.WarnAge > ss.MaxAge:
		return ss, ui.BadFlag(o.label("warn-age"), o.get("warn-age"), fmt.Sprintf("longer than %s %q", o.label("max-age"), o.get("max-age")), "the warning comes first")
	}
	return ss, nil
}

// stateDirs are every status's state directories: each --state-dir given
// on the command line, or the one of EVERY_STATE_DIR (one directory: a
// path may hold any character, so the variable is never split); none for
// the default one.
func stateDirs(c *cli.Context, inv invocation) []string {
	if len(inv.stateDirs) > 0 {
		return inv.stateDirs
	}
	if d := c.String("state-dir"); d != "" {
		return []string{d}
	}
	return nil
}
