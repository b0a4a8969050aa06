package runner

import (
	"time"

	"github.com/everycli/every/schedule"
)

// Grid and the parsers live in package schedule; these names remain until
// the callers outside the runner move to it.
type Grid = schedule.Grid

// ParseDuration is schedule.ParseDuration.
func ParseDuration(s string) (time.Duration, error) { return schedule.ParseDuration(s) }

// ParseInterval is schedule.ParseInterval.
func ParseInterval(s string) (time.Duration, error) { return schedule.ParseInterval(s) }
