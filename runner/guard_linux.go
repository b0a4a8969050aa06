package runner

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// A guard ties a run's process group to every's life, with no process of
// its own: the kernel kills the group, with SIGKILL, the moment every dies,
// however it dies (SIGKILL, the OOM killer, a crash).
//
// It is a pipe. The command inherits its read end; every keeps the write
// end, close-on-exec, so that no other process holds it. The read end is set
// to signal the command's process group when it becomes readable (O_ASYNC,
// F_SETOWN to the group), with SIGKILL in place of SIGIO (F_SETSIG).
// every never writes to the pipe: the read end becomes readable only when
// the last writer closes, that is when every exits or dies, as the kernel
// closes its descriptors. The group is then sent SIGKILL, all its members at
// once, the command's grandchildren included (the parent-death signal only
// reaches the command's first process).
//
// No stranger can be hit: the owner is the group's struct pid, held by the
// kernel, not its number, so a group gone and its number reused is not the
// owner. The signal goes only where every may send one (same user, or every
// is root). A process that closes the inherited descriptor is still killed
// while another member of the group holds it; a process that left the group
// (setsid) is out of its reach, and of any once every is dead (a systemd
// unit's cgroup or a container's PID namespace catches those).
//
// At a run's end every closes its end itself, after the group has been
// swept: the signal then finds the group gone, or only what the sweep could
// not kill.
type guard struct {
	r, w *os.File
}

// newGuard makes a guard's pipe, both ends close-on-exec in every: the
// command gets the read end as an inherited file, not by leaking it.
func newGuard() (*guard, error) {
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		return nil, fmt.Errorf("make the run's guard pipe: %w", err)
	}
	return &guard{r: os.NewFile(uintptr(p[0]), "every-guard"), w: os.NewFile(uintptr(p[1]), "every-guard")}, nil
}

// file is what the command inherits: the pipe's read end.
func (g *guard) file() *os.File { return g.r }

// arm points the read end, now the command's too, at process group pgid,
// and closes every's copy of it. pgid must exist: its leader not reaped yet.
// Should arming fail, the command runs as it would have without a guard
// (its first process still has the parent-death signal).
func (g *guard) arm(pgid int) error {
	defer g.r.Close()
	fd := g.r.Fd()
	// A negative owner is a process group.
	if _, err := unix.FcntlInt(fd, unix.F_SETOWN, -pgid); err != nil {
		return fmt.Errorf("arm the run's guard: F_SETOWN: %w", err)
	}
	if _, err := unix.FcntlInt(fd, unix.F_SETSIG, int(unix.SIGKILL)); err != nil {
		return fmt.Errorf("arm the run's guard: F_SETSIG: %w", err)
	}
	if _, err := unix.FcntlInt(fd, unix.F_SETFL, unix.O_ASYNC); err != nil {
		return fmt.Errorf("arm the run's guard: O_ASYNC: %w", err)
	}
	return nil
}

// release closes every's end: call it once the group has been swept.
func (g *guard) release() {
	g.r.Close() // in case arm never ran: the command failed to start
	g.w.Close()
}
