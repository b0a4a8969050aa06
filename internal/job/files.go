package job

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/everycli/every/internal/fleet"
	"github.com/everycli/every/internal/jobfiles"
	"github.com/everycli/every/internal/ui"
	"github.com/everycli/every/lock"
	"github.com/everycli/every/runner"
	"github.com/everycli/every/state"
)

// jobFiles sets up the job's state and lock, creating the state directory
// 0700 if need be, and checks that they can be written: a failure here is
// exit 73, before anything runs. It returns the job's active marker, to be
// told of the first slot; nil for none; and, for a fleet's job, leave, to
// call at the end, which takes back the job's announcement in the store
// (nil for none). commandPath is the command's executable, which the
// metrics file may not name.
func jobFiles(st Settings, cfg *runner.Config, commandPath string) (mark runner.Observer, leave func(), err error) {
	statePath, lockPath, err := jobPaths(st, cfg.Name)
	if err != nil {
		return nil, nil, err
	}
	if err := ownFiles(st, statePath, lockPath, commandPath); err != nil {
		return nil, nil, err
	}
	if st.Store != "" {
		leave, err := fleetStore(st, cfg)
		return nil, leave, err
	}
	if statePath != "" {
		sf := state.File{Path: statePath, Period: cfg.Schedule.Period(time.Now())}
		if err := sf.CheckWritable(); errors.Is(err, state.ErrNotRecord) {
			return nil, nil, fmt.Errorf("cannot write state file %q: it holds something other than a state record, which every would replace; choose another --state, or --no-state", statePath)
		} else if errors.Is(err, state.ErrNotRegular) {
			return nil, nil, fmt.Errorf("cannot write state file %q: %w; remove it, or choose --state or --no-state", statePath, ui.UnwrapPath(err))
		} else if err != nil {
			return nil, nil, fmt.Errorf("cannot write state file %q: %w; %s, or choose --state-dir, --state or --no-state", statePath, ui.UnwrapPath(err), dirFix(err))
		}
		cfg.Store = sf
	}
	if lockPath != "" {
		if err := lock.Check(lockPath); errors.Is(err, lock.ErrNotRegular) {
			return nil, nil, fmt.Errorf("cannot create lock file %q: %w; remove it, or choose --lock or --no-lock", lockPath, ui.UnwrapPath(err))
		} else if err != nil {
			return nil, nil, fmt.Errorf("cannot create lock file %q: %w; %s, or choose --state-dir, --lock or --no-lock", lockPath, ui.UnwrapPath(err), dirFix(err))
		}
		cfg.Lock = &lock.File{Path: lockPath}
	}
	if statePath == "" {
		return nil, nil, nil
	}
	// Held until every exits, however it exits: every status's ACTIVE
	// (jobfiles/active.go). Last, once nothing else here can fail. A marker
	// that cannot be held costs the job nothing but that column: said, not
	// fatal; but one of another user's is never trusted (docs/DESIGN.md,
	// Safety under faults: every file every writes is its own).
	path := jobfiles.MarkerPath(statePath)
	m, err := jobfiles.Hold(path, jobfiles.MarkerInfo{Name: cfg.Name, Schedule: cfg.Schedule.Recorded(), PID: cfg.PID, Host: cfg.Host})
	switch {
	case errors.Is(err, jobfiles.ErrForeignMarker):
		return nil, nil, fmt.Errorf("cannot mark the job active in %q: %w; remove it, or choose --state-dir or --state", path, ui.UnwrapPath(err))
	case err != nil:
		cfg.Logger.Warn("cannot mark the job active: every status will show it inactive", "event", runner.EventStateError, "error", err)
		return nil, nil, nil
	}
	return activeMarker{m}, nil, nil
}

// activeMarker is the loop's observer that keeps the job's active marker
// up to date: its first and next slots, until the first run starts.
type activeMarker struct{ m *jobfiles.Marker }

func (a activeMarker) Began(_ state.Record, next time.Time)    { a.m.Began(next) }
func (a activeMarker) Skipped(_ string, _ int, next time.Time) { a.m.Skipped(next) }
func (a activeMarker) Started(runner.Run)                      { a.m.Ran() }
func (activeMarker) Finished(runner.Run)                       {}
func (activeMarker) WantsOutput() bool                         { return false }

// jobPaths works out where the job's state and lock files are: --state and
// --lock, else in the state directory; "" for none (--no-state, --no-lock),
// and for both with --store, which keeps them in Redis.
func jobPaths(st Settings, name string) (statePath, lockPath string, err error) {
	if st.Store != "" {
		return "", "", nil
	}
	statePath, lockPath = st.StatePath, st.LockPath
	if (statePath == "" && !st.NoState) || (lockPath == "" && !st.NoLock) {
		dir, err := jobfiles.StateDir(st.StateDir)
		if err != nil {
			return "", "", err
		}
		if statePath == "" {
			statePath = jobfiles.StatePath(dir, name)
		}
		if lockPath == "" {
			lockPath = jobfiles.LockPath(dir, name)
		}
	}
	if st.NoState {
		statePath = ""
	}
	if st.NoLock {
		lockPath = ""
	}
	return statePath, lockPath, nil
}

// ownFiles refuses, as bad usage, paths that name one of the job's files
// twice: the state and the lock, and the metrics file and any other. Each
// is every's own (docs/DESIGN.md, Safety under faults): the metrics file
// is replaced at each write, so on the lock it would put a new file where
// the lock was and the lock would stop excluding; on the state or its
// active marker it would lose the counters or the ACTIVE column; on the
// command, overwrite it before it runs. statePath and lockPath are as
// jobPaths gives them; commandPath is the command's executable.
func ownFiles(st Settings, statePath, lockPath, commandPath string) error {
	if statePath != "" && lockPath != "" && sameFile(statePath, lockPath) {
		return ui.Usagef("bad --state %q and --lock %q: they name the same file; give each its own", statePath, lockPath)
	}
	if st.MetricsFile == "" {
		return nil
	}
	for _, other := range []struct{ what, path string }{
		{"lock file", lockPath},
		{"state file", statePath},
		{"active marker", markerOf(statePath)},
		{"command", commandPath},
	} {
		if other.path != "" && sameFile(st.MetricsFile, other.path) {
			return ui.Usagef("bad %s %q: it names the job's %s %q; give the metrics a file of their own", st.MetricsFlag, st.MetricsFile, other.what, other.path)
		}
	}
	return nil
}

// markerOf is the active marker of the state at statePath; "" for none.
func markerOf(statePath string) string {
	if statePath == "" {
		return ""
	}
	return jobfiles.MarkerPath(statePath)
}

// sameFile reports whether two paths name one file: the same path once
// made absolute and its directory's links followed (the files may not
// exist yet), or, where both exist, the same inode.
func sameFile(a, b string) bool {
	if ra, rb := resolved(a), resolved(b); ra != "" && ra == rb {
		return true
	}
	fa, errA := os.Stat(a)
	fb, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(fa, fb)
}

// resolved is path made absolute, with the links in its directory
// followed; "" if it cannot be made absolute.
func resolved(path string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		return ""
	}
	if dir, err := filepath.EvalSymlinks(filepath.Dir(abs)); err == nil {
		return filepath.Join(dir, filepath.Base(abs))
	}
	return abs
}

// fleetStore puts the job's lock and state in the fleet's store, Redis or
// etcd, and announces this every alive there for every status (until
// leave). A malformed URL is a usage error; credentials or TLS that the
// store refuses are fatal at start-up (73); a store that does not answer
// yet is not: its slots are skipped until it does.
func fleetStore(st Settings, cfg *runner.Config) (leave func(), err error) {
	raw := st.Store
	f, err := fleet.Open(raw)
	if err != nil {
		return nil, err
	}
	fatal, transient := f.Check(context.Background())
	if fatal != nil {
		return nil, errors.New(fleet.NoPassword(fatal.Error(), raw))
	}
	if transient != nil {
		// The event of a store down at a slot (docs/REFERENCE.md, Log
		// events: skip, reason store), said at once: a first slot hours
		// away would otherwise be silent about it.
		cfg.Logger.Warn("store unreachable at start; slots are skipped until it answers", "event", runner.EventSkip, "reason", runner.ReasonStore, "error", fleet.NoPassword(transient.Error(), raw))
	}
	ttl := f.LeaseTTL(st.LockTTL)
	if !st.NoLock {
		if ttl != st.LockTTL {
			cfg.Logger.Info("etcd leases are whole seconds, at least 2: --lock-ttl rounded up", "lock_ttl", st.LockTTL.String(), "lease_ttl", ttl.String())
		}
		// The command must be dead before the lease can expire: a grace that
		// cannot fit inside the TTL is shortened. (A lost lease kills at
		// TTL minus the margin whatever the grace; this keeps the two apart.)
		cfg.KillAfter = min(cfg.KillAfter, ttl-lock.Margin(ttl))
	}
	// With both in the store, one session is the lock and the store: the
	// record comes with the lock, and the run's writes are fenced by it.
	cfg.Lock, cfg.Store = f.Job(cfg.Name, cfg.Host, ttl, cfg.Schedule.Period(time.Now()), !st.NoLock, !st.NoState)
	// An idle every leaves no lock in the store: its announcement tells
	// every status that it is alive (ACTIVE), on which host.
	return f.Announce(cfg.Name, cfg.Host, cfg.PID, st.LockTTL), nil
}

// dirFix is what to do about a directory every cannot write in: a
// read-only filesystem is remounted (its permissions are not the cause),
// a full one freed, anything else is a matter of permissions.
func dirFix(err error) string {
	switch {
	case errors.Is(err, syscall.EROFS):
		return "the filesystem is read-only: remount it read-write"
	case errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT):
		return "the filesystem is full: free some space"
	}
	return "fix the directory's permissions"
}
