package cli

import (
	"bytes"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// This file keeps the code's citations to what people can read: a comment
// that says where a behaviour is promised cites the docs (docs/REFERENCE.md,
// Exit status), never the SPEC the project was built to, which no reader of
// the code or of the docs has; and what every prints of itself and the docs
// it ships never mention it either.

// specWord is a citation of the SPEC: the word, in capitals.
var specWord = regexp.MustCompile(`\bSPEC\b`)

// docCite is a citation of a section of the docs, in parentheses: the
// file, then the section's heading as it is written there, perhaps more
// after it, and perhaps another citation after a semicolon:
// (docs/REFERENCE.md, Log events: skip; docs/GUIDE.md, The state).
var docCite = regexp.MustCompile(`[(;] ?docs/([A-Za-z]+\.md), `)

// commentBreak is where a comment goes on to its next line, in Go or in a
// shell script: a citation's heading may be cut there.
var commentBreak = regexp.MustCompile(`\n[ \t]*(//|#)[ \t]*`)

// sourceFiles returns the non-test Go files of the repository, by their
// slash-separated paths from its root, with their content; testdata and
// hidden directories are not the project's code.
func sourceFiles(t *testing.T) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	err := filepath.WalkDir(".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != "." && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		files[filepath.ToSlash(p)] = b
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 50 {
		t.Fatalf("found %d Go files, want 50 or more: is the test in the repository's root?", len(files))
	}
	return files
}

// markdownHeadings returns the headings of a Markdown text, without their
// #s, leaving out fenced blocks (a shell comment is no heading).
func markdownHeadings(text string) []string {
	var headings []string
	fenced := false
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, "```") {
			fenced = !fenced
		}
		if !fenced && strings.HasPrefix(line, "#") {
			headings = append(headings, strings.TrimSpace(strings.TrimLeft(line, "#")))
		}
	}
	return headings
}

// citesHeading reports whether text, what follows "docs/FILE.md, " in a
// citation, starts with one of headings, whole (not a longer word).
func citesHeading(text string, headings []string) bool {
	for _, h := range headings {
		rest, ok := strings.CutPrefix(text, h)
		if !ok {
			continue
		}
		if r, _ := utf8.DecodeRuneInString(rest); rest == "" || !(unicode.IsLetter(r) || unicode.IsDigit(r)) {
			return true
		}
	}
	return false
}

// TestCodeCitesDocs checks the comments and strings of the non-test Go
// files: none cites the SPEC, and each citation
// of the docs, (docs/FILE.md, Heading), names a file and a heading that
// exist.
func TestCodeCitesDocs(t *testing.T) {
	headings := map[string][]string{}
	cites := 0
	files := sourceFiles(t)
	for _, rel := range slices.Sorted(maps.Keys(files)) {
		src := files[rel]
		for i, line := range strings.Split(string(src), "\n") {
			if specWord.MatchString(line) {
				t.Errorf("%s:%d cites the SPEC, which readers do not have: cite the section of docs/ that says it, as (docs/REFERENCE.md, Exit status): %s", rel, i+1, strings.TrimSpace(line))
			}
		}
		text := commentBreak.ReplaceAllString(string(src), " ")
		for _, m := range docCite.FindAllStringSubmatchIndex(text, -1) {
			cites++
			doc := "docs/" + text[m[2]:m[3]]
			hs, ok := headings[doc]
			if !ok {
				b, err := os.ReadFile(doc)
				if err != nil {
					t.Errorf("%s cites %s: %v", rel, doc, err)
				}
				hs = markdownHeadings(string(b))
				headings[doc] = hs
			}
			rest := text[m[1]:]
			if !citesHeading(rest, hs) {
				cited, _, _ := strings.Cut(rest, "\n")
				if len(cited) > 60 {
					cited = cited[:60] + "..."
				}
				t.Errorf("%s cites %s, %q: that file has no such heading (its headings: %q)", rel, doc, cited, hs)
			}
		}
	}
	if cites < 10 {
		t.Errorf("found %d citations of docs/ in the code, want 10 or more: has their form, (docs/FILE.md, Heading), changed?", cites)
	}
}

// TestDocsCiteNoSpec checks what people read of every, and what the project
// ships for them to read: the generated man page, reference and completion
// scripts as the code makes them, --help, and the committed Markdown. None
// mentions the SPEC.
func TestDocsCiteNoSpec(t *testing.T) {
	texts := map[string]string{}
	for _, d := range generatedDocs {
		var b bytes.Buffer
		d.write(&b)
		texts[d.path+" (as generated)"] = b.String()
	}
	for _, args := range [][]string{{"--help"}, {"status", "--help"}, {"next", "--help"}, {"completion", "--help"}} {
		texts["every "+strings.Join(args, " ")] = help(t, args...)
	}
	md, err := filepath.Glob("*/*.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range append([]string{"README.md"}, md...) {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		texts[name] = string(b)
	}
	for _, name := range slices.Sorted(maps.Keys(texts)) {
		for i, line := range strings.Split(texts[name], "\n") {
			if specWord.MatchString(line) {
				t.Errorf("%s:%d mentions the SPEC, which readers do not have: say it, or link the docs that do: %s", name, i+1, strings.TrimSpace(line))
			}
		}
	}
}
