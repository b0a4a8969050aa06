package cli

import (
	"testing"
	"time"
)

// TestOptionDuration: a duration option takes every's duration syntax or a
// bare number of seconds, as timeout(1) and systemd do.
func TestOptionDuration(t *testing.T) {
	tests := []struct {
		in   string
		want time.Duration
	}{
		{"60", time.Minute},
		{"2.5", 2500 * time.Millisecond},
		{".5", 500 * time.Millisecond},
		{"5.", 5 * time.Second},
		{"0", 0},
		{"0.0", 0},
		{"-1", -time.Second}, // parsed; the caller refuses it as negative
		{"+3", 3 * time.Second},
		{"1m30s", 90 * time.Second},
		{"1d", 24 * time.Hour},
		{"0.000000001", time.Nanosecond},
	}
	for _, tt := range tests {
		if got, err := optionDuration(tt.in); err != nil || got != tt.want {
			t.Errorf("optionDuration(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
	for _, bad := range []string{"", ".", "1.5.5", "5x", "1e3", "0x10", "99999999999", "--1", "1 s", " 1"} {
		if got, err := optionDuration(bad); err == nil {
			t.Errorf("optionDuration(%q) = %v, want an error", bad, got)
		}
	}
}
