package main

import (
	"cmp"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/everycli/every/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// fleet is section 11: what --store costs a run, against a loopback
// redis-server: round trips, counted by a proxy between every and Redis,
// and the slot-to-exec latency and CPU it adds, measured without the proxy
// beside the same job with a file lock and state.
func fleet(cfg *config) string {
	if _, err := exec.LookPath("redis-server"); err != nil {
		return "Skipped: redis-server not found in PATH (Debian: apt-get install redis-server).\n"
	}
	srv, err := startRedis(filepath.Join(cfg.dir, "redis"))
	check(err)
	defer srv.stop()
	atFail = append(atFail, srv.stop)
	defer func() { atFail = atFail[:len(atFail)-1] }()
	tb := &benchTB{dir: cfg.dir}
	defer tb.close()
	proxy := &tripCounter{p: redistest.NewProxy(tb, srv.addr)}
	ctx := context.Background()
	periods := pick(cfg.quick, 50, 300)
	oneShots := pick(cfg.quick, 10, 40)
	iv := 100 * time.Millisecond

	// Round trips in the loop: alone, so that the command counts are its own.
	var a, z tripCount
	rt := &costRun{w: wrapper{name: "every --store (through the counting proxy)", command: func(iv time.Duration, job []string, dir string) *exec.Cmd {
		return exec.Command(cfg.every, append([]string{iv.String(), "--store", "redis://" + proxy.p.Addr + "/0", "--name", "fleet-rt", "-q", "--"}, job...)...)
	}}, interval: iv, periods: periods}
	rt.onSample = func(i int) {
		if i == 0 {
			a = proxy.count(ctx, srv)
		} else {
			z = proxy.count(ctx, srv)
		}
	}
	rt.measure(cfg, filepath.Join(cfg.dir, "fleet-rt"))
	check(rt.err)

	// Latency and CPU: side by side, Redis direct and files.
	lat := []*costRun{
		{w: wrapper{name: "every --store redis://127.0.0.1 (direct)", every: true, command: func(iv time.Duration, job []string, dir string) *exec.Cmd {
			return exec.Command(cfg.every, append([]string{iv.String(), "--store", "redis://" + srv.addr + "/0", "--name", "fleet-lat", "--"}, job...)...)
		}}, interval: iv, periods: periods},
		{w: wrapper{name: "every, file lock and state", every: true, command: func(iv time.Duration, job []string, dir string) *exec.Cmd {
			return exec.Command(cfg.every, append([]string{iv.String(), "--state-dir", dir, "--name", "fleet-lat", "--"}, job...)...)
		}}, interval: iv, periods: periods},
	}
	runCosts(cfg, lat, "fleet-lat")

	// One-shot: through the proxy for the counts, and direct and with files
	// for the wall time, taking turns.
	truePath, err := exec.LookPath("true")
	check(err)
	stateDir := filepath.Join(cfg.dir, "fleet-oneshot")
	check(os.MkdirAll(stateDir, 0o700))
	// A fresh job name each time: the state of a job that ran a moment ago
	// would hold its next run until the next minute.
	oneShot := func(name string, store ...string) []string {
		return append(append([]string{cfg.every, "1m", "--max-runs", "1", "--name", name, "-q"}, store...), "--", truePath)
	}
	var osTrips, osConns []float64
	var osCmds map[string]int64
	var wallRedis, wallFile []time.Duration
	for k := range oneShots {
		before := proxy.count(ctx, srv)
		runOnce(oneShot(fmt.Sprintf("oneshot-p%d", k), "--store", "redis://"+proxy.p.Addr+"/0"))
		after := proxy.count(ctx, srv)
		osTrips = append(osTrips, float64(after.trips-before.trips))
		osConns = append(osConns, float64(after.conns-before.conns))
		osCmds = addCmds(osCmds, after.diff(before))
		wallRedis = append(wallRedis, runOnce(oneShot(fmt.Sprintf("oneshot-r%d", k), "--store", "redis://"+srv.addr+"/0")))
		wallFile = append(wallFile, runOnce(oneShot(fmt.Sprintf("oneshot-f%d", k), "--state-dir", stateDir)))
	}

	var b strings.Builder
	fmt.Fprintf(&b, "A loopback redis-server (no persistence: --save '' --appendonly no). Round trips are counted by a TCP proxy "+
		"between every and Redis: on each connection, a request burst from every that follows a reply (or opens the "+
		"connection) is one round trip, whatever it holds (a pipeline, an EVAL with redis.call inside); commands are "+
		"from the server's INFO commandstats, diffed (calls made inside scripts included, the harness's own INFO excluded). "+
		"In the loop: every %s, the job bench/stamp, alone through the proxy, counted between two samples taken between runs "+
		"(the runs counted from the job's file); connection set-up, if any, counts. The one-shots run after the loop, with its scripts already in Redis's cache "+
		"(a cold cache adds a NOSCRIPT reply and an EVAL per script). Goal: ≤ 2 round trips per run: a run writes its start "+
		"with the lock when the record is the one its process wrote last; the first run of a process (a one-shot's), and one "+
		"after another instance or a hand wrote the record, read it first and write the start apart (3).\n\n", iv)
	runs := float64(rt.runs)
	fmt.Fprintln(&b, "| case | runs | round trips per run | ≤ 2 | connections opened | commands per run |")
	fmt.Fprintln(&b, "| --- | ---: | ---: | --- | ---: | --- |")
	perRun := float64(z.trips-a.trips) / runs
	fmt.Fprintf(&b, "| loop, %s slots | %d | %.2f | %s | %d | %s |\n", iv, rt.runs, perRun, yes(perRun <= 2),
		z.conns-a.conns, cmdsPer(z.diff(a), runs))
	fmt.Fprintf(&b, "| one-shot `every 1m --max-runs 1 --store URL -- true` | %d | %.0f (min %.0f, max %.0f) | - | %.0f | %s |\n",
		oneShots, median(osTrips), slices.Min(osTrips), slices.Max(osTrips), median(osConns), cmdsPer(osCmds, float64(oneShots)))

	fmt.Fprintf(&b, "\nAdded per run, without the proxy: every %s with --store against the same job with a file lock and state, "+
		"side by side (both logging, the job bench/stamp); the every process only, CPU from schedstat, slot to exec from "+
		"every's log (late_ms). One-shot wall time: `every 1m --max-runs 1 -- true`, %d each, taking turns, each a new job name (its state "+
		"absent: a job that ran a moment ago would wait for the next minute). Times in ms.\n\n", iv, oneShots)
	fmt.Fprintln(&b, "| every | runs | CPU/run | switches/run | slot to exec, median / p99 | one-shot wall median |")
	fmt.Fprintln(&b, "| --- | ---: | ---: | ---: | ---: | ---: |")
	walls := []stats{summarize(wallRedis), summarize(wallFile)}
	for i, r := range lat {
		if r.err != nil || r.runs == 0 {
			fmt.Fprintf(&b, "| %s | failed: %v ||||| \n", r.w.name, r.err)
			continue
		}
		fmt.Fprintf(&b, "| %s | %d | %s | %.1f | %s / %s | %s |\n", r.w.name, r.runs, ms(r.cpuPerRun()), r.switchesPerRun(),
			ms(r.late.median), ms(r.late.p99), ms(walls[i].median))
	}
	if lat[0].err == nil && lat[1].err == nil && lat[0].runs > 0 && lat[1].runs > 0 {
		fmt.Fprintf(&b, "| added by Redis | | %s | %.1f | %s / %s | %s |\n", ms(lat[0].cpuPerRun()-lat[1].cpuPerRun()),
			lat[0].switchesPerRun()-lat[1].switchesPerRun(), ms(lat[0].late.median-lat[1].late.median),
			ms(lat[0].late.p99-lat[1].late.p99), ms(walls[0].median-walls[1].median))
	}
	return b.String()
}

// runOnce runs argv to its end and returns its wall time; it must succeed.
func runOnce(argv []string) time.Duration {
	start := time.Now()
	if out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput(); err != nil {
		fail("%s: %v: %s", strings.Join(argv, " "), err, out)
	}
	return time.Since(start)
}

// median is the middle of xs (the upper one of an even count), zero for none.
func median[T cmp.Ordered](xs []T) T {
	if len(xs) == 0 {
		var zero T
		return zero
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}

func addCmds(m, d map[string]int64) map[string]int64 {
	if m == nil {
		m = map[string]int64{}
	}
	for k, v := range d {
		m[k] += v
	}
	return m
}

// cmdsPer formats command counts divided by n: "evalsha 1.00, set 1.00".
func cmdsPer(m map[string]int64, n float64) string {
	var names []string
	for k, v := range m {
		if v != 0 {
			names = append(names, k)
		}
	}
	slices.Sort(names)
	var parts []string
	var total int64
	for _, k := range names {
		parts = append(parts, fmt.Sprintf("%s %.2f", k, float64(m[k])/n))
		total += m[k]
	}
	if len(parts) == 0 {
		return "none"
	}
	return fmt.Sprintf("%.2f: %s", float64(total)/n, strings.Join(parts, ", "))
}

// redisServer is a redis-server started by the harness, stopped by its PID.
type redisServer struct {
	addr string
	cmd  *exec.Cmd
	cli  *redis.Client
}

func startRedis(dir string) (*redisServer, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("find a free port: %w", err)
	}
	addr := l.Addr().String()
	_, port, _ := net.SplitHostPort(addr)
	l.Close()
	cmd := exec.Command("redis-server", "--port", port, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
		"--dir", dir, "--daemonize", "no", "--logfile", filepath.Join(dir, "log"))
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start redis-server: %w", err)
	}
	s := &redisServer{addr: addr, cmd: cmd, cli: redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1})}
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := s.cli.Ping(context.Background()).Err()
		if err == nil {
			return s, nil
		}
		if time.Now().After(deadline) {
			s.stop()
			return nil, fmt.Errorf("redis-server on %s does not answer: %w", addr, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (s *redisServer) stop() {
	s.cli.Close()
	s.cmd.Process.Kill()
	s.cmd.Wait()
}

// commandStats reads the calls of each command from INFO commandstats.
func (s *redisServer) commandStats(ctx context.Context) map[string]int64 {
	info, err := s.cli.Info(ctx, "commandstats").Result()
	check(err)
	m := map[string]int64{}
	for _, line := range strings.Split(info, "\n") {
		name, rest, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok || !strings.HasPrefix(name, "cmdstat_") {
			continue
		}
		for _, kv := range strings.Split(rest, ",") {
			if v, ok := strings.CutPrefix(kv, "calls="); ok {
				n, _ := strconv.ParseInt(v, 10, 64)
				m[strings.TrimPrefix(name, "cmdstat_")] = n
			}
		}
	}
	return m
}

// tripCounter keeps the totals of the tests' counting proxy, which hands
// out what it saw since it was last asked.
type tripCounter struct {
	p            *redistest.Proxy
	trips, conns int64
}

// A tripCount is the proxy's and the server's counters at one moment.
type tripCount struct {
	trips, conns int64
	cmds         map[string]int64
}

func (c tripCount) diff(before tripCount) map[string]int64 {
	d := map[string]int64{}
	for k, v := range c.cmds {
		if k != "info" {
			d[k] = v - before.cmds[k]
		}
	}
	return d
}

// count takes the proxy's round trips and connections so far, and the
// server's command counters.
func (c *tripCounter) count(ctx context.Context, s *redisServer) tripCount {
	trips, dials := c.p.Trips()
	c.trips += int64(len(trips))
	c.conns += int64(dials)
	return tripCount{trips: c.trips, conns: c.conns, cmds: s.commandStats(ctx)}
}

// benchTB lets the harness use the tests' Redis helpers: a failure ends the
// run as any other (fail), and cleanups run when the section is done.
type benchTB struct {
	dir      string
	cleanups []func()
}

func (*benchTB) Helper()                           {}
func (*benchTB) Fatalf(format string, args ...any) { fail(format, args...) }
func (*benchTB) Skip(args ...any)                  { fail("%s", fmt.Sprint(args...)) }
func (b *benchTB) Cleanup(f func())                { b.cleanups = append(b.cleanups, f) }
func (b *benchTB) TempDir() string                 { return b.dir }

func (b *benchTB) close() {
	for i := len(b.cleanups) - 1; i >= 0; i-- {
		b.cleanups[i]()
	}
}
