//go:build linux || darwin || freebsd

package runner

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/everycli/every/internal/testutil"
)

// A stopped attempt's --signal reaches the whole process group, not only
// its leader: a grandchild that traps SIGTERM to clean up gets to do so
// before the grace's SIGKILL. (Sent to the leader alone, the group's
// SIGKILL at the end hides it: the grandchild dies all the same, without
// its cleanup.) The leader ignores SIGTERM, once its child has started
// (an ignored signal would be inherited, and untrappable in sh). Both say
// when they are ready: a stop before the leader's trap would end the
// leader, and the group's SIGKILL at its end could beat the grandchild's.
func TestExecSignalReachesTheWholeGroup(t *testing.T) {
	dir := t.TempDir()
	grandchild := `trap 'echo TERM >"$1/term"; exit 0' TERM; echo >"$1/ready"; while :; do sleep 0.05; done`
	leader := `sh -c "$0" gc "$1" & trap "" TERM; echo >"$1/leader"; wait`
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	a := Attempt{Argv: []string{"sh", "-c", leader, grandchild, dir}, Signal: syscall.SIGTERM, KillAfter: 5 * time.Second, Logger: slog.New(slog.DiscardHandler)}
	done := make(chan Result, 1)
	go func() { done <- Exec(ctx, a) }()
	for _, f := range []string{"ready", "leader"} {
		if !testutil.Eventually(func() bool { _, err := os.Stat(filepath.Join(dir, f)); return err == nil }) {
			t.Fatalf("the command did not start within %v (no %s)", testutil.WaitBound, f)
		}
	}
	cancel() // as a timeout does
	r, ok := testutil.Receive(done)
	if !ok {
		t.Fatalf("Exec did not return within %v", testutil.WaitBound)
	}
	if r.Outcome != Timeout {
		t.Errorf("outcome %s, want %s", r.Outcome, Timeout)
	}
	if _, err := os.Stat(filepath.Join(dir, "term")); err != nil {
		t.Fatalf("the grandchild never saw SIGTERM (%v): the signal went to the leader alone", err)
	}
}
