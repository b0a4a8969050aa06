// Command minloop is the benchmark's reference Go exec loop: the least a Go
// program does to run a command on a fixed interval, fork+exec and wait,
// nothing else. Usage: minloop [-state FILE] INTERVAL RUNS PATH [ARG...]
// (RUNS 0: forever).
//
// With -state, it also writes FILE as SPEC section 9 says every writes its
// state, at each run's start and end: a temporary file in the same
// directory, fsync, rename over FILE, fsync of the directory. That is the
// floor of the contract's cost in Go: what any Go program keeping SPEC 9's
// promise pays per run, before doing anything else.
package main

import (
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
)

func main() {
	args := os.Args[1:]
	state := ""
	if len(args) > 1 && args[0] == "-state" {
		state, args = args[1], args[2:]
	}
	interval, _ := time.ParseDuration(args[0])
	runs, _ := strconv.Atoi(args[1])
	attr := &os.ProcAttr{Files: []*os.File{os.Stdin, os.Stdout, os.Stderr}}
	tick := time.NewTicker(interval)
	for i := 1; ; i++ {
		if state != "" {
			write(state, i, true)
		}
		if p, err := os.StartProcess(args[2], args[2:], attr); err == nil {
			p.Wait()
		}
		if state != "" {
			write(state, i, false)
		}
		if i == runs {
			return
		}
		<-tick.C
	}
}

// write replaces path with a record of run i, durably, with the system
// calls directly (as every does).
func write(path string, i int, running bool) {
	b := []byte(`{"version":1,"runs":` + strconv.Itoa(i) + `,"running":` + strconv.FormatBool(running) + "}\n")
	tmp := path + ".tmp"
	fd, err := syscall.Open(tmp, syscall.O_WRONLY|syscall.O_CREAT|syscall.O_EXCL|syscall.O_CLOEXEC, 0o600)
	if err != nil {
		return
	}
	syscall.Write(fd, b)
	syscall.Fsync(fd)
	syscall.Close(fd)
	if syscall.Rename(tmp, path) != nil {
		return
	}
	if d, err := syscall.Open(filepath.Dir(path), syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0); err == nil {
		syscall.Fsync(d)
		syscall.Close(d)
	}
}
