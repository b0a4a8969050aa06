package runner

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Event names are declared once (events.go) and logged through their
// constants: no Go file of the project, tests aside, logs an event by a
// literal name, which a rename would miss and TestLogEventsMatchCode
// (internal/cli) could not tell from a new event.
func TestEventNamesOnlyThroughConstants(t *testing.T) {
	literal := regexp.MustCompile(`"event",\s*"`)
	root := ".."
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, loc := range literal.FindAllIndex(b, -1) {
			line := 1 + strings.Count(string(b[:loc[0]]), "\n")
			t.Errorf("%s:%d: an event logged by a literal name: use its constant (runner/events.go)", path, line)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
