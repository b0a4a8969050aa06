package scripttest

import (
	"encoding/json"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
	"golang.org/x/sys/unix"
)

// Script commands for the files_*.txtar and status_*.txtar scripts: paths
// that are not regular files, and records too big to trust.

// mkfifo PATH...: make FIFOs.
func mkfifoCmd(ts *testscript.TestScript, neg bool, args []string) {
	noNeg(ts, neg, "mkfifo")
	if len(args) == 0 {
		ts.Fatalf("usage: mkfifo PATH...")
	}
	for _, a := range args {
		ts.Check(unix.Mkfifo(ts.MkAbs(a), 0o600))
	}
}

// mkdevice PATH: make a character device like /dev/null (1:3) where mknod is
// permitted (root); elsewhere a FIFO, which every must refuse alike.
func mkdeviceCmd(ts *testscript.TestScript, neg bool, args []string) {
	noNeg(ts, neg, "mkdevice")
	if len(args) != 1 {
		ts.Fatalf("usage: mkdevice PATH")
	}
	path := ts.MkAbs(args[0])
	if err := mknodNull(path); err != nil {
		ts.Logf("mknod %s: %v; a FIFO stands for the device", args[0], err)
		ts.Check(unix.Mkfifo(path, 0o600))
	}
}

// bigrecord PATH BYTES: write a well-formed state record of at least BYTES
// bytes (a long command), recent and sane but for its size.
func bigRecordCmd(ts *testscript.TestScript, neg bool, args []string) {
	noNeg(ts, neg, "bigrecord")
	if len(args) != 2 {
		ts.Fatalf("usage: bigrecord PATH BYTES")
	}
	n, err := strconv.Atoi(args[1])
	ts.Check(err)
	now := time.Now().UTC().Add(-time.Minute).Format(time.RFC3339)
	b, err := json.Marshal(map[string]any{
		"version": 1, "name": "j", "command": []string{"job", strings.Repeat("x", n)},
		"schedule": "1h", "anchor": now, "last_slot": now, "runs": 41,
	})
	ts.Check(err)
	ts.Check(os.WriteFile(ts.MkAbs(args[0]), b, 0o600))
}
