package runner

import (
	"context"
	"os"
	"sync"
	"testing"
	"time"
)

// On the system's clock (timerfds, on time), the loop's wake-up is armed at
// the slot itself: it comes at or after the slot, and leaves nothing for the
// precise sleep to do. (On Go's timers it is armed earlyWake before.)
func TestLoopWakesAtTheSlot(t *testing.T) {
	var (
		mu        sync.Mutex
		remaining []time.Duration
	)
	exit := Loop(context.Background(), Config{
		Name: "t", Command: []string{"true"}, Schedule: grid("200ms"), MaxRuns: 4,
		Exec: func(context.Context, Attempt) Result { return Result{Outcome: Success} },
		SleepUntil: func(at time.Time) {
			mu.Lock()
			remaining = append(remaining, time.Until(at))
			mu.Unlock()
		},
		Signals: make(chan os.Signal),
	})
	if exit.Reason != MaxRuns {
		t.Fatalf("loop ended with %+v, want MaxRuns", exit)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(remaining) < 3 {
		t.Fatalf("%d waits for a slot, want at least 3", len(remaining))
	}
	for i, d := range remaining {
		if d > 0 {
			t.Errorf("wait %d woke %v before its slot, want at or after it", i, d)
		}
	}
	if got := (&loop{cfg: Config{Clock: goClock{}}}).earlyWake(); got != earlyWake {
		t.Errorf("on Go's timers the wake-up is armed %v early, want %v", got, earlyWake)
	}
}
