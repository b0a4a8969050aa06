package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/everycli/every/internal/redistest"
)

func init() {
	scriptCmds["redis"] = redisCmd
	scriptCmds["checkfence"] = checkFence
}

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
// redis-server for the script; start sets $REDIS (host:port).
func redisCmd(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) == 0 {
		ts.Fatalf("usage: redis start|stop|restart|do ...")
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
		v, err := srv.Do(context.Background(), password, rest...)
		if err != nil && !neg {
			ts.Fatalf("redis %s: %v", strings.Join(rest, " "), err)
		}
		ts.Logf("redis %s: %v", strings.Join(rest, " "), v)
	default:
		ts.Fatalf("unknown redis command %q", args[0])
	}
}

// checkfence FILE: the fencing tokens in FILE, one a line in run order, are
// strictly increasing.
func checkFence(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 {
		ts.Fatalf("usage: checkfence FILE")
	}
	prev := int64(0)
	lines := strings.Fields(ts.ReadFile(args[0]))
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
