package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

// updateDocs rewrites the committed man page and completion scripts from
// the code: go test -run TestDocsUpToDate -update . (or EVERY_UPDATE_DOCS=1).
var updateDocs = flag.Bool("update", false, "rewrite docs/every.1 and completions/ from the flag definitions")

// generatedDocs are the committed files that the code generates.
var generatedDocs = []struct {
	path  string
	write func(io.Writer)
}{
	{"docs/every.1", manPage},
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
			t.Fatalf("%v; generate it with EVERY_UPDATE_DOCS=1 go test -run TestDocsUpToDate .", err)
		}
		if !bytes.Equal(committed, b.Bytes()) {
			t.Errorf("%s is not what the flag definitions make; regenerate it with EVERY_UPDATE_DOCS=1 go test -run TestDocsUpToDate . (diff: %s)", d.path, firstDiff(committed, b.Bytes()))
		}
	}
}

// firstDiff shows the first line where two texts differ.
func firstDiff(a, b []byte) string {
	al, bl := strings.Split(string(a), "\n"), strings.Split(string(b), "\n")
	for i := range max(len(al), len(bl)) {
		var x, y string
		if i < len(al) {
			x = al[i]
		}
		if i < len(bl) {
			y = bl[i]
		}
		if x != y {
			return fmt.Sprintf("line %d: committed %q, generated %q", i+1, x, y)
		}
	}
	return "none"
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
	for _, section := range []string{".SH NAME", ".SH SYNOPSIS", ".SH OPTIONS", ".SH EXIT STATUS", ".SH ENVIRONMENT", ".SH FILES", ".SH EXAMPLES"} {
		if !strings.Contains(page, section+"\n") {
			t.Errorf("every(1) has no %q", section)
		}
	}
	for _, code := range []string{"0", "1", "2", "70", "73", "75", "124", "126, 127", "128+n"} {
		if !strings.Contains(page, ".TP\n\\fB"+code+"\\fR\n") {
			t.Errorf("every(1) lists no exit status %s", code)
		}
	}
	if _, err := exec.LookPath("groff"); err != nil {
		skipWithout(t, "groff", "every(1) not rendered")
	}
	cmd := exec.Command("groff", "-man", "-Tutf8", "-ww", "-z")
	cmd.Stdin = strings.NewReader(page)
	out, err := cmd.CombinedOutput()
	if err != nil || len(out) > 0 {
		t.Fatalf("groff -man -ww: %v\n%s", err, out)
	}
}
