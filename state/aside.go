package state

// This file sets unusable records aside (<file>.corrupt-<unix seconds>),
// never one over another, and keeps the newest few.

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// setAside renames the file that was read, fi, to <file>.corrupt-<unix
// seconds>, if it is still the one at the path: what took its place since is
// not renamed unseen. A name taken already (a second one set aside within the
// second) is never replaced: the next free of <file>.corrupt-<seconds>-2,
// -3, ... is used. Of the files set aside for the job, the keptAside newest
// are kept, the older ones removed: they never pile up.
func (f File) setAside(was *unix.Stat_t, why error) error {
	var now unix.Stat_t
	if err := unix.Lstat(f.Path, &now); err != nil || now.Dev != was.Dev || now.Ino != was.Ino {
		return fmt.Errorf("state %s cannot be used (%v) and was replaced while being read; reading it again next time", f.Path, why)
	}
	moved, err := f.moveAside(time.Now())
	if err != nil {
		return fmt.Errorf("state %s cannot be used (%v) nor set aside: %w", f.Path, why, err)
	}
	f.pruneAside()
	return &CorruptError{Where: f.Path, MovedTo: moved, Err: why}
}

// keptAside is how many files set aside are kept per job.
const keptAside = 3

// asidePrefix starts the names of the files the record is set aside as.
func (f File) asidePrefix() string { return f.Path + ".corrupt-" }

// moveAside renames the record to a name of those set aside at now, after
// (in asideOrder) any of that second already there, and returns it: never a
// name freed by pruneAside, which would sort among the oldest.
func (f File) moveAside(now time.Time) (string, error) {
	sec := now.Unix()
	n := 1
	for _, a := range f.aside() {
		if a.sec == sec {
			n = max(n, a.n+1)
		}
	}
	base := f.asidePrefix() + strconv.FormatInt(sec, 10)
	for tries := 0; ; tries++ {
		name := base
		if n > 1 {
			name += "-" + strconv.Itoa(n)
		}
		err := renameNoReplace(f.Path, name)
		switch {
		case err == nil:
			return name, nil
		case !errors.Is(err, unix.EEXIST) || tries >= maxAsideTries:
			return "", &fs.PathError{Op: "rename", Path: name, Err: err}
		}
		n++
	}
}

// setAsideAs moves a store's record to the first free name of those set
// aside at now (prefix, then an order: see asideOrder), after any of that
// second in found, with move, which reports whether the name was free;
// then it removes with remove the keys set aside but the keptAside newest.
// found, listed before the move, is incomplete when listErr is set: the
// pruning is left out, and names are still never reused (move creates only
// what is absent).
func setAsideAs(found []asideFile, listErr error, prefix string, now time.Time, move func(name string) (bool, error), remove func(name string)) (string, error) {
	sec := now.Unix()
	n := 1
	for _, a := range found {
		if a.sec == sec {
			n = max(n, a.n+1)
		}
	}
	base := prefix + strconv.FormatInt(sec, 10)
	for tries := 0; ; tries++ {
		moved := base
		if n > 1 {
			moved += "-" + strconv.Itoa(n)
		}
		done, err := move(moved)
		switch {
		case err != nil:
			return "", err
		case done && listErr != nil:
			return moved, nil
		case done:
			found = append(found, asideFile{moved, sec, n})
			sortAside(found)
			for _, a := range found[min(keptAside, len(found)):] {
				remove(a.name)
			}
			return moved, nil
		case tries >= maxAsideTries:
			return "", fmt.Errorf("no free name from %s on", moved)
		}
		n++
	}
}

// maxAsideTries bounds the names tried in one second: more than ever set
// aside in one.
const maxAsideTries = 1000

// asideOrder returns the order of a file set aside, from the rest of its
// name after asidePrefix: its seconds, then its number within them (1 for
// none). ok is false for a name every did not make.
func asideOrder(rest string) (sec int64, n int, ok bool) {
	secs, num, numbered := strings.Cut(rest, "-")
	sec, err := strconv.ParseInt(secs, 10, 64)
	if err != nil || sec < 0 || secs != strconv.FormatInt(sec, 10) {
		return 0, 0, false
	}
	n = 1
	if numbered {
		if n, err = strconv.Atoi(num); err != nil || n < 2 || num != strconv.Itoa(n) {
			return 0, 0, false
		}
	}
	return sec, n, true
}

// asideFile is a file the record was set aside as: its name in the
// record's directory, and its order (see asideOrder).
type asideFile struct {
	name string
	sec  int64
	n    int
}

// aside lists the files the record was set aside as: regular files named as
// every names them, newest first. Anything else is left out.
func (f File) aside() []asideFile {
	entries, err := os.ReadDir(filepath.Dir(f.Path))
	if err != nil {
		return nil
	}
	var found []asideFile
	prefix := filepath.Base(f.asidePrefix())
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), prefix)
		if !ok || !e.Type().IsRegular() {
			continue
		}
		if sec, n, ok := asideOrder(rest); ok {
			found = append(found, asideFile{e.Name(), sec, n})
		}
	}
	sortAside(found)
	return found
}

// sortAside sorts files set aside newest first.
func sortAside(found []asideFile) {
	slices.SortFunc(found, func(a, b asideFile) int {
		return cmp.Or(cmp.Compare(b.sec, a.sec), cmp.Compare(b.n, a.n))
	})
}

// pruneAside removes the files set aside for the record but the keptAside
// newest.
func (f File) pruneAside() {
	found := f.aside()
	for _, a := range found[min(keptAside, len(found)):] {
		_ = unix.Unlink(filepath.Join(filepath.Dir(f.Path), a.name))
	}
}

// renameChecked renames from to to if nothing is at to (else unix.EEXIST),
// where no system call can do it in one: a file created at to between the
// look and the rename would be replaced.
func renameChecked(from, to string) error {
	var st unix.Stat_t
	switch err := unix.Lstat(to, &st); {
	case err == nil:
		return unix.EEXIST
	case !errors.Is(err, unix.ENOENT):
		return err
	}
	return unix.Rename(from, to)
}
