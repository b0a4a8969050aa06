// Package jobs runs many jobs in one process (every jobs FILE): each job
// its own loop, as a standalone every of that line would run it, with the
// process's signals shared out among them, the commands' output told apart
// line by line, a bound on the commands running at once, and a reload that
// never waits for a running command.
package jobs

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/everycli/every/internal/job"
	"github.com/everycli/every/internal/listen"
	"github.com/everycli/every/internal/ui"
	"github.com/everycli/every/runner"
)

// Job is one job of the files, as the supervisor runs it.
type Job struct {
	Name  string
	Where string // FILE:LINE, for messages
	// Def is the job's definition as a reload compares it: the job is
	// unchanged when it is equal.
	Def      string
	Settings job.Settings
	// Reboot says the job runs once when every jobs starts (@reboot), never
	// on a reload: a reload neither starts, changes nor removes it.
	Reboot bool
}

// Options are every jobs' own settings, for all its jobs.
type Options struct {
	MaxConcurrent int    // 0: no bound
	Listen        string // --listen: serve every job's metrics, health and page there
	Raw           bool   // --output raw: the commands' output passed through as it comes
	LogFormat     string // --log-format, for every jobs' own lines and the output records
	LogLevel      string
	Quiet         bool
	// Load reads the files again, for a reload: the whole new set, or the
	// errors of all its bad lines.
	Load func() ([]Job, error)
	// Watch, when set, are the files and directories to look at for a
	// change (--watch), which reloads as SIGHUP does.
	Watch []string
	// Signals are every's own signals (package catch).
	Signals <-chan os.Signal
}

// Run runs jobs until a stop signal: every's exit status, or the signal to
// exit by. A job that cannot start (its files, its store, its command)
// stops them all before any runs.
func Run(jobs []Job, opts Options, stdout, stderr io.Writer) (int, os.Signal) {
	s := newSupervisor(opts, stdout, stderr)
	return s.run(jobs)
}

// supervisor runs the jobs' loops.
type supervisor struct {
	opts Options
	log  *slog.Logger
	// build and loop are job.Build and runner.Loop (tests give their own).
	build func(job.Settings, io.Writer) (runner.Config, func(), error)
	loop  func(context.Context, runner.Config) runner.Exit
	// tune readies the process once its loops are built (job.TuneProcess).
	tune func()
	// mem gives the process's memory back between slots.
	mem  *releaser
	out  *output
	gate runner.Gate
	srv  *listen.Server // --listen's, nil without
	// stderr is where the jobs log.
	stderr io.Writer
	// running are the loops by job name (mu: written by the supervisor's
	// goroutine, read by tests); waiting, the new definitions of changed
	// jobs, started once their old loop has ended.
	mu      sync.Mutex
	running map[string]*loop
	waiting map[string]Job
	ended   chan *loop
	wg      sync.WaitGroup
}

// loop is one job's loop, running.
type loop struct {
	job     Job
	cfg     runner.Config
	signals chan os.Signal
	retire  chan struct{}
	retired bool
	done    func()
	exit    runner.Exit
}

func newSupervisor(opts Options, stdout, stderr io.Writer) *supervisor {
	s := &supervisor{opts: opts, stderr: stderr, build: job.BuildJob, loop: runner.Loop, tune: job.TuneProcess, mem: newReleaser(job.ReleaseAfter, job.ReleaseMemory),
		log:     job.NewLogger(stderr, opts.LogFormat, opts.LogLevel, opts.Quiet),
		running: map[string]*loop{}, waiting: map[string]Job{}, ended: make(chan *loop)}
	s.out = &output{stdout: stdout, stderr: stderr, json: opts.LogFormat == "json", log: s.log}
	if opts.MaxConcurrent > 0 {
		s.gate = runner.NewGate(opts.MaxConcurrent)
	}
	return s
}

// run starts the jobs and supervises them until a stop has ended them all.
func (s *supervisor) run(jobs []Job) (int, os.Signal) {
	built, err := s.buildAll(jobs)
	if err != nil {
		ui.Report(s.stderr, err)
		return exitCode(err), nil
	}
	if s.opts.Listen != "" {
		// Before any job runs: an address in use refuses the start.
		s.srv = listen.New(s.opts.Listen, s.log)
		for _, l := range built {
			job.Serve(s.srv, l.job.Settings, &l.cfg)
		}
		if err := s.srv.Start(); err != nil {
			for _, l := range built {
				l.release()
			}
			ui.Report(s.stderr, job.ListenError(s.opts.Listen, "--listen", err))
			return ui.ExitCantCreate, nil
		}
		defer s.srv.Close()
	}
	for _, l := range built {
		s.start(l)
	}
	if s.tune != nil {
		s.tune()
	}
	var changed chan struct{}
	if len(s.opts.Watch) > 0 {
		changed = make(chan struct{}, 1)
		quit := make(chan struct{})
		defer close(quit)
		go watch(s.opts.Watch, look(s.opts.Watch), changed, quit)
	}
	var stop os.Signal
	for {
		if stop != nil && len(s.running) == 0 {
			s.wg.Wait()
			return 0, stop
		}
		select {
		case sig := <-s.opts.Signals:
			switch {
			case sig == syscall.SIGINT || sig == syscall.SIGTERM:
				if stop == nil {
					stop = sig
					s.log.Info("stopping every job", "event", runner.EventStop, "signal", runner.SignalName(sig.(syscall.Signal)),
						"jobs", len(s.running))
					clear(s.waiting)
				}
				s.tellAll(sig)
			case sig == syscall.SIGHUP:
				if stop == nil {
					s.reload()
				}
			default: // SIGUSR1 runs every job now; SIGUSR2 goes to each command running
				s.tellAll(sig)
			}
		case <-changed:
			if stop == nil {
				s.reload()
			}
		case l := <-s.ended:
			s.end(l, stop != nil)
		}
	}
}

// buildAll builds each job's loop: all, or none (each built is let go
// again) with the errors of those that cannot start.
func (s *supervisor) buildAll(jobs []Job) ([]*loop, error) {
	// A few at once: a build is mostly the creation of the job's files
	// (its lock, its marker, its state's check), which waits on the disk.
	loops := make([]*loop, len(jobs))
	errs := make([]error, len(jobs))
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(buildersAtOnce, len(jobs)) {
		wg.Go(func() {
			for i := range next {
				j := jobs[i]
				cfg, done, err := s.build(j.Settings, s.stderr)
				if err != nil {
					errs[i] = &jobError{j.Where, j.Name, err}
					continue
				}
				loops[i] = s.newLoop(j, cfg, done)
			}
		})
	}
	for i := range jobs {
		next <- i
	}
	close(next)
	wg.Wait()
	var built []*loop
	for _, l := range loops {
		if l != nil {
			built = append(built, l)
		}
	}
	errs = slices.DeleteFunc(errs, func(err error) bool { return err == nil })
	if len(errs) > 0 {
		for _, l := range built {
			l.release()
		}
		return nil, errors.Join(errs...)
	}
	return built, nil
}

// buildersAtOnce is how many jobs are built at once.
const buildersAtOnce = 8

// newLoop readies a job's loop: its own signals, the output told apart, the
// gate shared, no memory given back by a loop of its own (the process's).
func (s *supervisor) newLoop(j Job, cfg runner.Config, done func()) *loop {
	l := &loop{job: j, cfg: cfg, signals: make(chan os.Signal, 4), retire: make(chan struct{}), done: done}
	l.cfg.Signals, l.cfg.Retire, l.cfg.Gate = l.signals, l.retire, s.gate
	l.cfg.Release = func(until time.Time) { s.mem.idle(l, until) }
	l.cfg.ReleaseAfter = s.mem.after
	if !s.opts.Raw {
		l.cfg.Lines = s.out.sink(j.Name)
	}
	return l
}

// start runs a job's loop.
func (s *supervisor) start(l *loop) {
	s.mu.Lock()
	s.running[l.job.Name] = l
	s.mu.Unlock()
	s.mem.add(l)
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		l.exit = s.loop(context.Background(), l.cfg)
		s.ended <- l
	}()
}

// end takes note of a loop that ended: retired (a reload), stopped, or by
// itself (--max-runs, --max-failures), which is logged. A changed job's
// new definition starts now.
func (s *supervisor) end(l *loop, stopping bool) {
	l.release()
	s.mem.remove(l)
	s.mu.Lock()
	if s.running[l.job.Name] == l {
		delete(s.running, l.job.Name)
	}
	s.mu.Unlock()
	if !l.retired && !stopping && l.exit.Reason != runner.Stopped {
		level := slog.LevelWarn
		if l.job.Reboot {
			level = slog.LevelInfo // its one run is over, as meant
		}
		s.log.Log(context.Background(), level, "job ended", "event", runner.EventJobEnded, "job", l.job.Name,
			"reason", reasonName(l.exit.Reason), "exit_code", l.exit.Last.ExitCode)
	}
	if next, ok := s.waiting[l.job.Name]; ok && !stopping {
		delete(s.waiting, l.job.Name)
		built, err := s.buildAll([]Job{next})
		if err != nil {
			s.log.Error("cannot start the job's new definition", "event", runner.EventReload, "job", next.Name, "error", err.Error())
			return
		}
		s.serve(built[0])
		s.start(built[0])
		return
	}
	if l.retired && s.srv != nil && s.loopOf(l.job.Name) == nil {
		s.srv.Remove(l.job.Name) // removed by a reload: its last run shown until now
	}
}

// loopOf returns the loop of job name, nil for none.
func (s *supervisor) loopOf(name string) *loop {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.running[name]
}

// serve adds a job started by a reload to the --listen server, if any (a
// changed job's entry is replaced, its recent results kept).
func (s *supervisor) serve(l *loop) {
	if s.srv != nil {
		job.Serve(s.srv, l.job.Settings, &l.cfg)
	}
}

// release lets go of what the job's build holds (observers, announcements).
func (l *loop) release() {
	if l.done != nil {
		l.done()
		l.done = nil
	}
}

// tellAll passes sig on to each job's loop, never blocking on one that is
// not keeping up (its buffer holds enough to act on). A stop is never
// dropped: it takes the place of a signal still waiting (the supervisor is
// the one sender, so the room it makes stays).
func (s *supervisor) tellAll(sig os.Signal) {
	stop := sig == syscall.SIGINT || sig == syscall.SIGTERM
	for _, l := range s.running {
		select {
		case l.signals <- sig:
		default:
			if stop {
				select {
				case <-l.signals:
				default:
				}
				l.signals <- sig
			}
		}
	}
}

// reload reads the files again and applies the new set by name: an
// unchanged job is left alone; a changed one ends after its run under way
// and starts again on its new definition; a removed one ends after its run;
// a new one starts. A bad set changes nothing: each bad line is logged.
// Nothing here waits for a running command.
func (s *supervisor) reload() {
	jobs, err := s.opts.Load()
	if err != nil {
		for line := range strings.SplitSeq(err.Error(), "\n") {
			s.log.Error("reload refused, the jobs go on unchanged", "event", runner.EventReload, "error", line)
		}
		return
	}
	var added, changed, removed, unchanged []string
	var fresh []Job
	names := map[string]bool{}
	for _, j := range jobs {
		names[j.Name] = true
		if j.Reboot {
			continue // run once, at the start only
		}
		old, ok := s.running[j.Name]
		switch {
		case !ok:
			if _, waits := s.waiting[j.Name]; waits {
				s.waiting[j.Name] = j // changed again before its old loop ended
				changed = append(changed, j.Name)
				continue
			}
			added = append(added, j.Name)
			fresh = append(fresh, j)
		case old.job.Def == j.Def && !old.retired:
			unchanged = append(unchanged, j.Name)
		default:
			changed = append(changed, j.Name)
			s.waiting[j.Name] = j
			old.retireNow()
		}
	}
	for name, l := range s.running {
		if !names[name] && !l.job.Reboot {
			removed = append(removed, name)
			delete(s.waiting, name)
			l.retireNow()
		}
	}
	built, err := s.buildAll(fresh)
	if err != nil {
		for line := range strings.SplitSeq(err.Error(), "\n") {
			s.log.Error("cannot start a new job", "event", runner.EventReload, "error", line)
		}
	}
	for _, l := range built {
		s.serve(l)
		s.start(l)
	}
	for _, names := range [][]string{added, changed, removed, unchanged} {
		slices.Sort(names)
	}
	s.log.Info("jobs read again", "event", runner.EventReload, "added", len(added), "changed", len(changed),
		"removed", len(removed), "unchanged", len(unchanged), "names_added", strings.Join(added, ","),
		"names_changed", strings.Join(changed, ","), "names_removed", strings.Join(removed, ","))
}

// retireNow ends the loop after its run under way (runner.Config.Retire).
func (l *loop) retireNow() {
	if !l.retired {
		l.retired = true
		close(l.retire)
	}
}

// jobError is a job that cannot start, with its line.
type jobError struct {
	where, name string
	err         error
}

func (e *jobError) Error() string { return e.where + ": job " + e.name + ": " + e.err.Error() }
func (e *jobError) Unwrap() error { return e.err }

// exitCode is every jobs' exit status when a job cannot start: that of a
// standalone every of the first such job.
func exitCode(err error) int {
	var je *jobError
	if errors.As(err, &je) {
		return job.StartCode(je.err)
	}
	return ui.ExitCantCreate
}

// reasonName names why a loop ended by itself, for the log.
func reasonName(r runner.Reason) string {
	switch r {
	case runner.MaxRuns:
		return "max_runs"
	case runner.MaxFailures:
		return "max_failures"
	case runner.LockBusy:
		return "lock_busy"
	case runner.SlotDone:
		return "slot_done"
	}
	return "unknown"
}
