package runner

import "time"

// Backoff returns the wait before attempt k+1 after attempt k failed:
// min(base * 2^(k-1), limit). It never overflows, however large k is.
func Backoff(base, limit time.Duration, k int) time.Duration {
	if base <= 0 || k < 1 {
		return 0
	}
	if limit > 0 && base >= limit {
		return limit
	}
	d := base
	for i := 1; i < k; i++ {
		if d > (1<<63-1)/2 {
			if limit > 0 {
				return limit
			}
			return 1<<63 - 1
		}
		d *= 2
		if limit > 0 && d >= limit {
			return limit
		}
	}
	return d
}

// WithJitter adds up to 30% of d, scaled by r in [0, 1).
func WithJitter(d time.Duration, r float64) time.Duration {
	extra := time.Duration(float64(d) * 0.3 * r)
	if extra < 0 || d > 1<<63-1-extra {
		return d
	}
	return d + extra
}
