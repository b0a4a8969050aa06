package runner

// darwin has no child subreaper and no parent-death signal. The command
// still gets a process group of its own, and timeouts and stops reach that
// group; what leaves it (setsid, a double fork whose middle process ends) is
// re-parented to launchd, out of every's reach. Should every die, even by
// SIGKILL, a watchdog (watchdog_unix.go) that every starts in the group
// kills the group; what left it runs on.

import (
	"os/exec"
	"sync"
)

// procs starts the command's processes and their watchdogs.
var procs = &reaper{dogs: map[int]*watchdog{}}

// reaper keeps the watchdog of each running command, by the command's pid.
type reaper struct {
	mu   sync.Mutex
	dogs map[int]*watchdog
}

func (*reaper) enable() {}

// start starts cmd and its watchdog, before anything can reap cmd: its
// process group exists while the watchdog joins it. Without a watchdog (no
// /bin/sh) the command runs as it would without one.
func (r *reaper) start(cmd *exec.Cmd) (*escapees, error) {
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	if d, err := startWatchdog(cmd.Process.Pid); err == nil {
		r.mu.Lock()
		r.dogs[cmd.Process.Pid] = d
		r.mu.Unlock()
	}
	return &escapees{}, nil
}

// forget is called once cmd.Wait has reaped pid, after the group was sent
// SIGKILL: its watchdog is released and reaped.
func (r *reaper) forget(pid int) {
	r.mu.Lock()
	d := r.dogs[pid]
	delete(r.dogs, pid)
	r.mu.Unlock()
	if d != nil {
		d.release()
	}
}
