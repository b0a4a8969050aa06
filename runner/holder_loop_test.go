package runner

import (
	"bytes"
	"context"
	"maps"
	"testing"
	"testing/synctest"
	"time"

	"github.com/everycli/every/lock"
	"github.com/everycli/every/state"
)

// busyLock is a lock held by another, who is named as holder.
type busyLock struct{ holder lock.Holder }

func (b busyLock) Lock(context.Context, time.Duration) (lock.Lease, error) {
	return nil, &lock.BusyError{Holder: b.holder}
}

// A busy lock's skip says what is known of its holder, and no more: never a
// pid 0 or an empty host for one that is unknown (a lock held by flock(1),
// by another job sharing --lock, by an every whose record is not written
// yet, or without a state to look in), and never the pid of a record left
// running by a holder that is dead.
func TestLoopBusyLockSaysWhatIsKnownOfItsHolder(t *testing.T) {
	// No process has this pid: beyond any system's pid_max.
	const dead = 1 << 30
	running := func(pid int, host string) *state.Record {
		return &state.Record{Version: state.Version, Schedule: "10s", Anchor: time.Now(), Running: true, PID: pid, Host: host}
	}
	for _, tt := range []struct {
		name   string
		holder lock.Holder   // the lock's own word (a fleet store's)
		rec    *state.Record // the job's record
		noRec  bool          // no state (--no-state)
		want   map[string]any
	}{
		{name: "file lock, record running", rec: running(4242, "web-1"),
			want: map[string]any{"holder_pid": 4242.0, "holder_host": "web-1"}},
		{name: "file lock, record not running (flock(1), another job)",
			rec:  &state.Record{Version: state.Version, Schedule: "10s", Anchor: time.Now(), PID: 4242, Host: "web-1"},
			want: map[string]any{"holder": "unknown"}},
		{name: "file lock, record not written yet", want: map[string]any{"holder": "unknown"}},
		{name: "file lock, no state", noRec: true, want: map[string]any{"holder": "unknown"}},
		{name: "file lock, record left running by a dead holder", rec: running(dead, "here"),
			want: map[string]any{"holder": "unknown"}},
		{name: "fleet lock", holder: lock.Holder{PID: 77, Host: "web-2"}, noRec: true,
			want: map[string]any{"holder_pid": 77.0, "holder_host": "web-2"}},
		{name: "fleet lock, no host", holder: lock.Holder{PID: 77}, noRec: true,
			want: map[string]any{"holder_pid": 77.0}},
		{name: "fleet lock, holder unreadable", noRec: true, want: map[string]any{"holder": "unknown"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f := &fakeExec{}
				var buf bytes.Buffer
				cfg := testConfig(f, &buf, nil)
				cfg.Lock, cfg.MaxRuns, cfg.Host, cfg.PID = busyLock{tt.holder}, 1, "here", 1
				if !tt.noRec {
					st := &faultyStore{}
					st.rec = tt.rec
					cfg.Store = st
				}
				if end := Loop(context.Background(), cfg); end.Reason != LockBusy {
					t.Fatalf("end %+v, want LockBusy", end)
				}
				skips := eventsNamed(logEvents(t, &buf), "skip")
				if len(skips) != 1 {
					t.Fatalf("skips %v, want one", skips)
				}
				got := map[string]any{}
				for _, k := range []string{"holder", "holder_pid", "holder_host"} {
					if v, ok := skips[0][k]; ok {
						got[k] = v
					}
				}
				if !maps.Equal(got, tt.want) {
					t.Errorf("holder fields %v, want %v (line %v)", got, tt.want, skips[0])
				}
			})
		})
	}
}
