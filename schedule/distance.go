package schedule

import (
	"fmt"
	"strings"
	"time"
)

// Distance writes how far off a time is, for people, in the duration syntax
// ParseDuration reads, without its zero units: to the millisecond under a
// minute (500ms, 2.5s), else to the second in days, hours, minutes and
// seconds (1m30s, 15h, 1d13h30m, not 37h30m0s). A distance of zero or less
// is 0s. every next and the loop's ready line both write waits so.
func Distance(d time.Duration) string {
	if d <= 0 {
		return "0s"
	}
	if d < time.Minute {
		return d.Round(time.Millisecond).String()
	}
	d = d.Round(time.Second)
	var b strings.Builder
	for _, u := range []struct {
		unit string
		size time.Duration
	}{{"d", 24 * time.Hour}, {"h", time.Hour}, {"m", time.Minute}, {"s", time.Second}} {
		if n := d / u.size; n > 0 {
			fmt.Fprintf(&b, "%d%s", n, u.unit)
			d -= n * u.size
		}
	}
	return b.String()
}
