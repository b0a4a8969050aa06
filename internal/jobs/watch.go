package jobs

// This file notices a change of the jobs files (--watch): a file written,
// replaced (an editor's rename, a Kubernetes ConfigMap's symlink swap) or
// removed, a *.tab file come or gone in a directory. It looks twice a
// second, by stat: what a path names now, followed through its links, is
// compared with what it named before. Polling, not inotify: a ConfigMap's
// swap replaces the directory a symlink names, which a watch on the old
// one never hears of, and a stat of a few paths twice a second costs
// nothing a job would notice.

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"
)

// watchEvery is how often --watch looks at the files: a change is noticed
// within a second.
const watchEvery = 500 * time.Millisecond

// fileState is what a look sees of one file: its identity and content's
// marks, or that it is not there.
type fileState struct {
	path        string
	dev, ino    uint64
	size, mtime int64
	dir         bool
	err         string // why it cannot be looked at
}

// look returns what paths name now: each path, and each *.tab file of a
// directory, in order.
func look(paths []string) []fileState {
	var states []fileState
	for _, p := range paths {
		st := stat(p)
		states = append(states, st)
		if !st.dir {
			continue
		}
		entries, err := os.ReadDir(p)
		if err != nil {
			states = append(states, fileState{path: p, err: err.Error()})
			continue
		}
		names := make([]string, 0, len(entries))
		for _, e := range entries {
			if strings.HasSuffix(e.Name(), ".tab") {
				names = append(names, e.Name())
			}
		}
		slices.Sort(names)
		for _, n := range names {
			states = append(states, stat(filepath.Join(p, n)))
		}
	}
	return states
}

// stat looks at one path, through its links: a swap of a link, or of a
// directory on the way, names another file (another inode).
func stat(p string) fileState {
	st := fileState{path: p}
	fi, err := os.Stat(p)
	if err != nil {
		st.err = err.Error()
		return st
	}
	st.dir = fi.IsDir()
	if !st.dir { // a directory's own marks change with any file of it: its *.tab files are looked at
		st.size, st.mtime = fi.Size(), fi.ModTime().UnixNano()
	}
	if s, ok := fi.Sys().(*syscall.Stat_t); ok {
		st.dev, st.ino = uint64(s.Dev), uint64(s.Ino)
	}
	return st
}

// watch looks at paths every watchEvery until stop is closed, and sends on
// changed when what they name is not what it was (a send that would block
// is dropped: one change pending is enough to read the files again).
// before is its first look, taken by the caller before it goes on.
func watch(paths []string, before []fileState, changed chan<- struct{}, stop <-chan struct{}) {
	tick := time.NewTicker(watchEvery)
	defer tick.Stop()
	for {
		select {
		case <-stop:
			return
		case <-tick.C:
		}
		now := look(paths)
		if slices.Equal(now, before) {
			continue
		}
		before = now
		select {
		case changed <- struct{}{}:
		default:
		}
	}
}
