package runner

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/everycli/every/lock"
	"github.com/everycli/every/state"
)

// A one-shot never waits long for its slot (SPEC 3 edges): started by cron
// a little before a slot, it waits for it; otherwise it runs at once for the
// latest slot, unless that one ran already, and then it exits at once.
func TestLoopOneShotNeverWaitsLong(t *testing.T) {
	const iv = 10 * time.Second
	for _, tt := range []struct {
		name string
		// The grid's slot 10 lies off from the start; the record's last
		// slot is last (-1: no record at all).
		off     time.Duration
		last    int
		running bool // the record's last run was cut short (its pid is dead)
		policy  CatchUp
		jitter  time.Duration
		// want: the start of the run after the start and its slot (-1: no
		// run), how the loop ends, and the ready line's first slot and in.
		start    time.Duration
		slot     int
		end      Reason
		first    int
		in       string
		doneNext int // the skip line's next slot, when it ends SlotDone
	}{
		{name: "next slot near: waits for it", off: 50 * time.Millisecond, last: 9,
			start: 50 * time.Millisecond, slot: 10, end: MaxRuns, first: 10, in: "50ms"},
		{name: "next slot not near, latest run: done", off: 150 * time.Millisecond, last: 9,
			start: -1, end: SlotDone, first: 10, in: "150ms", doneNext: 10},
		{name: "latest slot not run: at once", off: -3 * time.Second, last: 9,
			start: 0, slot: 10, end: MaxRuns, first: 10, in: "0s"},
		{name: "latest slot not run, long missed: at once", off: -3 * time.Second, last: 2,
			start: 0, slot: 10, end: MaxRuns, first: 10, in: "0s"},
		{name: "latest slot run already: done, with the next slot", off: -3 * time.Second, last: 10,
			start: -1, end: SlotDone, first: 11, in: "7s", doneNext: 11},
		{name: "latest slot's run cut short: at once", off: -3 * time.Second, last: 10, running: true,
			start: 0, slot: 10, end: MaxRuns, first: 10, in: "0s"},
		{name: "fresh: at once", off: -3 * time.Second, last: -1,
			start: 0, slot: 0, end: MaxRuns, first: 0, in: "0s"},
		{name: "--catch-up none: waits for the next slot", off: -3 * time.Second, last: 9, policy: CatchUpNone,
			start: 7 * time.Second, slot: 11, end: MaxRuns, first: 11, in: "7s"},
		{name: "--jitter counts from now", off: -3 * time.Second, last: 9, jitter: 4 * time.Second,
			start: 2 * time.Second, slot: 10, end: MaxRuns, first: 10, in: "0s"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				origin := time.Now()
				anchor := origin.Add(tt.off - 10*iv)
				slot := func(k int) time.Time { return anchor.Add(time.Duration(k) * iv) }
				store := &memStore{}
				if tt.last >= 0 {
					store.rec = &state.Record{Version: 1, Name: "job", Schedule: "10s", Anchor: anchor, LastSlot: slot(tt.last),
						Running: tt.running, Runs: 5, Host: "here", PID: 1 << 30}
				} else {
					anchor = origin // a fresh grid starts now
				}
				f := &fakeExec{}
				var buf bytes.Buffer
				cfg := testConfig(f, &buf, nil)
				cfg.Store, cfg.Lock, cfg.Host, cfg.PID = store, &memLock{}, "here", 4242
				cfg.MaxRuns, cfg.CatchUp, cfg.Jitter = 1, tt.policy, tt.jitter
				cfg.Rand = func() float64 { return 0.5 }
				end := Loop(context.Background(), cfg)
				if end.Reason != tt.end {
					t.Errorf("end %+v, want reason %d", end, tt.end)
				}
				var want []time.Duration
				if tt.start >= 0 {
					want = []time.Duration{tt.start}
				}
				if got := offsets(f.starts(), origin); !slices.Equal(got, want) {
					t.Fatalf("starts %v, want %v", got, want)
				}
				if tt.start >= 0 {
					if got, want := f.calls[0].env["EVERY_SLOT"], stamp(slot(tt.slot)); got != want {
						t.Errorf("EVERY_SLOT %s, want %s (slot %d)", got, want, tt.slot)
					}
				}
				events := logEvents(t, &buf)
				ready := eventsNamed(events, "ready")
				if len(ready) != 1 || ready[0]["level"] != "INFO" || ready[0]["schedule"] != "10s" ||
					ready[0]["first"] != stamp(slot(tt.first)) || ready[0]["in"] != tt.in {
					t.Errorf("ready lines %v, want one at info with first %s (slot %d), in %s", ready, stamp(slot(tt.first)), tt.first, tt.in)
				}
				var done []map[string]any
				for _, e := range eventsNamed(events, "skip") {
					if e["reason"] == "done" {
						done = append(done, e)
					}
				}
				switch {
				case tt.end != SlotDone && len(done) != 0:
					t.Errorf("skip lines %v, want none for done", done)
				case tt.end == SlotDone && (len(done) != 1 || done[0]["level"] != "INFO" || done[0]["next"] != stamp(slot(tt.doneNext))):
					t.Errorf("skip lines %v, want one done at info with next %s", done, stamp(slot(tt.doneNext)))
				}
			})
		})
	}
}

// stamp is a time as the JSON log and EVERY_SLOT write it.
func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// A one-shot that waited for the lock and then finds its slot run by the
// instance that held it ends as done, at once, instead of waiting for the
// next slot.
func TestLoopOneShotDoneUnderTheLock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store, lk := &memStore{}, &waitLock{}
		f := &fakeExec{took: []time.Duration{3 * time.Second}}
		a := testConfig(f, &bytes.Buffer{}, nil)
		a.Store, a.Lock, a.Host, a.MaxRuns = store, lk, "a", 1
		var buf bytes.Buffer
		b := testConfig(f, &buf, nil)
		// On another host: a's run is in progress on record, not cut short.
		b.Store, b.Lock, b.Host, b.MaxRuns, b.LockWait = store, lk, "b", 1, time.Minute
		ends := make(chan Exit, 2)
		go func() { ends <- Loop(context.Background(), a) }()
		time.Sleep(time.Second) // a runs its slot; b starts meanwhile
		go func() { ends <- Loop(context.Background(), b) }()
		synctest.Wait()
		got := []Reason{(<-ends).Reason, (<-ends).Reason}
		slices.Sort(got)
		if want := []Reason{MaxRuns, SlotDone}; !slices.Equal(got, want) {
			t.Fatalf("ends %v, want %v", got, want)
		}
		if n := len(f.starts()); n != 1 {
			t.Errorf("%d runs, want 1: the slot once", n)
		}
		if time.Since(f.starts()[0]) > 4*time.Second {
			t.Errorf("the second one-shot ended %v after the run: it waited for a slot", time.Since(f.starts()[0]))
		}
	})
}

// waitLock is a memLock that waits for the lock, up to the wait asked for.
type waitLock struct{ memLock }

func (w *waitLock) Lock(ctx context.Context, wait time.Duration) (lock.Lease, error) {
	deadline := time.Now().Add(wait)
	for {
		lease, err := w.memLock.Lock(ctx, 0)
		if err == nil || !time.Now().Before(deadline) {
			return lease, err
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A fresh calendar one-shot runs at once for the latest slot, as cron
// started it for (SPEC 3 edges); one cron starts a little late finds the
// slot just passed not run, and runs it; one started a little early waits
// for the slot.
func TestLoopCalendarOneShot(t *testing.T) {
	day := func(h, m, s, ms int) time.Time { return time.Date(2026, 12, 2, h, m, s, ms*1e6, time.UTC) }
	for _, tt := range []struct {
		name       string
		start      time.Time
		last       time.Time // the record's last slot; zero: no record
		wantStart  time.Time
		wantSlot   string
		first, in  string
		wantEnd    Reason
		wantNoRuns bool
	}{
		{name: "fresh: at once", start: day(0, 2, 30, 0), wantStart: day(0, 2, 30, 0), wantSlot: "2026-12-02T00:00:00Z",
			first: "2026-12-02T00:00:00Z", in: "0s", wantEnd: MaxRuns},
		{name: "started 250ms late: at once", start: day(0, 5, 0, 250), last: day(0, 0, 0, 0), wantStart: day(0, 5, 0, 250),
			wantSlot: "2026-12-02T00:05:00Z", first: "2026-12-02T00:05:00Z", in: "0s", wantEnd: MaxRuns},
		{name: "started 500ms early: waits", start: day(0, 4, 59, 500), last: day(0, 0, 0, 0), wantStart: day(0, 5, 0, 0),
			wantSlot: "2026-12-02T00:05:00Z", first: "2026-12-02T00:05:00Z", in: "500ms", wantEnd: MaxRuns},
		{name: "fresh, started 500ms early: waits", start: day(0, 4, 59, 500), wantStart: day(0, 5, 0, 0),
			wantSlot: "2026-12-02T00:05:00Z", first: "2026-12-02T00:05:00Z", in: "500ms", wantEnd: MaxRuns},
		{name: "run already", start: day(0, 7, 0, 0), last: day(0, 5, 0, 0), wantNoRuns: true,
			first: "2026-12-02T00:10:00Z", in: "3m", wantEnd: SlotDone},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f := &fakeExec{}
				var buf bytes.Buffer
				clock := &fakeClock{}
				cfg := calendarConfig(t, f, &buf, clock, "*/5 * * * *", "UTC", tt.start)
				store := &memStore{}
				if !tt.last.IsZero() {
					store.rec = &state.Record{Version: 1, Name: "job", Schedule: cfg.Schedule.Recorded(), Anchor: day(0, 0, 0, 0), LastSlot: tt.last, Runs: 1}
				}
				cfg.Store, cfg.MaxRuns = store, 1
				end := Loop(context.Background(), cfg)
				if end.Reason != tt.wantEnd {
					t.Errorf("end %+v, want reason %d", end, tt.wantEnd)
				}
				var want []string
				if !tt.wantNoRuns {
					want = []string{tt.wantStart.Format(time.RFC3339)}
					if got := f.slotsSeen(); len(got) != 1 || got[0] != tt.wantSlot {
						t.Errorf("EVERY_SLOT %v, want %s", got, tt.wantSlot)
					}
				}
				var got []string
				for _, s := range f.starts() {
					got = append(got, s.Round(0).Add(clock.step).UTC().Format(time.RFC3339))
				}
				if !slices.Equal(got, want) {
					t.Errorf("starts %v, want %v", got, want)
				}
				ready := eventsNamed(logEvents(t, &buf), "ready")
				if len(ready) != 1 || ready[0]["first"] != tt.first || ready[0]["in"] != tt.in || ready[0]["schedule"] != "*/5 * * * * --tz UTC" {
					t.Errorf("ready lines %v, want first %s in %s", ready, tt.first, tt.in)
				}
			})
		})
	}
}

// The ready line of a loop: the first slot, and how far off it is, at
// info, before anything else happens; a catch-up runs at once.
func TestLoopReadyLine(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fakeExec{}
		var buf bytes.Buffer
		clock := &fakeClock{}
		cfg := calendarConfig(t, f, &buf, clock, "0 0 * * *", "UTC", time.Date(2026, 12, 1, 23, 27, 0, 0, time.UTC))
		signals := make(chan os.Signal, 1)
		cfg.Signals = signals
		done := make(chan Exit)
		go func() { done <- Loop(context.Background(), cfg) }()
		time.Sleep(time.Minute)
		signals <- sigterm
		<-done
		events := logEvents(t, &buf)
		if len(events) == 0 || events[0]["event"] != "ready" || events[0]["level"] != "INFO" ||
			events[0]["first"] != "2026-12-02T00:00:00Z" || events[0]["in"] != "33m" || events[0]["schedule"] != "0 0 * * * --tz UTC" {
			t.Errorf("first line %v, want ready with first 2026-12-02T00:00:00Z in 33m", events)
		}
		if len(f.calls) != 0 {
			t.Errorf("%d runs before the first slot", len(f.calls))
		}
	})
	synctest.Test(t, func(t *testing.T) {
		// Slots missed (the last run 45s ago, on a 10s grid): the latest,
		// 5s ago, is caught up at once.
		origin := time.Now()
		store := &memStore{rec: &state.Record{Version: 1, Name: "job", Schedule: "10s", Anchor: origin.Add(-time.Hour + 5*time.Second),
			LastSlot: origin.Add(-45 * time.Second), Runs: 3}}
		f := &fakeExec{}
		var buf bytes.Buffer
		cfg := testConfig(f, &buf, nil)
		cfg.Store, cfg.MaxRuns = store, 2
		Loop(context.Background(), cfg)
		ready := eventsNamed(logEvents(t, &buf), "ready")
		if want := stamp(origin.Add(-5 * time.Second)); len(ready) != 1 || ready[0]["first"] != want || ready[0]["in"] != "0s" {
			t.Errorf("ready lines %v, want first %s in 0s", ready, want)
		}
	})
}

func TestRoughly(t *testing.T) {
	for d, want := range map[time.Duration]string{
		-time.Second:                       "0s",
		0:                                  "0s",
		250*time.Millisecond + 400:         "250ms",
		7 * time.Second:                    "7s",
		33 * time.Minute:                   "33m",
		2*time.Hour + 500*time.Millisecond: "2h1s",
		31 * time.Hour:                     "1d7h",
		time.Hour + 5*time.Second:          "1h5s",
	} {
		if got := roughly(d); got != want {
			t.Errorf("roughly(%v) = %q, want %q", d, got, want)
		}
	}
}

// The end of a failure streak is logged at warn, with the streak's length,
// even when the streak is one failure long (its one line told all of it),
// and when it began before a restart (the record's count).
func TestLoopStreakEndAtWarnAfterOne(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fakeExec{results: failing("FSS")}
		var buf bytes.Buffer
		cfg := testConfig(f, &buf, make(chan os.Signal))
		cfg.MaxRuns = 3
		Loop(context.Background(), cfg)
		if got, want := finishLevels(t, &buf), []string{"WARN failure <nil>", "WARN success 1", "INFO success <nil>"}; !slices.Equal(got, want) {
			t.Errorf("finish lines %q, want %q", got, want)
		}
	})
	synctest.Test(t, func(t *testing.T) {
		origin := time.Now()
		store := &memStore{rec: &state.Record{Version: 1, Name: "job", Schedule: "10s", Anchor: origin.Add(-time.Hour),
			LastSlot: origin.Add(-10 * time.Second), Runs: 3, Failures: 2, ConsecutiveFailures: 2, LastResult: "failure"}}
		f := &fakeExec{}
		var buf bytes.Buffer
		cfg := testConfig(f, &buf, make(chan os.Signal))
		cfg.Store, cfg.MaxRuns = store, 1
		Loop(context.Background(), cfg)
		if got, want := finishLevels(t, &buf), []string{"WARN success 2"}; !slices.Equal(got, want) {
			t.Errorf("finish lines %q, want %q", got, want)
		}
	})
}

func finishLevels(t *testing.T, buf *bytes.Buffer) []string {
	t.Helper()
	var got []string
	for _, e := range eventsNamed(logEvents(t, buf), "finish") {
		got = append(got, fmt.Sprint(e["level"], " ", e["result"], " ", e["after_failures"]))
	}
	return got
}
