// Package testutil holds the one way every's tests wait on real time: a
// bound generous enough for a loaded 2-core machine, polling until a
// condition holds within it (Eventually), waiting for a value on a channel
// within it (Receive), and a call that must not block (Bounded). Tests wait
// on a file, a signal or a condition, never sleep and then assert.
package testutil

import (
	"bytes"
	"sync"
	"testing"
	"time"
)

// WaitBound is how long a test waits for something that should happen in
// milliseconds: generous, for a loaded 2-core machine.
const WaitBound = 30 * time.Second

// pollEvery is how often Eventually asks again.
const pollEvery = 5 * time.Millisecond

// Eventually calls cond every few milliseconds until it holds, for at most
// WaitBound, and reports whether it held.
func Eventually(cond func() bool) bool {
	return EventuallyWithin(WaitBound, cond)
}

// EventuallyWithin is Eventually for at most bound: for a wait whose bound
// its caller is given, or one known to need more than WaitBound (a
// cluster's members waiting for each other).
func EventuallyWithin(bound time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(bound)
	for {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(pollEvery)
	}
}

// Receive waits for a value from ch, or for ch to be closed, for at most
// WaitBound, and returns the value (zero if closed) and whether either came.
func Receive[T any](ch <-chan T) (T, bool) {
	return receiveWithin(WaitBound, ch)
}

func receiveWithin[T any](bound time.Duration, ch <-chan T) (T, bool) {
	timer := time.NewTimer(bound)
	defer timer.Stop()
	select {
	case v := <-ch:
		return v, true
	case <-timer.C:
		var zero T
		return zero, false
	}
}

// Bounded calls f and returns its error, failing the test if f has not
// returned within WaitBound.
func Bounded(t testing.TB, f func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- f() }()
	err, ok := Receive(done)
	if !ok {
		t.Fatalf("blocked for %v", WaitBound)
	}
	return err
}

// Buffer is a log that a test reads while other goroutines write it.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}
