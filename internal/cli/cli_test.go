package cli

import (
	"bytes"
	"errors"
	"io"
	"os"
	"regexp"
	"runtime/debug"
	"slices"
	"strings"
	"testing"

	"github.com/everycli/every/internal/scripttest"
	"github.com/everycli/every/internal/ui"
	"github.com/urfave/cli/v2"
)

func TestVersionText(t *testing.T) {
	settings := func(kv ...string) []debug.BuildSetting {
		var s []debug.BuildSetting
		for i := 0; i < len(kv); i += 2 {
			s = append(s, debug.BuildSetting{Key: kv[i], Value: kv[i+1]})
		}
		return s
	}
	platform := []string{"GOOS", "linux", "GOARCH", "amd64"}
	tests := []struct {
		name string
		bi   *debug.BuildInfo
		want string
	}{
		{
			name: "go install of a tag: no vcs settings",
			bi:   &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v0.3.1"}, Settings: settings(platform...)},
			want: "every v0.3.1 go1.26.8 linux/amd64",
		},
		{
			name: "go build in a checkout with changes: pseudo-version, revision, modified",
			bi: &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v0.3.2-0.20261201023905-7102b73abcd1+dirty"},
				Settings: settings(append(platform, "vcs", "git", "vcs.revision", "7102b73abcd1ef0123456789abcdef0123456789", "vcs.time", "2026-12-01T02:39:05Z", "vcs.modified", "true")...)},
			want: "every v0.3.2-0.20261201023905-7102b73abcd1+dirty (7102b73, modified) go1.26.8 linux/amd64",
		},
		{
			name: "release build of a clean tag, -trimpath",
			bi: &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v0.3.1"},
				Settings: settings("-trimpath", "true", "-ldflags", "-s -w", "GOOS", "darwin", "GOARCH", "arm64", "vcs.revision", "abc1234def", "vcs.modified", "false")},
			want: "every v0.3.1 (abc1234) go1.26.8 darwin/arm64",
		},
		{
			name: "no module version (go run, -buildvcs=false)",
			bi:   &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}, Settings: settings("GOOS", "freebsd", "GOARCH", "amd64")},
			want: "every devel go1.26.8 freebsd/amd64",
		},
		{
			name: "a short revision is kept whole",
			bi:   &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: ""}, Settings: settings(append(platform, "vcs.revision", "12ab")...)},
			want: "every devel (12ab) go1.26.8 linux/amd64",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := versionText(tt.bi); got != tt.want {
				t.Errorf("versionText = %q, want %q", got, tt.want)
			}
		})
	}
	// Without build info, the Go version and platform of the running binary.
	if got := versionText(nil); !regexp.MustCompile(`^every devel go\S+ \w+/\w+$`).MatchString(got) {
		t.Errorf("versionText(nil) = %q", got)
	}
}

// help returns what args (--help of every, every status, every next)
// print.
func help(t *testing.T, args ...string) string {
	t.Helper()
	var out, errs bytes.Buffer
	req, err := Parse(args, &out, &errs)
	if err != nil || req.Run != nil || req.Status != nil || req.Next != nil || errs.Len() > 0 {
		t.Fatalf("Parse(%q) = %+v, %v; stderr %q", args, req, err, errs.String())
	}
	return out.String()
}

// helpEntries splits an OPTIONS listing into its flags' entries (a first
// line and its continuation lines), keyed by the flag's first spelling.
func helpEntries(t *testing.T, text string) map[string]string {
	t.Helper()
	_, options, ok := strings.Cut(text, "\nOPTIONS:\n")
	if !ok {
		t.Fatalf("no OPTIONS in\n%s", text)
	}
	entries := map[string]string{}
	first := regexp.MustCompile(`^   (-{1,2}[\w-]+)`)
	var cur string
	for _, line := range strings.Split(options, "\n") {
		if m := first.FindStringSubmatch(line); m != nil {
			cur = m[1]
			if _, dup := entries[cur]; dup {
				t.Errorf("%s listed twice", cur)
			}
			entries[cur] = line
		} else if cur != "" && strings.HasPrefix(line, "      ") {
			entries[cur] += " " + strings.TrimSpace(line)
		} else {
			cur = ""
		}
	}
	return entries
}

// TestHelpDefaultsOnce checks every --help, every status --help and every
// next --help: each visible flag is listed once, with its default shown at
// most once and unquoted, and never "(default: false)" after a switch.
func TestHelpDefaultsOnce(t *testing.T) {
	for _, c := range []struct {
		args  []string
		flags []cli.Flag
	}{
		{[]string{"--help"}, slices.Concat(runFlags, metaFlags)},
		{[]string{"status", "--help"}, statusFlags},
		{[]string{"next", "--help"}, nextFlags},
		{[]string{"jobs", "--help"}, jobsFlags},
	} {
		entries := helpEntries(t, help(t, c.args...))
		for _, f := range c.flags {
			if vf, ok := f.(cli.VisibleFlag); ok && !vf.IsVisible() {
				if _, listed := entries["--"+f.Names()[0]]; listed {
					t.Errorf("%q lists hidden --%s", c.args, f.Names()[0])
				}
				continue
			}
			name := "--" + f.Names()[0]
			if len(f.Names()[0]) == 1 {
				name = "-" + f.Names()[0]
			}
			e, ok := entries[name]
			if !ok {
				t.Errorf("%q does not list %s", c.args, name)
				continue
			}
			if n := strings.Count(e, "default"); n > 1 {
				t.Errorf("%q shows a default of %s %d times: %s", c.args, name, n, e)
			}
			if strings.Contains(e, `(default: "`) || strings.Contains(e, "(default: false)") {
				t.Errorf("%q shows a quoted or switch default for %s: %s", c.args, name, e)
			}
			if df := f.(cli.DocGenerationFlag); df.TakesValue() && df.GetDefaultText() != "" && !strings.Contains(e, "(default: "+df.GetDefaultText()+")") {
				t.Errorf("%q does not show %s's default %q: %s", c.args, name, df.GetDefaultText(), e)
			}
		}
	}
}

// TestHelpNamesStores checks that --store names both stores a fleet may
// keep its jobs in, Redis and etcd, in every --help and every status
// --help: a reader of either learns that etcd is one.
func TestHelpNamesStores(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"status", "--help"}} {
		e := helpEntries(t, help(t, args...))["--store"]
		for _, store := range []string{"Redis", "etcd"} {
			if !strings.Contains(e, store) {
				t.Errorf("%q: --store does not name %s: %s", args, store, e)
			}
		}
	}
}

// TestHelpCategories checks that each option of a run is in one of the
// categories --help shows, in their order, and that each category is shown.
func TestHelpCategories(t *testing.T) {
	text := help(t, "--help")
	last := -1
	for _, cat := range categories {
		i := strings.Index(text, "\n   "+cat+":\n")
		if i < 0 {
			t.Errorf("--help has no category %q", cat)
			continue
		}
		if i < last {
			t.Errorf("--help shows category %q out of order", cat)
		}
		last = i
	}
	for _, f := range runFlags {
		cf, ok := f.(cli.CategorizableFlag)
		if !ok || !slices.Contains(categories, cf.GetCategory()) {
			t.Errorf("--%s is in no category of --help", f.Names()[0])
		}
	}
}

func TestHelpExamplesParse(t *testing.T) {
	examples := scripttest.HelpExamples(help(t, "--help"))
	if len(examples) < 6 {
		t.Fatalf("found %d examples in --help, want 6 or more: %q", len(examples), examples)
	}
	for _, ex := range examples {
		argv, err := scripttest.ShellWords(ex)
		if err != nil {
			t.Fatal(err)
		}
		var out, errs bytes.Buffer
		req, err := Parse(argv[1:], &out, &errs)
		switch {
		case err != nil:
			t.Errorf("example %q: %v", ex, err)
		case argv[1] == "next" && req.Next == nil, argv[1] != "next" && req.Run == nil:
			t.Errorf("example %q parsed to %+v", ex, req)
		case req.Run != nil && !slices.Equal(req.Run.Loop.Command, argv[slices.Index(argv, "--")+1:]):
			t.Errorf("example %q: command %q", ex, req.Run.Loop.Command)
		}
	}
}

// TestCompletionUsage checks every completion's arguments: a shell it
// knows prints its script; another, or none, is one usage line naming the
// value and the choices.
func TestCompletionUsage(t *testing.T) {
	tests := []struct {
		args    []string
		wantOut string // a line of the script
		wantErr string
	}{
		{args: []string{"completion", "bash"}, wantOut: "complete -F _every every\n"},
		{args: []string{"completion", "zsh"}, wantOut: "#compdef every\n"},
		{args: []string{"completion", "fish"}, wantOut: "complete -c every -n '__every_in status' -f -a '(__every_jobs)'\n"},
		{args: []string{"completion", "ksh"}, wantErr: `bad shell "ksh": use one of bash, zsh, fish`},
		{args: []string{"completion"}, wantErr: "completion takes one shell: bash, zsh, fish; try: every completion bash"},
		{args: []string{"completion", "bash", "zsh"}, wantErr: "completion takes one shell"},
		{args: []string{"completion", "--shell", "bash"}, wantErr: "unknown option --shell; see every completion --help"},
		{args: []string{"completion", "--help"}, wantOut: "every completion bash|zsh|fish\n"},
	}
	for _, tt := range tests {
		var out, errs bytes.Buffer
		req, err := Parse(tt.args, &out, &errs)
		if req.Run != nil || req.Status != nil || req.Next != nil {
			t.Errorf("Parse(%q) = %+v, want nothing to do", tt.args, req)
		}
		if tt.wantErr != "" {
			if !errors.As(err, new(ui.UsageError)) || !strings.HasPrefix(err.Error(), tt.wantErr) || strings.Contains(err.Error(), "\n") {
				t.Errorf("Parse(%q) error %v, want a usage line %q", tt.args, err, tt.wantErr)
			}
			continue
		}
		if err != nil || !strings.Contains(out.String(), tt.wantOut) {
			t.Errorf("Parse(%q) = %v, stdout lacks %q:\n%s", tt.args, err, tt.wantOut, out.String())
		}
	}
}

// TestCompletionCoversFlags checks that each script offers each visible
// option of a run and of the subcommands, the values of --catch-up,
// --log-format, --log-level, --signal and --output, the subcommands (in
// fish, each with its description), and job names from every status
// --names.
func TestCompletionCoversFlags(t *testing.T) {
	for name, write := range shells {
		var b bytes.Buffer
		write(&b)
		script := b.String()
		for _, f := range slices.Concat(runFlags, metaFlags, statusFlags, nextFlags, jobsFlags) {
			if vf, ok := f.(cli.VisibleFlag); ok && !vf.IsVisible() {
				continue
			}
			for _, n := range f.Names() {
				spelled := `(^|[^\w-])` + map[bool]string{true: "-" + n, false: "--" + n}[len(n) == 1]
				if name == "fish" {
					spelled = map[bool]string{true: " -[so] " + n, false: " -l " + n}[len(n) == 1]
				}
				if !regexp.MustCompile(spelled + `([^\w-]|$)`).MatchString(script) {
					t.Errorf("%s script lacks %s", name, spelled)
				}
			}
		}
		for _, words := range [][]string{catchUpPolicies, logFormats, logLevels, signalNames, outputModes, subcommands} {
			if !strings.Contains(script, strings.Join(words, " ")) {
				t.Errorf("%s script does not offer %q", name, words)
			}
		}
		for _, sub := range subcommands {
			if name == "fish" && !strings.Contains(script, "-n '__every_in run' -f -a "+sub+" -d '") {
				t.Errorf("fish script does not offer %s with its description", sub)
			}
		}
		if !strings.Contains(script, "every status --"+namesFlag) {
			t.Errorf("%s script does not complete job names", name)
		}
	}
}

// TestPrintJobNames checks the hidden every status --names: the names of
// the state directory's jobs, as every status lists them, and nothing for
// a directory that does not exist.
func TestPrintJobNames(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"alpha.json", "beta.json", "beta.lock", "alpha.json.active", ".hidden.json", "notes.txt"} {
		if err := os.WriteFile(dir+"/"+f, nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	var out, errs bytes.Buffer
	if _, err := Parse([]string{"status", "--names", "--state-dir", dir}, &out, &errs); err != nil {
		t.Fatal(err)
	}
	if out.String() != "alpha\nbeta\n" || errs.Len() > 0 {
		t.Errorf("every status --names = %q, stderr %q; want alpha and beta", out.String(), errs.String())
	}
	out.Reset()
	if _, err := Parse([]string{"status", "--names", "--state-dir", dir + "/missing"}, &out, &errs); err != nil || out.Len()+errs.Len() > 0 {
		t.Errorf("every status --names of a missing directory: %v, %q, %q", err, out.String(), errs.String())
	}
}

// TestStatusStateDirs: every status reads each --state-dir given (urfave/cli
// alone keeps the last), and EVERY_STATE_DIR as one directory, never split.
func TestStatusStateDirs(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  string
		args []string
		want []string
	}{
		{"none: the default", "", []string{"status"}, nil},
		{"one", "", []string{"status", "--state-dir", "a"}, []string{"a"}},
		{"each time given, in order", "", []string{"status", "--state-dir", "a", "job", "--state-dir=b"}, []string{"a", "b"}},
		{"before the subcommand too", "", []string{"--state-dir", "a", "status", "--state-dir", "b"}, []string{"a", "b"}},
		{"the variable is one directory", "x,y z", []string{"status"}, []string{"x,y z"}},
		{"a flag wins over the variable", "x", []string{"status", "--state-dir", "a", "--state-dir", "b"}, []string{"a", "b"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("EVERY_STATE_DIR", tc.env)
			var out, errs bytes.Buffer
			req, err := Parse(tc.args, &out, &errs)
			if err != nil || req.Status == nil {
				t.Fatalf("Parse(%q) = %v, %v", tc.args, req.Status, err)
			}
			if !slices.Equal(req.Status.StateDirs, tc.want) {
				t.Errorf("Parse(%q).StateDirs = %q, want %q", tc.args, req.Status.StateDirs, tc.want)
			}
		})
	}
}

func TestWrapWords(t *testing.T) {
	tests := []struct {
		text  string
		width int
		want  []string
	}{
		{"a bb ccc", 4, []string{"a bb", "ccc"}},
		{"a bb ccc", 8, []string{"a bb ccc"}},
		{"averylongword b", 4, []string{"averylongword", "b"}},
		{"", 4, []string{""}},
	}
	for _, tt := range tests {
		if got := wrapWords(tt.text, tt.width); !slices.Equal(got, tt.want) {
			t.Errorf("wrapWords(%q, %d) = %q, want %q", tt.text, tt.width, got, tt.want)
		}
	}
}

// The options' names are worked out once (stringOpt, boolOpt): they must be
// the ones urfave/cli works out of the flag itself, and plain must give the
// flag itself back, which its help's default texts look for.
func TestOptionNamesWorkedOutOnce(t *testing.T) {
	for _, flags := range [][]cli.Flag{runFlags, statusFlags, nextFlags} {
		for _, f := range flags {
			p := plain(f)
			if !slices.Equal(f.Names(), p.Names()) {
				t.Errorf("%T names %v, the flag's own %v", f, f.Names(), p.Names())
			}
			switch p.(type) {
			case *cli.StringFlag, *cli.BoolFlag:
			default:
				t.Errorf("plain(%T) = %T, not urfave/cli's flag", f, p)
			}
		}
	}
}

// BenchmarkParse is the parse of a one-shot's command line (go test -bench
// Parse -benchmem .): 0.63 ms and 5043 allocations before the options'
// names were worked out once, 0.16 ms and 1324 after.
func BenchmarkParse(b *testing.B) {
	args := []string{"1m", "--max-runs", "1", "-q", "--state-dir", "/tmp/x", "--name", "j", "--", "/usr/bin/true"}
	for b.Loop() {
		if _, err := Parse(args, io.Discard, io.Discard); err != nil {
			b.Fatal(err)
		}
	}
}
