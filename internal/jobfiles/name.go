// Package jobfiles owns a job's identity on disk: its name, the state
// directory, the names of the job's files in it, and the active marker that
// a running every holds beside the job's state (active.go). A run
// (internal/job) and every status (internal/status) both follow these
// rules, and neither needs the other for them.
package jobfiles

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"

	"github.com/everycli/every/internal/ui"
)

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

// StateSuffix ends the name of a job's state in a state directory:
// NAME.json. every status takes the files so named for jobs.
const StateSuffix = ".json"

// StatePath is the state of the job name in the state directory dir, where
// --state does not say otherwise.
func StatePath(dir, name string) string { return filepath.Join(dir, name+StateSuffix) }

// LockPath is the lock file of the job name in the state directory dir,
// where --lock does not say otherwise.
func LockPath(dir, name string) string { return filepath.Join(dir, name+".lock") }

// MaxName is the longest job name, in bytes.
const MaxName = 128

// Name derives a job's name from its command: the base name of argv[0], a
// dash, and 8 hex digits of the sha256 of the argv joined by NUL. The base
// is made a valid name: other characters become "_", leading ones that are
// not a letter or digit are dropped ("job" if nothing is left), and it is
// cut to fit MaxName.
func Name(argv []string) string {
	return hashedName(argv[0], strings.Join(argv, "\x00"))
}

// CronName derives the name of a crontab line's job in a jobs file: the base
// name of its command's first word, a dash, and 8 hex digits of the sha256
// of its schedule and its command joined by NUL, the base made valid as
// Name makes it. Two lines that run one command on two schedules are two
// jobs.
func CronName(word, schedule, command string) string {
	return hashedName(word, schedule+"\x00"+command)
}

// hashedName is the base name of word, made a valid name, a dash, and 8 hex
// digits of the sha256 of key.
func hashedName(word, key string) string {
	sum := sha256.Sum256([]byte(key))
	base := strings.TrimLeftFunc(sanitizeName(filepath.Base(word)), func(r rune) bool { return !isAlnum(r) })
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
