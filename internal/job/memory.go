package job

// This file holds what every does about its own memory and runtime: the Go
// runtime's defaults for a process that mostly sleeps, and giving pages back
// to the kernel before long waits.

import (
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/everycli/every/runner"
)

// Runtime defaults for a process that mostly sleeps: every's own work per run
// is a few system calls on one goroutine at a time, and its heap is well under
// a megabyte live. One P keeps the Go scheduler from handing work to a second
// thread (and waking it) around each blocking call such as an fsync, about
// half of every's context switches per run; a GC target of 25% keeps the heap
// that a run's garbage grows to near the live heap instead of doubling it. The
// user's GOMAXPROCS and GOGC, when set, win.
const (
	defaultMaxProcs  = 1
	defaultGCPercent = 25
)

// sleeper readies the process for what it mostly does, sleeping. A loop is
// tuned (tuneRuntime) and drops its start-up pages at once; a one-shot, which
// usually exits within milliseconds, keeps Go's defaults (setting
// GOMAXPROCS stops the world: 0.17 ms of a 2.8 ms --version) until it has
// a long wait ahead (its slot run already, a far first slot). Either gives
// its memory back before each wait of ReleaseAfter or more.
func sleeper(cfg *runner.Config, getenv func(string) string) {
	tune := sync.OnceFunc(func() { tuneRuntime(getenv, defaultMaxProcs) })
	if cfg.MaxRuns != 1 {
		tune()
		dropStartupPages()
	}
	cfg.Release = func(time.Time) {
		tune()
		ReleaseMemory()
	}
	cfg.ReleaseAfter = ReleaseAfter
}

// TuneProcess readies a process of many loops (every jobs) for what it
// mostly does, sleeping, once all are built: the GC target above, and its
// start-up pages dropped. GOMAXPROCS stays Go's default: the jobs' runs
// come at once (a crontab's jobs share the whole minute), and one P would
// make each wait for the others' (100 jobs at 1s on a loaded 2-core
// machine: slot to exec 37-71 ms median with one P, 10-36 ms with two, and
// slots missed with one; docs/DESIGN.md, Performance). Its loops give their memory back together
// (ReleaseMemory), once none has a slot within ReleaseAfter: a collection
// forced by one loop's wait would cost all the others.
func TuneProcess() {
	tuneRuntime(os.Getenv, 0)
	dropStartupPages()
}

// tuneRuntime applies the runtime defaults above, GOMAXPROCS procs (0:
// Go's own), except those the environment (getenv) sets.
func tuneRuntime(getenv func(string) string, procs int) {
	if getenv("GOMAXPROCS") == "" && procs > 0 {
		runtime.GOMAXPROCS(procs)
	}
	if getenv("GOGC") == "" {
		debug.SetGCPercent(defaultGCPercent)
	}
}

// ReleaseAfter is the shortest wait before which a loop gives its memory
// back (ReleaseMemory): the forced collection and the code pages faulted
// back in after it cost a fraction of a millisecond, once per wait, which
// waits of this length or more make up for in memory not held.
const ReleaseAfter = 5 * time.Second

// ReleaseMemory gives back, before a long wait, the heap that is free
// (a forced collection, the free pages returned at once rather than by the
// background scavenger over minutes) and the code pages the last run
// touched: the resident memory of a job that sleeps is then mostly what
// the next run will touch again.
func ReleaseMemory() {
	debug.FreeOSMemory()
	dropStartupPages()
}

// dropStartupPages lets the kernel take back the pages of every's own
// program (its code and read-only data, as mapped from the executable) that
// start-up touched: parsing the command line, help, the checks of the job's
// files. A loop then keeps only what its runs touch again, a few MiB less of
// resident memory for a process that mostly sleeps. Only mappings that are
// never written are dropped, so nothing is lost: a page that is needed again
// comes back from the page cache on its next use.
func dropStartupPages() {
	exe, err := os.Readlink("/proc/self/exe")
	if err != nil {
		return
	}
	smaps, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		return
	}
	for _, m := range cleanMappings(string(smaps), exe) {
		_, _, _ = syscall.Syscall(syscall.SYS_MADVISE, uintptr(m[0]), uintptr(m[1]-m[0]), unix.MADV_DONTNEED)
	}
}

// cleanMappings returns the [start, end) of exe's mappings, in the text of
// /proc/self/smaps, that are never written and hold no page of their own:
// every page of them is the file's, and comes back from it as it was. A
// mapping that is read-only now but was written once (the relocated
// pointers of a position-independent build, made read-only after the
// loader wrote them) holds private pages: dropping those would bring back
// the file's unrelocated bytes, so it is left alone.
func cleanMappings(smaps, exe string) [][2]uint64 {
	var out [][2]uint64
	var cur [2]uint64
	clean := false // cur is exe's, read-only, and no private page seen yet
	flush := func() {
		if clean {
			out = append(out, cur)
		}
		clean = false
	}
	for line := range strings.Lines(smaps) {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		if key, ok := strings.CutSuffix(f[0], ":"); ok {
			// "Anonymous: 4 kB": pages copied on write, the mapping's own.
			// (Private_Dirty is no sign: it also counts file pages not yet
			// written back, as those of a binary just built.)
			if clean && key == "Anonymous" && (len(f) < 2 || f[1] != "0") {
				clean = false
			}
			continue
		}
		// A mapping's header: start-end perms offset dev inode path.
		flush()
		if len(f) != 6 || f[5] != exe || strings.Contains(f[1], "w") {
			continue
		}
		from, to, ok := strings.Cut(f[0], "-")
		start, err1 := strconv.ParseUint(from, 16, 64)
		end, err2 := strconv.ParseUint(to, 16, 64)
		if ok && err1 == nil && err2 == nil && end > start {
			cur, clean = [2]uint64{start, end}, true
		}
	}
	flush()
	return out
}
