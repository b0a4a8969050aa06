package main

import (
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/everycli/every/schedule"
)

// This file owns every next: the next slots of a schedule, to check it and
// its DST behaviour before trusting it.

// nextSettings is every next's command line, checked.
type nextSettings struct {
	slots schedule.Schedule
	loc   *time.Location // the zone the slots are shown in
	from  time.Time
	n     int
}

// nextConfig checks every next's command line.
func nextConfig(c *cli.Context, inv invocation) (nextSettings, error) {
	o := &options{c: c, given: map[string]bool{}}
	ns := nextSettings{from: time.Now(), loc: time.Local}
	if len(inv.names) != 1 {
		return ns, usagef("every next takes one schedule, as one argument; try: every next '*/5 * * * *'")
	}
	n, err := strconv.Atoi(c.String("n"))
	if err != nil || n < 1 {
		return ns, usagef("bad -n %q: give a whole number of slots, 1 or more", c.String("n"))
	}
	ns.n = n
	if from := c.String("from"); from != "" {
		if ns.from, err = time.Parse(time.RFC3339Nano, from); err != nil {
			return ns, usagef("bad --from %q: give a time in RFC 3339, such as 2026-03-08T00:00:00-05:00", from)
		}
	}
	if ns.slots, _, err = o.schedule(inv.names[0]); err != nil {
		return ns, err
	}
	switch s := ns.slots.(type) {
	case *schedule.Calendar:
		ns.loc = s.Location()
	case schedule.Grid:
		// A plain duration starts at once: its grid is anchored at TIME.
		ns.slots = schedule.Grid{Anchor: ns.from, Interval: s.Interval}
		if tz := o.get("tz"); tz != "" {
			ns.loc, _ = schedule.LoadZone(tz) // checked by o.schedule
		}
	}
	return ns, nil
}

// printNext prints the next slots, one a line: the time with its zone's
// offset, the local weekday, and how far from the start it is.
func printNext(ns nextSettings, w io.Writer) {
	t := ns.from
	for range ns.n {
		t = ns.slots.Next(t)
		local := t.In(ns.loc)
		fmt.Fprintf(w, "%s  %s  in %s\n", local.Format(time.RFC3339Nano), local.Format("Mon"), t.Sub(ns.from).Round(time.Millisecond))
	}
}
