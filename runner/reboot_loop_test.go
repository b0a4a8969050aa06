package runner

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"testing/synctest"
)

// The warning of a record written before a reboot is given once: not again
// when the record is read again under the lock before the first run, nor
// at the runs after it.
func TestLoopRebootWarnedOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		log := &durLog{}
		store := &syncStore{log: log}
		f := &fakeExec{}
		var buf bytes.Buffer
		cfg := durConfig(f, &buf, log, store)
		cfg.MaxRuns = 3
		rec := beforeReboot(cfg)
		store.rec, store.disk = rec, rec
		Loop(context.Background(), cfg)
		if len(f.calls) != 3 || f.calls[0].env["EVERY_RUN"] != "20" {
			t.Fatalf("%d runs, EVERY_RUN %q, want 3 from 20", len(f.calls), f.calls[0].env["EVERY_RUN"])
		}
		if n := strings.Count(buf.String(), "state written before a reboot"); n != 1 {
			t.Errorf("reboot warned %d times, want once:\n%s", n, buf.String())
		}
	})
}
