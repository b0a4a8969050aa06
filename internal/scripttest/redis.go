package scripttest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"

	"github.com/redis/go-redis/v9"
	"github.com/rogpeppe/go-internal/testscript"

	"github.com/everycli/every/internal/redistest"
	"github.com/everycli/every/internal/testutil"
)

// scriptTB lets redistest run a server for a script.
type scriptTB struct{ ts *testscript.TestScript }

func (s scriptTB) Helper()                      {}
func (s scriptTB) Fatalf(f string, args ...any) { s.ts.Fatalf(f, args...) }
func (s scriptTB) Skip(args ...any)             { s.ts.Fatalf("%s", fmt.Sprint(args...)) }
func (s scriptTB) Cleanup(f func())             { s.ts.Defer(f) }
func (s scriptTB) TempDir() string {
	dir, err := os.MkdirTemp(s.ts.Getenv("WORK"), "redis-")
	s.ts.Check(err)
	return dir
}

// servers are the scripts' redis-servers, by script; scripts run in parallel.
var (
	serversMu sync.Mutex
	servers   = map[*testscript.TestScript]*redistest.Server{}
)

// redisCondition is the script condition [redis]: redis-server is installed.
// Where it is not and EVERY_REQUIRE_REDIS=1, the script fails instead.
func redisCondition() (bool, error) {
	if _, err := exec.LookPath("redis-server"); err != nil {
		if os.Getenv("EVERY_REQUIRE_REDIS") == "1" {
			return false, fmt.Errorf("redis-server not found and EVERY_REQUIRE_REDIS=1: %v", err)
		}
		return false, nil
	}
	return true, nil
}

// redis start [ARGS...] | stop | restart | do [-a PASSWORD] CMD...: a real
// redis-server for the script; start sets $REDIS (host:port). do writes the
// reply to stdout, one value a line ("(nil)" for none), for stdout to check;
// ! redis do expects an error reply, and fails if the command succeeds.
func redisCmd(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) == 0 {
		ts.Fatalf("usage: redis start|stop|restart|do ...")
	}
	if args[0] != "do" {
		noNeg(ts, neg, "redis "+args[0])
	}
	serversMu.Lock()
	srv := servers[ts]
	serversMu.Unlock()
	if srv == nil && args[0] != "start" {
		ts.Fatalf("redis %s: no server started", args[0])
	}
	switch args[0] {
	case "start":
		srv = redistest.Start(scriptTB{ts}, args[1:]...)
		serversMu.Lock()
		servers[ts] = srv
		serversMu.Unlock()
		ts.Defer(func() {
			serversMu.Lock()
			delete(servers, ts)
			serversMu.Unlock()
		})
		ts.Setenv("REDIS", srv.Addr)
	case "stop":
		srv.Stop()
	case "restart":
		srv.Restart()
	case "do":
		password, rest := "", args[1:]
		if len(rest) > 1 && rest[0] == "-a" {
			password, rest = rest[1], rest[2:]
		}
		if len(rest) == 0 {
			ts.Fatalf("usage: redis do [-a PASSWORD] CMD...")
		}
		ctx, cancel := context.WithTimeout(context.Background(), testutil.WaitBound)
		defer cancel()
		v, err := srv.Do(ctx, password, rest...)
		if errors.Is(err, redis.Nil) {
			v, err = "(nil)", nil
		}
		switch {
		case err != nil && !neg:
			ts.Fatalf("redis %s: %v", strings.Join(rest, " "), err)
		case err != nil:
			ts.Logf("redis %s: %v (as expected)", strings.Join(rest, " "), err)
			return
		case neg:
			ts.Fatalf("redis %s succeeded (%v), want an error", strings.Join(rest, " "), v)
		}
		writeReply(ts.Stdout(), v)
	default:
		ts.Fatalf("unknown redis command %q", args[0])
	}
}

// writeReply writes a Redis reply one value a line, arrays flattened.
func writeReply(w io.Writer, v any) {
	if vs, ok := v.([]any); ok {
		for _, e := range vs {
			writeReply(w, e)
		}
		return
	}
	fmt.Fprintln(w, v)
}

// checkfence FILE: the fencing tokens in FILE, one a line in run order, are
// at least two and strictly increasing.
func checkFence(ts *testscript.TestScript, neg bool, args []string) {
	noNeg(ts, neg, "checkfence")
	if len(args) != 1 {
		ts.Fatalf("usage: checkfence FILE")
	}
	prev := int64(0)
	lines := strings.Fields(ts.ReadFile(args[0]))
	if len(lines) < 2 {
		ts.Fatalf("%s holds %d fencing tokens, want at least 2", args[0], len(lines))
	}
	for i, f := range lines {
		n, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			ts.Fatalf("line %d: %q is not a fencing token", i+1, f)
		}
		if n <= prev {
			ts.Fatalf("line %d: fencing token %d after %d", i+1, n, prev)
		}
		prev = n
	}
	ts.Logf("%d fencing tokens, strictly increasing, %s to %d", len(lines), lines[0], prev)
}

// runsnorepeat FILE [JUMPS]: the EVERY_RUN numbers in FILE, as job -append
// writes them in run order, never repeat and never go back: each is above
// the one before (they may jump: at least JUMPS times, if given). The jumps
// are logged.
func runsNoRepeat(ts *testscript.TestScript, neg bool, args []string) {
	noNeg(ts, neg, "runsnorepeat")
	if len(args) != 1 && len(args) != 2 {
		ts.Fatalf("usage: runsnorepeat FILE [JUMPS]")
	}
	lines := strings.Split(strings.TrimSpace(ts.ReadFile(args[0])), "\n")
	prev := 0
	var jumps []string
	for i, line := range lines {
		f := strings.Fields(line)
		if len(f) < 2 {
			ts.Fatalf("line %d of %s is %q, not a run", i+1, args[0], line)
		}
		n, err := strconv.Atoi(f[1])
		ts.Check(err)
		switch {
		case n <= prev:
			ts.Fatalf("line %d of %s: run %d after run %d: EVERY_RUN went back or repeated\n%s", i+1, args[0], n, prev, strings.Join(lines, "\n"))
		case n > prev+1 && prev > 0:
			jumps = append(jumps, fmt.Sprintf("%d to %d", prev, n))
		}
		prev = n
	}
	ts.Logf("%d runs, numbers never repeated nor back, from %s to %d; jumps: %s", len(lines), strings.Fields(lines[0])[1], prev, strings.Join(jumps, ", "))
	if len(args) == 2 {
		want, err := strconv.Atoi(args[1])
		ts.Check(err)
		if len(jumps) < want {
			ts.Fatalf("%d jumps in the numbers, want at least %d", len(jumps), want)
		}
	}
}

// redisproxies are the scripts' proxies to their redis-server, by script.
var redisProxies = map[*testscript.TestScript]*redistest.Proxy{}

// redisproxy start | freeze | thaw: a TCP proxy to the script's
// redis-server; start sets $RPROXY (host:port). freeze stops it forwarding
// (the connections stay open, silent, as in a partition); thaw lets them
// through again.
func redisProxy(ts *testscript.TestScript, neg bool, args []string) {
	noNeg(ts, neg, "redisproxy")
	if len(args) != 1 {
		ts.Fatalf("usage: redisproxy start|freeze|thaw")
	}
	serversMu.Lock()
	srv, p := servers[ts], redisProxies[ts]
	serversMu.Unlock()
	switch {
	case args[0] == "start" && srv == nil:
		ts.Fatalf("redisproxy start: no redis started")
	case args[0] == "start":
		p = redistest.NewProxy(scriptTB{ts}, srv.Addr)
		serversMu.Lock()
		redisProxies[ts] = p
		serversMu.Unlock()
		ts.Defer(func() {
			serversMu.Lock()
			delete(redisProxies, ts)
			serversMu.Unlock()
		})
		ts.Setenv("RPROXY", p.Addr)
	case p == nil:
		ts.Fatalf("redisproxy %s: no proxy started", args[0])
	case args[0] == "freeze":
		p.Freeze()
	case args[0] == "thaw":
		p.Thaw()
	default:
		ts.Fatalf("unknown redisproxy command %q", args[0])
	}
}
