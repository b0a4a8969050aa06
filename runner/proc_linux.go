//go:build linux

package runner

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"sync"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// every is a child subreaper: whatever its command starts and then leaves
// (setsid, a double fork) is re-parented to every instead of to init, so that
// every can still reach it to stop it, and must reap it once it ends. As PID 1
// of a container every is init itself: the orphans of every process of the
// namespace come to it, including those of processes it did not start (a
// `docker exec` session's), and it reaps them all the same.
//
// Two rules keep this safe. Reaping: os/exec's Wait must get the status of the
// children it waits for, so those are registered under mu, held across their
// fork, and the reaper reaps only the others, one pid at a time. Signalling:
// every signals an escapee only by the pid of its own unreaped child, under mu
// (nothing else reaps those), so the pid cannot have been reused by an
// unrelated process.

// procs is the process's one reaper: children and subreaping are per process.
var procs = &reaper{ours: map[int]chan struct{}{}, running: map[*escapees]bool{}, owner: map[procKey]*escapees{}}

// reaper tracks every's children and reaps the orphans it inherits.
type reaper struct {
	once sync.Once
	// mu is held across each registered child's fork, and across every look
	// at the children that may reap or signal one.
	mu sync.Mutex
	// ours are the children an exec.Cmd waits for, each with the channel
	// closed once the child is seen to have exited (nil after that).
	ours map[int]chan struct{}
	// running are the attempts whose commands run, from their start to the
	// end of their sweep: the candidates an orphan is attributed to when
	// several jobs run in one process (see owns).
	running map[*escapees]bool
	// owner is the attempt each orphan was found to be of, while it runs:
	// an orphan keeps its owner once found, even once it is dying and
	// its environment is gone.
	owner map[procKey]*escapees
	// ownProc says whether /proc is that of every's PID namespace: the pids
	// it lists are every's to signal. Not so after unshare --pid without
	// --mount-proc: escapees are then out of reach (orphans are still reaped).
	ownProc bool
	// childrenFiles says whether /proc/self/task/*/children exists
	// (CONFIG_PROC_CHILDREN); without it, orphans scans /proc/*/stat.
	childrenFiles bool
	buf           []byte
	reads         int // /proc files read, for the cost test
}

// enable makes every a child subreaper and starts reaping orphans, once.
func (r *reaper) enable() {
	r.once.Do(func() {
		// Should this fail (Linux < 3.4), escapees go to init as before; the
		// group is still swept.
		_ = unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
		self, _ := os.Readlink("/proc/self")
		r.ownProc = self == strconv.Itoa(selfPID)
		_, err := os.Stat(fmt.Sprintf("/proc/self/task/%d/children", unix.Gettid()))
		r.childrenFiles = err == nil
		// A handled signal is reset to its default at exec: the command does
		// not inherit this.
		c := make(chan os.Signal, 1)
		signal.Notify(c, syscall.SIGCHLD)
		go func() {
			for range c {
				r.reap()
			}
		}()
		r.reap() // orphans inherited before (as PID 1)
	})
}

// start starts cmd as a registered child. It returns the command's
// escapees-to-be: the orphans every will inherit, less those there before,
// which are not the command's doing.
func (r *reaper) start(cmd *exec.Cmd) (*escapees, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	e := &escapees{r: r}
	r.eachOrphan(func(k procKey, _ stat) {
		if e.before == nil {
			e.before = map[procKey]bool{}
		}
		e.before[k] = true
	})
	e.name, e.run = environValue(cmd.Env, "EVERY_NAME"), environValue(cmd.Env, "EVERY_RUN")
	e.since = bootTicks()
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	// Its own group (Setpgid), set under mu: other runs' sweeps read it.
	e.pgid = cmd.Process.Pid
	r.ours[cmd.Process.Pid] = make(chan struct{})
	r.running[e] = true
	return e, nil
}

// done takes the attempt off the candidates for orphans, once its sweep is
// over.
func (e *escapees) done() {
	e.r.mu.Lock()
	defer e.r.mu.Unlock()
	delete(e.r.running, e)
	for k, o := range e.r.owner {
		if o == e {
			delete(e.r.owner, k)
		}
	}
}

// forget is called once cmd.Wait has reaped pid. An orphan that ended behind
// it, and that reap could not see, is reaped now.
func (r *reaper) forget(pid int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.ours, pid)
	r.reapLocked()
}

// exited returns the channel closed once registered child pid has exited
// (before it is reaped), or nil for a pid that is not a registered child.
func (r *reaper) exited(pid int) <-chan struct{} {
	r.mu.Lock()
	defer r.mu.Unlock()
	exited, ok := r.ours[pid]
	if ok && exited == nil {
		c := make(chan struct{})
		close(c)
		return c
	}
	return exited
}

// reap reaps the orphans that have ended.
func (r *reaper) reap() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.reapLocked()
}

func (r *reaper) reapLocked() {
	for {
		// One system call: is any child a zombie, and which? WNOWAIT leaves
		// it unreaped: it may be one that an exec.Cmd waits for.
		var info unix.Siginfo
		err := unix.Waitid(unix.P_ALL, 0, &info, unix.WEXITED|unix.WNOHANG|unix.WNOWAIT|unix.WALL, nil)
		if err != nil || info.Signo == 0 {
			return
		}
		// waitid names the first zombie it finds. When that one is
		// registered, it may hide others: forget, once Wait has reaped it,
		// comes back here for them.
		pid := siginfoPid(&info)
		if exited, ok := r.ours[pid]; ok {
			if exited != nil {
				close(exited) // awaitExit returns: Wait will not block
				r.ours[pid] = nil
			}
			return
		}
		if !reapPid(pid) {
			return
		}
	}
}

// siginfoPid returns the si_pid of a SIGCHLD siginfo. x/sys/unix leaves the
// union opaque; it starts after three ints, aligned to the word size.
func siginfoPid(info *unix.Siginfo) int {
	off := 3 * 4
	if unsafe.Sizeof(uintptr(0)) == 8 {
		off = 4 * 4
	}
	b := (*[unsafe.Sizeof(*info)]byte)(unsafe.Pointer(info))
	return int(*(*int32)(unsafe.Pointer(&b[off])))
}

// reapPid reaps pid if it has ended, and reports whether it did.
func reapPid(pid int) bool {
	var ws unix.WaitStatus
	for {
		got, err := unix.Wait4(pid, &ws, unix.WNOHANG|unix.WALL, nil)
		if err == unix.EINTR {
			continue
		}
		return err == nil && got == pid
	}
}

// procKey names a process across pid reuse: its pid and start time.
type procKey struct {
	pid   int
	start uint64
}

// eachOrphan calls f with each orphan re-parented to every (each
// unregistered child) and what its stat says. r.mu must be held:
// the pids stay every's unreaped children until it is released, so f may
// signal them.
func (r *reaper) eachOrphan(f func(k procKey, st stat)) {
	for _, pid := range r.orphans() {
		if _, ok := r.ours[pid]; ok {
			continue
		}
		st, err := r.readStat(pid)
		if err != nil {
			continue // not a child any more: it was just reaped by pid
		}
		f(procKey{pid, st.start}, st)
	}
}

// orphans returns the pids of every's children that include those
// re-parented to it. A child is on the list of the thread that forked it,
// an orphan on that of the first living thread, the main thread: its list is
// one file to read. Should the main thread be gone, the lists of all
// threads are read. They are exact for children that do not come or go
// meanwhile; others are found on the next look.
func (r *reaper) orphans() []int {
	if !r.ownProc || r.childless() {
		return nil
	}
	if !r.childrenFiles {
		return r.childrenByStat()
	}
	pids, err := r.threadChildren(strconv.Itoa(selfPID), nil)
	if err == nil {
		return pids
	}
	return r.allChildren(nil)
}

// childless reports whether every has no child at all, not even a zombie,
// by one waitid: then no orphan is there, nor can one come before every
// starts a child (only a descendant is re-parented to a subreaper, and on
// Linux every starts its children under mu, as this is called). It spares
// the read of a /proc file at each run's start and end. The init of a PID
// namespace (every as PID 1) inherits the orphans of processes it did not
// start, at any moment: it always reads.
func (r *reaper) childless() bool {
	if selfPID == 1 {
		return false
	}
	var info unix.Siginfo
	return unix.Waitid(unix.P_ALL, 0, &info, unix.WEXITED|unix.WNOHANG|unix.WNOWAIT|unix.WALL, nil) == unix.ECHILD
}

// allChildren appends the children of all threads to pids.
func (r *reaper) allChildren(pids []int) []int {
	tasks, err := readDirNames("/proc/self/task")
	if err != nil {
		return pids
	}
	for _, t := range tasks {
		pids, _ = r.threadChildren(t, pids) // a thread may just have ended
	}
	return pids
}

// threadChildren appends the pids of thread tid's children to pids.
func (r *reaper) threadChildren(tid string, pids []int) ([]int, error) {
	r.reads++
	b, err := readFile("/proc/self/task/"+tid+"/children", r.buf[:0])
	r.buf = b[:0]
	if err != nil {
		return pids, err
	}
	for _, f := range bytes.Fields(b) {
		if pid, err := strconv.Atoi(string(f)); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids, nil
}

// childrenByStat finds every's children by their parent pid, for kernels
// built without /proc/PID/task/TID/children.
func (r *reaper) childrenByStat() []int {
	names, err := readDirNames("/proc")
	if err != nil {
		return nil
	}
	self := selfPID
	var pids []int
	for _, name := range names {
		pid, err := strconv.Atoi(name)
		if err != nil {
			continue
		}
		if st, err := r.readStat(pid); err == nil && st.ppid == self {
			pids = append(pids, pid)
		}
	}
	return pids
}

// stat is what every reads of /proc/PID/stat.
type stat struct {
	state byte // 'Z' for a zombie
	ppid  int
	pgrp  int
	start uint64 // clock ticks after boot
}

// readStat reads /proc/PID/stat with r.buf; r.mu must be held.
func (r *reaper) readStat(pid int) (stat, error) {
	r.reads++
	st, b, err := readStat(pid, r.buf[:0])
	r.buf = b[:0]
	return st, err
}

// readStat reads /proc/PID/stat into buf, and returns buf as it grew.
func readStat(pid int, buf []byte) (stat, []byte, error) {
	b, err := readFile("/proc/"+strconv.Itoa(pid)+"/stat", buf)
	if err != nil {
		return stat{}, b, err
	}
	// The command name, in parentheses, may hold anything: the fields
	// follow its last ')'. After it: state (3), ppid (4), pgrp (5), ...
	// starttime (22).
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return stat{}, b, fmt.Errorf("read /proc/%d/stat: no command name in %q", pid, b)
	}
	fields := bytes.Fields(b[i+1:])
	if len(fields) < 20 || len(fields[0]) != 1 {
		return stat{}, b, fmt.Errorf("read /proc/%d/stat: %d fields after the command name, want 20 or more", pid, len(fields))
	}
	ppid, err1 := strconv.Atoi(string(fields[1]))
	pgrp, err2 := strconv.Atoi(string(fields[2]))
	start, err3 := strconv.ParseUint(string(fields[19]), 10, 64)
	if err := errors.Join(err1, err2, err3); err != nil {
		return stat{}, b, fmt.Errorf("read /proc/%d/stat: %w", pid, err)
	}
	return stat{state: fields[0][0], ppid: ppid, pgrp: pgrp, start: start}, b, nil
}

// readFile reads a small /proc file into buf with plain system calls: this
// runs at every run, and os.ReadFile's allocations would add up.
func readFile(name string, buf []byte) ([]byte, error) {
	fd, err := unix.Open(name, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return buf, &os.PathError{Op: "open", Path: name, Err: err}
	}
	defer unix.Close(fd)
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, make([]byte, max(512, len(buf)))...)[:len(buf)]
		}
		n, err := unix.Read(fd, buf[len(buf):cap(buf)])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return buf, &os.PathError{Op: "read", Path: name, Err: err}
		}
		if n == 0 {
			return buf, nil
		}
		buf = buf[:len(buf)+n]
	}
}

// readDirNames lists a /proc directory.
func readDirNames(dir string) ([]string, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.Readdirnames(-1)
}

// escapees are the processes of an attempt's command that were re-parented
// to every, whether they left its process group (setsid) or not: every's
// unregistered children that were not there when the attempt started. Only
// every's unreaped children are signalled: never a pid read elsewhere, which
// may since have been reused by a process that is none of every's business.
type escapees struct {
	r    *reaper
	pgid int // the command's process group
	// name and run are the command's EVERY_NAME and EVERY_RUN, which its
	// descendants inherit; since is when it started, in /proc's clock
	// ticks after boot (see owns).
	name, run string
	since     uint64
	before    map[procKey]bool
	sent      map[procKey]syscall.Signal
	// escaped counts those that had left the group: the others are the
	// group's members, which the group's signals reach anyway.
	escaped map[procKey]bool
}

// signal sends sig to each escapee that has not had it yet, and reaps those
// that ended. It returns how many are still alive, counting each that ended
// since the list of every's children was read: its own children came to
// every as it ended (the kernel re-parents them before it shows the dead
// process as a zombie), after the list was read, and only the next look
// finds them. A sweep that stopped at such a look would leave them running.
func (e *escapees) signal(sig syscall.Signal) (alive int) {
	e.r.mu.Lock()
	defer e.r.mu.Unlock()
	e.r.eachOrphan(func(k procKey, st stat) {
		if e.before[k] {
			return
		}
		if st.state == 'Z' {
			reapPid(k.pid) // whoever's it was: reaping takes nothing from anyone
			alive++        // for its children, if it had any (see above)
			return
		}
		if !e.owns(k, st) {
			return
		}
		alive++
		if sig != 0 && e.sent[k] != sig {
			if e.sent == nil {
				e.sent, e.escaped = map[procKey]syscall.Signal{}, map[procKey]bool{}
			}
			e.sent[k] = sig
			if st.pgrp != e.pgid {
				e.escaped[k] = true
			}
			_ = unix.Kill(k.pid, sig)
		}
	})
	return alive
}

// selfPID is this process's pid, read once: getpid(2) on each run's look
// for orphans is a system call for a number that never changes.
var selfPID = os.Getpid()

// owns reports whether orphan k is this attempt's, when several commands
// run in one process (every jobs) and the orphans new since this one
// started may be another's; r.mu must be held. Alone, every new orphan is
// this attempt's, as for a single job. Among several, in this order: its
// process group names the attempt (a double fork that kept it); its
// environment's EVERY_NAME and EVERY_RUN do, as every set them for the
// command and its descendants inherit them (a setsid escapee); else its
// start time, if exactly one of the commands was running when it started.
// An orphan none of these gives to one attempt (an escapee that cleared
// its environment while two jobs ran) is no job's to signal: it is reaped
// when it ends, as PID 1 reaps any orphan (docs/DESIGN.md, Safety under
// faults).
func (e *escapees) owns(k procKey, st stat) bool {
	if len(e.r.running) <= 1 {
		return true
	}
	if o, ok := e.r.owner[k]; ok {
		return o == e
	}
	o := e.r.ownerOf(k, st)
	if o != nil {
		e.r.owner[k] = o
	}
	return o == e
}

// ownerOf finds the attempt orphan k is of (see owns), nil for none.
func (r *reaper) ownerOf(k procKey, st stat) *escapees {
	for o := range r.running {
		if st.pgrp == o.pgid {
			return o
		}
	}
	if name, run, ok := r.readEnviron(k.pid); ok {
		for o := range r.running {
			if name == o.name && run == o.run {
				return o
			}
		}
		return nil
	}
	var owner *escapees
	for o := range r.running {
		if o.since <= k.start+1 { // a tick of slack: the two clocks are read apart
			if owner != nil {
				return nil
			}
			owner = o
		}
	}
	return owner
}

// readEnviron returns the EVERY_NAME and EVERY_RUN of pid's environment,
// as it was when it was executed, and whether it has both; r.mu must be
// held.
func (r *reaper) readEnviron(pid int) (name, run string, ok bool) {
	r.reads++
	b, err := readFile("/proc/"+strconv.Itoa(pid)+"/environ", r.buf[:0])
	r.buf = b[:0]
	if err != nil {
		return "", "", false
	}
	var hasName, hasRun bool
	for kv := range bytes.SplitSeq(b, []byte{0}) {
		switch {
		case bytes.HasPrefix(kv, []byte("EVERY_NAME=")):
			name, hasName = string(kv[len("EVERY_NAME="):]), true
		case bytes.HasPrefix(kv, []byte("EVERY_RUN=")):
			run, hasRun = string(kv[len("EVERY_RUN="):]), true
		}
	}
	return name, run, hasName && hasRun
}

// environValue returns the value of key in env, the last one given, as a
// process sees it.
func environValue(env []string, key string) string {
	v, _ := environLookup(env, key)
	return v
}

// ticksPerSecond is the unit of /proc's start times (USER_HZ, which Linux
// fixes at 100 for every architecture's user-space ABI).
const ticksPerSecond = 100

// bootTicks returns the time since boot, CLOCK_BOOTTIME, in /proc's clock
// ticks: the clock a process's start time in /proc/PID/stat is on.
func bootTicks() uint64 {
	var ts unix.Timespec
	if unix.ClockGettime(unix.CLOCK_BOOTTIME, &ts) != nil {
		return 0
	}
	return uint64(ts.Nano()) / (1e9 / ticksPerSecond)
}
