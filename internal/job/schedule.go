package job

import (
	"math"
	"strings"
	"time"

	"github.com/everycli/every/schedule"
)

// Recorded parses a schedule as the state records it, with its --align and
// --tz.
func Recorded(text string) (schedule.Schedule, error) {
	f := strings.Fields(text)
	var opts schedule.Options
	if n := len(f); n >= 2 && f[n-2] == "--tz" {
		loc, err := schedule.LoadZone(f[n-1])
		if err != nil {
			return nil, err
		}
		opts.Zone, f = loc, f[:n-2]
	}
	if n := len(f); n >= 1 && f[n-1] == "--align" {
		opts.Align, f = true, f[:n-1]
	}
	return schedule.Parse(strings.Join(f, " "), opts)
}

// PeriodOf returns a schedule's period, for the sanity check of a record:
// a grid's interval, a calendar's span from now to the slot after next.
func PeriodOf(s schedule.Schedule, now time.Time) time.Duration {
	if g, ok := s.(schedule.Grid); ok {
		return g.Interval
	}
	return schedule.Period(s, now)
}

// Gap returns the shortest time between two of the next slots after now: the
// period that --jitter must stay within ("0,1 * * * *": a minute).
func Gap(s schedule.Schedule) time.Duration {
	t := s.Next(time.Now())
	shortest := time.Duration(math.MaxInt64)
	for range 32 {
		next := s.Next(t)
		shortest, t = min(shortest, next.Sub(t)), next
	}
	return shortest
}
