package release

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"debug/buildinfo"
	"debug/elf"
	"debug/macho"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/everycli/every/internal/cli"
	"github.com/everycli/every/internal/scripttest"
	"github.com/everycli/every/internal/testutil"
	"github.com/everycli/every/internal/ui"
)

// This file checks what release/build makes (when CI points
// EVERY_RELEASE_DIR at a dry run's output), the systemd unit and the
// Dockerfile.

// releaseTargets are the six GOOS/GOARCH pairs every is released for.
var releaseTargets = []string{"linux/amd64", "linux/arm64", "darwin/amd64", "darwin/arm64", "freebsd/amd64", "freebsd/arm64"}

// releaseDir is the output of release/build to check, or a skip.
func releaseDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("EVERY_RELEASE_DIR")
	if dir == "" {
		t.Skip("EVERY_RELEASE_DIR not set: CI sets it to a release/build --dry-run output")
	}
	return dir
}

// gitOut runs git in the repository and returns its trimmed output.
func gitOut(t *testing.T, args ...string) string {
	t.Helper()
	out, err := exec.Command("git", args...).Output()
	if err != nil {
		t.Fatalf("git %s: %v", strings.Join(args, " "), err)
	}
	return strings.TrimSpace(string(out))
}

// readSums parses SHA256SUMS into file name -> hex digest.
func readSums(t *testing.T, path string) map[string]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sums := map[string]string{}
	var names []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		sum, name, ok := strings.Cut(sc.Text(), "  ")
		if !ok || len(sum) != 64 {
			t.Fatalf("SHA256SUMS: bad line %q", sc.Text())
		}
		sums[name] = sum
		names = append(names, name)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if !slices.IsSorted(names) {
		t.Errorf("SHA256SUMS is not sorted by name: %q", names)
	}
	return sums
}

func fileSHA256(t *testing.T, path string) string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(h.Sum(nil))
}

func TestReleaseArchives(t *testing.T) {
	dir := releaseDir(t)
	version := gitOut(t, "describe", "--tags", "--always", "--dirty")
	epoch, err := strconv.ParseInt(gitOut(t, "log", "-1", "--format=%ct"), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	head := gitOut(t, "rev-parse", "HEAD")

	sums := readSums(t, filepath.Join(dir, "SHA256SUMS"))
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Name() == "SHA256SUMS" {
			continue
		}
		want, ok := sums[e.Name()]
		if !ok {
			t.Errorf("%s is not in SHA256SUMS", e.Name())
		} else if got := fileSHA256(t, filepath.Join(dir, e.Name())); got != want {
			t.Errorf("%s: sha256 %s, SHA256SUMS says %s", e.Name(), got, want)
		}
	}
	if len(sums) != len(entries)-1 {
		t.Errorf("SHA256SUMS lists %d files, the directory has %d besides it", len(sums), len(entries)-1)
	}

	t.Run("deb", func(t *testing.T) {
		debs, _ := filepath.Glob(filepath.Join(dir, "*.deb"))
		if len(debs) == 0 {
			t.Skip("no .deb in the release (nfpm could not be fetched)")
		}
		for _, deb := range debs {
			unit := debFile(t, deb, "./usr/lib/systemd/system/every@.service")
			if !regexp.MustCompile(`(?m)^ExecStart=/usr/bin/every `).Match(unit) || !bytes.Contains(unit, []byte("\nStateDirectory=every/%i\n")) {
				t.Errorf("%s: the unit does not run /usr/bin/every with a state directory per instance:\n%s", deb, unit)
			}
			if len(debFile(t, deb, "./usr/bin/every")) == 0 {
				t.Errorf("%s: no /usr/bin/every", deb)
			}
		}
	})

	for _, target := range releaseTargets {
		goos, goarch, _ := strings.Cut(target, "/")
		name := fmt.Sprintf("every_%s_%s_%s", version, goos, goarch)
		t.Run(target, func(t *testing.T) {
			bin := checkArchive(t, filepath.Join(dir, name+".tar.gz"), name, time.Unix(epoch, 0))
			checkBinary(t, bin, goos, goarch, head)
		})
	}
}

// checkArchive checks one archive's reproducibility settings and contents,
// and returns the path of its binary, extracted.
func checkArchive(t *testing.T, path, name string, mtime time.Time) string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("missing archive: %v", err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	if zr.Name != "" || !zr.ModTime.IsZero() {
		t.Errorf("gzip header has name %q, time %v: want none (gzip -n)", zr.Name, zr.ModTime)
	}
	tr := tar.NewReader(zr)
	var names []string
	bin := filepath.Join(t.TempDir(), "every")
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, h.Name)
		if h.Name != name+"/" && !strings.HasPrefix(h.Name, name+"/") {
			t.Errorf("%s: not under %s/", h.Name, name)
		}
		if h.Uid != 0 || h.Gid != 0 || h.Uname != "" || h.Gname != "" {
			t.Errorf("%s: owner %d(%s):%d(%s), want 0:0 with no names", h.Name, h.Uid, h.Uname, h.Gid, h.Gname)
		}
		if !h.ModTime.Equal(mtime) {
			t.Errorf("%s: mtime %v, want the commit's time %v", h.Name, h.ModTime, mtime)
		}
		wantMode := int64(0o644)
		if h.Typeflag == tar.TypeDir || h.Name == name+"/every" || h.Name == name+"/install.sh" {
			wantMode = 0o755
		}
		if h.Mode&0o7777 != wantMode {
			t.Errorf("%s: mode %o, want %o", h.Name, h.Mode&0o7777, wantMode)
		}
		if h.Name == name+"/every" {
			out, err := os.OpenFile(bin, os.O_CREATE|os.O_WRONLY, 0o755)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := io.Copy(out, tr); err != nil {
				t.Fatal(err)
			}
			if err := out.Close(); err != nil {
				t.Fatal(err)
			}
		}
	}
	if !slices.IsSorted(names) {
		t.Errorf("entries not in sorted order: %q", names)
	}
	for _, want := range []string{name + "/every", name + "/README.md", name + "/install.sh", name + "/dist/systemd/every@.service"} {
		if !slices.Contains(names, want) {
			t.Errorf("archive lacks %s: %q", want, names)
		}
	}
	// Generated in the repository by another step; packed when present.
	for _, extra := range []string{"LICENSE", "docs/every.1", "docs/REFERENCE.md", "completions/every.bash", "completions/_every", "completions/every.fish"} {
		if _, err := os.Stat(extra); err == nil && !slices.Contains(names, name+"/"+extra) {
			t.Errorf("the tree has %s but the archive lacks it", extra)
		}
	}
	return bin
}

// checkBinary checks a release binary's build: target, static, stripped,
// -trimpath, no build id, the commit's VCS stamp.
func checkBinary(t *testing.T, bin, goos, goarch, head string) {
	t.Helper()
	bi, err := buildinfo.ReadFile(bin)
	if err != nil {
		t.Fatalf("no Go build info in %s: %v", bin, err)
	}
	settings := map[string]string{}
	for _, s := range bi.Settings {
		settings[s.Key] = s.Value
	}
	for k, want := range map[string]string{"GOOS": goos, "GOARCH": goarch, "CGO_ENABLED": "0", "-trimpath": "true"} {
		if settings[k] != want {
			t.Errorf("build setting %s = %q, want %q", k, settings[k], want)
		}
	}
	// CI builds from a clone, where Go stamps the commit; a git worktree
	// (which Go's stamping does not follow) may have none.
	if rev, ok := settings["vcs.revision"]; ok || os.Getenv("CI") != "" {
		if rev != head {
			t.Errorf("vcs.revision %q, want HEAD %s", rev, head)
		}
	}
	if out, err := exec.Command("go", "tool", "buildid", bin).Output(); err != nil || strings.TrimSpace(string(out)) != "" {
		t.Errorf("go tool buildid = %q, %v: want an empty build id", out, err)
	}
	switch goos {
	case "linux", "freebsd":
		f, err := elf.Open(bin)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		for _, p := range f.Progs {
			if p.Type == elf.PT_INTERP {
				t.Errorf("has a program interpreter: dynamically linked, want static")
			}
		}
		if f.Section(".symtab") != nil {
			t.Errorf("has a .symtab: not stripped")
		}
	case "darwin":
		f, err := macho.Open(bin)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		// Stripped, a Mach-O binary keeps only its undefined symbols: the
		// libSystem functions it imports (no section).
		defined := 0
		if f.Symtab != nil {
			for _, s := range f.Symtab.Syms {
				if s.Sect != 0 {
					defined++
				}
			}
		}
		if defined > 0 {
			t.Errorf("has %d defined symbols: not stripped", defined)
		}
	}
}

// TestReleaseSmoke runs the release's linux/amd64 binary: its version, a
// three-run job, and every status listing it.
func TestReleaseSmoke(t *testing.T) {
	dir := releaseDir(t)
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		t.Skip("the smoke test runs the linux/amd64 binary")
	}
	version := gitOut(t, "describe", "--tags", "--always", "--dirty")
	name := fmt.Sprintf("every_%s_linux_amd64", version)
	epoch, err := strconv.ParseInt(gitOut(t, "log", "-1", "--format=%ct"), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	bin := checkArchive(t, filepath.Join(dir, name+".tar.gz"), name, time.Unix(epoch, 0))
	bi, err := buildinfo.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) (string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), testutil.WaitBound)
		defer cancel()
		out, err := exec.CommandContext(ctx, bin, args...).CombinedOutput()
		return string(out), err
	}

	// --version reports the module version from the build info: a pseudo-
	// version or tag in CI's clone, never "devel" there.
	out, err := run("--version")
	modVersion := strings.Trim(bi.Main.Version, "()")
	if err != nil || !strings.Contains(out, modVersion) {
		t.Errorf("every --version = %q, %v: want a line with the module version %q", out, err, modVersion)
	}
	if os.Getenv("CI") != "" && modVersion == "devel" {
		t.Errorf("CI's release binary says %q: the VCS stamp is missing", out)
	}

	states := t.TempDir()
	if out, err := run("100ms", "--max-runs", "3", "--state-dir", states, "--name", "smoke", "--", "true"); err != nil {
		t.Fatalf("a 3-run job: %v\n%s", err, out)
	}
	raw, err := os.ReadFile(filepath.Join(states, "smoke.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rec struct {
		Runs       int    `json:"runs"`
		LastResult string `json:"last_result"`
	}
	if err := json.Unmarshal(raw, &rec); err != nil || rec.Runs != 3 || rec.LastResult != "success" {
		t.Errorf("state after 3 runs: %+v, %v; want 3 runs, success\n%s", rec, err, raw)
	}
	out, err = run("status", "--state-dir", states)
	if err != nil || !regexp.MustCompile(`(?m)^smoke\s+100ms\s.*success \(0\)`).MatchString(out) {
		t.Errorf("every status = %v\n%s\nwant a success line for smoke", err, out)
	}

	// The unpacked archive installs itself, as a clone does.
	unpacked := t.TempDir()
	if out, err := exec.Command("tar", "-xzf", filepath.Join(dir, name+".tar.gz"), "-C", unpacked).CombinedOutput(); err != nil {
		t.Fatalf("tar -x: %v\n%s", err, out)
	}
	prefix := filepath.Join(t.TempDir(), "usr", "local")
	cmd := exec.Command(filepath.Join(unpacked, name, "install.sh"), "--prefix", prefix)
	cmd.Env = append(os.Environ(), "TMPDIR="+t.TempDir())
	if out, err := cmd.CombinedOutput(); err != nil || strings.Contains(string(out), "building") {
		t.Errorf("install.sh of the archive: %v\n%s\nwant the archive's binary installed, nothing built", err, out)
	}
	if installed, err := os.ReadFile(filepath.Join(prefix, "bin/every")); err != nil || fileSHA256(t, bin) != fmt.Sprintf("%x", sha256.Sum256(installed)) {
		t.Errorf("install.sh of the archive did not install the archive's binary: %v", err)
	}
	unit := unitSettings(t, filepath.Join(prefix, "lib/systemd/system/every@.service"))
	if got := strings.Join(unit["Service.ExecStart"], ""); !strings.HasPrefix(got, filepath.Join(prefix, "bin/every")+" ") {
		t.Errorf("the archive's install: ExecStart=%s, want the installed binary", got)
	}
}

// debFile returns a file of a .deb's data.tar.gz (an ar archive: a global
// header, then members of a 60-byte header and their data, padded to even
// lengths), or fails.
func debFile(t *testing.T, deb, name string) []byte {
	t.Helper()
	raw, err := os.ReadFile(deb)
	if err != nil {
		t.Fatal(err)
	}
	rest, ok := bytes.CutPrefix(raw, []byte("!<arch>\n"))
	if !ok {
		t.Fatalf("%s: not an ar archive", deb)
	}
	for len(rest) >= 60 {
		member := strings.TrimRight(strings.TrimSpace(string(rest[:16])), "/")
		size, err := strconv.Atoi(strings.TrimSpace(string(rest[48:58])))
		if err != nil || 60+size > len(rest) {
			t.Fatalf("%s: bad ar member header %q", deb, rest[:60])
		}
		data := rest[60 : 60+size]
		rest = rest[60+size+size%2:]
		if member != "data.tar.gz" {
			continue
		}
		zr, err := gzip.NewReader(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		tr := tar.NewReader(zr)
		for {
			h, err := tr.Next()
			if err != nil {
				t.Fatalf("%s: no %s in data.tar.gz: %v", deb, name, err)
			}
			if h.Name == name {
				b, err := io.ReadAll(tr)
				if err != nil {
					t.Fatal(err)
				}
				return b
			}
		}
	}
	t.Fatalf("%s: no data.tar.gz", deb)
	return nil
}

// unitSettings reads a systemd unit's Key=Value lines, by section.Key.
func unitSettings(t *testing.T, path string) map[string][]string {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	m := map[string][]string{}
	section := ""
	for line := range strings.SplitSeq(string(raw), "\n") {
		line = strings.TrimSpace(line)
		switch {
		case line == "" || line[0] == '#' || line[0] == ';':
		case line[0] == '[':
			section = strings.Trim(line, "[]")
		default:
			k, v, ok := strings.Cut(line, "=")
			if !ok {
				t.Fatalf("%s: bad line %q", path, line)
			}
			m[section+"."+k] = append(m[section+"."+k], v)
		}
	}
	return m
}

func TestSystemdUnit(t *testing.T) {
	const unit = "dist/systemd/every@.service"
	s := unitSettings(t, unit)
	for _, tc := range []struct{ key, want string }{
		{"Service.Type", "exec"},
		{"Service.KillMode", "mixed"}, // SIGTERM to every alone: it runs its own stop sequence
		{"Service.KillSignal", "SIGTERM"},
		{"Service.Restart", "on-failure"},
		// One directory per instance: instances with different User= never
		// share one (systemd would chown it back and forth).
		{"Service.StateDirectory", "every/%i"},
		{"Service.StateDirectoryMode", "0700"},
		{"Service.EnvironmentFile", "/etc/every/%i.conf"},
		// $EVERY_ARGS as a word of its own: split into arguments, quotes
		// respected ("${EVERY_ARGS}" would be one argument).
		// The binary of install.sh's default prefix, which install.sh and
		// release/build replace with the one they install.
		{"Service.ExecStart", "/usr/local/bin/every --name %i --state-dir /var/lib/every/%i $EVERY_ARGS"},
		{"Service.RestartPreventExitStatus", fmt.Sprintf("%d %d 126 127", ui.ExitUsage, ui.ExitCantCreate)},
	} {
		if got := s[tc.key]; len(got) != 1 || got[0] != tc.want {
			t.Errorf("%s = %q, want %q", tc.key, got, tc.want)
		}
	}
	// systemd's SIGKILL to the cgroup must come after every's own: the
	// default --kill-after, plus its stop (a state write of at most 40ms)
	// and margin.
	stop, err := time.ParseDuration(strings.Join(s["Service.TimeoutStopSec"], ""))
	if err != nil {
		t.Fatalf("TimeoutStopSec %q: %v", s["Service.TimeoutStopSec"], err)
	}
	plain, err := cli.Parse([]string{"1s", "--", "true"}, io.Discard, io.Discard)
	if err != nil || plain.Run == nil {
		t.Fatalf("every 1s -- true: %v", err)
	}
	killAfter := plain.Run.Loop.KillAfter // the default
	if stop < killAfter+5*time.Second {
		t.Errorf("TimeoutStopSec %v: want at least --kill-after's default %v plus 5s", stop, killAfter)
	}
	// The example file's arguments parse as every's command line.
	conf, err := os.ReadFile("dist/systemd/every.conf.example")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^EVERY_ARGS="(.*)"$`).FindSubmatch(conf)
	if m == nil {
		t.Fatal("every.conf.example: no EVERY_ARGS=\"...\" line")
	}
	// systemd splits a $VAR word at whitespace with quotes respected and
	// removed, as a shell does (systemd.service(5), "Command lines").
	words, err := scripttest.ShellWords(string(m[1]))
	if err != nil {
		t.Fatalf("EVERY_ARGS in every.conf.example: %v", err)
	}
	args := append([]string{"--name", "backup", "--state-dir", "/var/lib/every/backup"}, words...)
	req, err := cli.Parse(args, io.Discard, io.Discard)
	if err != nil || req.Run == nil {
		t.Errorf("every %q from every.conf.example: %v", args, err)
	}

	verify, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Log("systemd-analyze not installed: unit checked by the table above only")
		return
	}
	// verify wants ExecStart's binary to exist: point it at this test binary.
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(unit)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	text := strings.ReplaceAll(string(raw), "/usr/local/bin/every", self)
	for _, name := range []string{"every@.service", "every@backup.service"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), testutil.WaitBound)
	defer cancel()
	out, err := exec.CommandContext(ctx, verify, "verify", "--man=no", filepath.Join(dir, "every@backup.service")).CombinedOutput()
	if err != nil || len(out) > 0 {
		t.Errorf("systemd-analyze verify: %v\n%s", err, out)
	}
}
