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
// It is a pipe. The command inherits its read end; every keeps both ends,
// close-on-exec, so that no other process holds the write end. The read end
// is set to signal a process group when it becomes readable (O_ASYNC), with
// SIGKILL in place of SIGIO (F_SETSIG), and each run points it at the run's
// own group (F_SETOWN). every never writes to the pipe: the read end
// becomes readable only when the write end closes, that is when every
// exits or dies, as the kernel closes its descriptors. The group is then
// sent SIGKILL, all its members at once, the command's grandchildren
// included (the parent-death signal only reaches the command's first
// process). The signal goes to the group the last run was pointed at: a
// run in progress, or one that ended and was swept (nothing left to kill).
//
// One guard serves a loop's runs one after the other, so that a run costs
// one system call (F_SETOWN), not a pipe made and closed: the loop's runs
// never overlap. A one-off (a hook, a test) makes its own.
//
// No stranger can be hit: the owner is the group's struct pid, held by the
// kernel, not its number, so a group gone and its number reused is not the
// owner. The signal goes only where every may send one (same user, or every
// is root). A process that closes the inherited descriptor is still killed
// while another member of the group holds it; a process that left the group
// (setsid) is out of its reach, and of any once every is dead (a systemd
// unit's cgroup or a container's PID namespace catches those).
type guard struct {
	r *os.File // what the commands inherit
	w int      // every's own: its closing is every's death
}

// newGuard makes a guard's pipe, both ends close-on-exec in every (the
// command gets the read end as an inherited file, not by leaking it), the
// read end set to send SIGKILL to its owner, which it has none of yet.
func newGuard() (*guard, error) {
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		return nil, fmt.Errorf("make the runs' guard: %w", err)
	}
	g := &guard{r: os.NewFile(uintptr(p[0]), "every-guard"), w: p[1]}
	if _, err := unix.FcntlInt(uintptr(p[0]), unix.F_SETSIG, int(unix.SIGKILL)); err != nil {
		g.close()
		return nil, fmt.Errorf("make the runs' guard: F_SETSIG: %w", err)
	}
	if _, err := unix.FcntlInt(uintptr(p[0]), unix.F_SETFL, unix.O_ASYNC); err != nil {
		g.close()
		return nil, fmt.Errorf("make the runs' guard: O_ASYNC: %w", err)
	}
	return g, nil
}

// file is what the command inherits: the pipe's read end.
func (g *guard) file() *os.File { return g.r }

// arm points the guard at process group pgid, the run's. pgid must exist:
// its leader not reaped yet. Should arming fail, the command runs as it
// would have without a guard (its first process still has the parent-death
// signal).
func (g *guard) arm(pgid int) error {
	// A negative owner is a process group.
	if _, err := unix.FcntlInt(g.r.Fd(), unix.F_SETOWN, -pgid); err != nil {
		return fmt.Errorf("arm the run's guard: F_SETOWN: %w", err)
	}
	return nil
}

// disarm is called once the run's group has been swept: there is nothing
// to do, the owner stays that group, gone.
func (g *guard) disarm() {}

// close closes both ends, once no run will use the guard again. The signal
// it may send goes to the last run's group, swept by then.
func (g *guard) close() {
	g.r.Close()
	unix.Close(g.w)
}
