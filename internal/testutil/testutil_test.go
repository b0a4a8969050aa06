package testutil

import (
	"errors"
	"testing"
	"time"
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

func TestEventuallyWithinGivesUp(t *testing.T) {
	const bound = 50 * time.Millisecond
	n := 0
	start := time.Now()
	if EventuallyWithin(bound, func() bool { n++; return false }) {
		t.Fatal("EventuallyWithin reported a condition held that never did")
	}
	if took := time.Since(start); took < bound {
		t.Fatalf("EventuallyWithin gave up after %v, before its bound of %v", took, bound)
	}
	if n < 2 {
		t.Fatalf("EventuallyWithin asked %d times in %v, want it to ask again", n, bound)
	}
}

func TestReceive(t *testing.T) {
	ch := make(chan int)
	go func() { ch <- 7 }()
	if v, ok := Receive(ch); !ok || v != 7 {
		t.Fatalf("Receive = %v, %v; want the value sent, 7, true", v, ok)
	}
	done := make(chan struct{})
	close(done)
	if _, ok := Receive(done); !ok {
		t.Fatal("Receive on a closed channel = false, want true: the close is what is waited for")
	}
}

func TestReceiveGivesUp(t *testing.T) {
	const bound = 50 * time.Millisecond
	start := time.Now()
	if v, ok := receiveWithin(bound, make(chan int)); ok || v != 0 {
		t.Fatalf("receiveWithin on a silent channel = %v, %v; want 0, false", v, ok)
	}
	if took := time.Since(start); took < bound {
		t.Fatalf("receiveWithin gave up after %v, before its bound of %v", took, bound)
	}
}

func TestBounded(t *testing.T) {
	want := errors.New("done")
	if err := Bounded(t, func() error { return want }); err != want {
		t.Fatalf("Bounded = %v, want f's own error %v", err, want)
	}
}
