package schedule

import (
	"time"
	_ "time/tzdata" // zones work in a scratch container, without /usr/share/zoneinfo
)

// civil is a set of wall-clock readings (date and time of day, no zone),
// each held as a UTC time: a cron expression's, or an aligned grid's.
type civil interface {
	// next returns the earliest reading of the set at or after w.
	next(w time.Time) (time.Time, bool)
	// prev returns the latest reading of the set at or before w.
	prev(w time.Time) (time.Time, bool)
}

// aligned is the wall-clock readings whose time of day is a whole multiple
// of step since midnight; step divides 24h.
type aligned struct{ step time.Duration }

func (a aligned) next(w time.Time) (time.Time, bool) {
	day := w.Truncate(24 * time.Hour) // UTC readings: days are whole
	return day.Add((w.Sub(day) + a.step - 1) / a.step * a.step), true
}

func (a aligned) prev(w time.Time) (time.Time, bool) {
	day := w.Truncate(24 * time.Hour)
	return day.Add(w.Sub(day) / a.step * a.step), true
}

// Calendar is a schedule on the wall clock of a zone: a cron expression or an
// aligned duration. Its slots are real instants, chosen from its wall-clock
// readings by cronie's rules for DST. A wildcard schedule (minute or hour
// field starting with '*', an aligned step of 1h or less) runs at every
// instant whose local reading matches: 23 hourly runs on a spring-forward
// day, 25 on a fall-back day. A fixed-time schedule runs a reading that does
// not exist that day once, at the end of the gap, and a reading that occurs
// twice once, at its first occurrence.
type Calendar struct {
	set      civil
	loc      *time.Location
	wildcard bool
	text     string
	// recorded is the schedule as the user wrote it, with --align and --tz
	// (see Parse); empty: text.
	recorded string
}

// Location returns the zone of the schedule's wall clock.
func (c *Calendar) Location() *time.Location { return c.loc }

// String returns the schedule in canonical form.
func (c *Calendar) String() string { return c.text }

// Recorded returns the schedule as the state records it.
func (c *Calendar) Recorded() string {
	if c.recorded != "" {
		return c.recorded
	}
	return c.text
}

// WallClock is true: a calendar's slots are readings of its zone's wall clock.
func (*Calendar) WallClock() bool { return true }

// Anchored returns c: a calendar has no anchor.
func (c *Calendar) Anchored(time.Time) Schedule { return c }

// First returns the first slot after anchor: a calendar waits for it.
func (c *Calendar) First(anchor time.Time) time.Time { return c.Next(anchor) }

// Period returns a generous span of one period from t: to the slot after
// the next.
func (c *Calendar) Period(t time.Time) time.Duration { return c.Next(c.Next(t)).Sub(t) }

// MinGap returns the shortest time between two of the next slots after t.
func (c *Calendar) MinGap(t time.Time) time.Duration { return minGap(c, t) }

// never is what Next returns for a schedule that fires no more: far enough
// to wait for ever, and still after t.
func never(t time.Time) time.Time { return t.AddDate(100, 0, 0) }

// Over reports whether s has no slot after t: a cron expression whose years
// have all passed. Its last slot, when one is found, is last.
func Over(s Schedule, t time.Time) (last time.Time, over bool) {
	if s.Next(t).Before(never(t)) {
		return time.Time{}, false
	}
	return s.Prev(t), true
}

// maxScan bounds the wall-clock readings one Next or Prev looks at.
const maxScan = 1 << 20

// Next returns the earliest slot strictly after t.
func (c *Calendar) Next(t time.Time) time.Time {
	t = t.Round(0)
	best, ok := c.scanUp(t, c.wall(t))
	if !ok {
		return never(t)
	}
	if _, end := t.In(c.loc).ZoneBounds(); end.IsZero() || best.Before(end) {
		// No offset change between t and best: wall-clock order is
		// real-time order, and the first reading found is the first slot.
		return best
	}
	// An offset change lies between: a reading before t's may be a later
	// instant (a repeated hour), one after it an earlier one. Look at every
	// reading that any instant in [t, best] can have.
	lo, hi := c.offsets(t, best)
	first, ok := c.set.next(c.shift(t, lo))
	last := c.shift(best, hi)
	for w, n := first, 0; ok && !w.After(last) && n < maxScan; n++ {
		for _, s := range c.slots(w) {
			if s.After(t) && s.Before(best) {
				best = s
			}
		}
		w, ok = c.set.next(w.Add(1))
	}
	return best
}

// scanUp returns the first slot after t from the readings at or after w.
func (c *Calendar) scanUp(t, w time.Time) (time.Time, bool) {
	for n := 0; n < maxScan; n++ {
		var ok bool
		if w, ok = c.set.next(w); !ok {
			return time.Time{}, false
		}
		for _, s := range c.slots(w) {
			if s.After(t) {
				return s, true
			}
		}
		w = w.Add(1)
	}
	return time.Time{}, false
}

// Prev returns the latest slot at or before t.
func (c *Calendar) Prev(t time.Time) time.Time {
	t = t.Round(0)
	best, ok := c.scanDown(t, c.wall(t))
	if !ok {
		return time.Time{}
	}
	if start, _ := t.In(c.loc).ZoneBounds(); start.IsZero() || !best.Before(start) {
		return best
	}
	lo, hi := c.offsets(best, t)
	first, ok := c.set.prev(c.shift(t, hi))
	last := c.shift(best, lo)
	for w, n := first, 0; ok && !w.Before(last) && n < maxScan; n++ {
		for _, s := range c.slots(w) {
			if !s.After(t) && s.After(best) {
				best = s
			}
		}
		w, ok = c.set.prev(w.Add(-1))
	}
	return best
}

// scanDown returns the last slot at or before t from the readings at or
// before w.
func (c *Calendar) scanDown(t, w time.Time) (time.Time, bool) {
	for n := 0; n < maxScan; n++ {
		var ok bool
		if w, ok = c.set.prev(w); !ok {
			return time.Time{}, false
		}
		slots := c.slots(w)
		for i := len(slots) - 1; i >= 0; i-- {
			if !slots[i].After(t) {
				return slots[i], true
			}
		}
		w = w.Add(-1)
	}
	return time.Time{}, false
}

// wall returns the wall-clock reading of t in the schedule's zone, as a UTC time.
func (c *Calendar) wall(t time.Time) time.Time {
	_, off := t.In(c.loc).Zone()
	return t.UTC().Add(time.Duration(off) * time.Second)
}

// shift returns t's reading under a fixed offset.
func (c *Calendar) shift(t time.Time, off time.Duration) time.Time {
	return t.UTC().Add(off)
}

// offsetAt returns the zone's UTC offset at t.
func (c *Calendar) offsetAt(t time.Time) time.Duration {
	_, off := t.In(c.loc).Zone()
	return time.Duration(off) * time.Second
}

// offsets returns the least and greatest UTC offsets of the zone in [from, to].
func (c *Calendar) offsets(from, to time.Time) (lo, hi time.Duration) {
	lo = c.offsetAt(from)
	hi = lo
	for t, n := from, 0; n < 1000; n++ {
		_, end := t.In(c.loc).ZoneBounds()
		if end.IsZero() || end.After(to) {
			break
		}
		off := c.offsetAt(end)
		lo, hi = min(lo, off), max(hi, off)
		t = end
	}
	return lo, hi
}

// instants returns the real instants whose wall-clock reading is w, earliest
// first: none in a gap, two in a repeated hour, else one. It assumes at most
// one offset change within 15 hours of any instant, as every zone has.
func (c *Calendar) instants(w time.Time) []time.Time {
	var out []time.Time
	for _, probe := range []time.Duration{-15 * time.Hour, 0, 15 * time.Hour} {
		i := w.Add(-c.offsetAt(w.Add(probe)))
		if !c.wall(i).Equal(w) {
			continue
		}
		switch {
		case len(out) == 0 || i.After(out[len(out)-1]):
			out = append(out, i)
		case i.Before(out[0]):
			out = append([]time.Time{i}, out...)
		}
	}
	return out
}

// slots returns the slots for the wall-clock reading w, by cronie's rules.
func (c *Calendar) slots(w time.Time) []time.Time {
	is := c.instants(w)
	switch {
	case c.wildcard:
		return is
	case len(is) > 0:
		return is[:1] // a repeated time runs at its first occurrence
	}
	// A time that does not exist runs at the end of its gap: the instant the
	// offset changed, if w lies between the readings before and after it.
	before := c.offsetAt(w.Add(-15 * time.Hour))
	after := w.Add(-before) // past the change: read on the later offset
	start, _ := after.In(c.loc).ZoneBounds()
	if start.IsZero() || w.Before(c.shift(start, before)) || !w.Before(c.wall(start)) {
		return nil
	}
	return []time.Time{start.UTC()}
}

// Count returns how many slots of s lie in [from, to), at most limit.
func Count(s Schedule, from, to time.Time, limit int64) int64 {
	if g, ok := s.(Grid); ok {
		// Slots s with from <= s < to: those at or before to-1ns, less those
		// at or before from-1ns.
		return min(max(g.Index(to.Add(-1))-g.Index(from.Add(-1)), 0), limit)
	}
	n := int64(0)
	if from.Before(to) && s.Prev(from).Equal(from) {
		n++ // from is a slot
	}
	for t := s.Next(from); n < limit && t.Before(to); t = s.Next(t) {
		n++
	}
	return n
}

// At returns the instant of a wall-clock reading in loc (its clock read from
// wall, whatever wall's own zone) by the fixed-time rules: a reading that
// does not exist that day is the end of its gap, one that occurs twice its
// first occurrence.
func At(wall time.Time, loc *time.Location) time.Time {
	y, mo, d := wall.Date()
	h, mi, s := wall.Clock()
	w := time.Date(y, mo, d, h, mi, s, wall.Nanosecond(), time.UTC)
	if slots := (&Calendar{loc: loc}).slots(w); len(slots) > 0 {
		return slots[0]
	}
	return time.Date(y, mo, d, h, mi, s, wall.Nanosecond(), loc) // unreachable: a reading exists or lies in a gap
}
