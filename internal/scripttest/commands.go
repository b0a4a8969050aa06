// Package scripttest holds what the end-to-end scripts of testdata/script
// use besides testscript's own commands: the helper programs they schedule
// (JobMain, ExitStatusMain), their commands (Commands), each in a file named
// for what it is about, and their conditions (Condition). The scripts run in
// the root package's tests, against the every binary built there.
package scripttest

import (
	"fmt"

	"github.com/rogpeppe/go-internal/testscript"
)

// Commands lists every command the scripts may use besides
// testscript's own; each is documented where it is defined. Each one either
// gives "!" a meaning (its doc says which) or refuses it.
func Commands() map[string]func(ts *testscript.TestScript, neg bool, args []string) {
	return map[string]func(ts *testscript.TestScript, neg bool, args []string){
		// Waiting and signalling (wait.go, signal.go).
		"waitfile":  waitFileCmd,
		"waitlines": waitLinesCmd,
		"waitlog":   waitLogCmd,
		"signal":    signalCmd,
		"gone":      goneCmd,
		// Process trees (proc.go).
		"dead":       deadCmd,
		"cleanup":    cleanupCmd,
		"findpid1":   findPid1Cmd,
		"nsorphan":   nsOrphanCmd,
		"nochildren": noChildrenCmd,
		// Paths that are not regular files, records too big (files.go).
		"mkfifo":    mkfifoCmd,
		"mkdevice":  mkdeviceCmd,
		"bigrecord": bigRecordCmd,
		// Full disks and timing (safety.go).
		"tmpfs":        tmpfsCmd,
		"fill":         fillCmd,
		"runsincrease": runsIncrease,
		"within":       within,
		// Redis and fleets (redis.go, partition.go, storedown.go).
		"redis":        redisCmd,
		"checkfence":   checkFence,
		"runsnorepeat": runsNoRepeat,
		"redisproxy":   redisProxy,
		"partition":    partition,
		"blackhole":    blackhole,
		"refused":      refused,
		"storedown":    storedown,
		// etcd fleets (etcd.go).
		"etcd":          etcdCmd,
		"etcdpartition": etcdPartition,
		"etcdtakeaway":  etcdTakeAway, // takeaway.go
		// Stress (stress.go).
		"checkslots": checkSlots,
		"torture":    torture,
		"killruns":   killRuns, // killruns.go
		// Crashes of every in mid-run (crash.go).
		"killoverlap": killOverlap,
		"earlysignal": earlySignal,
		// Calendar schedules against the wall clock (calendar.go).
		"stamp":     stampCmd,
		"waitclock": waitClockCmd,
		"logstamp":  logStampCmd,
		"slotcheck": slotCheckCmd,
		// SIGSTOP and SIGCONT (sigstop.go).
		"stopped": stoppedCmd,
		// healthchecks.io pings (ping.go).
		"pingserver": pingServerCmd,
		// every --listen's server, as a client and a browser see it (http.go).
		"freeport": freePortCmd,
		"httpget":  httpGetCmd,
		"browse":   browseCmd,
		// Help, usage and completion (examples.go).
		"example": exampleCmd,
	}
}

// Condition answers the scripts' conditions: [redis], [etcd], [tmpfs],
// [pidns], [chromium].
func Condition(cond string) (bool, error) {
	switch cond {
	case "redis":
		return redisCondition()
	case "etcd":
		return etcdCondition()
	case "tmpfs":
		return tmpfsCondition()
	case "pidns":
		return pidnsCondition()
	case "chromium":
		return chromiumCondition()
	}
	return false, fmt.Errorf("unknown condition %q", cond)
}

// noNeg fails a command that has no meaningful negation if the script gives
// it one: a "!" silently ignored would make the line pass both ways.
func noNeg(ts *testscript.TestScript, neg bool, name string) {
	if neg {
		ts.Fatalf("unsupported: ! %s", name)
	}
}
