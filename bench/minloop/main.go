// Command minloop is the benchmark's reference Go exec loop: the least a Go
// program does to run a command on a fixed interval, fork+exec and wait,
// nothing else. Usage: minloop INTERVAL RUNS PATH [ARG...] (RUNS 0: forever).
package main

import (
	"os"
	"strconv"
	"time"
)

func main() {
	interval, _ := time.ParseDuration(os.Args[1])
	runs, _ := strconv.Atoi(os.Args[2])
	attr := &os.ProcAttr{Files: []*os.File{os.Stdin, os.Stdout, os.Stderr}}
	tick := time.NewTicker(interval)
	for i := 1; ; i++ {
		if p, err := os.StartProcess(os.Args[3], os.Args[3:], attr); err == nil {
			p.Wait()
		}
		if i == runs {
			return
		}
		<-tick.C
	}
}
