package runner

import (
	"math"
	"testing"
	"time"
)

func TestBackoff(t *testing.T) {
	tests := []struct {
		base, limit time.Duration
		k           int
		want        time.Duration
	}{
		{time.Second, time.Minute, 0, 0},
		{time.Second, time.Minute, 1, time.Second},
		{time.Second, time.Minute, 2, 2 * time.Second},
		{time.Second, time.Minute, 3, 4 * time.Second},
		{time.Second, time.Minute, 6, 32 * time.Second},
		{time.Second, time.Minute, 7, time.Minute},
		{time.Second, time.Minute, 64, time.Minute},
		{time.Second, time.Minute, math.MaxInt, time.Minute},
		{time.Hour, time.Minute, 1, time.Minute},
		{0, time.Minute, 5, 0},
		{time.Second, 0, 3, 4 * time.Second},
		{time.Second, 0, 100, math.MaxInt64},
		{time.Second, 0, math.MaxInt, math.MaxInt64},
		{time.Duration(math.MaxInt64 / 2), 0, 2, math.MaxInt64 - 1},
		{time.Duration(math.MaxInt64/2 + 1), 0, 2, math.MaxInt64},
	}
	for _, tt := range tests {
		if got := Backoff(tt.base, tt.limit, tt.k); got != tt.want {
			t.Errorf("Backoff(%v, %v, %d) = %v, want %v", tt.base, tt.limit, tt.k, got, tt.want)
		}
	}
}

func TestWithJitter(t *testing.T) {
	tests := []struct {
		d    time.Duration
		r    float64
		want time.Duration
	}{
		{10 * time.Second, 0, 10 * time.Second},
		{10 * time.Second, 0.5, 11500 * time.Millisecond},
		{10 * time.Second, 0.999999, 12999997 * time.Microsecond},
		{0, 0.7, 0},
		{math.MaxInt64, 0.9, math.MaxInt64},
	}
	for _, tt := range tests {
		if got := WithJitter(tt.d, tt.r); got != tt.want {
			t.Errorf("WithJitter(%v, %v) = %v, want %v", tt.d, tt.r, got, tt.want)
		}
	}
}
