package runner

import (
	"fmt"
	"strconv"
	"strings"
)

// Codes is a set of failures, as --retry-on and --no-retry-on list them:
// exit codes and ranges of them, and the words timeout and signal.
type Codes struct {
	ranges  [][2]int
	timeout bool // a timed-out attempt
	signal  bool // an attempt killed by a signal
}

// ParseCodes parses a comma-separated list such as "75,100-110,timeout".
func ParseCodes(s string) (Codes, error) {
	var c Codes
	for part := range strings.SplitSeq(s, ",") {
		part = strings.TrimSpace(part)
		switch part {
		case "timeout":
			c.timeout = true
			continue
		case "signal":
			c.signal = true
			continue
		}
		lo, hi, isRange := strings.Cut(part, "-")
		a, errA := exitCode(lo)
		b, errB := a, error(nil)
		if isRange {
			b, errB = exitCode(hi)
		}
		switch {
		case errA != nil || errB != nil:
			return c, fmt.Errorf("%q is not an exit code (0-255), a range of them (100-110), timeout or signal", part)
		case b < a:
			return c, fmt.Errorf("%q is a reversed range; write %d-%d", part, b, a)
		}
		c.ranges = append(c.ranges, [2]int{a, b})
	}
	return c, nil
}

func exitCode(s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 || n > 255 || s[0] == '+' {
		return 0, fmt.Errorf("bad exit code %q", s)
	}
	return n, nil
}

// Has reports whether the failed attempt r is of the set.
func (c Codes) Has(r Result) bool {
	switch {
	case r.Outcome == Timeout:
		return c.timeout
	case r.Signal != 0:
		return c.signal
	}
	for _, rg := range c.ranges {
		if r.ExitCode >= rg[0] && r.ExitCode <= rg[1] {
			return true
		}
	}
	return false
}

// RetryPolicy says which failed attempts are worth a retry: those of On when
// it is given (else all), less those of Not. nil sets are not given.
type RetryPolicy struct {
	On, Not *Codes
}

// Retries reports whether the failed attempt r is worth a retry.
func (p RetryPolicy) Retries(r Result) bool {
	if p.On != nil && !p.On.Has(r) {
		return false
	}
	return p.Not == nil || !p.Not.Has(r)
}
