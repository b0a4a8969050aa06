package release

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/everycli/every/internal/testutil"
)

// This file proves that the static binary, as releases and the container
// image build it, keeps its time zones in an empty root: no
// /usr/share/zoneinfo, no dynamic loader, no /etc/localtime (a scratch
// container, a chroot).

// buildStatic builds every as the releases do (CGO_ENABLED=0, -trimpath)
// into dir/every.
func buildStatic(t *testing.T, dir string) string {
	t.Helper()
	bin := filepath.Join(dir, "every")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-o", bin, "github.com/everycli/every")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// runChrooted runs /every in root with env and args, and returns its stdout,
// or skips the test where chroot is not permitted.
func runChrooted(t *testing.T, root string, env []string, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testutil.WaitBound)
	defer cancel()
	cmd := exec.CommandContext(ctx, "/every", args...)
	cmd.Dir = "/"
	cmd.Env = env
	cmd.SysProcAttr = &syscall.SysProcAttr{Chroot: root}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if errors.Is(err, syscall.EPERM) {
		t.Skipf("chroot not permitted here (%v): run as root, or with CAP_SYS_CHROOT, to check the empty-root zones", err)
	}
	if err != nil {
		return stdout.String(), errors.Join(err, errors.New("stderr: "+stderr.String()))
	}
	return stdout.String(), nil
}

func TestEmptyRootTimeZones(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("chroot test: linux only")
	}
	if testing.Short() {
		t.Skip("builds the static binary: not in -short")
	}
	root := t.TempDir()
	buildStatic(t, root)
	// The root holds the binary and nothing else: no zone database, no
	// loader, no /etc.
	if entries, err := os.ReadDir(root); err != nil || len(entries) != 1 {
		t.Fatalf("the root must hold only every: %v, %v", entries, err)
	}

	// 2026-03-29 is the last Sunday of March: Berlin goes from CET (+01:00)
	// to CEST (+02:00) at 01:00Z. 09:00 local is 08:00Z the day before and
	// 07:00Z that day: 8h and 31h (1d7h) after the start.
	spring := "2026-03-28T09:00:00+01:00  Sat  in 8h\n" +
		"2026-03-29T09:00:00+02:00  Sun  in 1d7h\n"
	// 2026-10-25: back to CET at 01:00Z; 09:00 local is 07:00Z, then 08:00Z.
	autumn := "2026-10-24T09:00:00+02:00  Sat  in 7h\n" +
		"2026-10-25T09:00:00+01:00  Sun  in 1d8h\n"
	berlin := []string{"TZ=Europe/Berlin"}
	for _, tc := range []struct {
		name string
		env  []string
		args []string
		want string
	}{
		{"--tz", nil, []string{"next", "0 9 * * *", "--tz", "Europe/Berlin", "-n", "2", "--from", "2026-03-28T00:00:00Z"}, spring},
		{"TZ, spring", berlin, []string{"next", "0 9 * * *", "-n", "2", "--from", "2026-03-28T00:00:00Z"}, spring},
		{"TZ, autumn", berlin, []string{"next", "0 9 * * *", "-n", "2", "--from", "2026-10-24T00:00:00Z"}, autumn},
		{"CRON_TZ", nil, []string{"next", "CRON_TZ=Europe/Berlin 0 9 * * *", "-n", "2", "--from", "2026-10-24T00:00:00Z"}, autumn},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := runChrooted(t, root, tc.env, tc.args...)
			if err != nil {
				t.Fatalf("every %q in an empty root: %v", tc.args, err)
			}
			if got != tc.want {
				t.Errorf("every %q in an empty root printed\n%s\nwant\n%s", tc.args, got, tc.want)
			}
		})
	}
}
