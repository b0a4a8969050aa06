package ui

import (
	"errors"
	"fmt"
	"io/fs"
	"testing"
)

func TestBadFlag(t *testing.T) {
	tests := []struct {
		flag, value, reason, hint string
		want                      string
	}{
		{"--timeout", "5x", "not a duration", "try 30s", `bad --timeout "5x": not a duration; try 30s`},
		{"EVERY_RETRIES", "-1", "must not be negative", "", `bad EVERY_RETRIES "-1": must not be negative`},
		{"--name", "", "give a name", "", `bad --name "": give a name`},
	}
	for _, tt := range tests {
		err := BadFlag(tt.flag, tt.value, tt.reason, tt.hint)
		if err.Error() != tt.want {
			t.Errorf("BadFlag(%q, %q, ...) = %q, want %q", tt.flag, tt.value, err, tt.want)
		}
		if !errors.As(err, new(UsageError)) {
			t.Errorf("BadFlag(%q, ...) is not a UsageError", tt.flag)
		}
	}
}

func TestUnwrapPath(t *testing.T) {
	inner := errors.New("permission denied")
	wrapped := fmt.Errorf("context: %w", &fs.PathError{Op: "open", Path: "/x", Err: inner})
	if got := UnwrapPath(wrapped); got != inner {
		t.Errorf("UnwrapPath = %v, want %v", got, inner)
	}
	if plain := errors.New("plain"); UnwrapPath(plain) != plain {
		t.Error("UnwrapPath changed an error that holds no path")
	}
}
