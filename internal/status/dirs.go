package status

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/everycli/every/internal/jobfiles"
	"github.com/everycli/every/internal/ui"
	"github.com/everycli/every/state"
)

// This file owns where every status looks for jobs: the state directories
// given (--state-dir, as often as given; else the default one), each with
// its immediate subdirectories, as the shipped systemd unit gives each
// job a directory of its own (/var/lib/every/NAME/), so that every status
// as root lists every unit's job in one call.
//
// A subdirectory is read only when it is a directory itself: a symbolic
// link is never followed (a link planted in a shared directory must not
// make status read, and show, a tree outside it), and hidden ones (".x")
// are skipped, as hidden files are. Only one level: a job's files are
// beside its state, never deeper. An entry NAME.json that is a directory
// is a state that is not a regular file (an error line), not a place to
// look in.
//
// The same NAME may be found in two places (two units, or a directory given
// under another name): each is listed, as the jobs they are; --json says
// where each came from (state_dir), and the text names the directory of
// each of them. A directory reached twice (given twice, or given and a
// subdirectory of another given) is read once.

// stateDirs are the directories to read: those given, each resolved as a
// run resolves --state-dir, once each; the default one when none is given.
func stateDirs(given []string) ([]string, error) {
	if len(given) == 0 {
		given = []string{""}
	}
	var dirs []string
	for _, g := range given {
		dir, err := jobfiles.StateDir(g)
		if err != nil {
			return nil, err
		}
		if !slices.Contains(dirs, dir) {
			dirs = append(dirs, dir)
		}
	}
	return dirs, nil
}

// place is a directory whose NAME.json files are job records: a state
// directory given, or one of its subdirectories.
type place struct {
	dir   string
	owner uint32 // the directory's owner, trusted for markers with no state
}

// places are each directory given and its immediate subdirectories (not
// links, not hidden), and read the directories given that could be read. A
// directory that cannot be read is a problem; the others are still read.
func places(dirs []string) (ps []place, read []string, problems []problem) {
	var seen []fs.FileInfo // of ps: a directory reached twice is read once
	add := func(dir string, fi fs.FileInfo) {
		if !slices.ContainsFunc(seen, func(o fs.FileInfo) bool { return os.SameFile(o, fi) }) {
			ps, seen = append(ps, place{dir, ownerOf(fi)}), append(seen, fi)
		}
	}
	cannot := func(dir string, err error, hint string) {
		problems = append(problems, problem{err: fmt.Errorf("cannot list jobs in state directory %q: %v%s", dir, ui.UnwrapPath(err), hint)})
	}
	for _, dir := range dirs {
		fi, err := os.Stat(dir)
		if err == nil && !fi.IsDir() {
			err = errors.New("not a directory")
		}
		if err != nil {
			cannot(dir, err, "; check --state-dir")
			continue
		}
		entries, err := os.ReadDir(dir)
		if err != nil {
			cannot(dir, err, "")
			continue
		}
		add(dir, fi)
		read = append(read, dir)
		for _, e := range entries {
			// The entry's own type (Lstat's): a link to a directory is not one.
			if !e.IsDir() || strings.HasPrefix(e.Name(), ".") || strings.HasSuffix(e.Name(), jobfiles.StateSuffix) {
				continue
			}
			sub := filepath.Join(dir, e.Name())
			fi, err := os.Lstat(sub)
			if err != nil || !fi.IsDir() {
				continue // gone, or replaced meanwhile
			}
			add(sub, fi)
		}
	}
	return ps, read, problems
}

// readDirs reads the jobs of the state directories and their
// subdirectories (read: the directories given that could be read), or the
// named ones only: the records of NAME.json, and the
// jobs with no state yet whose every holds NAME.json's marker. A directory
// that cannot be read, a name found in none of them (neither a record nor
// a live every), or a record that cannot be read (not a regular file,
// corrupt) is a problem. Nothing here can block: entries that are not
// regular files are never opened.
func readDirs(dirs []string, names []string, now time.Time) (jobs []foundJob, read []string, problems []problem) {
	ps, read, problems := places(dirs)
	if len(names) == 0 {
		for _, p := range ps {
			found, probs := readPlace(p, nil, now)
			jobs, problems = append(jobs, found...), append(problems, probs...)
		}
	} else {
		for _, name := range names {
			var (
				found []foundJob
				probs []problem
			)
			for _, p := range ps {
				f, pr := readPlace(p, []string{name}, now)
				found, probs = append(found, f...), append(probs, pr...)
			}
			problems = append(problems, probs...)
			jobs = append(jobs, found...)
			if len(found) == 0 && len(probs) == 0 && len(ps) > 0 {
				problems = append(problems, problem{name, "no state",
					fmt.Errorf("no state for job %q in %s: %v", name, strings.Join(dirs, ", "), syscall.ENOENT)})
			}
		}
	}
	slices.SortStableFunc(jobs, func(a, b foundJob) int {
		if c := strings.Compare(a.key, b.key); c != 0 {
			return c
		}
		return strings.Compare(a.dir, b.dir)
	})
	return jobs, read, problems
}

// readPlace reads the jobs of one place, or the named ones: a name with
// neither a record nor a live every there is no job and no problem (it may
// be in another place).
func readPlace(p place, names []string, now time.Time) ([]foundJob, []problem) {
	// A marker with no state beside it is trusted when it is this user's,
	// or the directory owner's: in a shared directory, nobody else's.
	trustPending := func(uid uint32) bool {
		return uid == uint32(os.Geteuid()) || uid == p.owner
	}
	var (
		jobs     []foundJob
		problems []problem
	)
	if names == nil {
		entries, err := os.ReadDir(p.dir)
		if err != nil {
			return nil, []problem{{err: fmt.Errorf("cannot list jobs in state directory %q: %v", p.dir, ui.UnwrapPath(err))}}
		}
		states, markers := jobFileNames(entries)
		for _, name := range markers {
			// A marker nobody holds is left over: no job to show.
			on, info, err := jobfiles.ProbeActive(jobfiles.MarkerPath(jobfiles.StatePath(p.dir, name)), trustPending)
			if err == nil && on {
				jobs = append(jobs, foundJob{key: name, dir: p.dir, mark: info})
			}
		}
		names = states
	}
	for _, name := range names {
		path := jobfiles.StatePath(p.dir, name)
		rec, err := state.File{Path: path}.Read(now)
		if errors.Is(err, fs.ErrNotExist) {
			// No state yet: a job whose every is alive has not run.
			on, info, perr := jobfiles.ProbeActive(jobfiles.MarkerPath(path), trustPending)
			switch {
			case perr != nil:
				problems = append(problems, problem{name, "cannot tell whether an every runs for it",
					fmt.Errorf("no state for job %q in %s, and cannot tell whether it is active: %v", name, p.dir, perr)})
			case on:
				jobs = append(jobs, foundJob{key: name, dir: p.dir, mark: info})
			}
			continue
		}
		if err != nil {
			problems = append(problems, problem{name, "state cannot be read",
				fmt.Errorf("cannot read state of job %q: %v", name, err)})
			continue
		}
		j := foundJob{key: name, dir: p.dir, rec: rec, path: path, uid: math.MaxUint32}
		if fi, err := os.Lstat(path); err == nil {
			j.uid = ownerOf(fi)
		}
		jobs = append(jobs, j)
	}
	return jobs, problems
}
