package runner

import (
	"bytes"
	"context"
	"os"
	"syscall"
	"testing"
	"testing/synctest"
)

func TestParseCodes(t *testing.T) {
	fail := func(code int) Result { return Result{Outcome: Failure, ExitCode: code} }
	timeout := Result{Outcome: Timeout, ExitCode: 124}
	killed := Result{Outcome: Failure, ExitCode: 137, Signal: syscall.SIGKILL}
	tests := []struct {
		in      string
		has     []Result
		hasNot  []Result
		wantErr bool
	}{
		{in: "75", has: []Result{fail(75)}, hasNot: []Result{fail(74), fail(76), timeout, killed}},
		{in: "75,100-110", has: []Result{fail(75), fail(100), fail(105), fail(110)}, hasNot: []Result{fail(99), fail(111)}},
		{in: "timeout", has: []Result{timeout}, hasNot: []Result{fail(124), killed}},
		{in: "signal", has: []Result{killed}, hasNot: []Result{fail(137), timeout}},
		{in: "1, timeout ,signal", has: []Result{fail(1), timeout, killed}},
		{in: "0-255", has: []Result{fail(0), fail(255)}, hasNot: []Result{timeout, killed}},
		{in: "", wantErr: true},
		{in: "256", wantErr: true},
		{in: "-1", wantErr: true},
		{in: "+5", wantErr: true},
		{in: "10-5", wantErr: true},
		{in: "1,,2", wantErr: true},
		{in: "oops", wantErr: true},
	}
	for _, tt := range tests {
		c, err := ParseCodes(tt.in)
		if (err != nil) != tt.wantErr {
			t.Errorf("ParseCodes(%q) error %v, want error %v", tt.in, err, tt.wantErr)
			continue
		}
		for _, r := range tt.has {
			if !c.Has(r) {
				t.Errorf("ParseCodes(%q) does not have %+v", tt.in, r)
			}
		}
		for _, r := range tt.hasNot {
			if c.Has(r) {
				t.Errorf("ParseCodes(%q) has %+v", tt.in, r)
			}
		}
	}
}

func TestLoopRetryOn(t *testing.T) {
	codes := func(s string) *Codes {
		c, err := ParseCodes(s)
		if err != nil {
			t.Fatal(err)
		}
		return &c
	}
	for _, tt := range []struct {
		name     string
		policy   RetryPolicy
		exit     int
		attempts int
	}{
		{"no policy: every failure retried", RetryPolicy{}, 3, 3},
		{"retry-on lists it", RetryPolicy{On: codes("75")}, 75, 3},
		{"retry-on does not list it", RetryPolicy{On: codes("75")}, 3, 1},
		{"no-retry-on lists it", RetryPolicy{Not: codes("2-4")}, 3, 1},
		{"no-retry-on does not list it", RetryPolicy{Not: codes("2")}, 3, 3},
		{"both: listed, then excluded", RetryPolicy{On: codes("1-10"), Not: codes("3")}, 3, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f := &fakeExec{results: []Result{{Outcome: Failure, ExitCode: tt.exit}}}
				var buf bytes.Buffer
				cfg := testConfig(f, &buf, make(chan os.Signal))
				cfg.MaxRuns, cfg.Retries, cfg.RetryOn = 1, 2, tt.policy
				end := Loop(context.Background(), cfg)
				if n := len(f.starts()); n != tt.attempts || end.Last.ExitCode != tt.exit {
					t.Errorf("%d attempts, last exit %d; want %d attempts, exit %d", n, end.Last.ExitCode, tt.attempts, tt.exit)
				}
			})
		})
	}
}
