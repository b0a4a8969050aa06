//go:build freebsd && !386 && !arm

package runner

import (
	"errors"
	"os"
	"os/exec"
	"os/signal"
	"sync"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// every is a reaper (procctl(2) PROC_REAP_ACQUIRE), FreeBSD's child
// subreaper: whatever its command starts and then leaves (setsid, a double
// fork) is re-parented to every instead of to init, so that every can still
// reach it to stop it, and must reap it once it ends. The kernel also keeps,
// for each of a reaper's descendants, its subtree: the pid of the reaper's
// child it descends from, kept across re-parenting. So the command's
// escapees are exactly the descendants of subtree cmd.Process.Pid, with no
// /proc to read and no start times to compare.
//
// The safety rules are those of proc_linux.go. Reaping: os/exec's Wait must
// get the status of the children it waits for, so those are registered
// under mu, held across their fork, and the reaper reaps only the others.
// Signalling: a signal other than SIGKILL goes, by pid, only to every's own
// unreaped children (under mu: nothing else reaps those, so no pid is
// reused meanwhile); SIGKILL goes to the whole subtree with PROC_REAP_KILL,
// which the kernel applies to every's descendants only.

// procctl(2) commands and flags, from FreeBSD's sys/procctl.h (x/sys/unix
// has the system call's number only).
const (
	procReapAcquire = 2
	procReapStatus  = 4
	procReapGetpids = 5
	procReapKill    = 6

	reaperStatusOwned = 0x1

	reaperPidinfoValid  = 0x1
	reaperPidinfoChild  = 0x2
	reaperPidinfoZombie = 0x8 // FreeBSD 13.2 and later; 0 before

	reaperKillSubtree = 0x2
)

// The structures of sys/procctl.h. Their layout is the same on amd64 and
// arm64: 32-bit fields, then a pointer aligned to 8.
type (
	reaperStatus struct {
		flags       uint32
		children    uint32
		descendants uint32
		reaper      int32
		pid         int32
		_           [15]uint32
	}
	reaperPidinfo struct {
		pid     int32
		subtree int32
		flags   uint32
		_       [15]uint32
	}
	reaperPids struct {
		count uint32
		_     [15]uint32
		pids  *reaperPidinfo
	}
	reaperKill struct {
		sig     int32
		flags   uint32
		subtree int32
		killed  uint32
		fpid    int32
		_       [15]uint32
	}
)

// procctl calls procctl(P_PID, getpid(), cmd, data) on every itself.
func procctl(cmd int, data unsafe.Pointer) error {
	_, _, errno := unix.Syscall6(unix.SYS_PROCCTL, pPID, uintptr(os.Getpid()), uintptr(cmd), uintptr(data), 0, 0)
	if errno != 0 {
		return errno
	}
	return nil
}

// procs is the process's one reaper.
var procs = &reaper{ours: map[int]bool{}}

// reaper tracks every's children and reaps the orphans it inherits.
type reaper struct {
	once sync.Once
	mu   sync.Mutex
	ours map[int]bool // the children an exec.Cmd waits for
	// owned says every is a reaper. Else the procctl look-ups would answer
	// for every's own reaper (init: the whole system): they are not made,
	// and escapees are out of reach, as on darwin.
	owned bool
	buf   []reaperPidinfo
}

// enable makes every a reaper and starts reaping orphans, once.
func (r *reaper) enable() {
	r.once.Do(func() {
		// EBUSY: every is a reaper already (init, or acquired before).
		_ = procctl(procReapAcquire, nil)
		var st reaperStatus
		r.owned = procctl(procReapStatus, unsafe.Pointer(&st)) == nil && st.flags&reaperStatusOwned != 0
		// A handled signal is reset to its default at exec: the command does
		// not inherit this.
		c := make(chan os.Signal, 1)
		signal.Notify(c, syscall.SIGCHLD)
		go func() {
			for range c {
				r.reap()
			}
		}()
		r.reap() // orphans inherited before
	})
}

// start starts cmd as a registered child.
func (r *reaper) start(cmd *exec.Cmd) (*escapees, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	r.ours[cmd.Process.Pid] = true
	return &escapees{r: r, pgid: cmd.Process.Pid}, nil // its own group (Setpgid)
}

// forget is called once cmd.Wait has reaped pid. An orphan that ended
// meanwhile is reaped now.
func (r *reaper) forget(pid int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.ours, pid)
	r.reapLocked()
}

// reap reaps the orphans that have ended.
func (r *reaper) reap() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.reapLocked()
}

func (r *reaper) reapLocked() {
	if !r.owned {
		return
	}
	for _, p := range r.descendants() {
		if p.flags&reaperPidinfoChild != 0 && !r.ours[int(p.pid)] {
			reapPid(int(p.pid))
		}
	}
}

// descendants lists every's descendants (those of a reaper it started
// excepted); r.mu must be held. The list is exact for those that do not
// come or go meanwhile; others are found on the next look.
func (r *reaper) descendants() []reaperPidinfo {
	var st reaperStatus
	if procctl(procReapStatus, unsafe.Pointer(&st)) != nil || st.descendants == 0 {
		return nil
	}
	for n := int(st.descendants) + 16; ; n *= 2 {
		if cap(r.buf) < n {
			r.buf = make([]reaperPidinfo, n)
		}
		buf := r.buf[:n]
		clear(buf)
		rp := reaperPids{count: uint32(n), pids: &buf[0]}
		if procctl(procReapGetpids, unsafe.Pointer(&rp)) != nil {
			return nil
		}
		// Entries past the last the kernel filled stay zero: not valid.
		got := 0
		for got < n && buf[got].flags&reaperPidinfoValid != 0 {
			got++
		}
		if got < n {
			return buf[:got]
		}
		// Full: there may be more than the status said a moment ago.
	}
}

// reapPid reaps pid if it has ended, and reports whether it did.
func reapPid(pid int) bool {
	var ws unix.WaitStatus
	for {
		got, err := unix.Wait4(pid, &ws, unix.WNOHANG, nil)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		return err == nil && got == pid
	}
}

// escapees are the processes of an attempt's command, in its subtree, other
// than the command itself: those that left its process group, and those of
// the group that outlive its leader.
type escapees struct {
	r    *reaper
	pgid int // the command's process group, and its subtree
	sent map[int]syscall.Signal
	// escaped holds those seen outside the group: the others are the group's
	// members, which the group's signals reach anyway.
	escaped map[int]bool
}

// done is nothing here: a subtree is the attempt's own, whatever else runs.
func (*escapees) done() {}

// signal sends sig to each escapee that is every's child and has not had it
// yet (SIGKILL: to the whole subtree), and reaps those that ended. It
// returns how many of the subtree are still alive.
func (e *escapees) signal(sig syscall.Signal) (alive int) {
	r := e.r
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.owned {
		return 0
	}
	if sig == syscall.SIGKILL {
		// The kernel signals the subtree's processes itself, none twice:
		// every's descendants only, whatever became of their pids.
		rk := reaperKill{sig: int32(sig), flags: reaperKillSubtree, subtree: int32(e.pgid)}
		_ = procctl(procReapKill, unsafe.Pointer(&rk)) // ESRCH: none left
	}
	for _, p := range r.descendants() {
		pid := int(p.pid)
		if int(p.subtree) != e.pgid || r.ours[pid] {
			continue
		}
		child := p.flags&reaperPidinfoChild != 0
		if child && reapPid(pid) || p.flags&reaperPidinfoZombie != 0 {
			continue
		}
		alive++
		if e.escaped == nil {
			e.sent, e.escaped = map[int]syscall.Signal{}, map[int]bool{}
		}
		if pg, err := unix.Getpgid(pid); err == nil && pg != e.pgid {
			e.escaped[pid] = true // for the count only
		}
		if child && sig != 0 && sig != syscall.SIGKILL && e.sent[pid] != sig {
			e.sent[pid] = sig
			_ = unix.Kill(pid, sig)
		}
	}
	return alive
}
