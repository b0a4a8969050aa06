//go:build linux

package runner

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/everycli/every/internal/testutil"
)

// swapStd points os.Stdout and os.Stderr, where Exec passes the command's
// output on, at two files for the test's length, and returns their paths.
// The tests that use it are not parallel: nothing else writes there meanwhile.
func swapStd(t *testing.T) (stdout, stderr string) {
	t.Helper()
	dir := t.TempDir()
	stdout, stderr = filepath.Join(dir, "stdout"), filepath.Join(dir, "stderr")
	fo, err := os.Create(stdout)
	if err != nil {
		t.Fatal(err)
	}
	fe, err := os.Create(stderr)
	if err != nil {
		t.Fatal(err)
	}
	oldOut, oldErr := os.Stdout, os.Stderr
	os.Stdout, os.Stderr = fo, fe
	t.Cleanup(func() {
		os.Stdout, os.Stderr = oldOut, oldErr
		_ = fo.Close()
		_ = fe.Close()
	})
	return stdout, stderr
}

func readString(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// execBackground runs Exec on argv with the output taken into tail, and
// returns the channel its result comes on and its debug log.
func execBackground(t *testing.T, tail *Tail, hold bool, argv ...string) (<-chan Result, *testutil.Buffer) {
	t.Helper()
	procs.enable()
	log := &testutil.Buffer{}
	a := Attempt{Argv: argv, Env: os.Environ(), Signal: syscall.SIGTERM, KillAfter: time.Second,
		Logger: slog.New(slog.NewTextHandler(log, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Output: tail, Hold: hold}
	done := make(chan Result, 1)
	go func() { done <- Exec(context.Background(), a) }()
	return done, log
}

func awaitResult(t *testing.T, done <-chan Result, log *testutil.Buffer) Result {
	t.Helper()
	r, ok := testutil.Receive(done)
	if !ok {
		t.Fatalf("Exec did not return within %v; log:\n%s", waitBound, log)
	}
	return r
}

// until waits, at most waitBound, for cond.
func until(t *testing.T, what string, cond func() bool) {
	t.Helper()
	if !testutil.Eventually(cond) {
		t.Fatalf("no %s within %v", what, waitBound)
	}
}

// Each piece of output the command writes, to either stream, reaches the
// tail and every's own stream before the command writes the next: passed
// on at once (no line buffering: some pieces have no newline), in the
// order written across the two streams, and complete.
func TestExecOutputPassedOnInOrder(t *testing.T) {
	stdout, stderr := swapStd(t)
	dir := t.TempDir()
	pieces := []piece{o("out 1\n"), e("err 1\n"), o("out 2, no newline"), o(" more\n"), e("err 2, no newline"), o("out 3\n")}
	// The command writes piece i, then waits for the file go.i, which the
	// test creates once it has seen the piece arrive.
	var script strings.Builder
	for i, p := range pieces {
		redirect := ""
		if p.stderr {
			redirect = " >&2"
		}
		fmt.Fprintf(&script, "printf '%%s' '%s'%s\n", p.b, redirect)
		fmt.Fprintf(&script, "while [ ! -e %s ]; do sleep 0.001; done\n", filepath.Join(dir, "go."+strconv.Itoa(i)))
	}
	tail := NewTail(1 << 20)
	done, log := execBackground(t, tail, false, "/bin/sh", "-c", script.String())
	var wantAll, wantOut, wantErr strings.Builder
	for i, p := range pieces {
		wantAll.WriteString(p.b)
		if p.stderr {
			wantErr.WriteString(p.b)
		} else {
			wantOut.WriteString(p.b)
		}
		until(t, fmt.Sprintf("piece %d %v in the tail and passed on", i, p), func() bool {
			return string(tail.Bytes()) == wantAll.String() &&
				readString(t, stdout) == wantOut.String() && readString(t, stderr) == wantErr.String()
		})
		if err := os.WriteFile(filepath.Join(dir, "go."+strconv.Itoa(i)), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if r := awaitResult(t, done, log); r.Outcome != Success {
		t.Fatalf("result %+v, want success; log:\n%s", r, log)
	}
	if got, _ := replayed(tail); !slices.Equal(got, merged(pieces)) {
		t.Errorf("tail = %v, want %v", got, merged(pieces))
	}
	if got, want := readString(t, stdout), wantOut.String(); got != want {
		t.Errorf("every's stdout = %q, want %q", got, want)
	}
	if got, want := readString(t, stderr), wantErr.String(); got != want {
		t.Errorf("every's stderr = %q, want %q", got, want)
	}
}

// Much output on both streams at once arrives whole: every byte passed on
// to its own stream, the tail's last bytes and Dropped adding up.
func TestExecOutputComplete(t *testing.T) {
	stdout, stderr := swapStd(t)
	const n = 300000 // several pipefuls
	tail := NewTail(10000)
	done, log := execBackground(t, tail, false, "/bin/sh", "-c",
		fmt.Sprintf("head -c %d /dev/zero | tr '\\0' o & head -c %d /dev/zero | tr '\\0' e >&2; wait", n, n))
	if r := awaitResult(t, done, log); r.Outcome != Success {
		t.Fatalf("result %+v, want success; log:\n%s", r, log)
	}
	if got := readString(t, stdout); got != strings.Repeat("o", n) {
		t.Errorf("every's stdout: %d bytes, want %d bytes of o", len(got), n)
	}
	if got := readString(t, stderr); got != strings.Repeat("e", n) {
		t.Errorf("every's stderr: %d bytes, want %d bytes of e", len(got), n)
	}
	if got := int64(len(tail.Bytes())) + tail.Dropped(); got != 2*n {
		t.Errorf("tail kept %d + dropped %d = %d bytes, want %d", len(tail.Bytes()), tail.Dropped(), got, 2*n)
	}
	got, _ := replayed(tail)
	for _, p := range got {
		if want := strings.Repeat(p.b[:1], len(p.b)); p.b != want || p.stderr != (p.b[0] == 'e') {
			t.Fatalf("tail has %d bytes starting %.10q on the wrong stream (stderr %v)", len(p.b), p.b, p.stderr)
		}
	}
}

// Held output (--quiet-success) goes to the tail only: nothing reaches
// every's own stdout or stderr.
func TestExecOutputHeld(t *testing.T) {
	stdout, stderr := swapStd(t)
	tail := NewTail(1000)
	done, log := execBackground(t, tail, true, "/bin/sh", "-c", "echo out; echo err >&2; exit 3")
	if r := awaitResult(t, done, log); r.Outcome != Failure || r.ExitCode != 3 {
		t.Fatalf("result %+v, want failure, exit 3; log:\n%s", r, log)
	}
	if got := readString(t, stdout) + readString(t, stderr); got != "" {
		t.Errorf("held output reached every's streams: %q", got)
	}
	var out, errs strings.Builder
	tail.Replay(&out, &errs)
	if out.String() != "out\n" || errs.String() != "err\n" {
		t.Errorf("tail replays stdout %q, stderr %q; want \"out\\n\", \"err\\n\"", out.String(), errs.String())
	}
}

// every's own stdout gone (its reader exited: EPIPE) does not stop the
// draining: the command writes on to its end, and the tail keeps its last
// bytes.
func TestExecOutputReaderGone(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	_ = r.Close()
	old := os.Stdout
	os.Stdout = w
	t.Cleanup(func() { os.Stdout = old; _ = w.Close() })
	tail := NewTail(4)
	const n = 1 << 20 // far more than a pipe holds: the command blocks unless drained
	done, log := execBackground(t, tail, false, "/bin/sh", "-c", fmt.Sprintf("head -c %d /dev/zero; printf 'last'", n))
	if r := awaitResult(t, done, log); r.Outcome != Success {
		t.Fatalf("result %+v, want success; log:\n%s", r, log)
	}
	if got := string(tail.Bytes()); got != "last" || tail.Dropped() != n {
		t.Errorf("tail %q, dropped %d; want \"last\", %d", got, tail.Dropped(), n)
	}
}

// A process out of every's reach that holds the command's stdout open (here
// the test itself, through /proc) does not keep Exec from returning: once
// the command's tree is gone, the stream is given up after drainIdle, with a
// line at debug, and what came before is kept.
func TestExecOutputHeldOpenElsewhere(t *testing.T) {
	swapStd(t)
	dir := t.TempDir()
	pidFile, goFile := filepath.Join(dir, "pid"), filepath.Join(dir, "go")
	tail := NewTail(1000)
	done, log := execBackground(t, tail, true, "/bin/sh", "-c",
		fmt.Sprintf("echo $$ > %s.tmp; mv %[1]s.tmp %[1]s; while [ ! -e %s ]; do sleep 0.001; done; echo bye", pidFile, goFile))
	until(t, "pid file", func() bool { _, err := os.Stat(pidFile); return err == nil })
	pid := strings.TrimSpace(readString(t, pidFile))
	// Opening a pipe through /proc gives a new descriptor of the same pipe.
	held, err := os.OpenFile("/proc/"+pid+"/fd/1", os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	if err := os.WriteFile(goFile, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	r := awaitResult(t, done, log)
	took := time.Since(t0)
	if r.Outcome != Success {
		t.Fatalf("result %+v, want success; log:\n%s", r, log)
	}
	if got := string(tail.Bytes()); got != "bye\n" {
		t.Errorf("tail %q, want \"bye\\n\"", got)
	}
	if n := strings.Count(log.String(), "gave up on the command's output"); n != 1 {
		t.Errorf("%d lines giving up, want 1; log:\n%s", n, log)
	}
	t.Logf("command's end to Exec's return: %v (drainIdle %v)", took, drainIdle)
}
