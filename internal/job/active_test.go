package job

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/everycli/every/internal/testutil"
	"github.com/everycli/every/internal/ui"
)

// nobody is a uid that is not root's, for the tests of markers owned by
// another user.
const nobody = 65534

// TestActiveForeignMarkerRun: in a shared directory, a marker owned by
// another user is never trusted (docs/DESIGN.md, Safety under faults:
// every file every writes is its own): a live job whose marker another
// user holds is not ACTIVE, and a new every for it refuses to start (exit
// 73). As root, which can hand a file to another user.
func TestActiveForeignMarkerRun(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root, to make files of another user")
	}
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o1777); err != nil { // a shared directory
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), testutil.WaitBound)
	defer cancel()
	sd := filepath.Join(dir, "sd")
	ran := filepath.Join(dir, "ran")
	ev := exec.CommandContext(ctx, "every", "1h", "--state-dir", sd, "--name", "idle", "--", "job", "-touch", ran)
	if err := ev.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = ev.Wait(); close(done) }()
	t.Cleanup(func() { _ = ev.Process.Kill(); <-done })
	marker := filepath.Join(sd, "idle.json.active")
	if !testutil.Eventually(func() bool {
		out, _ := exec.Command("every", "status", "--state-dir", sd, "--json", "idle").CombinedOutput()
		return strings.Contains(string(out), `"last_result": "success"`) && strings.Contains(string(out), `"active": true`)
	}) {
		t.Fatalf("the job did not run within %v", testutil.WaitBound)
	}
	if err := os.Chown(marker, nobody, nobody); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("every", "status", "--state-dir", sd, "--max-age", "1h", "idle").CombinedOutput()
	if err == nil || string(out) != "job idle: no every running for it\n" {
		t.Errorf("every status --max-age with the marker another user's: %v %q, want exit 1, inactive", err, out)
	}
	out, _ = exec.Command("every", "status", "--state-dir", sd, "--json", "idle").CombinedOutput()
	if !strings.Contains(string(out), `"active": false`) {
		t.Errorf("every status --json: %s, want inactive", out)
	}
	_ = ev.Process.Kill()
	<-done
	// Bounded: an every that took the marker would wait for its next slot.
	cmd := exec.CommandContext(ctx, "every", "1h", "--max-runs", "1", "--state-dir", sd, "--name", "idle", "--", "job", "-touch", ran+"2")
	out, err = cmd.CombinedOutput()
	if cmd.ProcessState.ExitCode() != ui.ExitCantCreate || !strings.Contains(string(out), `every: cannot mark the job active in "`+marker+`": is owned by uid 65534, not by uid 0 that runs every; remove it, or choose --state-dir or --state`) {
		t.Errorf("every with the marker another user's: %v, %s; want exit 73 and the line", err, out)
	}
	if _, err := os.Stat(ran + "2"); err == nil {
		t.Error("the job ran")
	}
}
