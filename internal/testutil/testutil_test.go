package testutil

import (
	"errors"
	"testing"
)

func TestEventually(t *testing.T) {
	n := 0
	if !Eventually(func() bool { n++; return n >= 3 }) {
		t.Fatal("Eventually gave up on a condition that came to hold")
	}
	if n != 3 {
		t.Fatalf("Eventually asked %d times, want 3: it must stop once the condition holds", n)
	}
}

func TestBounded(t *testing.T) {
	want := errors.New("done")
	if err := Bounded(t, func() error { return want }); err != want {
		t.Fatalf("Bounded = %v, want f's own error %v", err, want)
	}
}
