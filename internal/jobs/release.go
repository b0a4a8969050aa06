package jobs

// This file owns the process's memory between slots: every jobs gives back
// what its runs freed once no job has a slot within job.ReleaseAfter, as a
// standalone every does before each long wait of its own (docs/DESIGN.md,
// Performance).

import (
	"sync"
	"time"
)

// releaser gives the process's memory back (release) when every loop it
// knows waits for a slot at least after away: each loop tells it, before
// such a wait, when the wait ends (idle); a loop that has not, or whose wait
// has ended since at its time (it runs, or waits for a nearer slot, which
// it does not tell), holds the memory. A wait ended early (SIGUSR1, a
// reload) still counts as waiting until its time: a release then costs a
// collection during that run, nothing more. One release a wait at most, by
// the last loop to go idle: a minute's slot of 1,000 jobs frees its memory
// once.
type releaser struct {
	after   time.Duration
	release func()
	mu      sync.Mutex
	until   map[*loop]time.Time // zero: not waiting for long
}

func newReleaser(after time.Duration, release func()) *releaser {
	return &releaser{after: after, release: release, until: map[*loop]time.Time{}}
}

// add and remove tell of a loop that starts and of one that ended.
func (r *releaser) add(l *loop) {
	r.mu.Lock()
	r.until[l] = time.Time{}
	r.mu.Unlock()
}

func (r *releaser) remove(l *loop) {
	r.mu.Lock()
	delete(r.until, l)
	r.mu.Unlock()
}

// idle tells that loop l waits until until, at least after from now: the
// memory is given back if no other loop has a slot nearer.
func (r *releaser) idle(l *loop, until time.Time) {
	r.mu.Lock()
	r.until[l] = until
	now := time.Now()
	for _, u := range r.until {
		if u.Sub(now) < r.after {
			r.mu.Unlock()
			return
		}
	}
	r.mu.Unlock()
	r.release()
}
