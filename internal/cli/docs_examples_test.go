package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"unicode"

	"github.com/everycli/every/internal/scripttest"
	"github.com/everycli/every/internal/testutil"
)

// This file runs the examples of README.md and docs/*.md, so that the docs
// cannot rot. A fenced code block says how it is checked by the words after
// its language (docs/DESIGN.md, Examples that run):
//
//	```sh run        a script: sh -eu runs it, and it must exit 0
//	```console run   a transcript: each "$ " command runs with sh -c, in
//	                 order, and prints exactly the lines below it ("..."
//	                 stands for any lines); each must exit 0
//	```sh check      not run (it needs a server, root or hours): each every
//	                 command in it must parse as every parses it
//	run repo         run from the repository's root, not a fresh directory
//
// A block in a shell language that names every must say run or check.

// docBlock is a fenced code block of a Markdown file.
type docBlock struct {
	where    string   // file:line of the opening fence
	indented bool     // an indented block, not a fenced one
	lang     string   // sh, console, yaml, ...
	words    []string // after the language: run, check, repo
	body     string
}

// has reports whether the block's fence carries word.
func (b docBlock) has(word string) bool { return slices.Contains(b.words, word) }

// docBlocks returns the fenced code blocks of a Markdown text.
func docBlocks(name, text string) []docBlock {
	var blocks []docBlock
	var cur *docBlock
	var body []string
	for i, line := range strings.Split(text, "\n") {
		switch {
		case cur == nil && strings.HasPrefix(line, "```"):
			info := strings.Fields(strings.TrimPrefix(line, "```"))
			cur = &docBlock{where: fmt.Sprintf("%s:%d", name, i+1)}
			if len(info) > 0 {
				cur.lang, cur.words = info[0], info[1:]
			}
			body = nil
		case cur != nil && strings.TrimSpace(line) == "```":
			cur.body = strings.Join(body, "\n") + "\n"
			blocks = append(blocks, *cur)
			cur = nil
		case cur != nil:
			body = append(body, line)
		}
	}
	return blocks
}

// shellLangs are the languages of blocks that people paste into a shell.
var shellLangs = []string{"sh", "shell", "bash", "console", "crontab"}

// checkDocBlock checks one block as its fence says, in home, a fresh
// directory (or from repo, the repository's root, for "run repo").
func checkDocBlock(ctx context.Context, b docBlock, repo, home string) error {
	switch {
	case b.has("run") && b.has("check"):
		return errors.New("both run and check: choose one")
	case b.has("run") && b.lang == "sh":
		return runDocScript(ctx, b, repo, home)
	case b.has("run") && b.lang == "console":
		return runDocTranscript(ctx, b, repo, home)
	case b.has("run"):
		return fmt.Errorf("run is for sh and console blocks, not %q", b.lang)
	case b.has("check"):
		return checkDocCommands(b)
	case b.indented || slices.Contains(shellLangs, b.lang):
		cmds, err := everyCommands(b.lang, b.body)
		switch {
		case err != nil:
			return err
		case len(cmds) > 0 && b.indented:
			return fmt.Errorf("an indented block runs %q: put it in a fenced block marked run or check (docs/DESIGN.md, \"Examples that run\")", strings.Join(cmds[0], " "))
		case len(cmds) > 0:
			return fmt.Errorf("a shell block runs %q and says neither run nor check: mark it (docs/DESIGN.md, \"Examples that run\")", strings.Join(cmds[0], " "))
		}
	}
	return nil
}

// docShell runs script with sh in dir: the every under test first on PATH
// (the test binary, as testscript.Main set it up), HOME, TMPDIR and the
// state home inside dir, in a process group of its own that is killed when
// it ends, so that nothing it started is left behind.
func docShell(ctx context.Context, dir, home string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, "sh", args...)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), testutil.GoCaches()...), "HOME="+home, "TMPDIR="+home, "XDG_STATE_HOME="+filepath.Join(home, ".state"),
		"GORACE=atexit_sleep_ms=0", "LC_ALL=C", "TZ=UTC")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = testutil.WaitBound
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	return out.Bytes(), err
}

// docDir is where a block runs: home, its fresh directory, or the
// repository's root for "run repo".
func docDir(b docBlock, repo, home string) string {
	if b.has("repo") {
		return repo
	}
	return home
}

// runDocScript runs a sh block with sh -eu.
func runDocScript(ctx context.Context, b docBlock, repo, home string) error {
	if out, err := docShell(ctx, docDir(b, repo, home), home, "-euc", b.body); err != nil {
		return fmt.Errorf("the script failed: %w\n%s", err, out)
	}
	return nil
}

// transcriptStep is a command of a console block and the output it shows.
type transcriptStep struct {
	command string
	output  []string
}

// transcript reads a console block: "$ " lines (continued by a trailing
// backslash) and the output lines after each.
func transcript(body string) ([]transcriptStep, error) {
	var steps []transcriptStep
	lines := strings.Split(strings.TrimSuffix(body, "\n"), "\n")
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if cmd, ok := strings.CutPrefix(l, "$ "); ok {
			for strings.HasSuffix(cmd, `\`) && i+1 < len(lines) {
				i++
				cmd = strings.TrimSuffix(cmd, `\`) + "\n" + lines[i]
			}
			steps = append(steps, transcriptStep{command: cmd})
			continue
		}
		if len(steps) == 0 {
			return nil, fmt.Errorf("output %q before any \"$ \" command", l)
		}
		steps[len(steps)-1].output = append(steps[len(steps)-1].output, l)
	}
	if len(steps) == 0 {
		return nil, errors.New("no \"$ \" command")
	}
	return steps, nil
}

// runDocTranscript runs a console block's commands in turn, each to show
// exactly its output.
func runDocTranscript(ctx context.Context, b docBlock, repo, home string) error {
	steps, err := transcript(b.body)
	if err != nil {
		return err
	}
	for _, s := range steps {
		out, err := docShell(ctx, docDir(b, repo, home), home, "-c", s.command)
		if err != nil {
			return fmt.Errorf("$ %s: %w\n%s", s.command, err, out)
		}
		got := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
		if len(out) == 0 {
			got = nil
		}
		for i := range got {
			got[i] = strings.TrimRight(got[i], " \t")
		}
		if !linesMatch(s.output, got) {
			return fmt.Errorf("$ %s: printed\n%s\nwhere the docs show\n%s", s.command, strings.Join(got, "\n"), strings.Join(s.output, "\n"))
		}
	}
	return nil
}

// linesMatch reports whether got are the lines want shows, where a want
// line "..." stands for any number of lines.
func linesMatch(want, got []string) bool {
	if len(want) == 0 {
		return len(got) == 0
	}
	if strings.TrimRight(want[0], " \t") == "..." {
		for i := 0; i <= len(got); i++ {
			if linesMatch(want[1:], got[i:]) {
				return true
			}
		}
		return false
	}
	return len(got) > 0 && strings.TrimRight(want[0], " \t") == got[0] && linesMatch(want[1:], got[1:])
}

// shellOperators separate the commands of a line; shellPrefixes are the
// words that may stand before a command.
var (
	shellOperators = []string{"|", "||", "&&", ";", "&"}
	shellPrefixes  = []string{"sudo", "if", "then", "else", "elif", "while", "until", "do", "!", "exec", "time"}
)

// everyCommands returns the every commands of a block's text, each as its
// words up to a redirection or a comment: those of each "$ "-prompted or
// plain line (after sudo, if and such, or VAR=value words, between ;, &&,
// || and |), of
// a crontab line (after its five time fields or @word), and the
// EVERY_ARGS="..." of the systemd unit's job file, with the unit's words.
func everyCommands(lang, body string) ([][]string, error) {
	var cmds [][]string
	for _, line := range strings.Split(strings.ReplaceAll(body, "\\\n", " "), "\n") {
		line = strings.TrimSpace(strings.TrimPrefix(line, "$ "))
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if args, ok := strings.CutPrefix(line, "EVERY_ARGS="); ok {
			inner, err := scripttest.ShellWords(args)
			if err != nil || len(inner) != 1 {
				return nil, fmt.Errorf("EVERY_ARGS=%s: not one quoted value", args)
			}
			words, err := scripttest.ShellWords(inner[0])
			if err != nil {
				return nil, err
			}
			cmds = append(cmds, append([]string{"every", "--name", "job", "--state-dir", "/var/lib/every/job"}, words...))
			continue
		}
		words, err := scripttest.ShellWords(line)
		if err != nil {
			return nil, err
		}
		if lang == "crontab" && len(words) > 0 && !strings.Contains(words[0], "=") {
			skip := 5
			if strings.HasPrefix(words[0], "@") {
				skip = 1
			}
			words = words[min(skip, len(words)):]
		}
		for len(words) > 0 {
			end, next := len(words), len(words)
			for i, w := range words {
				if slices.Contains(shellOperators, w) {
					end, next = i, i+1
					break
				}
				if strings.HasSuffix(w, ";") {
					end, next = i+1, i+1
					break
				}
			}
			cmd := slices.Clone(words[:end])
			words = words[next:]
			if len(cmd) > 0 {
				cmd[len(cmd)-1] = strings.TrimSuffix(cmd[len(cmd)-1], ";")
			}
			for len(cmd) > 0 && (slices.Contains(shellPrefixes, cmd[0]) || strings.Contains(cmd[0], "=")) {
				cmd = cmd[1:]
			}
			if len(cmd) == 0 || cmd[0] != "every" {
				continue
			}
			for i, w := range cmd {
				if strings.HasPrefix(w, "#") || strings.HasPrefix(w, ">") || strings.HasPrefix(w, "2>") || w == "<" {
					cmd = cmd[:i]
					break
				}
			}
			cmds = append(cmds, cmd)
		}
	}
	return cmds, nil
}

// checkDocCommands parses each every command of a check block as every
// would: its options, schedule and values.
func checkDocCommands(b docBlock) error {
	cmds, err := everyCommands(b.lang, b.body)
	if err != nil {
		return err
	}
	if len(cmds) == 0 {
		return errors.New("a check block with no every command")
	}
	for _, argv := range cmds {
		req, err := Parse(argv[1:], io.Discard, io.Discard)
		if err != nil {
			return fmt.Errorf("%s: %w", strings.Join(argv, " "), err)
		}
		if req.Run == nil && req.Status == nil && req.Next == nil && req.Jobs == nil && !slices.Contains(argv, "--help") && !slices.Contains(argv, "--version") && (len(argv) < 2 || argv[1] != "completion") {
			return fmt.Errorf("%s: parsed to nothing", strings.Join(argv, " "))
		}
	}
	return nil
}

// indentedCode returns the indented code blocks of a Markdown text (four
// spaces after a blank line, outside fenced blocks).
func indentedCode(name, text string) []docBlock {
	var blocks []docBlock
	lines := strings.Split(text, "\n")
	fenced := false
	for i := 0; i < len(lines); i++ {
		if strings.HasPrefix(lines[i], "```") {
			fenced = !fenced
			continue
		}
		if fenced || !strings.HasPrefix(lines[i], "    ") || (i > 0 && strings.TrimSpace(lines[i-1]) != "") {
			continue
		}
		b := docBlock{where: fmt.Sprintf("%s:%d", name, i+1), indented: true}
		for ; i < len(lines) && (strings.HasPrefix(lines[i], "    ") || strings.TrimSpace(lines[i]) == ""); i++ {
			b.body += strings.TrimPrefix(lines[i], "    ") + "\n"
		}
		blocks = append(blocks, b)
	}
	return blocks
}

// docFiles are the Markdown files whose examples must run.
func docFiles(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	return append([]string{"README.md"}, files...)
}

// TestDocExamples runs or checks every marked block of README.md and
// docs/*.md, and fails for a shell block about every that is not marked.
func TestDocExamples(t *testing.T) {
	repo, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	runs := 0
	for _, name := range docFiles(t) {
		raw, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range append(docBlocks(name, string(raw)), indentedCode(name, string(raw))...) {
			if b.has("run") {
				runs++
			}
			t.Run(b.where, func(t *testing.T) {
				if b.has("run") && b.has("repo") && testing.Short() {
					t.Skip("builds every: not with -short")
				}
				ctx, cancel := context.WithTimeout(context.Background(), 4*testutil.WaitBound)
				defer cancel()
				if err := checkDocBlock(ctx, b, repo, t.TempDir()); err != nil {
					t.Errorf("the ```%s %s block at %s: %v", b.lang, strings.Join(b.words, " "), b.where, err)
				}
			})
		}
	}
	if runs < 10 {
		t.Errorf("the docs have %d blocks that run, want 10 or more: has the marking changed?", runs)
	}
}

// TestDocBlockChecks checks the checker: blocks that fail, print something
// else than they show, do not parse, or are not marked, are errors; the
// others are not.
func TestDocBlockChecks(t *testing.T) {
	repo, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, markdown, wantErr string
	}{
		{"script passes", "```sh run\nevery 10ms --max-runs 2 -q -- true\ntest -s .state/every/true-*.json\n```\n", ""},
		{"script fails", "```sh run\nevery 10ms --max-runs 1 -q -- false\n```\n", "the script failed"},
		{"transcript passes", "```console run\n$ every next 1h --align --tz UTC --from 2026-01-01T00:30:00Z -n 2\n2026-01-01T01:00:00Z  Thu  in 30m\n2026-01-01T02:00:00Z  Thu  in 1h30m\n$ echo a; echo b; echo c\na\n...\n```\n", ""},
		{"transcript shows other output", "```console run\n$ every next 1h --align --tz UTC --from 2026-01-01T00:30:00Z -n 1\n2026-01-01T02:00:00Z  Thu  in 1h30m\n```\n", "where the docs show"},
		{"transcript command fails", "```console run\n$ every 1s --max-runs 1 -q -- sh -c 'exit 3'\n```\n", "exit status 3"},
		{"transcript shows its exit status", "```console run\n$ every 1s --max-runs 1 -q -- sh -c 'exit 3' 2>/dev/null; echo \"exit $?\"\nexit 3\n```\n", ""},
		{"check passes", "```sh check\n$ sudo every '*/5 * * * *' --timeout 60s -- /usr/local/bin/sync\nevery status --max-age 26h backup || alert\n```\n", ""},
		{"check of a script", "```sh check\nif every 1h --max-runs 1 -- ./backup.sh; then\n  echo done\nfi\n```\n", ""},
		{"check of a script finds a bad option", "```sh check\nif every 1h --max-runz 1 -- ./backup.sh; then\n  echo done\nfi\n```\n", "max-runz"},
		{"check of a crontab", "```crontab check\nMAILTO=ops@example.com\n*/5 * * * *  every 5m --max-runs 1 --quiet-success -- /usr/local/bin/sync\n```\n", ""},
		{"check of the unit's job", "```sh check\nEVERY_ARGS=\"'0 3 * * *' --tz Europe/Berlin -- /usr/local/bin/backup\"\n```\n", ""},
		{"check finds a bad value", "```sh check\nevery 90s --retries -1 -- ./job.sh\n```\n", `bad --retries "-1"`},
		{"check finds an unknown option", "```crontab check\n0 3 * * *  every 1d --max-run 1 -- ./job.sh\n```\n", "max-run"},
		{"check with nothing to check", "```sh check\necho hello\n```\n", "no every command"},
		{"unmarked", "```sh\nevery 90s -- ./job.sh\n```\n", "neither run nor check"},
		{"unmarked, not shell", "```yaml\nargs: [every, 90s]\n```\n", ""},
		{"unmarked, every not run", "```sh\ngit clone https://github.com/everycli/every && cd every\ndocker run every --help\n```\n", ""},
		{"unmarked, every after an operator", "```sh\ncd /srv && every 1h -- ./job.sh\n```\n", "neither run nor check"},
		{"unmarked crontab", "```crontab\n*/5 * * * * every 5m --max-runs 1 -- true\n```\n", "neither run nor check"},
		{"unmarked job file", "```ini\nEVERY_ARGS=\"1h -- true\"\n```\n", ""},
		{"unmarked job file in sh", "```sh\nEVERY_ARGS=\"1h -- true\"\n```\n", "neither run nor check"},
	}
	tests = append(tests, struct{ name, markdown, wantErr string }{"indented", "text\n\n    every 90s -- ./job.sh\n", "indented block"},
		struct{ name, markdown, wantErr string }{"indented, not every", "text\n\n    go test ./...\n", ""})
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			blocks := append(docBlocks("test.md", tc.markdown), indentedCode("test.md", tc.markdown)...)
			if len(blocks) != 1 {
				t.Fatalf("found %d blocks, want 1", len(blocks))
			}
			ctx, cancel := context.WithTimeout(context.Background(), 4*testutil.WaitBound)
			defer cancel()
			err := checkDocBlock(ctx, blocks[0], repo, t.TempDir())
			switch {
			case tc.wantErr == "" && err != nil:
				t.Errorf("checkDocBlock: %v, want no error", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Errorf("checkDocBlock: %v, want an error with %q", err, tc.wantErr)
			}
		})
	}
}

// mdLink matches a Markdown link's target: [text](target).
var mdLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// headingAnchors returns the anchors GitHub gives a Markdown text's
// headings: lower case, spaces as dashes, punctuation dropped, a repeated
// one numbered (-1, -2, ...).
func headingAnchors(text string) map[string]bool {
	anchors := map[string]bool{}
	seen := map[string]int{}
	fenced := false
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, "```") {
			fenced = !fenced
		}
		if fenced || !strings.HasPrefix(line, "#") {
			continue
		}
		title := strings.TrimSpace(strings.TrimLeft(line, "#"))
		var b strings.Builder
		for _, r := range strings.ToLower(title) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				b.WriteRune(r)
			}
		}
		a := b.String()
		if n := seen[a]; n > 0 {
			anchors[fmt.Sprintf("%s-%d", a, n)] = true
		} else {
			anchors[a] = true
		}
		seen[a]++
	}
	return anchors
}

// TestDocLinks checks the links between README.md and docs/*.md: each file
// exists, and each #anchor is a heading of the file it names.
func TestDocLinks(t *testing.T) {
	links := 0
	for _, name := range docFiles(t) {
		raw, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		text := string(raw)
		for _, b := range docBlocks(name, text) {
			text = strings.Replace(text, b.body, "", 1) // code is not links
		}
		for _, m := range mdLink.FindAllStringSubmatch(text, -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			links++
			file, anchor, _ := strings.Cut(target, "#")
			path := name
			if file != "" {
				path = filepath.Join(filepath.Dir(name), file)
			}
			linked, err := os.ReadFile(path)
			if err != nil {
				t.Errorf("%s links to %s: %v", name, target, err)
				continue
			}
			if anchor != "" && !headingAnchors(string(linked))[anchor] {
				t.Errorf("%s links to %s: %s has no heading #%s", name, target, path, anchor)
			}
		}
	}
	if links < 20 {
		t.Errorf("found %d links between the docs, want 20 or more", links)
	}
}
