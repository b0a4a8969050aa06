package runner

// This file owns the loop's calls to its lock and its state store. Each runs
// in a goroutine of its own while the loop keeps listening for a stop
// signal: a dead or black-holed server must never hold up a stop by more than
// stopGrace. A call that a stop abandons ends in the background, bounded by
// its own timeouts.

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"syscall"
	"time"

	"github.com/everycli/every/internal/pid"
	"github.com/everycli/every/lock"
	"github.com/everycli/every/state"
)

// stopGrace is how long a stopping loop still waits for a write of the state
// or the release of the lock: enough for a local file, short enough that a
// stop takes well under 100ms whatever the server does. (A lock left
// behind is released by the kernel when every exits, or expires in Redis.)
const stopGrace = 40 * time.Millisecond

// storeCall runs fn in a goroutine of its own and waits for it, as await
// does; fn's context is cancelled when the wait ends early.
func (l *loop) storeCall(ctx context.Context, stopping bool, fn func(context.Context)) (stop os.Signal, done bool) {
	return l.call(ctx, stopping, false, fn)
}

// recordCall is storeCall for a call to the job's store: a local file's
// (a state.Syncer) is made at once, in this goroutine. It has no server
// to wait for, and a goroutine and its hand-offs would cost more than its
// few system calls (a signal that comes meanwhile waits in its channel).
func (l *loop) recordCall(ctx context.Context, stopping bool, fn func(context.Context)) (stop os.Signal, done bool) {
	if l.dur.syncer != nil {
		fn(ctx)
		return nil, true
	}
	return l.storeCall(ctx, stopping, fn)
}

// call is storeCall; with undo, a stop that ends the wait early cancels
// fn's context and gives fn stopGrace more before the stop is returned: time
// to undo what its call did (a start written with the lock), which the
// process would otherwise exit before.
func (l *loop) call(ctx context.Context, stopping, undo bool, fn func(context.Context)) (stop os.Signal, done bool) {
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		fn(cctx)
	}()
	stop, done = l.await(finished, stopping)
	if stop != nil && undo {
		cancel()
		l.await(finished, true)
	}
	return stop, done
}

// await waits until finished is closed. If a stop signal comes meanwhile, it
// is returned at once, with done false: the call behind finished then ends
// on its own, and whatever it sets must not be read. With stopping, a stop
// came before: the call gets stopGrace, then is left behind.
func (l *loop) await(finished <-chan struct{}, stopping bool) (stop os.Signal, done bool) {
	var grace <-chan time.Time
	signals := l.cfg.Signals
	if stopping {
		timer := time.NewTimer(stopGrace)
		defer timer.Stop()
		grace, signals = timer.C, nil
	}
	for {
		select {
		case <-finished:
			return nil, true
		case <-grace:
			return nil, false
		case sig := <-signals:
			switch {
			case isStop(sig):
				l.logStop(sig, false)
				return sig, false
			case sig == syscall.SIGUSR1:
				// A run asked for: kept for the idle wait, unless a run
				// starts first and answers it.
				l.runAsked = true
			}
			// There is no child for SIGHUP or SIGUSR2.
		}
	}
}

// startLocker is a lock that is also the job's store, and can write the
// start of the run with the lock (internal/fleet's Redis session, on
// lock.RedisSession): when the store still holds what this process wrote
// last, the run saves a round trip.
type startLocker interface {
	LockStart(ctx context.Context, start *state.Record) (lease lock.Lease, started bool, err error)
}

// lock takes the job's lock; with start, by LockStart (the lock must be a
// startLocker), which may write start with it (started). A stop signal while
// it waits, for a busy lock or a slow store, ends the wait at once; a lease
// that comes after it is released, and a start written with it undone: the
// record as it was, as the run never began. With start, the stop waits up
// to stopGrace for that undo (an answer a moment late), so that every does
// not exit before it.
func (l *loop) lock(ctx context.Context, start *state.Record) (lock.Lease, bool, os.Signal, error) {
	if l.cfg.Lock == nil {
		return noLease{}, false, nil, nil
	}
	var (
		lease   lock.Lease
		started bool
		err     error
	)
	prev := l.rec.Record
	stop, _ := l.call(ctx, false, start != nil, func(ctx context.Context) {
		if start != nil {
			lease, started, err = l.cfg.Lock.(startLocker).LockStart(ctx, start)
		} else {
			lease, err = l.cfg.Lock.Lock(ctx, 0)
		}
		if errors.Is(err, lock.ErrBusy) && l.cfg.LockWait > 0 {
			l.log.Debug("lock busy, waiting", "event", EventSkip, "reason", ReasonLocked, "count", 0, "wait_ms", l.cfg.LockWait.Milliseconds())
			lease, err = l.cfg.Lock.Lock(ctx, l.cfg.LockWait)
		}
		if lease != nil && ctx.Err() != nil {
			// Taken too late: the loop has stopped.
			if started {
				_ = l.cfg.Store.Save(context.WithoutCancel(ctx), &prev)
			}
			_ = lease.Unlock()
			lease, started, err = nil, false, ctx.Err()
		}
	})
	if stop != nil {
		return nil, false, stop, nil
	}
	return lease, started, nil, err
}

// unlock releases the lease; a stopping loop gives it stopGrace. A stop
// signal that comes meanwhile is returned.
func (l *loop) unlock(lease lock.Lease, stopping bool) os.Signal {
	var err error
	stop, done := l.storeCall(context.Background(), stopping, func(context.Context) { err = lease.Unlock() })
	if done && err != nil {
		l.log.Error("cannot release the lock", "event", EventLockError, "error", err.Error())
	}
	return stop
}

// noLease is the lease of a job run without a lock.
type noLease struct{}

func (noLease) Unlock() error             { return nil }
func (noLease) Lost() <-chan struct{}     { return nil }
func (noLease) Token() int64              { return 0 }
func (noLease) Expiring() <-chan struct{} { return nil }

// load reads the record. One that cannot be parsed was set aside by the
// store: it is logged, and the job starts fresh (nil, nil). Any other error
// (I/O, permission, a store that does not answer) is returned: the record
// is unknown, and must not be replaced by a fresh one.
func (l *loop) load(ctx context.Context) (*state.Record, os.Signal, error) {
	var (
		rec *state.Record
		err error
	)
	if stop, _ := l.recordCall(ctx, false, func(ctx context.Context) { rec, err = l.cfg.Store.Load(ctx) }); stop != nil {
		return nil, stop, nil
	}
	var corrupt *state.CorruptError
	switch {
	case errors.As(err, &corrupt) && rec != nil && corrupt.Restored != "":
		// Left empty or torn by a power loss: the job goes on from the
		// record last synced.
		l.report(&l.outages.corrupt, "corrupt", 1, slog.LevelWarn, "state cannot be used, going on from its last synced copy",
			"event", EventStateError, "state", corrupt.Where, "moved_to", corrupt.MovedTo, "error", corrupt.Error())
		err = nil
	case errors.As(err, &corrupt):
		l.report(&l.outages.corrupt, "corrupt", 1, slog.LevelWarn, "state cannot be used, starting fresh", "event", EventStateError,
			"state", corrupt.Where, "moved_to", corrupt.MovedTo, "error", corrupt.Err.Error())
		return nil, nil, nil
	case err == nil && rec != nil:
		l.recover(&l.outages.corrupt, false, "state usable again", "event", EventStateError, "state", l.cfg.Store.Where())
	}
	if err == nil && rec != nil {
		l.noteLoaded(rec)
	}
	return rec, nil, err
}

// save writes the record, a copy of it: the loop goes on changing its own.
// A failure (a full disk) is logged, summarised when it repeats; the record
// stays in memory, preferred to the older one in the store, and the next
// write tries again. stopping gives the write stopGrace; a stop signal that
// comes during the write is returned.
func (l *loop) save(ctx context.Context, rec state.Record, stopping bool) os.Signal {
	if l.cfg.Store == nil {
		return nil
	}
	var err error
	stop, done := l.recordCall(ctx, stopping, func(ctx context.Context) { err = l.cfg.Store.Save(ctx, &rec) })
	if !done {
		err = errAbandoned
	}
	l.noteWrite(err)
	if err == nil {
		l.rec.stale = 0 // rec was the loop's record as it is, steps and all
		l.dur.noteWritten(time.Now())
	}
	return stop
}

// errAbandoned is the error of a write a stopping loop could not wait for.
var errAbandoned = errors.New("write abandoned: every is stopping")

// noteWrite takes note of a write's result.
func (l *loop) noteWrite(err error) {
	if err != nil {
		l.rec.unsaved = true
		l.report(&l.outages.stateWrite, "write", 1, slog.LevelError, "cannot write state, will try again at the next run",
			"event", EventStateError, "state", l.cfg.Store.Where(), "error", err.Error())
		return
	}
	l.rec.unsaved = false
	l.recover(&l.outages.stateWrite, false, "state written again", "event", EventStateError, "state", l.cfg.Store.Where())
}

// holderAlive reports whether the run a record shows as running may still be
// going on. Under the lock nobody else can be running, so a record left
// running: true was cut short. Otherwise only a process of this host can be
// checked; another host's is taken to be alive.
func (l *loop) holderAlive(rec *state.Record, underLock bool) bool {
	switch {
	case underLock || rec.PID == l.cfg.PID && rec.Host == l.cfg.Host:
		return false
	case rec.Host != l.cfg.Host:
		return true
	}
	return pid.Alive(rec.PID)
}
