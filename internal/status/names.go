package status

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strings"

	"github.com/everycli/every/internal/jobfiles"
)

// PrintJobNames prints the names of the jobs in the state directories
// (the default one when none is given) and their subdirectories, one a
// line, for the completions: as every status finds them (NAME.json, not
// hidden, and the jobs whose every is alive but has not run them yet),
// and only valid job names (jobfiles.CheckName's alphabet): a file named
// "$(cmd).json" is no job, and its name never reaches a shell. It is
// quiet: a directory it cannot read has no names.
func PrintJobNames(flags []string, stdout io.Writer) error {
	dirs, err := stateDirs(flags)
	if err != nil {
		return nil
	}
	ps, _, _ := places(dirs)
	var names []string
	for _, p := range ps {
		entries, _ := os.ReadDir(p.dir)
		states, markers := jobFileNames(entries)
		names = append(names, states...)
		for _, name := range markers {
			if on, _, err := jobfiles.ProbeActive(jobfiles.MarkerPath(jobfiles.StatePath(p.dir, name)), func(uint32) bool { return true }); err == nil && on {
				names = append(names, name)
			}
		}
	}
	slices.Sort(names)
	for _, name := range slices.Compact(names) {
		if jobfiles.CheckName(name) == nil {
			fmt.Fprintln(stdout, name)
		}
	}
	return nil
}

// jobFileNames are the jobs of a state directory's entries: the NAMEs of
// NAME.json (not hidden), and those of the NAME.json markers with no
// NAME.json beside them (jobs whose every has not run them yet, or
// leftovers), each sorted.
func jobFileNames(entries []fs.DirEntry) (states, markers []string) {
	present := map[string]bool{}
	for _, e := range entries {
		if name, ok := strings.CutSuffix(e.Name(), jobfiles.StateSuffix); ok && name != "" && !strings.HasPrefix(name, ".") {
			states = append(states, name)
			present[name] = true
		}
	}
	for _, e := range entries {
		if name, ok := strings.CutSuffix(e.Name(), jobfiles.StateSuffix+jobfiles.MarkerSuffix); ok && name != "" && !strings.HasPrefix(name, ".") && !present[name] {
			markers = append(markers, name)
		}
	}
	slices.Sort(states)
	slices.Sort(markers)
	return states, markers
}
