//go:build linux

package runner

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/everycli/every/internal/testutil"
)

// waitBound bounds every wait for something that should take milliseconds.
const waitBound = testutil.WaitBound

// The reaper must never take the exit status of a child an exec.Cmd waits
// for: many children that end at once, while orphans end around them and the
// reaper runs flat out, each Wait gets its own child's code.
func TestReaperNeverStealsStatus(t *testing.T) {
	procs.enable()
	stopHammer := make(chan struct{})
	var hammer sync.WaitGroup
	hammer.Add(1)
	go func() {
		defer hammer.Done()
		for {
			select {
			case <-stopHammer:
				return
			default:
				procs.reap()
			}
		}
	}()
	defer func() {
		close(stopHammer)
		hammer.Wait()
	}()

	const workers, each = 8, 25
	errs := make(chan error, workers*each)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				code := (w*each + i) % 100
				// Each child also leaves an orphan that ends at once, for the
				// reaper to reap while Waits are pending.
				cmd := exec.Command("/bin/sh", "-c", fmt.Sprintf("(exit 0 &); exit %d", code))
				if _, err := procs.start(cmd); err != nil {
					errs <- fmt.Errorf("start: %w", err)
					return
				}
				err := cmd.Wait()
				procs.forget(cmd.Process.Pid)
				var ee *exec.ExitError
				switch {
				case err == nil && code == 0:
				case errors.As(err, &ee) && ee.ExitCode() == code:
				default:
					errs <- fmt.Errorf("child %d: Wait = %v, want exit %d", cmd.Process.Pid, err, code)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// An orphan re-parented to every (a subreaper) is reaped once it ends, by
// the reaper alone: no attempt is running to sweep it.
func TestReaperReapsOrphans(t *testing.T) {
	procs.enable()
	dir := t.TempDir()
	orphanFile, goFile := filepath.Join(dir, "orphan"), filepath.Join(dir, "go")
	// The orphan ends once told to, after its parent has ended.
	script := fmt.Sprintf(`(sh -c 'echo $$ > %[1]s.tmp; mv %[1]s.tmp %[1]s; while [ ! -e %[2]s ]; do sleep 0.01; done' &); while [ ! -e %[1]s ]; do sleep 0.01; done`, orphanFile, goFile)
	cmd := exec.Command("/bin/sh", "-c", script)
	if _, err := procs.start(cmd); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	procs.forget(cmd.Process.Pid)
	if err != nil {
		t.Fatalf("sh: %v", err)
	}
	b, err := os.ReadFile(orphanFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	// Held by a pidfd while it still waits for goFile: by the cleanup it has
	// been reaped, and its pid may be anyone's.
	orphan, err := os.FindProcess(pid)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = orphan.Kill(); _ = orphan.Release() })
	st, err := statOf(pid)
	if err != nil {
		t.Fatal(err)
	}
	if st.ppid != os.Getpid() {
		t.Fatalf("orphan %d has parent %d, want this process %d: not a subreaper", pid, st.ppid, os.Getpid())
	}
	if err := os.WriteFile(goFile, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if !testutil.Eventually(func() bool {
		_, err = statOf(pid)
		return errors.Is(err, os.ErrNotExist) // reaped
	}) {
		t.Fatalf("orphan %d not reaped after %v (stat: %v)", pid, waitBound, err)
	}
}

// The escapee: a shell that leaves the process group (setsid) and dies of
// SIGTERM, and under it a process that ignores SIGTERM, writes its pid to
// FILE and sleeps. Once FILE exists, the leader runs its own script.
const (
	// $0: FILE
	escapeeLeaf = `trap "" TERM; echo $$ > "$0.tmp"; mv "$0.tmp" "$0"; exec sleep 60`
	// $0: FILE, $1: escapeeLeaf
	escapeeMiddle = `sh -c "$1" "$0"; true`
	// $0: FILE, $1: escapeeLeaf, $2: escapeeMiddle, $3: the leader's set-up
	// (traps), $4: the rest of its script. FILE.ready once set up.
	escapeeLeader = `(setsid sh -c "$2" "$0" "$1" &)
while [ ! -e "$0" ]; do sleep 0.01; done
eval "$3"
touch "$0.ready"
eval "$4"`
)

// startEscapee runs Exec in the background, its command leaving an escapee
// behind, and returns the escapee's pid once it runs and the leader is set
// up, the channel Exec's result comes on, and Exec's log.
func startEscapee(t *testing.T, ctx context.Context, a Attempt, setup, leader string) (int, <-chan Result, *testutil.Buffer) {
	t.Helper()
	procs.enable()
	pidFile := filepath.Join(t.TempDir(), "escapee")
	log := &testutil.Buffer{}
	a.Argv = []string{"/bin/sh", "-c", escapeeLeader, pidFile, escapeeLeaf, escapeeMiddle, setup, leader}
	if a.Env == nil {
		// As the loop gives them: an orphan is told apart from another
		// attempt's by them when several run at once (see owns).
		a.Env = append(os.Environ(), "EVERY_NAME="+t.Name(), "EVERY_RUN=1")
	}
	a.Logger = slog.New(slog.NewTextHandler(log, nil))
	done := make(chan Result, 1)
	go func() { done <- Exec(ctx, a) }()
	var b []byte
	if !testutil.Eventually(func() bool {
		var err error
		b, err = os.ReadFile(pidFile)
		_, errReady := os.Stat(pidFile + ".ready")
		return err == nil && errReady == nil
	}) {
		t.Fatalf("escapee did not start within %v", waitBound)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	// Held by a pidfd while it runs: once Exec has reaped it, its pid may
	// be anyone's.
	esc, err := os.FindProcess(pid)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = esc.Kill(); _ = esc.Release() })
	return pid, done, log
}

// alive reports whether pid exists and is not a zombie.
func alive(pid int) bool {
	st, err := statOf(pid)
	return err == nil && st.state != 'Z'
}

// A stopped attempt returns only once its escapees are dead and reaped: a
// TERM-ignoring escapee gets SIGKILL after KillAfter, or at once when the
// leader has ended.
func TestExecKillsEscapees(t *testing.T) {
	tests := []struct {
		name      string
		setup     string // the leader's traps
		leader    string // what the leader does once the escapee runs
		killAfter time.Duration
		kill      bool // close Attempt.Kill instead of ending ctx
	}{
		// The leader dies of SIGTERM: its escapee is SIGKILLed with the group.
		{name: "leader dies of the signal", leader: "exec sleep 60", killAfter: time.Hour},
		// The leader ignores SIGTERM too: both die after KillAfter.
		{name: "leader ignores the signal", setup: `trap "" TERM`, leader: "sleep 60", killAfter: 200 * time.Millisecond},
		// The lease is expiring: everything is killed at once.
		{name: "lease expiring", setup: `trap "" TERM`, leader: "sleep 60", killAfter: time.Hour, kill: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			kill := make(chan struct{})
			a := Attempt{Signal: syscall.SIGTERM, KillAfter: tt.killAfter, Kill: kill}
			pid, done, log := startEscapee(t, ctx, a, tt.setup, tt.leader)
			t0 := time.Now()
			if tt.kill {
				close(kill)
			} else {
				cancel()
			}
			r, ok := testutil.Receive(done)
			if !ok {
				t.Fatalf("Exec did not return within %v; log:\n%s", waitBound, log)
			}
			took := time.Since(t0)
			// Exec reaped it: no such process at all, not even a zombie.
			if _, err := statOf(pid); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("escapee %d still exists after Exec returned (%v); log:\n%s", pid, err, log)
			}
			switch {
			case tt.kill && r.Signal != syscall.SIGKILL:
				t.Errorf("result %+v, want the command killed by SIGKILL", r)
			case !tt.kill && r.Outcome != Timeout:
				t.Errorf("outcome %s, want %s", r.Outcome, Timeout)
			}
			grace := tt.killAfter
			if tt.kill || tt.killAfter == time.Hour {
				grace = 0
			}
			t.Logf("stop to all dead: %v (kill-after part %v)", took, grace)
		})
	}
}

// With KillAfter 0, as timeout -k 0, a stopped attempt whose command ignores
// the signal is never killed: Exec waits for it.
func TestExecKillAfterZero(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	a := Attempt{Signal: syscall.SIGTERM, KillAfter: 0}
	// The leader, TERM-ignoring, records the SIGUSR2 it gets after the stop
	// (not SIGHUP: under nohup, the shell inherits it ignored, and cannot
	// trap it).
	usr2File := filepath.Join(t.TempDir(), "usr2")
	forward := make(chan os.Signal, 1)
	a.Signals = forward
	pid, done, log := startEscapee(t, ctx, a, fmt.Sprintf(`trap "" TERM; trap "echo usr2 > %s" USR2`, usr2File), "while :; do sleep 0.05; done")
	cancel()
	// Exec logs the stop, then signals, then looks at the next forwarded
	// signal: when that SIGUSR2 lands, the leader has outlived the stop.
	if !testutil.Eventually(func() bool { return strings.Contains(log.String(), "event=timeout") }) {
		t.Fatalf("no stop logged within %v; log:\n%s", waitBound, log)
	}
	deadline := time.Now().Add(waitBound)
	for {
		if _, err := os.Stat(usr2File); err == nil {
			break
		}
		select {
		case forward <- syscall.SIGUSR2:
		default:
		}
		select {
		case r := <-done:
			t.Fatalf("Exec returned %+v: the command was killed; log:\n%s", r, log)
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("the leader did not get SIGUSR2 within %v; log:\n%s", waitBound, log)
		}
	}
	if !alive(pid) {
		t.Fatalf("escapee %d was killed with KillAfter 0", pid)
	}
	if strings.Contains(log.String(), "event=kill") {
		t.Fatalf("a kill with KillAfter 0; log:\n%s", log)
	}
	// Ending it is the test's business: a second stop signal kills at once.
	forward <- syscall.SIGTERM
	forward <- syscall.SIGTERM
	if _, ok := testutil.Receive(done); !ok {
		t.Fatalf("Exec did not return after a second stop signal; log:\n%s", log)
	}
	if _, err := statOf(pid); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("escapee %d still exists after Exec returned (%v)", pid, err)
	}
}

// What the reaper and the sweep do at each run stays far below a 10ms slot:
// a reap (waitid) at the command's end and when every forgets it, and a look
// at the main thread's children before the start and after the end.
func TestReaperCost(t *testing.T) {
	procs.enable()
	// A registered child that has ended and is not reaped yet, as at the
	// end of a run.
	cmd := exec.Command("/bin/true")
	e, err := procs.start(cmd)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = cmd.Wait()
		procs.forget(cmd.Process.Pid)
	}()
	if !awaitExit(cmd.Process.Pid) {
		t.Skip("no pidfd: cannot hold a child unreaped")
	}
	const n = 2000
	t0 := time.Now()
	for range n {
		procs.reap()
	}
	reap := time.Since(t0) / n
	t0 = time.Now()
	for range n {
		e.signal(0)
	}
	look := time.Since(t0) / n
	// The fallback, should the main thread be gone: every thread's list.
	t0 = time.Now()
	for range n {
		procs.mu.Lock()
		procs.allChildren(nil)
		procs.mu.Unlock()
	}
	lookAll := time.Since(t0) / n
	procs.mu.Lock()
	reads := procs.reads
	procs.mu.Unlock()
	e.signal(0)
	procs.mu.Lock()
	reads = procs.reads - reads
	procs.mu.Unlock()
	if reads != 1 {
		t.Errorf("a look at escapees, with none there, read %d /proc files, want 1", reads)
	}
	perRun := 2*reap + 2*look
	t.Logf("reap %v, look at the main thread's children %v: per run %v (were the main thread gone, a look at all %d threads' would take %v)", reap, look, perRun, threads(), lookAll)
	// Generous: the machine may be loaded.
	if limit := time.Millisecond; perRun > limit {
		t.Errorf("per run %v, want under %v", perRun, limit)
	}
}

// statOf reads /proc/PID/stat.
func statOf(pid int) (stat, error) {
	st, _, err := readStat(pid, nil)
	return st, err
}

func threads() int {
	names, _ := readDirNames("/proc/self/task")
	return len(names)
}

func TestReadStat(t *testing.T) {
	st, err := statOf(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if st.state != 'R' && st.state != 'S' {
		t.Errorf("own state %q, want R or S", st.state)
	}
	if st.ppid != os.Getppid() {
		t.Errorf("ppid %d, want %d", st.ppid, os.Getppid())
	}
	if st.start == 0 {
		t.Error("start time 0")
	}
	if _, err := statOf(1 << 30); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("stat of no process: %v, want not exist", err)
	}
}

// A run of a command that leaves nothing behind, every having no other
// child, reads no /proc file: waitid says there is no child at all, at the
// start (no orphan there before it) and at the end (no escapee).
func TestReaperChildlessReadsNothing(t *testing.T) {
	procs.enable()
	// An orphan of an earlier test may not be reaped yet.
	if !testutil.Eventually(childlessNow) {
		t.Fatalf("this process still has children after %v", waitBound)
	}
	reads := readsNow()
	cmd := exec.Command("/bin/true")
	e, err := procs.start(cmd)
	if err != nil {
		t.Fatal(err)
	}
	if n := readsNow() - reads; n != 0 {
		t.Errorf("the start, with no child there, read %d /proc files, want 0", n)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	procs.forget(cmd.Process.Pid)
	reads = readsNow()
	if alive := e.signal(0); alive != 0 {
		t.Errorf("%d escapees alive, want 0", alive)
	}
	if n := readsNow() - reads; n != 0 {
		t.Errorf("the look at escapees, with no child left, read %d /proc files, want 0", n)
	}
}

func childlessNow() bool {
	procs.mu.Lock()
	defer procs.mu.Unlock()
	return procs.childless()
}

func readsNow() int {
	procs.mu.Lock()
	defer procs.mu.Unlock()
	return procs.reads
}

// Jobs in one process (every jobs): the stop of one kills its own
// escapees, never another's, though all are every's orphans new since it
// started. b starts first, then a, then c: a's escapee is born while b
// runs, so only its environment (EVERY_NAME, EVERY_RUN, which a setsid
// escapee keeps) tells it is a's; c's is born while a runs, new to a's
// sweep, and must be spared by it.
func TestExecKillsOnlyItsOwnEscapees(t *testing.T) {
	type job struct {
		pid    int
		done   <-chan Result
		log    *testutil.Buffer
		cancel context.CancelFunc
	}
	start := func(name string) job {
		ctx, cancel := context.WithCancel(context.Background())
		t.Cleanup(cancel)
		a := Attempt{Signal: syscall.SIGTERM, KillAfter: time.Hour, Env: append(os.Environ(), "EVERY_NAME="+name, "EVERY_RUN=7")}
		pid, done, log := startEscapee(t, ctx, a, "", "exec sleep 60")
		return job{pid, done, log, cancel}
	}
	stop := func(name string, j job) {
		t.Helper()
		j.cancel()
		if _, ok := testutil.Receive(j.done); !ok {
			t.Fatalf("job %s's Exec did not return within %v; log:\n%s", name, waitBound, j.log)
		}
		if _, err := statOf(j.pid); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("job %s's escapee %d still exists after its stop (%v); log:\n%s", name, j.pid, err, j.log)
		}
	}
	b := start("b")
	a := start("a")
	c := start("c")
	stop("a", a)
	for name, j := range map[string]job{"b": b, "c": c} {
		if !alive(j.pid) {
			t.Fatalf("job %s's escapee %d was killed by job a's stop; log:\n%s", name, j.pid, a.log)
		}
	}
	stop("c", c)
	stop("b", b)
}

// The attribution of orphans among attempts running at once: by process
// group, by the environment every gave, by start time when one attempt
// alone was running then, and to none when that is all there is to go by
// and two were.
func TestOwnerOf(t *testing.T) {
	procs.enable()
	procs.mu.Lock()
	defer procs.mu.Unlock()
	a := &escapees{r: procs, pgid: 1 << 30, name: "a", run: "1", since: 100}
	b := &escapees{r: procs, pgid: 1<<30 + 1, name: "b", run: "1", since: 200}
	saved := procs.running
	procs.running = map[*escapees]bool{a: true, b: true}
	defer func() { procs.running = saved }()
	self := procKey{pid: os.Getpid(), start: 150} // this test binary: no EVERY_NAME
	if os.Getenv("EVERY_NAME") != "" {
		t.Skip("the test binary's environment names a job")
	}
	for _, tt := range []struct {
		name string
		k    procKey
		st   stat
		want *escapees
	}{
		{"a's group", self, stat{pgrp: a.pgid}, a},
		{"b's group", self, stat{pgrp: b.pgid}, b},
		{"started while a alone ran", procKey{pid: self.pid, start: 150}, stat{pgrp: 1}, a},
		{"started while both ran", procKey{pid: self.pid, start: 250}, stat{pgrp: 1}, nil},
		{"a tick before b: still a's alone", procKey{pid: self.pid, start: 198}, stat{pgrp: 1}, a},
	} {
		if got := procs.ownerOf(tt.k, tt.st); got != tt.want {
			t.Errorf("%s: owner %p, want %p (a %p, b %p)", tt.name, got, tt.want, a, b)
		}
	}
}
