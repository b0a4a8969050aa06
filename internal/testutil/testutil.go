// Package testutil holds the one way every's tests wait on real time: a
// bound generous enough for a loaded 2-core machine, polling until a
// condition holds within it (Eventually), and a call that must not block
// (Bounded). Tests wait on a file, a signal or a condition, never sleep
// and then assert.
package testutil

import (
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
	deadline := time.Now().Add(WaitBound)
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

// Bounded calls f and returns its error, failing the test if f has not
// returned within WaitBound.
func Bounded(t testing.TB, f func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- f() }()
	select {
	case err := <-done:
		return err
	case <-time.After(WaitBound):
		t.Fatalf("blocked for %v", WaitBound)
		return nil
	}
}
