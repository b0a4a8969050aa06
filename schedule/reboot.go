package schedule

import "time"

// RebootText is how a jobs file writes the schedule of a job that runs once
// when every jobs starts (cronie's @reboot), and how the state records it.
const RebootText = "@reboot"

// rebootInterval is the interval of Reboot's grid: its second slot lies a
// century after its first, which is as good as never for a process.
const rebootInterval = 36500 * 24 * time.Hour

// Reboot returns the schedule of a jobs file's @reboot line: one slot, on the
// grid's anchor, which a loop puts at its start (First returns the anchor),
// then none for a century. Its Recorded text is RebootText, which Parse
// refuses: a standalone every has no start but its own, so only a jobs file
// gives @reboot a meaning (docs/GUIDE.md, Many jobs: every jobs).
func Reboot() Grid {
	return Grid{Anchor: time.Unix(0, 0).UTC(), Interval: rebootInterval, text: RebootText}
}
