package job

import (
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"testing"

	"github.com/everycli/every/internal/scripttest"
	"github.com/everycli/every/runner"
)

// The biggest output tail costs every at most twice the tail (SPEC 13
// [edges]): a run that writes 25 times the tail, on both streams, raises
// every's peak resident memory by less than 2 * 16 MiB over that of a run
// that writes a line.
func TestOutputTailMemory(t *testing.T) {
	if scripttest.RaceBuild() {
		t.Skip("the race detector's shadow memory is no measure of every's")
	}
	every, err := exec.LookPath("every") // testscript.Main put it on PATH
	if err != nil {
		t.Fatal(err)
	}
	tail := strconv.Itoa(runner.MaxOutputTail)
	peak := func(job string) int64 {
		t.Helper()
		cmd := exec.Command(every, "1h", "--max-runs", "1", "--no-state", "--no-lock", "--quiet-success",
			"--output-tail", tail, "--", "sh", "-c", job)
		cmd.Env = append(os.Environ(), "GORACE=atexit_sleep_ms=0")
		out, err := cmd.CombinedOutput()
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 3 {
			t.Fatalf("every: %v, want exit status 3; output: %.500s", err, out)
		}
		// every's own peak, or that of a child it waited for (sh, head:
		// far smaller): KiB on Linux.
		return cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss << 10
	}
	small := peak("echo one line; exit 3")
	// Alternating streams, 400 MB in all: the run fails, so --quiet-success
	// replays the tail at the end, too.
	big := peak("for i in 1 2 3 4 5 6 7 8; do head -c 40000000 /dev/zero; head -c 10000000 /dev/zero >&2; done; exit 3")
	grew := big - small
	t.Logf("peak RSS %d KiB with a line of output, %d KiB with 400 MB through a %s-byte tail: %.2f times the tail",
		small>>10, big>>10, tail, float64(grew)/float64(runner.MaxOutputTail))
	if limit := int64(2 * runner.MaxOutputTail); grew > limit {
		t.Errorf("the tail raised every's peak RSS by %d bytes, want at most %d (twice the tail)", grew, limit)
	}
}
