//go:build darwin || (freebsd && !386 && !arm)

package runner

import "os"

// A guard ties a run's process group to every's life. darwin and FreeBSD
// cannot have the kernel signal a group with SIGKILL when a pipe's writer
// goes (no F_SETSIG; their SIGIO is ignored by default), so the guard is a
// watchdog (watchdog_unix.go): a tiny process in the group that kills it
// when every's end of its pipe closes. It costs a process a run. A loop's
// runs share one guard, as on Linux; each arms its own watchdog.
type guard struct {
	dog *watchdog
}

func newGuard() (*guard, error) { return &guard{}, nil }

// file is nil: the command inherits nothing of the watchdog's.
func (*guard) file() *os.File { return nil }

// arm starts the watchdog in process group pgid, which must exist (its
// leader not reaped yet). Without a watchdog (no /bin/sh) the command runs
// as it would without one.
func (g *guard) arm(pgid int) error {
	d, err := startWatchdog(pgid)
	g.dog = d
	return err
}

// disarm lets the run's watchdog go and reaps it: call it once the group
// has been sent SIGKILL.
func (g *guard) disarm() {
	if g.dog != nil {
		g.dog.release()
		g.dog = nil
	}
}

// close is disarm: a watchdog guard holds nothing between runs.
func (g *guard) close() { g.disarm() }
