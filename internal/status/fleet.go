package status

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/everycli/every/internal/fleet"
	"github.com/everycli/every/state"
)

// storeWait bounds every status's reads of a fleet's store, all of them
// together: a store that answers that it cannot answer yet (an etcd leader
// election, a Redis replica being promoted or loading its data), or does
// not answer in time, is asked again within it. A store that refuses the
// connection is down, and is said to be at once.
const storeWait = 10 * time.Second

// retryFirst and retryMax are the pauses between two tries of a store's
// read: the first, doubled up to the last. An etcd election takes about a
// second (its default election timeout); a try every half second at most
// sees its end soon after.
const (
	retryFirst = 50 * time.Millisecond
	retryMax   = 500 * time.Millisecond
)

// retried calls read until it answers, fails for good (an error the
// store does not call transient), or ctx ends; then the last error is
// returned.
func retried[T any](ctx context.Context, f fleet.Store, read func(context.Context) (T, error)) (T, error) {
	pause := retryFirst
	for {
		v, err := read(ctx)
		if err == nil || !f.Transient(err) || ctx.Err() != nil {
			return v, err
		}
		t := time.NewTimer(pause)
		select {
		case <-ctx.Done():
			t.Stop()
			return v, err
		case <-t.C:
		}
		pause = min(2*pause, retryMax)
	}
}

// fleetRecords reads the records of a fleet's store, or of the named jobs.
func fleetRecords(ctx context.Context, f fleet.Store, names []string) ([]*state.Record, []problem, error) {
	all, err := retried(ctx, f, f.Records)
	if err != nil {
		return nil, nil, err
	}
	slices.SortFunc(all, func(a, b *state.Record) int { return strings.Compare(a.Name, b.Name) })
	if len(names) == 0 {
		return all, nil, nil
	}
	var (
		records  []*state.Record
		problems []problem
	)
	for _, name := range names {
		i := slices.IndexFunc(all, func(r *state.Record) bool { return r.Name == name })
		if i < 0 {
			problems = append(problems, problem{name, "no state", fmt.Errorf("no state for job %q in %s at %s", name, f.Kind(), f.Server())})
			continue
		}
		records = append(records, all[i])
	}
	return records, problems, nil
}

// fleetActive tells whether an every is alive for a fleet's job, and
// which: active while a run holds the job's lock, or while an every of the
// job is announced alive on some host (fleet/presence.go), idle or not. An
// every of a version that does not announce itself shows only while its
// run holds the lock.
func fleetActive(ctx context.Context, f fleet.Store, name string) (bool, []fleet.Alive, error) {
	alive, err := retried(ctx, f, func(ctx context.Context) ([]fleet.Alive, error) { return f.Live(ctx, name) })
	if err != nil {
		return false, nil, err
	}
	if len(alive) > 0 {
		return true, alive, nil
	}
	held, err := retried(ctx, f, func(ctx context.Context) (bool, error) { return f.LockHeld(ctx, name) })
	return held, nil, err
}
