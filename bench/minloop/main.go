// Command minloop is the benchmark's reference Go exec loop: the least a Go
// program does to run a command on a fixed interval, fork+exec and wait,
// nothing else. Usage: minloop [-state FILE] INTERVAL RUNS PATH [ARG...]
// (RUNS 0: forever).
//
// With -state, it also keeps FILE as every keeps its state (docs/DESIGN.md,
// Durability), in the shape every's own writes take, and nothing more. At
// each run's start and end an atomic write, not synced: into a temporary file
// in the same directory, created ahead (once the command has started, and
// after the run's end), then exchanged with FILE (renameat2 RENAME_EXCHANGE;
// a rename where there is no FILE yet, or no exchange on this filesystem).
// The record it replaced, left at the temporary name, is removed when the
// next temporary file is made, off the path from a slot to its exec: on ext4
// a rename over a file starts writing the new one to the disk
// (auto_da_alloc), an exchange does not. After a run's end write, if a second
// has passed since the last sync (or there was none), a sync: fdatasync of
// FILE, a hard link of it renamed over its synced copy (.FILE.synced, beside
// it), fsync of the directory. And one at exit, after the last of RUNS (a
// signal ends it as it is: the benchmark's samples are taken between runs,
// and an exit's sync is not a run's cost). That is the floor of the promise's
// cost in Go: what any Go program keeping it pays per run, before doing
// anything else. The exchange is Linux's (renameat2): elsewhere it renames,
// as every does there.
package main

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
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
		p, err := os.StartProcess(args[2], args[2:], attr)
		if st != nil {
			st.prepare() // for the run's end, the command started
		}
		if err == nil {
			p.Wait()
		}
		if st != nil {
			st.write(i, false)
			if st.due(slot, interval) || i == runs {
				st.sync(slot)
			}
		}
		if i == runs {
			if st != nil {
				st.close()
			}
			return
		}
		if st != nil {
			st.prepare() // for the next run's start, in the wait
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
	old                   int       // the file it replaced, open until prepare; -1: none
	next                  int       // the temporary file made ahead, empty, at tmp; -1: none
	replaced              bool      // the record an exchange replaced is at tmp, for prepare to remove
	noExchange            bool      // the filesystem cannot exchange: rename over the record
	synced                time.Time // the slot of the last sync
}

func openState(path string) *stateFile {
	dir := filepath.Dir(path)
	s := &stateFile{path: path, tmp: path + ".tmp", link: path + ".link",
		copy: filepath.Join(dir, "."+filepath.Base(path)+".synced"), fd: -1, old: -1, next: -1}
	s.dir, _ = syscall.Open(dir, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	s.prepare()
	return s
}

// prepare readies the next write, off the path from a slot to its exec: it
// removes the record the last exchange replaced and closes it (freeing it
// here, not in the write), and creates the next temporary file. A failure
// costs nothing: write creates one itself.
func (s *stateFile) prepare() {
	if s.replaced {
		syscall.Unlink(s.tmp)
		s.replaced = false
	}
	if s.old >= 0 {
		syscall.Close(s.old)
		s.old = -1
	}
	if s.next < 0 {
		fd, err := syscall.Open(s.tmp, syscall.O_WRONLY|syscall.O_CREAT|syscall.O_EXCL|syscall.O_CLOEXEC, 0o600)
		if err == nil {
			s.next = fd
		}
	}
}

// write replaces the record with one of run i, atomically, unsynced: into
// the prepared temporary file, exchanged with the record.
func (s *stateFile) write(i int, running bool) {
	b := []byte(`{"version":1,"runs":` + strconv.Itoa(i) + `,"running":` + strconv.FormatBool(running) + "}\n")
	fd := s.next
	s.next = -1
	if fd < 0 {
		s.prepare()
		if fd, s.next = s.next, -1; fd < 0 {
			return
		}
	}
	syscall.Write(fd, b)
	if err := s.place(); err != nil {
		syscall.Close(fd)
		syscall.Unlink(s.tmp)
		return
	}
	if s.old >= 0 {
		// Two writes with no prepare between them: the older goes now.
		syscall.Close(s.old)
	}
	s.old, s.fd = s.fd, fd
}

// place puts the temporary file at the path: exchanged with the record
// there, which is left at the temporary name; renamed where there is none,
// or no exchange.
func (s *stateFile) place() error {
	if !s.noExchange {
		err := exchange(s.tmp, s.path)
		switch {
		case err == nil:
			s.replaced = true
			return nil
		case errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EOPNOTSUPP):
			s.noExchange = true
		case !errors.Is(err, unix.ENOENT):
			return err
		}
	}
	return syscall.Rename(s.tmp, s.path)
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
// then the link that replaces the copy, then the directory (the renames
// and the link).
func (s *stateFile) sync(slot time.Time) {
	s.synced = slot
	if s.fd < 0 {
		return
	}
	fdatasync(s.fd)
	if syscall.Link(s.path, s.link) == nil && syscall.Rename(s.link, s.copy) != nil {
		syscall.Unlink(s.link)
	}
	syscall.Fsync(s.dir)
}

// close removes the replaced record and the prepared temporary file, if
// any: at exit, the record and its synced copy are left, nothing else.
func (s *stateFile) close() {
	if s.next >= 0 || s.replaced {
		syscall.Unlink(s.tmp)
	}
}
