package cli

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"strconv"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/everycli/every/internal/ui"
	"github.com/everycli/every/schedule"
)

// This file owns every next: the next slots of a schedule, to check it and
// its DST behaviour before trusting it.

// NextSettings is every next's command line, checked.
type NextSettings struct {
	slots schedule.Schedule
	loc   *time.Location // the zone the slots are shown in
	from  time.Time
	n     int
}

// nextConfig checks every next's command line.
func nextConfig(c *cli.Context, inv invocation) (NextSettings, error) {
	o := &options{c: c, given: map[string]bool{}}
	ns := NextSettings{from: time.Now(), loc: time.Local}
	if len(inv.names) != 1 {
		if expr, globbed, ok := unquotedCron(inv.names, dirNames()); ok {
			return ns, ui.Usagef("next takes one schedule: a cron expression is one argument; quote it: every next '%s'%s", expr, globNote(globbed))
		}
		return ns, ui.Usagef("next takes one schedule, as one argument; try: every next '*/5 * * * *'")
	}
	n, err := strconv.Atoi(c.String("n"))
	if err != nil || n < 1 {
		return ns, ui.BadFlag("-n", c.String("n"), "give a whole number of slots, 1 or more", "")
	}
	ns.n = n
	if ns.slots, err = o.schedule(inv.names[0]); err != nil {
		return ns, err
	}
	if tz := o.get("tz"); tz != "" {
		ns.loc, _ = schedule.LoadZone(tz) // checked by o.schedule
	}
	if loc := ns.slots.Location(); loc != nil {
		ns.loc = loc // CRON_TZ= in the expression wins
	}
	if from := c.String("from"); from != "" {
		if ns.from, err = parseFrom(from, ns.loc); err != nil {
			return ns, ui.BadFlag("--from", from, "give a time in RFC 3339, such as 2026-03-08T00:00:00-05:00", "or a local time of --tz without the offset, such as 2026-03-08T00:00:00")
		}
	}
	if err := comes(inv.names[0], ns.slots, ns.from); err != nil {
		return ns, err
	}
	// A plain duration starts at once: its grid is anchored at TIME.
	ns.slots = ns.slots.Anchored(ns.from)
	return ns, nil
}

// localLayouts are the local times --from takes without an offset: RFC
// 3339's less the offset, to the minute or the day, with a space for the T.
// (time.Parse takes a fraction of a second after the seconds unasked.)
var localLayouts = []string{"2006-01-02T15:04:05", "2006-01-02T15:04", "2006-01-02 15:04:05", "2006-01-02 15:04", "2006-01-02"}

// parseFrom reads --from: an RFC 3339 time, or a local time of loc. A local
// time that does not exist that day (in a DST gap) is the end of the gap,
// one that occurs twice its first occurrence, as for a fixed-time job.
func parseFrom(s string, loc *time.Location) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err == nil {
		return t, nil
	}
	for _, layout := range localLayouts {
		if wall, lerr := time.Parse(layout, s); lerr == nil {
			return schedule.At(wall, loc), nil
		}
	}
	return time.Time{}, err
}

// nextBuffer is how much of every next's output is written at once: a few
// system calls for a long listing, and a reader that has gone (| head -1)
// is noticed within one buffer.
const nextBuffer = 32 << 10

// lastYear is the last year whose times RFC 3339 can write (four digits).
const lastYear = 9999

// horizon returns why slot t, the one after prev, cannot be listed by every
// next, or "": past the longest span a time.Duration counts from the start
// (the "in" column; and a grid's slots, counted in it, wrap there into the
// past), or past the year 9999, which RFC 3339 cannot write.
func horizon(from, prev, t time.Time, loc *time.Location) string {
	from, prev, t = from.Round(0), prev.Round(0), t.Round(0) // on the wall clock's readings
	switch {
	case !t.After(prev) || !from.Add(t.Sub(from)).Equal(t):
		return fmt.Sprintf("more than %d years after --from, further than every next counts", maxYears)
	case t.In(loc).Year() > lastYear:
		return fmt.Sprintf("past the year %d, which RFC 3339 cannot write", lastYear)
	}
	return ""
}

// maxYears is the longest span every next counts, in whole years: that of
// a time.Duration.
const maxYears = math.MaxInt64 / int64(365.2425*24*float64(time.Hour))

// PrintNext prints the next slots, one a line: the time with its zone's
// offset, the local weekday, how far from the start it is, and, for a slot
// that a DST change shaped, how. It stops at the first write error, and
// at the first slot past what it can show (see horizon): the slots before
// it printed, it returns a usage error that says how many -n can ask for.
func PrintNext(ns NextSettings, w io.Writer) error {
	bw := bufio.NewWriterSize(w, nextBuffer)
	t := ns.from
	for i := range ns.n {
		prev := t
		t = ns.slots.Next(t)
		if why := horizon(ns.from, prev, t, ns.loc); why != "" {
			if err := bw.Flush(); err != nil {
				return fmt.Errorf("cannot write the slots: %w", err)
			}
			if i == 0 {
				return ui.BadFlag("--from", ns.from.In(ns.loc).Format(time.RFC3339Nano), "the next slot lies "+why, "give an earlier time")
			}
			return ui.BadFlag("-n", strconv.Itoa(ns.n), fmt.Sprintf("the slots after the first %d lie %s", i, why),
				fmt.Sprintf("give -n %d or less", i))
		}
		local := t.In(ns.loc)
		note := changeNote(ns.slots.Change(t), local)
		if _, err := fmt.Fprintf(bw, "%s  %s  in %s%s\n", local.Format(time.RFC3339Nano), local.Format("Mon"), distance(t.Sub(ns.from)), note); err != nil {
			return fmt.Errorf("cannot write the slots: %w", err)
		}
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("cannot write the slots: %w", err)
	}
	return nil
}

// changeNote is the end of a line of every next for a slot that a DST
// change shaped: the local times that did not exist and run at it, or that
// its local time occurs twice.
func changeNote(ch schedule.Change, local time.Time) string {
	switch n := len(ch.Skipped); {
	case n == 1:
		return fmt.Sprintf("  (%s does not exist that day)", clock(ch.Skipped[0]))
	case n == 2:
		return fmt.Sprintf("  (%s and %s do not exist that day)", clock(ch.Skipped[0]), clock(ch.Skipped[1]))
	case n > 2:
		return fmt.Sprintf("  (%d times from %s to %s do not exist that day)", n, clock(ch.Skipped[0]), clock(ch.Skipped[n-1]))
	case ch.Again:
		return fmt.Sprintf("  (%s again: the clocks went back)", clock(local))
	case ch.Once:
		return fmt.Sprintf("  (%s occurs twice that day: it runs at the first only)", clock(local))
	}
	return ""
}

// clock is a time of day for people: 02:30, or 02:30:15 with seconds.
func clock(t time.Time) string {
	if t.Second() == 0 && t.Nanosecond() == 0 {
		return t.Format("15:04")
	}
	return t.Format("15:04:05.999999999")
}

// distance is schedule.Distance.
func distance(d time.Duration) string { return schedule.Distance(d) }
