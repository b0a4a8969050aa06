package cli

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"github.com/creack/pty"
	"github.com/everycli/every/internal/testutil"
)

// The command keeps every's own stdout when no feature needs its output: a
// terminal stays a terminal (isatty, colours, line buffering all as without
// every). A feature that needs the output (a hook, --quiet-success) puts a
// pipe there instead, whose output every passes on to the same terminal.
func TestOutputTerminal(t *testing.T) {
	every, err := exec.LookPath("every") // testscript.Main put it on PATH
	if err != nil {
		t.Fatal(err)
	}
	// It fails, so that --quiet-success prints what it held.
	job := "if test -t 1; then echo tty; else echo notty; fi; exit 3"
	tests := []struct {
		name  string
		flags []string
		want  string
	}{
		{name: "no feature needs the output", want: "tty"},
		{name: "a hook needs it", flags: []string{"--on-failure", "true"}, want: "notty"},
		{name: "--quiet-success needs it", flags: []string{"--quiet-success"}, want: "notty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ptmx, tty, err := pty.Open()
			if err != nil {
				t.Skipf("no pseudo-terminal to test with: %v", err)
			}
			defer ptmx.Close()
			args := append([]string{"1h", "--max-runs", "1", "--no-state", "--no-lock"}, tt.flags...)
			cmd := exec.Command(every, append(args, "--", "sh", "-c", job)...)
			var stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = tty, &stderr
			cmd.Env = append(os.Environ(), "GORACE=atexit_sleep_ms=0")
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			_ = tty.Close() // the terminal's end comes once every and its job have closed theirs
			t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
			type result struct {
				out string
				err error
			}
			read := make(chan result, 1)
			go func() {
				b, err := io.ReadAll(ptmx)
				read <- result{string(b), err}
			}()
			r, ok := testutil.Receive(read)
			if !ok {
				t.Fatalf("the terminal did not close within %v", testutil.WaitBound)
			}
			if !errors.Is(r.err, syscall.EIO) { // EIO: no slave end left
				t.Fatalf("reading the terminal: %v", r.err)
			}
			out := r.out
			err = cmd.Wait()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 3 {
				t.Fatalf("every: %v, want exit status 3; stderr:\n%s", err, stderr.String())
			}
			// The terminal turns "\n" into "\r\n".
			if got := strings.TrimSpace(strings.ReplaceAll(out, "\r\n", "\n")); got != tt.want {
				t.Errorf("the job says its stdout is %q, want %q; stderr:\n%s", got, tt.want, stderr.String())
			}
		})
	}
}
