package schedule

// This file reads schedules: a duration, a cron expression, an aligned
// duration, with --align and --tz, and the recorded form back.

import (
	"fmt"
	"strings"
	"time"
)

// Options are the flags that shape a schedule.
type Options struct {
	Align bool           // a duration is aligned on the local wall clock (--align)
	Zone  *time.Location // --tz; nil means time.Local. CRON_TZ= or TZ= in the expression wins.
}

// Parse parses a schedule: a duration ("90s", "1d", "@every 90s"), aligned on
// the wall clock with Options.Align, or a cron expression of 5 fields, 6 with
// seconds first, or 7 with seconds first and a year last (cronexpr's), or a
// descriptor (@daily), with an optional CRON_TZ=Zone prefix. A cron expression
// takes cronexpr's L, W, # and '?' in its day fields and full day and month
// names (docs/GUIDE.md, Cron expressions); the rest is cronie's. A plain
// duration is a Grid anchored at the Unix epoch; the loop puts it on its own
// anchor. Its Recorded text is s, and, but for a plain duration (which --tz
// moves no slot of), " --align" and " --tz ZONE" when given.
func Parse(s string, o Options) (Schedule, error) {
	sched, err := parse(s, o)
	switch sched := sched.(type) {
	case Grid:
		sched.text = s
		return sched, err
	case *Calendar:
		c := *sched
		c.recorded = s
		if o.Align {
			c.recorded += " --align"
		}
		if o.Zone != nil {
			c.recorded += " --tz " + o.Zone.String()
		}
		return &c, err
	}
	return sched, err
}

// ParseRecorded parses a schedule as the state records it (Recorded), with
// its --align and --tz.
func ParseRecorded(text string) (Schedule, error) {
	f := strings.Fields(text)
	var opts Options
	if n := len(f); n >= 2 && f[n-2] == "--tz" {
		loc, err := LoadZone(f[n-1])
		if err != nil {
			return nil, err
		}
		opts.Zone, f = loc, f[:n-2]
	}
	if n := len(f); n >= 1 && f[n-1] == "--align" {
		opts.Align, f = true, f[:n-1]
	}
	return Parse(strings.Join(f, " "), opts)
}

// parse is Parse, but for the recorded text.
func parse(s string, o Options) (Schedule, error) {
	loc := o.Zone
	if loc == nil {
		loc = time.Local
	}
	fields := strings.Fields(s)
	if len(fields) > 0 {
		for _, prefix := range []string{"CRON_TZ=", "TZ="} {
			if name, ok := strings.CutPrefix(fields[0], prefix); ok {
				if name == "" {
					return nil, fmt.Errorf("%s names no zone: write one such as %sEurope/Berlin or %sUTC", prefix, prefix, prefix)
				}
				z, err := LoadZone(name)
				if err != nil {
					return nil, err
				}
				loc, fields = z, fields[1:]
				break
			}
		}
	}
	if len(fields) == 0 {
		return nil, fmt.Errorf("empty schedule: give a duration (90s) or a cron expression (\"*/5 * * * *\")")
	}
	if len(fields) == 2 && strings.EqualFold(fields[0], "@every") {
		fields = fields[1:]
	} else if d, ok := descriptors[strings.ToLower(fields[0])]; ok && len(fields) == 1 {
		fields = strings.Fields(d)
	} else if strings.HasPrefix(fields[0], "@") {
		return nil, fmt.Errorf("%q is not a schedule: the descriptors are @yearly @annually @monthly @weekly @daily @midnight @hourly and @every DURATION", s)
	}
	if len(fields) == 1 {
		d, err := ParseInterval(fields[0])
		if err != nil {
			return nil, err
		}
		if !o.Align {
			return Grid{Anchor: time.Unix(0, 0).UTC(), Interval: d}, nil
		}
		c, err := Align(d, loc)
		if err != nil {
			return nil, fmt.Errorf("--align: %s does not divide 24h; %s", fields[0], alignHint)
		}
		return c, nil
	}
	if o.Align {
		return nil, fmt.Errorf("--align needs a duration, and %q is a cron expression: leave out --align", s)
	}
	set, wildcard, err := parseCron(fields)
	if err != nil {
		return nil, fmt.Errorf("cron %q: %w", s, err)
	}
	text := strings.Join(fields, " ")
	if loc != time.Local {
		text = "CRON_TZ=" + loc.String() + " " + text
	}
	return &Calendar{set: set, loc: loc, wildcard: wildcard, text: text}, nil
}

const alignHint = "pick one that does (250ms, 90s, 15m, 1h, 6h, 1d) or leave out --align"

// Align returns the schedule of --align: the instants whose local wall time
// in loc is a whole multiple of d since local midnight. d must divide 24h.
func Align(d time.Duration, loc *time.Location) (*Calendar, error) {
	if d <= 0 || 24*time.Hour%d != 0 {
		return nil, fmt.Errorf("--align: %v does not divide 24h; %s", d, alignHint)
	}
	text := d.String() + " --align"
	if loc != time.Local {
		text += " --tz " + loc.String()
	}
	return &Calendar{set: aligned{d}, loc: loc, wildcard: d <= time.Hour, text: text}, nil
}

// LoadZone loads an IANA zone by name, from the system or the database built
// into the binary.
func LoadZone(name string) (*time.Location, error) {
	if name == "" {
		return nil, fmt.Errorf("empty zone: name one such as Europe/Berlin or UTC")
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, fmt.Errorf("zone %q is not an IANA zone name: write one such as Europe/Berlin or UTC", name)
	}
	return loc, nil
}
