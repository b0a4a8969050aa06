// Command minloop is the benchmark's reference Go exec loop: the least a Go
// program does to run a command on a fixed interval, fork+exec and wait,
// nothing else. Usage: minloop [-state FILE] INTERVAL RUNS PATH [ARG...]
// (RUNS 0: forever).
//
// With -state, it also keeps FILE as SPEC section 9 [durability] asks, and
// nothing more. At each run's start and end an atomic write, not synced: a
// temporary file in the same directory, renamed over FILE. After a run's
// end write, if a second has passed since the last sync (or there was
// none), a sync: fdatasync of FILE, a hard link of it renamed over its
// synced copy (.FILE.synced, beside it), fsync of the directory. And one at
// exit, after the last of RUNS (a signal ends it as it is: the benchmark's
// samples are taken between runs, and an exit's sync is not a run's cost).
// That is the floor of the promise's cost in Go: what any Go program
// keeping it pays per run, before doing anything else.
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
	var st *stateFile
	if len(args) > 1 && args[0] == "-state" {
		st, args = openState(args[1]), args[2:]
	}
	interval, _ := time.ParseDuration(args[0])
	runs, _ := strconv.Atoi(args[1])
	attr := &os.ProcAttr{Files: []*os.File{os.Stdin, os.Stdout, os.Stderr}}
	slot := time.Now()
	tick := time.NewTicker(interval)
	for i := 1; ; i++ {
		if st != nil {
			st.write(i, true)
		}
		if p, err := os.StartProcess(args[2], args[2:], attr); err == nil {
			p.Wait()
		}
		if st != nil {
			st.write(i, false)
			if st.due(slot, interval) || i == runs {
				st.sync(slot)
			}
		}
		if i == runs {
			return
		}
		slot = <-tick.C
	}
}

// stateFile is the record, written with the system calls directly (as
// every does).
type stateFile struct {
	path, tmp, link, copy string
	dir                   int       // the directory, open for its fsyncs
	fd                    int       // the file last put at path, open for its fdatasync; -1: none
	synced                time.Time // the slot of the last sync
}

func openState(path string) *stateFile {
	dir := filepath.Dir(path)
	s := &stateFile{path: path, tmp: path + ".tmp", link: path + ".link",
		copy: filepath.Join(dir, "."+filepath.Base(path)+".synced"), fd: -1}
	s.dir, _ = syscall.Open(dir, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	return s
}

// write replaces the record with one of run i, atomically, unsynced.
func (s *stateFile) write(i int, running bool) {
	b := []byte(`{"version":1,"runs":` + strconv.Itoa(i) + `,"running":` + strconv.FormatBool(running) + "}\n")
	fd, err := syscall.Open(s.tmp, syscall.O_WRONLY|syscall.O_CREAT|syscall.O_EXCL|syscall.O_CLOEXEC, 0o600)
	if err != nil {
		return
	}
	syscall.Write(fd, b)
	if syscall.Rename(s.tmp, s.path) != nil {
		syscall.Close(fd)
		syscall.Unlink(s.tmp)
		return
	}
	if s.fd >= 0 {
		syscall.Close(s.fd)
	}
	s.fd = fd
}

// due reports whether a second has passed since the last sync at slot, or
// there was none. It counts whole intervals: the ticker's times lie on its
// grid only to within microseconds. At 1s slots every end is synced, at
// 100ms every tenth.
func (s *stateFile) due(slot time.Time, interval time.Duration) bool {
	if s.synced.IsZero() {
		return true
	}
	n := (slot.Sub(s.synced) + interval/2) / interval
	return n*interval >= time.Second
}

// sync makes the record durable, and its synced copy: the record's data,
// then the link that replaces the copy, then the directory (both renames).
func (s *stateFile) sync(slot time.Time) {
	s.synced = slot
	if s.fd < 0 {
		return
	}
	syscall.Fdatasync(s.fd)
	if syscall.Link(s.path, s.link) == nil && syscall.Rename(s.link, s.copy) != nil {
		syscall.Unlink(s.link)
	}
	syscall.Fsync(s.dir)
}
