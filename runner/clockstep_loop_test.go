package runner

import (
	"bytes"
	"context"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/everycli/every/state"
)

// This file holds the loop's tests of the wall clock set back or forward
// (SPEC 9, "a clock set back is not corruption"), of a wake-up that comes
// late without a suspend (SIGSTOP), and of the counters at their limit. The
// host's clock is never touched: the steps are the fakeClock's.

// wallExec is a fakeExec that also notes the wall clock (clock's) at the
// start of each attempt.
type wallExec struct {
	*fakeExec
	clock *fakeClock
	mu    sync.Mutex
	walls []time.Time
}

func (w *wallExec) exec(ctx context.Context, a Attempt) Result {
	w.mu.Lock()
	w.walls = append(w.walls, w.clock.Now())
	w.mu.Unlock()
	return w.fakeExec.exec(ctx, a)
}

// readRecord reads the record a state.File holds, as every status does.
func readRecord(t *testing.T, f state.File) *state.Record {
	t.Helper()
	rec, err := f.Read(time.Now())
	if err != nil || rec == nil {
		t.Fatalf("state: %+v, %v", rec, err)
	}
	return rec
}

// checkNotAhead fails if the record holds a time after now: a record of
// every's own from the future (its clock was stepped under it).
func checkNotAhead(t *testing.T, rec *state.Record, now time.Time) {
	t.Helper()
	if latest := rec.Latest(); latest.After(now) {
		t.Errorf("the record holds %v, %v ahead of the wall clock: %+v", latest, latest.Sub(now), *rec)
	}
}

// checkNothingAside fails if a file was set aside in dir.
func checkNothingAside(t *testing.T, dir string) {
	t.Helper()
	if aside, _ := filepath.Glob(filepath.Join(dir, "*.corrupt-*")); len(aside) != 0 {
		t.Errorf("files set aside: %v", aside)
	}
}

// eventsWith returns the events whose msg is msg.
func eventsWith(events []map[string]any, msg string) []map[string]any {
	var out []map[string]any
	for _, e := range events {
		if e["msg"] == msg {
			out = append(out, e)
		}
	}
	return out
}

// A step of the wall clock while every runs, back or forward, while it waits
// or while a run is under way: a grid of plain durations keeps its pace on
// the monotonic clock (no stall, no slot twice, no catch-up, no overrun);
// the slot times it records and passes on (EVERY_SLOT) follow the wall clock
// after the step, so that none of its records looks from the future, or
// stale; nothing is set aside; one warning says by how much.
func TestLoopGridClockStepWhileRunning(t *testing.T) {
	for _, tt := range []struct {
		name string
		step time.Duration // at +1.1s
		took time.Duration // each run, from its slot: 50ms is over at the step, 150ms is not
	}{
		{"set back 90s while waiting", -90 * time.Second, 50 * time.Millisecond},
		{"set back 90s during a run", -90 * time.Second, 150 * time.Millisecond},
		{"set back less than a period", -130 * time.Millisecond, 50 * time.Millisecond},
		{"set forward an hour while waiting", time.Hour, 50 * time.Millisecond},
		{"set forward an hour during a run", time.Hour, 150 * time.Millisecond},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				clock := &fakeClock{}
				clock.setWall(time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC))
				w := &wallExec{fakeExec: &fakeExec{took: []time.Duration{tt.took}}, clock: clock}
				var buf bytes.Buffer
				signals := make(chan os.Signal, 1)
				cfg := testConfig(w.fakeExec, &buf, signals)
				cfg.Exec = w.exec
				cfg.Schedule = grid("200ms")
				cfg.Clock = clock
				cfg.SleepUntil = func(at time.Time) { time.Sleep(at.Sub(clock.Now())) }
				dir := t.TempDir()
				file := state.File{Path: filepath.Join(dir, "job.json"), Period: 200 * time.Millisecond}
				cfg.Store = file
				origin := time.Now()
				done := make(chan Exit)
				go func() { done <- Loop(context.Background(), cfg) }()
				time.Sleep(1100 * time.Millisecond)
				clock.setWall(clock.Now().Add(tt.step))
				time.Sleep(870 * time.Millisecond) // to +1.97s: idle after the run of +1.8s
				signals <- sigterm
				<-done

				var want []time.Duration
				for k := range 10 {
					want = append(want, time.Duration(k)*200*time.Millisecond)
				}
				if got := offsets(w.starts(), origin); !slices.Equal(got, want) {
					t.Errorf("runs at %v, want %v: the pace of the monotonic clock", got, want)
				}
				slots := w.slotsSeen()
				for k, s := range slots {
					if k >= len(w.walls) {
						break
					}
					if at, err := time.Parse(time.RFC3339Nano, s); err != nil || !at.Equal(w.walls[k]) {
						t.Errorf("run %d: EVERY_SLOT %s, the wall clock at its start %s", k, s, w.walls[k].UTC().Format(time.RFC3339Nano))
					}
				}
				rec := readRecord(t, file)
				checkNotAhead(t, rec, clock.Now())
				if rec.Runs != 10 || rec.LastSlot.Format(time.RFC3339Nano) != slots[len(slots)-1] {
					t.Errorf("record: runs %d, last slot %v; want 10, %s", rec.Runs, rec.LastSlot, slots[len(slots)-1])
				}
				checkNothingAside(t, dir)

				events := logEvents(t, &buf)
				msg := "wall clock set forward"
				if tt.step < 0 {
					msg = "wall clock set back"
				}
				steps := eventsWith(events, msg)
				if len(steps) != 1 || steps[0]["level"] != "WARN" || steps[0]["event"] != "catch_up" || steps[0]["reason"] != "clock" ||
					steps[0]["step"] != tt.step.String() {
					t.Errorf("step warnings %v, want one, catch_up reason=clock step=%v", steps, tt.step)
				}
				for _, name := range []string{"skip", "state_error"} {
					if got := eventsNamed(events, name); len(got) != 0 {
						t.Errorf("%s events: %v", name, got)
					}
				}
				for _, e := range eventsNamed(events, "catch_up") {
					if e["missed"] != 0.0 {
						t.Errorf("slots caught up: %v", e)
					}
				}
			})
		})
	}
}

// A record from the future of the clock at start (the clock was set back
// since it was written, or its writer's clock runs ahead) is not corrupt: it
// keeps its counters and history, its slot counts as run (no catch-up),
// the grid starts again from now (no stall until the clock comes round),
// one warning says by how much, and nothing is set aside.
func TestLoopRecordFromTheFutureAtStart(t *testing.T) {
	for _, tt := range []struct {
		name  string
		ahead time.Duration // of the record's last end; its slot and run a second before
		step  string
	}{
		{"90s ahead", 91 * time.Second, "-1m31s"},
		{"less than a period ahead", 5 * time.Second, "-5s"},
		{"in the year 2900", time.Date(2900, 1, 1, 0, 0, 1, 0, time.UTC).Sub(time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)),
			(-time.Duration(math.MaxInt64)).String()},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				clock := &fakeClock{}
				start := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
				clock.setWall(start)
				dir := t.TempDir()
				file := state.File{Path: filepath.Join(dir, "job.json"), Period: 10 * time.Second}
				end := start.AddDate(874, 0, 0).Add(time.Second)
				if tt.ahead < 292*365*24*time.Hour {
					end = start.Add(tt.ahead)
				}
				ran := end.Add(-time.Second)
				future := &state.Record{Version: state.Version, Name: "job", Command: []string{"job"}, Schedule: "10s",
					Anchor: start.Add(-time.Hour + 3*time.Second), LastSlot: ran, LastRun: ran, LastEnd: end, LastSuccess: ran,
					LastResult: "success", LastAttempts: 1, Runs: 41, Failures: 3, Skipped: 2}
				if err := file.Save(context.Background(), future); err != nil {
					t.Fatal(err)
				}
				f := &fakeExec{}
				var buf bytes.Buffer
				cfg := testConfig(f, &buf, make(chan os.Signal, 1))
				cfg.Clock = clock
				cfg.SleepUntil = func(at time.Time) { time.Sleep(at.Sub(clock.Now())) }
				cfg.Store = file
				cfg.MaxRuns = 2
				origin := time.Now()
				if end := Loop(context.Background(), cfg); end.Reason != MaxRuns {
					t.Fatalf("end = %+v, want MaxRuns", end)
				}
				if got, want := offsets(f.starts(), origin), []time.Duration{10 * time.Second, 20 * time.Second}; !slices.Equal(got, want) {
					t.Errorf("runs at %v, want %v: the recorded slot counts as run, a new grid from now", got, want)
				}
				var runs []string
				for _, c := range f.calls {
					runs = append(runs, c.env["EVERY_RUN"])
				}
				if want := []string{"42", "43"}; !slices.Equal(runs, want) {
					t.Errorf("EVERY_RUN %v, want %v: the counters kept", runs, want)
				}
				if got, want := f.slotsSeen(), []string{"2026-06-01T00:00:10Z", "2026-06-01T00:00:20Z"}; !slices.Equal(got, want) {
					t.Errorf("EVERY_SLOT %v, want %v", got, want)
				}
				rec := readRecord(t, file)
				if rec.Runs != 43 || rec.Failures != 3 || rec.Skipped != 2 || !rec.Anchor.Equal(start) {
					t.Errorf("record %+v: want runs 43, failures 3, skipped 2 kept, anchored at the start %v", *rec, start)
				}
				checkNotAhead(t, rec, clock.Now())
				checkNothingAside(t, dir)
				events := logEvents(t, &buf)
				var back []map[string]any
				for _, e := range eventsNamed(events, "catch_up") {
					if e["reason"] == "clock_moved_back" {
						back = append(back, e)
					}
				}
				if len(back) != 1 || back[0]["level"] != "WARN" || back[0]["step"] != tt.step {
					t.Errorf("catch_up events %v, want one warning, reason %q, step %s", back, ClockMovedBack, tt.step)
				}
				if got := eventsNamed(events, "state_error"); len(got) != 0 {
					t.Errorf("state_error events: %v", got)
				}
			})
		})
	}
}

// lateClock is a fakeClock whose first wait for a slot that lies ahead wakes
// up late by late, with no suspend and no step: every was stopped
// (SIGSTOP), or starved of the processor. (The wait ends earlyWake before
// its time, as any: the late run starts then, at once.)
type lateClock struct {
	*fakeClock
	late time.Duration
	done bool
}

func (c *lateClock) delay(d time.Duration) time.Duration {
	if !c.done && d > time.Second {
		c.done = true
		return d + c.late
	}
	return d
}

func (c *lateClock) Wall(at time.Time) (<-chan bool, func()) {
	return c.arm(c.delay(at.Sub(c.Now())), true)
}

func (c *lateClock) Boot(d time.Duration) (<-chan bool, func()) { return c.arm(c.delay(d), false) }

// A wake-up late past slots, without a suspend (CLOCK_BOOTTIME less
// CLOCK_MONOTONIC did not grow), is no suspend: the slots it passed are
// skipped as overrun (the latest runs at once, late, as a wake-up late for
// one slot runs it), and nothing is logged as a suspend's catch-up.
func TestLoopLateWakeIsNotASuspend(t *testing.T) {
	for _, tt := range []struct {
		name   string
		expr   string // a calendar; "" for a 10s grid
		late   time.Duration
		slots  []string
		starts []time.Duration
	}{
		{name: "grid", late: 25 * time.Second,
			// Slot +10s waited for until +35s: +10s and +20s skipped, +30s run.
			slots:  []string{"2026-06-01T00:00:00Z", "2026-06-01T00:00:30Z", "2026-06-01T00:00:40Z"},
			starts: []time.Duration{0, 35*time.Second - earlyWake, 40 * time.Second}},
		{name: "calendar", expr: "* * * * *", late: 150 * time.Second,
			// From 00:00:30, 00:01 waited for until 00:03:30: 00:01 and
			// 00:02 skipped, 00:03 run.
			slots:  []string{"2026-06-01T00:03:00Z", "2026-06-01T00:04:00Z"},
			starts: []time.Duration{180*time.Second - earlyWake, 210 * time.Second}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f := &fakeExec{}
				var buf bytes.Buffer
				clock := &fakeClock{}
				var cfg Config
				if tt.expr != "" {
					cfg = calendarConfig(t, f, &buf, clock, tt.expr, "UTC", time.Date(2026, 6, 1, 0, 0, 30, 0, time.UTC))
				} else {
					cfg = testConfig(f, &buf, make(chan os.Signal, 1))
					clock.setWall(time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC))
					cfg.SleepUntil = func(at time.Time) { time.Sleep(at.Sub(clock.Now())) }
				}
				cfg.Clock = &lateClock{fakeClock: clock, late: tt.late}
				store := &memStore{}
				cfg.Store = store
				cfg.MaxRuns = len(tt.slots)
				cfg.CatchUp, cfg.CatchUpMax = CatchUpAll, 10 // a suspend's catch-up would run each
				origin := time.Now()
				Loop(context.Background(), cfg)
				if got := f.slotsSeen(); !slices.Equal(got, tt.slots) {
					t.Errorf("EVERY_SLOT %v, want %v", got, tt.slots)
				}
				if got := offsets(f.starts(), origin); !slices.Equal(got, tt.starts) {
					t.Errorf("runs at %v, want %v", got, tt.starts)
				}
				events := logEvents(t, &buf)
				for _, e := range eventsNamed(events, "catch_up") {
					t.Errorf("logged as a catch-up: %v", e)
				}
				skips := eventsNamed(events, "skip")
				if len(skips) != 1 || skips[0]["reason"] != "overrun" || skips[0]["count"] != 2.0 || skips[0]["level"] != "WARN" {
					t.Errorf("skip events %v, want one overrun of 2, at warn", skips)
				}
				if rec := store.get(); rec.Skipped != 2 {
					t.Errorf("record: %d skipped, want 2", rec.Skipped)
				}
			})
		})
	}
}

// Counters stop at state.MaxCount (below 2^53): every never writes a record
// it would refuse to read back, EVERY_RUN never overflows, and never
// repeats its last number: past it, slots are skipped (reason=state).
func TestLoopCountersAtTheirLimit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		now := time.Now()
		store := &memStore{rec: &state.Record{Version: state.Version, Name: "job", Command: []string{"job"}, Schedule: "10s",
			Anchor: now.Add(-time.Hour), LastSlot: now.Add(-15 * time.Second), Runs: state.MaxCount - 1, Failures: state.MaxCount,
			Skipped: state.MaxCount, ConsecutiveFailures: state.MaxCount, LastResult: "failure"}}
		f := &fakeExec{took: []time.Duration{15 * time.Second}, results: []Result{{Outcome: Failure, ExitCode: 1}}}
		var buf bytes.Buffer
		cfg := testConfig(f, &buf, nil)
		cfg.Store = store
		runFor(cfg, time.Minute) // the first run overruns a slot
		if len(f.calls) != 1 {
			t.Fatalf("%d runs, want 1: EVERY_RUN %s, then none past it", len(f.calls), strconv.Itoa(state.MaxCount))
		}
		if got, want := f.calls[0].env["EVERY_RUN"], strconv.Itoa(state.MaxCount); got != want {
			t.Errorf("EVERY_RUN = %s, want %s", got, want)
		}
		if n := strings.Count(buf.String(), `"level":"ERROR","msg":"cannot reserve a run number, skipping the slot","job":"job","event":"skip","reason":"state"`); n != 1 {
			t.Errorf("%d skip lines, want 1 (then summarised)\n%s", n, buf.String())
		}
		rec := store.get()
		if rec.Runs != state.MaxCount || rec.Failures != state.MaxCount || rec.Skipped != state.MaxCount ||
			rec.ConsecutiveFailures != state.MaxCount {
			t.Errorf("record %+v: want every counter at %d", rec, state.MaxCount)
		}
		b, err := state.Encode(&rec)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := state.Decode(b); err != nil {
			t.Errorf("every wrote a record it refuses to read: %v\n%s", err, b)
		}
	})
}

// corruptStore is a store whose record is corrupt at every read: set aside
// each time.
type corruptStore struct{ memStore }

func (c *corruptStore) Load(context.Context) (*state.Record, error) {
	return nil, &state.CorruptError{Where: "memory", MovedTo: "memory.corrupt-1", Err: os.ErrInvalid}
}

// A record set aside at every read is warned of once, then summarised at
// most once a minute, as any repeated error: never a line per slot.
func TestLoopSetAsideSummarised(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fakeExec{}
		var buf bytes.Buffer
		cfg := testConfig(f, &buf, nil)
		cfg.Store = &corruptStore{}
		runFor(cfg, 125*time.Second) // 13 runs, 14 reads
		var warned, counted int
		for _, e := range eventsWith(logEvents(t, &buf), "state cannot be used, starting fresh") {
			if e["level"] == "WARN" {
				warned++
			}
			n, _ := e["count"].(float64)
			counted += int(n)
		}
		if warned < 1 || warned > 3 || counted < 14 {
			t.Errorf("%d warnings, counting %d reads set aside; want 1 to 3 (once a minute), counting all 14:\n%s", warned, counted, buf.String())
		}
	})
}

// The grid of a record from the future is not joined under the lock: a
// host whose clock runs ahead (90s) wrote the record since; this loop keeps
// its grid, and counts on from the record's counters.
func TestLoopFutureGridNotJoined(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		clock := &fakeClock{}
		start := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
		clock.setWall(start)
		store := &memStore{}
		f := &fakeExec{}
		cfg := testConfig(f, &bytes.Buffer{}, make(chan os.Signal, 1))
		cfg.Clock = clock
		cfg.SleepUntil = func(at time.Time) { time.Sleep(at.Sub(clock.Now())) }
		cfg.Store = store
		cfg.MaxRuns = 3
		done := make(chan Exit)
		go func() { done <- Loop(context.Background(), cfg) }()
		time.Sleep(5 * time.Second)
		ahead := clock.Now().Add(90 * time.Second)
		if err := store.Save(context.Background(), &state.Record{Version: state.Version, Name: "job", Command: []string{"job"},
			Schedule: "10s", Anchor: ahead.Add(-3 * time.Second), LastSlot: ahead, LastRun: ahead, Runs: 5, Host: "ahead"}); err != nil {
			t.Fatal(err)
		}
		<-done
		want := []string{"2026-06-01T00:00:00Z", "2026-06-01T00:00:10Z", "2026-06-01T00:00:20Z"}
		if got := f.slotsSeen(); !slices.Equal(got, want) {
			t.Errorf("EVERY_SLOT %v, want %v", got, want)
		}
		if rec := store.get(); !rec.Anchor.Equal(start) || rec.Runs != 7 {
			t.Errorf("record anchored at %v, runs %d; want %v, 7", rec.Anchor, rec.Runs, start)
		}
	})
}

// A suspend during a run is a suspend, not an overrun: the slots that passed
// in it are missed slots, and --catch-up picks (once: the latest), as for a
// suspend while waiting; the grid keeps its phase on the wall clock.
func TestLoopSuspendDuringRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// The catch-up run, at the resume (+67s), takes 1s: it overruns nothing.
		f := &fakeExec{took: []time.Duration{5 * time.Second, 5 * time.Second, 5 * time.Second, time.Second}}
		var buf bytes.Buffer
		clock := &fakeClock{}
		origin := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
		clock.setWall(origin)
		cfg := testConfig(f, &buf, make(chan os.Signal, 1))
		cfg.Clock = clock
		cfg.SleepUntil = func(at time.Time) { time.Sleep(at.Sub(clock.Now())) }
		cfg.MaxRuns = 5
		done := make(chan Exit)
		go func() { done <- Loop(context.Background(), cfg) }()
		time.Sleep(22 * time.Second) // the run of slot +20s is under way
		clock.suspend(42 * time.Second)
		<-done
		var got []string
		for _, s := range f.slotsSeen() {
			at, _ := time.Parse(time.RFC3339Nano, s)
			got = append(got, at.Sub(origin).String())
		}
		if want := []string{"0s", "10s", "20s", "1m0s", "1m10s"}; !slices.Equal(got, want) {
			t.Errorf("slots at %v, want %v", got, want)
		}
		events := logEvents(t, &buf)
		caught := eventsNamed(events, "catch_up")
		if len(caught) != 1 || caught[0]["missed"] != 4.0 || caught[0]["reason"] != "suspend" {
			t.Errorf("catch_up events %v, want one with missed 4 (30s..60s), reason suspend", caught)
		}
		if skips := eventsNamed(events, "skip"); len(skips) != 0 {
			t.Errorf("skip events %v, want none: the slots were missed in a suspend, not overrun", skips)
		}
	})
}

// The wall clock set forward past a calendar's slots during a run: the
// slots it passed are missed (--catch-up picks, reason=clock), as when it is
// set while waiting; they were never overrun.
func TestLoopCalendarClockStepDuringRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fakeExec{took: []time.Duration{20 * time.Second, time.Second}}
		var buf bytes.Buffer
		clock := &fakeClock{}
		cfg := calendarConfig(t, f, &buf, clock, "* * * * *", "UTC", time.Date(2026, 6, 1, 0, 0, 30, 0, time.UTC))
		cfg.MaxRuns = 3
		done := make(chan Exit)
		go func() { done <- Loop(context.Background(), cfg) }()
		time.Sleep(40 * time.Second) // 00:01:10: the run of 00:01 is under way
		clock.setWall(clock.Now().Add(3 * time.Minute))
		<-done
		if got, want := f.slotsSeen(), []string{"2026-06-01T00:01:00Z", "2026-06-01T00:04:00Z", "2026-06-01T00:05:00Z"}; !slices.Equal(got, want) {
			t.Errorf("EVERY_SLOT %v, want %v", got, want)
		}
		events := logEvents(t, &buf)
		var caught []map[string]any
		for _, e := range eventsNamed(events, "catch_up") {
			if e["missed"] != 0.0 {
				caught = append(caught, e)
			}
		}
		if len(caught) != 1 || caught[0]["missed"] != 3.0 || caught[0]["reason"] != "clock" {
			t.Errorf("catch_up events %v, want one with missed 3, reason clock", caught)
		}
		if skips := eventsNamed(events, "skip"); len(skips) != 0 {
			t.Errorf("skip events %v, want none", skips)
		}
	})
}

// endlessStore writes the start of each run, and fails to write its end.
type endlessStore struct{ memStore }

func (s *endlessStore) Save(ctx context.Context, r *state.Record) error {
	if !r.Running {
		return os.ErrPermission
	}
	return s.memStore.Save(ctx, r)
}

// A step of the wall clock during a run whose end cannot be written: the
// start the store holds, on the clock before the step, is still known for
// this loop's own (its end kept in memory), not taken for a run cut short.
func TestLoopClockStepUnsavedEnd(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		clock := &fakeClock{}
		clock.setWall(time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC))
		f := &fakeExec{took: []time.Duration{5 * time.Second}}
		cfg := testConfig(f, &bytes.Buffer{}, make(chan os.Signal, 1))
		cfg.Clock = clock
		cfg.SleepUntil = func(at time.Time) { time.Sleep(at.Sub(clock.Now())) }
		store := &endlessStore{}
		cfg.Store = store
		cfg.MaxRuns = 3
		done := make(chan Exit)
		go func() { done <- Loop(context.Background(), cfg) }()
		time.Sleep(12 * time.Second) // the run of slot +10s is under way
		clock.setWall(clock.Now().Add(-90 * time.Second))
		<-done
		if rec := store.get(); rec.Runs != 3 || rec.Failures != 0 || rec.ConsecutiveFailures != 0 || rec.LastResult != "success" {
			t.Errorf("record %+v: want 3 runs, none failed nor cut short", rec)
		}
	})
}
