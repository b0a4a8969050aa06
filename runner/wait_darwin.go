package runner

import (
	"errors"

	"golang.org/x/sys/unix"
)

// awaitExit returns once process pid has exited, without reaping it, so that
// exec.Cmd.Wait then returns at once, and reports whether it saw the exit:
// until Wait, the process is a zombie whose pid (and process group id)
// cannot be reused, and exec.go sweeps the group in that window. It waits on
// a kqueue for EVFILT_PROC NOTE_EXIT, blocking its thread as Wait's wait4
// would (darwin's waitid is not used: Go's own os package does not trust
// it). On any error it returns false, and Wait blocks as usual.
func awaitExit(pid int) bool {
	kq, err := unix.Kqueue()
	if err != nil {
		return false
	}
	defer unix.Close(kq)
	unix.CloseOnExec(kq)
	var ev unix.Kevent_t
	unix.SetKevent(&ev, pid, unix.EVFILT_PROC, unix.EV_ADD|unix.EV_ONESHOT)
	ev.Fflags = unix.NOTE_EXIT
	if _, err := unix.Kevent(kq, []unix.Kevent_t{ev}, nil, nil); err != nil {
		return false // ESRCH: already exiting, too late to watch; Wait will do
	}
	out := make([]unix.Kevent_t, 1)
	for {
		n, err := unix.Kevent(kq, nil, out, nil)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		return err == nil && n == 1 && out[0].Fflags&unix.NOTE_EXIT != 0
	}
}
