package runner

// darwin has no child subreaper and no parent-death signal. The command
// still gets a process group of its own, and timeouts and stops reach that
// group; what leaves it (setsid, a double fork whose middle process ends) is
// re-parented to launchd, out of every's reach. Should every die, even by
// SIGKILL, the run's guard (guard_watchdog.go) kills the group; what left it
// runs on.

import "os/exec"

// procs starts the command's processes; there is no reaper.
var procs reaper

type reaper struct{}

func (reaper) enable() {}

func (reaper) start(cmd *exec.Cmd) (*escapees, error) {
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return &escapees{pgid: cmd.Process.Pid}, nil // its own group (Setpgid)
}

func (reaper) forget(int) {}
