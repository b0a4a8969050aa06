package cli

import (
	"encoding/json"
	"errors"
	"maps"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// This file keeps docs/DESIGN.md true to the module: its Architecture table
// names each package go list finds, and its Dependencies section each module
// go.mod requires directly, and neither names one that is not there.

// goTool runs the go command in the repository's root and returns its
// stdout.
func goTool(t *testing.T, args ...string) []byte {
	t.Helper()
	out, err := exec.Command("go", args...).Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("go %s: %v: %s", strings.Join(args, " "), err, ee.Stderr)
		}
		t.Fatalf("go %s: %v", strings.Join(args, " "), err)
	}
	return out
}

// goMod is what the tests need of go.mod, as go mod edit -json prints it.
type goMod struct {
	Module struct {
		Path string
	}
	Require []struct {
		Path     string
		Indirect bool
	}
}

// readGoMod reads go.mod through the go command, which parses it as every
// build does.
func readGoMod(t *testing.T) goMod {
	t.Helper()
	var m goMod
	if err := json.Unmarshal(goTool(t, "mod", "edit", "-json"), &m); err != nil {
		t.Fatalf("go mod edit -json: %v", err)
	}
	if m.Module.Path == "" {
		t.Fatal("go mod edit -json: no module path")
	}
	return m
}

// markdownSection returns the body of the section of text headed "## title",
// up to the next such heading.
func markdownSection(t *testing.T, name, text, title string) string {
	t.Helper()
	_, body, ok := strings.Cut(text, "\n## "+title+"\n")
	if !ok {
		t.Fatalf("%s has no section %q", name, "## "+title)
	}
	body, _, _ = strings.Cut(body, "\n## ")
	return body
}

// codeSpan matches a Markdown code span, `like this`.
var codeSpan = regexp.MustCompile("`([^`]+)`")

// designPackages returns what the first column of DESIGN.md's Architecture
// table names, each as a directory relative to the module's root ("." for
// the root, which the table names by its one file, main.go), with the row
// that names it.
func designPackages(t *testing.T, design string) map[string]string {
	t.Helper()
	named := map[string]string{}
	rows := 0
	for _, line := range strings.Split(markdownSection(t, "docs/DESIGN.md", design, "Architecture"), "\n") {
		cells := strings.Split(line, "|")
		if !strings.HasPrefix(line, "|") || len(cells) < 3 {
			continue
		}
		where := strings.TrimSpace(cells[1])
		if where == "where" || strings.Trim(where, "- ") == "" {
			continue // the header and its rule
		}
		rows++
		spans := codeSpan.FindAllStringSubmatch(where, -1)
		if len(spans) == 0 {
			t.Errorf("docs/DESIGN.md's Architecture row %q names no package: write each as `dir/`", where)
		}
		for _, s := range spans {
			dir := strings.TrimSuffix(s[1], "/")
			if dir == "main.go" {
				dir = "."
			}
			named[dir] = where
		}
	}
	if rows < 10 {
		t.Fatalf("docs/DESIGN.md's Architecture table has %d rows, want 10 or more: has its shape changed (| where | what it owns |)?", rows)
	}
	return named
}

// TestDesignPackages checks docs/DESIGN.md's Architecture table against the
// module's packages (go list ./...): each has a row (one row may name
// several: `ping/`, `metrics/`), tools and test helpers included, and the
// table names no directory that is not a package.
func TestDesignPackages(t *testing.T) {
	design, err := os.ReadFile("docs/DESIGN.md")
	if err != nil {
		t.Fatal(err)
	}
	module := readGoMod(t).Module.Path
	var pkgs []string
	for _, path := range strings.Fields(string(goTool(t, "list", "-f", "{{.ImportPath}}", "./..."))) {
		dir, ok := strings.CutPrefix(path, module+"/")
		if path == module {
			dir, ok = ".", true
		}
		if !ok {
			t.Fatalf("go list ./... gave %q, outside module %s", path, module)
		}
		pkgs = append(pkgs, dir)
	}
	if !slices.Contains(pkgs, ".") || len(pkgs) < 10 {
		t.Fatalf("go list ./... gave %q: want the root package and the others", pkgs)
	}
	named := designPackages(t, string(design))
	for _, dir := range pkgs {
		if _, ok := named[dir]; !ok {
			t.Errorf("package %s has no row in docs/DESIGN.md's Architecture table: add `%s/` and what it owns", dir, dir)
		}
	}
	for _, dir := range slices.Sorted(maps.Keys(named)) {
		if row := named[dir]; !slices.Contains(pkgs, dir) {
			t.Errorf("docs/DESIGN.md's Architecture row %q names %q, which is no package of the module (go list ./...)", row, dir)
		}
	}
}

// modulePath matches a module path in prose: a host name with a dot, then
// one or more path elements (github.com/gofrs/flock, golang.org/x/sys).
var modulePath = regexp.MustCompile(`[a-z0-9-]+(?:\.[a-z0-9-]+)+(?:/[A-Za-z0-9._~-]+)+`)

// TestDesignDependencies checks that docs/DESIGN.md's Dependencies section
// names exactly the modules go.mod requires directly: a new one earns its
// line there, and one dropped leaves no line behind.
func TestDesignDependencies(t *testing.T) {
	design, err := os.ReadFile("docs/DESIGN.md")
	if err != nil {
		t.Fatal(err)
	}
	named := map[string]bool{}
	for _, m := range modulePath.FindAllString(markdownSection(t, "docs/DESIGN.md", string(design), "Dependencies"), -1) {
		named[strings.TrimRight(m, ".")] = true
	}
	direct := map[string]bool{}
	for _, r := range readGoMod(t).Require {
		if !r.Indirect {
			direct[r.Path] = true
		}
	}
	if len(direct) == 0 {
		t.Fatal("go.mod requires no module directly: is go mod edit -json's shape still the same?")
	}
	for _, path := range slices.Sorted(maps.Keys(direct)) {
		if !named[path] {
			t.Errorf("go.mod requires %s, which docs/DESIGN.md's Dependencies does not name: say what it is for (and what it weighs, if it is in the binary)", path)
		}
	}
	for _, path := range slices.Sorted(maps.Keys(named)) {
		if !direct[path] {
			t.Errorf("docs/DESIGN.md's Dependencies names %s, which go.mod does not require directly: drop its line", path)
		}
	}
}
