package cli

import (
	"bytes"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/everycli/every/internal/testutil"
	"github.com/urfave/cli/v2"
)

// updateDocs rewrites the committed man page, reference and completion
// scripts from the code: go test -run TestDocsUpToDate ./internal/cli -update
// (or EVERY_UPDATE_DOCS=1 in the environment), as shfmt updates its golden files.
var updateDocs = flag.Bool("update", false, "rewrite docs/every.1, docs/REFERENCE.md and completions/ from the flag definitions")

// generatedDocs are the committed files that the code generates.
var generatedDocs = []struct {
	path  string
	write func(io.Writer)
}{
	{"docs/every.1", manPage},
	{"docs/REFERENCE.md", referencePage},
	{"completions/every.bash", bashCompletion},
	{"completions/_every", zshCompletion},
	{"completions/every.fish", fishCompletion},
}

// TestDocsUpToDate checks that the committed man page and completion
// scripts are what the flag definitions make now: CI fails when a flag
// changes and they were not regenerated.
func TestDocsUpToDate(t *testing.T) {
	update := *updateDocs || os.Getenv("EVERY_UPDATE_DOCS") == "1"
	for _, d := range generatedDocs {
		var b bytes.Buffer
		d.write(&b)
		if update {
			if err := os.MkdirAll(filepath.Dir(d.path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(d.path, b.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		committed, err := os.ReadFile(d.path)
		if err != nil {
			t.Fatalf("%v; generate it with go test -run TestDocsUpToDate ./internal/cli -update", err)
		}
		if !bytes.Equal(committed, b.Bytes()) {
			t.Errorf("%s is not what the flag definitions make; regenerate it with go test -run TestDocsUpToDate ./internal/cli -update (diff: %s)", d.path, testutil.FirstDiff(committed, b.Bytes()))
		}
	}
}

// TestManPage checks every(1): it lists every visible option once, with
// its default once, the exit statuses of SPEC section 7, and renders
// without warnings where man is installed.
func TestManPage(t *testing.T) {
	var b bytes.Buffer
	manPage(&b)
	page := b.String()
	options, _, ok := strings.Cut(page[strings.Index(page, ".SH OPTIONS\n")+1:], ".SH COMMANDS\n")
	if !ok {
		t.Fatal("every(1) has no OPTIONS followed by COMMANDS")
	}
	paragraphs := strings.Split(options, ".TP\n")
	for _, f := range slices.Concat(runFlags, metaFlags) {
		name := f.Names()[0]
		var found []string
		for _, p := range paragraphs {
			if strings.HasPrefix(p, `\fB`+roff("--"+name)+`\fR`) {
				found = append(found, p)
			}
		}
		if len(found) != 1 {
			t.Errorf("every(1) lists --%s %d times under OPTIONS, want once", name, len(found))
			continue
		}
		want := 0
		if df, ok := f.(cli.DocGenerationFlag); ok && df.GetDefaultText() != "" {
			if bf, ok := plain(f).(*cli.BoolFlag); !ok || !bf.DisableDefaultText {
				want = 1
			}
		}
		if n := strings.Count(found[0], "(default:"); n != want {
			t.Errorf("every(1) shows --%s's default %d times, want %d:\n%s", name, n, want, found[0])
		}
	}
	for _, section := range []string{".SH NAME", ".SH SYNOPSIS", ".SH OPTIONS", ".SH EXIT STATUS", ".SH SIGNALS", ".SH ENVIRONMENT", ".SH FILES", ".SH LOGS", ".SH EXAMPLES"} {
		if !strings.Contains(page, section+"\n") {
			t.Errorf("every(1) has no %q", section)
		}
	}
	for _, code := range []string{"0", "1", "2", "70", "73", "75", "124", "126, 127", "128+n"} {
		if !strings.Contains(page, ".TP\n\\fB"+code+"\\fR\n") {
			t.Errorf("every(1) lists no exit status %s", code)
		}
	}
	// SPEC section 6: each signal every handles has its paragraph.
	signalsPart, _, _ := strings.Cut(page[strings.Index(page, ".SH SIGNALS\n"):], ".SH ENVIRONMENT\n")
	for _, sig := range []string{"SIGINT", "SIGTERM", "SIGUSR1", "SIGHUP", "SIGUSR2", "SIGPIPE"} {
		if !strings.Contains(signalsPart, sig) {
			t.Errorf("every(1) says nothing of %s under SIGNALS", sig)
		}
	}
	if !strings.Contains(signalsPart, "second") {
		t.Error("every(1) does not say under SIGNALS what a second stop signal does")
	}
	for _, tc := range []struct{ tool, what string }{{"groff", "rendered"}, {"mandoc", "linted"}} {
		if _, err := exec.LookPath(tc.tool); err != nil {
			testutil.SkipWithout(t, tc.tool, "every(1) not "+tc.what)
		}
	}
	if out, err := lintMan(page); err != nil || out != "" {
		t.Fatalf("every(1) is not clean: %v\n%s", err, out)
	}
}

// lintMan renders a man page with groff -ww and lints it with mandoc
// -Tlint (style messages included): what they say, empty when clean.
func lintMan(page string) (string, error) {
	var msgs strings.Builder
	for _, argv := range [][]string{{"groff", "-man", "-Tutf8", "-ww", "-z"}, {"mandoc", "-Tlint", "-W", "style"}} {
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Stdin = strings.NewReader(page)
		out, err := cmd.CombinedOutput()
		msgs.Write(out)
		// mandoc exits 1 or more for what it reports; the report is what
		// counts, and an empty one with an error is the tool failing.
		if err != nil && len(out) == 0 {
			return msgs.String(), fmt.Errorf("%s: %w", argv[0], err)
		}
	}
	return msgs.String(), nil
}

// TestLintMan checks that lintMan hears both tools: a page with a groff
// warning and a mandoc style message is not clean.
func TestLintMan(t *testing.T) {
	for _, tool := range []string{"groff", "mandoc"} {
		if _, err := exec.LookPath(tool); err != nil {
			testutil.SkipWithout(t, tool, "lintMan not checked")
		}
	}
	for _, tc := range []struct{ name, page, want string }{
		{"mandoc style", ".TH X 1 2026-01-01\n.SH NAME\nx \\- y\n.SH DESCRIPTION\n" + strings.Repeat("word ", 20) + "\n", "longer than 80"},
		{"missing date", ".TH X 1\n.SH NAME\nx \\- y\n", "date"},
		{"groff", ".TH X 1 2026-01-01\n.SH NAME\nx \\- y\n.ZZ\n", "ZZ"},
	} {
		out, err := lintMan(tc.page)
		if err != nil || !strings.Contains(out, tc.want) {
			t.Errorf("%s: lintMan = %v, %q; want a message with %q", tc.name, err, out, tc.want)
		}
	}
}

// loggedEvent is what the code logs under one event: the keys of its
// fields, and the reasons given as literals.
type loggedEvent struct {
	keys, reasons map[string]bool
	at            string // a place it is logged, for messages
}

// codeEvents reads the logging calls of every's Go files (not the tests,
// bench or testdata) and returns, by event, the fields logged with it: the
// string keys that follow "event", EVENT in a call's arguments or in a
// []any literal, and those appended to such a literal later in the same
// function. An event named by a constant or by a variable that the function
// sets to literals counts as each of them.
func codeEvents(t *testing.T, root string) map[string]*loggedEvent {
	t.Helper()
	events := map[string]*loggedEvent{}
	consts := map[string]map[string]string{}    // directory -> constant -> value
	pkgConsts := map[string]map[string]string{} // package name -> constant -> value
	parsed := map[string][]*ast.File{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != root && (d.Name() == "testdata" || d.Name() == "bench" || d.Name() == "scripttest" || d.Name() == "testutil" || strings.HasPrefix(d.Name(), ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		dir := filepath.Dir(path)
		parsed[dir] = append(parsed[dir], f)
		if consts[dir] == nil {
			consts[dir] = map[string]string{}
		}
		if pkgConsts[f.Name.Name] == nil {
			pkgConsts[f.Name.Name] = map[string]string{}
		}
		for _, decl := range f.Decls {
			if gd, ok := decl.(*ast.GenDecl); ok && gd.Tok == token.CONST {
				for _, spec := range gd.Specs {
					vs := spec.(*ast.ValueSpec)
					for i, name := range vs.Names {
						if i < len(vs.Values) {
							if v, ok := stringLit(vs.Values[i]); ok {
								consts[dir][name.Name] = v
								pkgConsts[f.Name.Name][name.Name] = v
							}
						}
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for dir, pkgFiles := range parsed {
		for _, f := range pkgFiles {
			for _, decl := range f.Decls {
				fd, ok := decl.(*ast.FuncDecl)
				if !ok || fd.Body == nil {
					continue
				}
				// The literals each local variable is set to.
				locals := map[string][]string{}
				ast.Inspect(fd.Body, func(n ast.Node) bool {
					if as, ok := n.(*ast.AssignStmt); ok && len(as.Lhs) == len(as.Rhs) {
						for i, l := range as.Lhs {
							if id, ok := l.(*ast.Ident); ok {
								if v, ok := stringLit(as.Rhs[i]); ok {
									locals[id.Name] = append(locals[id.Name], v)
								}
							}
						}
					}
					return true
				})
				// constant is the value of a string literal or of a string
				// constant, this package's or another's (runner.EventSkip).
				constant := func(e ast.Expr) (string, bool) {
					if v, ok := stringLit(e); ok {
						return v, true
					}
					switch e := e.(type) {
					case *ast.Ident:
						v, ok := consts[dir][e.Name]
						return v, ok
					case *ast.SelectorExpr:
						if pkg, ok := e.X.(*ast.Ident); ok {
							v, ok := pkgConsts[pkg.Name][e.Sel.Name]
							return v, ok
						}
					}
					return "", false
				}
				names := func(e ast.Expr) []string {
					if v, ok := constant(e); ok {
						return []string{v}
					}
					if id, ok := e.(*ast.Ident); ok {
						return locals[id.Name]
					}
					return nil
				}
				// note records the fields of list from "event" on, and
				// returns the events it names.
				note := func(list []ast.Expr) []string {
					for i := 0; i+1 < len(list); i++ {
						if k, ok := stringLit(list[i]); !ok || k != "event" {
							continue
						}
						evs := names(list[i+1])
						if len(evs) == 0 {
							t.Errorf("%s: an event that is not a literal, a constant or a variable set to literals", fset.Position(list[i].Pos()))
						}
						for _, ev := range evs {
							addFields(events, ev, fset.Position(list[i].Pos()).String(), list[i+2:], constant)
						}
						return evs
					}
					return nil
				}
				// Slices of attributes that carry an event, by variable.
				carry := map[string][]string{}
				ast.Inspect(fd.Body, func(n ast.Node) bool {
					switch n := n.(type) {
					case *ast.AssignStmt:
						for i, r := range n.Rhs {
							if cl, ok := r.(*ast.CompositeLit); ok && i < len(n.Lhs) {
								if id, ok := n.Lhs[i].(*ast.Ident); ok {
									if evs := note(cl.Elts); len(evs) > 0 {
										carry[id.Name] = evs
									}
								}
							}
						}
					case *ast.CompositeLit:
						note(n.Elts)
					case *ast.CallExpr:
						if fn, ok := n.Fun.(*ast.Ident); ok && fn.Name == "append" && len(n.Args) > 1 {
							if id, ok := n.Args[0].(*ast.Ident); ok {
								for _, ev := range carry[id.Name] {
									addFields(events, ev, fset.Position(n.Pos()).String(), n.Args[1:], constant)
								}
							}
						}
						note(n.Args)
					}
					return true
				})
			}
		}
	}
	return events
}

// addFields adds the key-value pairs at the start of list (string keys) to
// an event's fields; constant reads a reason's value.
func addFields(events map[string]*loggedEvent, ev, at string, list []ast.Expr, constant func(ast.Expr) (string, bool)) {
	e := events[ev]
	if e == nil {
		e = &loggedEvent{keys: map[string]bool{}, reasons: map[string]bool{}, at: at}
		events[ev] = e
	}
	for j := 0; j+1 < len(list); j += 2 {
		k, ok := stringLit(list[j])
		if !ok {
			return
		}
		e.keys[k] = true
		if v, ok := constant(list[j+1]); ok && k == "reason" {
			e.reasons[v] = true
		}
	}
}

// stringLit is the value of a string literal.
func stringLit(e ast.Expr) (string, bool) {
	bl, ok := e.(*ast.BasicLit)
	if !ok || bl.Kind != token.STRING {
		return "", false
	}
	v, err := strconv.Unquote(bl.Value)
	return v, err == nil
}

// TestLogEventsMatchCode checks the log events that every(1) and the
// reference document (logEvents) against what the code logs: each event
// logged is documented, each documented one is logged, with the same
// fields (a repeated line's summary fields aside) and the reasons the code
// names.
func TestLogEventsMatchCode(t *testing.T) {
	code := codeEvents(t, ".")
	if len(code) < 10 {
		t.Fatalf("found %d events in the code, want the dozen or more of SPEC section 11: %v", len(code), slices.Collect(maps.Keys(code)))
	}
	docs := map[string]*loggedEvent{}
	for _, e := range logEvents {
		d := docs[e.event]
		if d == nil {
			d = &loggedEvent{keys: map[string]bool{}, reasons: map[string]bool{}}
			docs[e.event] = d
		}
		for _, f := range e.fields {
			d.keys[f] = true
		}
		for _, r := range e.reasons {
			d.reasons[r] = true
		}
	}
	for ev, c := range code {
		d, ok := docs[ev]
		if !ok {
			t.Errorf("event=%s (%s) is not among logEvents (man.go): document it", ev, c.at)
			continue
		}
		for k := range c.keys {
			if !d.keys[k] && !slices.Contains(summaryFields, k) {
				t.Errorf("event=%s logs %s, which logEvents does not list for it", ev, k)
			}
		}
		for r := range c.reasons {
			if !d.reasons[r] {
				t.Errorf("event=%s logs reason=%q, which logEvents does not list for it", ev, r)
			}
		}
	}
	for ev, d := range docs {
		c, ok := code[ev]
		if !ok {
			t.Errorf("logEvents lists event=%s, which the code never logs", ev)
			continue
		}
		for k := range d.keys {
			if !c.keys[k] {
				t.Errorf("logEvents lists %s for event=%s, which the code never logs with it", k, ev)
			}
		}
	}
}
