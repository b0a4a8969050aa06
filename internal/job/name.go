package job

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"

	"github.com/everycli/every/internal/ui"
)

// This file owns a job's identity: its name and where its files go.

// StateDir is where state and lock files go: --state-dir, else
// $XDG_STATE_HOME/every, else ~/.local/state/every; for root without
// XDG_STATE_HOME, /var/lib/every.
func StateDir(flag string) (string, error) {
	if flag != "" {
		return flag, nil
	}
	// The XDG spec says a relative path is to be ignored.
	if x := os.Getenv("XDG_STATE_HOME"); filepath.IsAbs(x) {
		return filepath.Join(x, "every"), nil
	}
	if os.Geteuid() == 0 {
		return "/var/lib/every", nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", ui.Usagef("no state directory: %v; give --state-dir DIR or --no-state", err)
	}
	return filepath.Join(home, ".local", "state", "every"), nil
}

// MaxName is the longest job name, in bytes.
const MaxName = 128

// Name derives a job's name from its command: the base name of argv[0], a
// dash, and 8 hex digits of the sha256 of the argv joined by NUL. The base
// is made a valid name: other characters become "_", leading ones that are
// not a letter or digit are dropped ("job" if nothing is left), and it is
// cut to fit MaxName.
func Name(argv []string) string {
	sum := sha256.Sum256([]byte(strings.Join(argv, "\x00")))
	base := strings.TrimLeftFunc(sanitizeName(filepath.Base(argv[0])), func(r rune) bool { return !isAlnum(r) })
	if base == "" {
		base = "job"
	}
	return base[:min(len(base), MaxName-9)] + "-" + hex.EncodeToString(sum[:4])
}

// CheckName checks a name given with --name: [A-Za-z0-9._-], starting with a
// letter or digit, at most MaxName bytes.
func CheckName(name string) error {
	switch {
	case name == "":
		return ui.Usagef("bad --name \"\": give a name, or leave --name out for one derived from the command")
	case !isAlnum(rune(name[0])):
		return ui.Usagef("bad --name %q: must start with a letter or digit", name)
	case strings.IndexFunc(name, func(r rune) bool { return !validNameRune(r) }) >= 0:
		return ui.Usagef("bad --name %q: use only letters, digits, '.', '_' and '-'", name)
	case len(name) > MaxName:
		return ui.Usagef("bad --name %q: longer than %d bytes", name, MaxName)
	}
	return nil
}

func isAlnum(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'
}

// sanitizeName keeps [A-Za-z0-9._-] and turns anything else into "_".
func sanitizeName(s string) string {
	return strings.Map(func(r rune) rune {
		if validNameRune(r) {
			return r
		}
		return '_'
	}, s)
}

func validNameRune(r rune) bool {
	return isAlnum(r) || r == '.' || r == '_' || r == '-'
}

// jobPaths works out where the job's state and lock files are: --state and
// --lock, else in the state directory; "" for none (--no-state, --no-lock),
// and for both with --store, which keeps them in Redis.
func jobPaths(st Settings, name string) (statePath, lockPath string, err error) {
	if st.Store != "" {
		return "", "", nil
	}
	statePath, lockPath = st.StatePath, st.LockPath
	if (statePath == "" && !st.NoState) || (lockPath == "" && !st.NoLock) {
		dir, err := StateDir(st.StateDir)
		if err != nil {
			return "", "", err
		}
		if statePath == "" {
			statePath = filepath.Join(dir, name+".json")
		}
		if lockPath == "" {
			lockPath = filepath.Join(dir, name+".lock")
		}
	}
	if st.NoState {
		statePath = ""
	}
	if st.NoLock {
		lockPath = ""
	}
	return statePath, lockPath, nil
}

// ownFiles refuses, as bad usage, paths that name one of the job's files
// twice: the state and the lock, and the metrics file and any other. Each
// is every's own (SPEC section 8): the metrics file is replaced at each
// write, so on the lock it would put a new file where the lock was and the
// lock would stop excluding; on the state or its active marker it would
// lose the counters or the ACTIVE column; on the command, overwrite it
// before it runs. statePath and lockPath are as jobPaths gives them; commandPath is the command's executable.
func ownFiles(st Settings, statePath, lockPath, commandPath string) error {
	if statePath != "" && lockPath != "" && sameFile(statePath, lockPath) {
		return ui.Usagef("bad --state %q and --lock %q: they name the same file; give each its own", statePath, lockPath)
	}
	if st.MetricsFile == "" {
		return nil
	}
	for _, other := range []struct{ what, path string }{
		{"lock file", lockPath},
		{"state file", statePath},
		{"active marker", markerOf(statePath)},
		{"command", commandPath},
	} {
		if other.path != "" && sameFile(st.MetricsFile, other.path) {
			return ui.Usagef("bad %s %q: it names the job's %s %q; give the metrics a file of their own", st.MetricsFlag, st.MetricsFile, other.what, other.path)
		}
	}
	return nil
}

// markerOf is the active marker of the state at statePath; "" for none.
func markerOf(statePath string) string {
	if statePath == "" {
		return ""
	}
	return MarkerPath(statePath)
}
