package schedule

// This file says what a DST change does to a calendar's slots: shifted,
// skipped or doubled, for the catch_up reason=dst lines and every next's notes.

import "time"

// Shift is how a slot of a fixed-time schedule stands to its wall-clock time
// on a day of a DST change.
type Shift int

// The shifts.
const (
	NoShift Shift = iota // the slot is at its wall-clock time
	Gap                  // its wall-clock time did not exist that day: the slot is the end of the gap
	Repeat               // its wall-clock time occurs twice that day: this, the first, is its only run
)

// Shift says whether slot, a slot of c, was moved or chosen by a DST change.
// Wildcard schedules run at real instants and are never shifted.
func (c *Calendar) Shift(slot time.Time) Shift {
	if c.wildcard {
		return NoShift
	}
	w := c.wall(slot)
	if m, ok := c.set.next(w); !ok || !m.Equal(w) {
		return Gap // not a reading of the set: the end of a gap
	}
	if is := c.instants(w); len(is) == 2 {
		return Repeat
	}
	return NoShift
}

// Change is how a change of the zone's offset shaped one slot, for people
// (every next): the slot itself is always right; this says why it is where
// it is.
type Change struct {
	// Skipped are the wall-clock readings of the schedule that did not exist
	// that day and run at this slot, the end of their gap (a fixed-time
	// schedule only), earliest first; held as UTC times, as they name no
	// instant.
	Skipped []time.Time
	// Once says the slot's local time occurs twice that day and, the
	// schedule being fixed-time, this first occurrence is its only run.
	Once bool
	// Again says the slot's local time occurs twice that day and this is the
	// second run of it (a wildcard schedule runs both).
	Again bool
}

// maxSkipped bounds the readings Change lists for one gap.
const maxSkipped = 4096

// Change says how a DST change shaped slot, a slot of c.
func (c *Calendar) Change(slot time.Time) Change {
	var ch Change
	w := c.wall(slot)
	if is := c.instants(w); len(is) == 2 {
		ch.Once, ch.Again = !c.wildcard, c.wildcard && slot.Equal(is[1])
	}
	if c.wildcard {
		return ch // nothing runs in their stead: the readings of a gap run nowhere
	}
	start, _ := slot.In(c.loc).ZoneBounds()
	if !start.Equal(slot) {
		return ch
	}
	before, after := c.offsetAt(slot.Add(-time.Nanosecond)), c.offsetAt(slot)
	if after <= before {
		return ch // the clocks went back, or only the zone's name changed
	}
	for r, ok := c.set.next(c.shift(slot, before)); ok && r.Before(w) && len(ch.Skipped) < maxSkipped; r, ok = c.set.next(r.Add(1)) {
		ch.Skipped = append(ch.Skipped, r)
	}
	return ch
}
