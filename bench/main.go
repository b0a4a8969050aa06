// Command bench measures every against what users run today: a shell loop,
// cron's flock + timeout per run, and two references built from bench/: a
// minimal Go exec loop (bench/minloop) and a static Go hello-world
// (bench/hello). It prints markdown tables and writes them, with the
// machine's description, to bench/RESULTS.md. The every measured is built
// from the tree at run time, as are the references (static, CGO_ENABLED=0).
//
//	go run ./bench                  # about 40 minutes: sections 1-12
//	go run ./bench -quick           # about 12 minutes, rougher figures
//	go run ./bench -only 8,10       # sections 8 and 10 only
//	go run ./bench -only 12         # every jobs beside supercronic: about 25 minutes (-quick: 8)
//	go run ./bench -peers           # install supercronic (go install, pinned) for sections 8 and 12
//	go run ./bench -runitor PATH    # add runitor, from a binary given by path, to section 8
//
// With -only, the sections run replace those of the same number in the
// file -out names, and the others are kept.
//
// supercronic is a row of sections 8 and 12 when it is found: the binary
// $SUPERCRONIC names, else supercronic on PATH, else, with -peers, one
// installed at a pinned version (supercronicVersion) with `go install`
// into a temporary GOBIN through the module proxy; nothing is vendored or
// kept. Without it, its rows are left out with a note. runitor's module
// path is not served by the proxy, so it is a row only when a binary is
// given.
//
// Section 12 runs `every jobs FILE` with 100 jobs at 1 s slots (RSS and
// CPU per run of the scheduler process, lateness of the starts beside a
// standalone every), with 1, 10 and 300 (growth), and with 1,000 at
// one-minute slots (time to ready, idle CPU, the slot that starts them
// all), each beside supercronic running the same crontab lines.
//
// Other schedulers can be added as rows of the timing table with -extra,
// a command template: {interval} is the interval in seconds, {job} the job.
//
//	go run ./bench -extra 'supercronic=sh -c "..."'
package main

import (
	"debug/buildinfo"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"
)

type config struct {
	quick bool
	dir   string // scratch: binaries, state, stamps
	every string // the every binary
	stamp string // the job binary
	extra map[string]string

	minloop         string // bench/minloop: the minimal Go exec loop
	hello           string // bench/hello: a static Go hello-world
	supercronic     string // found or installed; empty: none
	supercronicName string // "supercronic VERSION"
	runitor         string // with -runitor
}

func main() {
	quick := flag.Bool("quick", false, "a run of under a minute, with fewer periods")
	out := flag.String("out", "bench/RESULTS.md", "write the tables to `FILE` (empty: don't)")
	only := flag.String("only", "", "run only the sections `N,M` (1 timing and 2 its cost, 3 overhead, 4 stop, 5 scale, 6 calendar, "+
		"7 operations, 8 cost per run beside peers, 9 RSS steady, 10 start-up, 11 fleet, 12 every jobs beside supercronic); default all")
	peers := flag.Bool("peers", false, "install supercronic "+supercronicVersion+" with go install into a temporary GOBIN, for sections 8 and 12 "+
		"(else $SUPERCRONIC or PATH)")
	runitor := flag.String("runitor", "", "add runitor to section 8, the binary at `PATH`")
	var extras multiFlag
	flag.Var(&extras, "extra", "another scheduler for the timing table: `NAME=TEMPLATE` ({interval} in seconds, {job}); repeatable")
	flag.Parse()

	dir, err := os.MkdirTemp("", "every-bench-")
	check(err)
	defer os.RemoveAll(dir)
	cfg := &config{quick: *quick, dir: dir, extra: map[string]string{}}
	for _, e := range extras {
		name, tmpl, ok := strings.Cut(e, "=")
		if !ok {
			fail("bad -extra %q: want NAME=TEMPLATE", e)
		}
		cfg.extra[name] = tmpl
	}
	atFail = append(atFail, func() { os.RemoveAll(dir) })
	if *runitor != "" {
		p, err := exec.LookPath(*runitor)
		if err == nil {
			p, err = filepath.Abs(p)
		}
		if err != nil {
			fail("-runitor %s: want the path of a runitor binary: %v", *runitor, err)
		}
		cfg.runitor = p
	}
	cfg.every = build(dir, ".", "every")
	cfg.stamp = build(dir, "./bench/stamp", "stamp")
	cfg.minloop = build(dir, "./bench/minloop", "minloop")
	cfg.hello = build(dir, "./bench/hello", "hello")
	if *peers {
		cfg.supercronic = installSupercronic(dir)
	} else {
		cfg.supercronic = findSupercronic()
	}
	if cfg.supercronic != "" {
		cfg.supercronicName = "supercronic " + moduleVersion(cfg.supercronic)
		fmt.Fprintf(os.Stderr, "bench: %s: %s\n", cfg.supercronicName, cfg.supercronic)
	}

	var report strings.Builder
	fmt.Fprintf(&report, "# every benchmark\n\n%s\n", machine(cfg.quick))
	sections := map[string]string{} // by number, for -only's merge
	section := func(title string, f func(*config) string) {
		n, _, _ := strings.Cut(title, ".")
		if *only != "" && !slices.Contains(strings.Split(*only, ","), n) {
			return
		}
		start := time.Now()
		fmt.Fprintf(os.Stderr, "bench: %s...\n", title)
		body := f(cfg)
		text := fmt.Sprintf("## %s\n\n%s\n", title, body)
		report.WriteString(text)
		if *only != "" {
			text = fmt.Sprintf("## %s\n\n%s\n%s\n", title, sectionMachine(cfg.quick, *only), body)
		}
		sections[n] = text
		fmt.Fprintf(os.Stderr, "bench: %s done in %s\n", title, time.Since(start).Round(time.Second))
	}
	section("1. Timing: lateness of starts against the ideal grid", timing)
	section("2. Cost of the every process itself", nil2(costNote))
	section("3. Per-run overhead", overhead)
	section("4. Stop", stop)
	section("5. Scale", scale)
	section("6. Calendar schedules beside the grid", calendarTiming)
	section("7. Operations features beside a plain run", opsTiming)
	section("8. Cost per run, side by side", costSideBySide)
	section("9. RSS steady", rssSteady)
	section("10. Start-up", startup)
	section("11. Fleet: Redis round trips and added latency", fleet)
	section("12. Many jobs in one process: every jobs beside supercronic", manyJobs)

	fmt.Print(report.String())
	if *out != "" {
		text := report.String()
		if old, err := os.ReadFile(*out); err == nil && *only != "" {
			text = mergeSections(string(old), sections)
		}
		check(os.WriteFile(*out, []byte(text), 0o644))
		fmt.Fprintf(os.Stderr, "bench: wrote %s\n", *out)
	}
}

// nil2 turns a note that the timing section already measured into a section.
func nil2(f func() string) func(*config) string { return func(*config) string { return f() } }

type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(s string) error { *m = append(*m, s); return nil }

// build builds as the README's install line does: static (no cgo, so no
// dynamic loader at start) and without urfave/cli's man page generator.
func build(dir, pkg, name string) string {
	bin := filepath.Join(dir, name)
	cmd := exec.Command("go", "build", "-tags", "urfave_cli_no_docs", "-o", bin, pkg)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	cmd.Stderr = os.Stderr
	check(cmd.Run())
	return bin
}

// supercronicVersion is the version -peers installs: pinned, so that runs
// compare alike.
const supercronicVersion = "v0.2.48"

// installSupercronic installs supercronic into a GOBIN under dir (removed
// with it) through the module proxy, and returns the binary's path.
func installSupercronic(dir string) string {
	gobin := filepath.Join(dir, "gobin")
	check(os.MkdirAll(gobin, 0o700))
	cmd := exec.Command("go", "install", "github.com/aptible/supercronic@"+supercronicVersion)
	cmd.Dir = dir // outside this module: go install pkg@version ignores it anyway
	cmd.Env = append(os.Environ(), "GOBIN="+gobin, "CGO_ENABLED=0", "GOFLAGS=")
	cmd.Stderr = os.Stderr
	fmt.Fprintf(os.Stderr, "bench: go install github.com/aptible/supercronic@%s\n", supercronicVersion)
	if err := cmd.Run(); err != nil {
		fail("install supercronic %s: %v", supercronicVersion, err)
	}
	return filepath.Join(gobin, "supercronic")
}

// findSupercronic is the supercronic binary $SUPERCRONIC names, else the
// one on PATH, else none.
func findSupercronic() string {
	name := os.Getenv("SUPERCRONIC")
	if name == "" {
		name = "supercronic"
	}
	p, err := exec.LookPath(name)
	if err == nil {
		p, err = filepath.Abs(p)
	}
	if err != nil {
		if os.Getenv("SUPERCRONIC") != "" {
			fail("SUPERCRONIC=%s: want the path of a supercronic binary: %v", name, err)
		}
		return ""
	}
	return p
}

// moduleVersion is the version of the main module a Go binary was built
// from ("(devel)" for a build from a checkout), or "(version unknown)".
func moduleVersion(bin string) string {
	bi, err := buildinfo.ReadFile(bin)
	if err != nil || bi.Main.Version == "" {
		return "(version unknown)"
	}
	return bi.Main.Version
}

// mergeSections puts the sections run (their text by number) in place of
// those of the same number in old, a RESULTS.md, keeping the others and
// the header; a new number goes after the last below it.
func mergeSections(old string, run map[string]string) string {
	head, rest, _ := strings.Cut(old, "\n## ")
	var parts []string // "N. Title..." without the leading "## "
	if rest != "" {
		parts = strings.Split("## "+rest, "\n## ")
		parts[0] = strings.TrimPrefix(parts[0], "## ")
	}
	num := func(s string) int {
		n, _ := strconv.Atoi(strings.SplitN(s, ".", 2)[0])
		return n
	}
	for n, text := range run {
		text = strings.TrimPrefix(text, "## ")
		i := slices.IndexFunc(parts, func(p string) bool { return strconv.Itoa(num(p)) == n })
		if i >= 0 {
			parts[i] = text
			continue
		}
		k, _ := strconv.Atoi(n)
		j := 0
		for j < len(parts) && num(parts[j]) < k {
			j++
		}
		parts = slices.Insert(parts, j, text)
	}
	var b strings.Builder
	b.WriteString(head + "\n")
	for _, p := range parts {
		b.WriteString("## " + strings.TrimRight(p, "\n") + "\n\n")
	}
	return strings.TrimRight(b.String(), "\n") + "\n"
}

// sectionMachine is the line a section run alone (-only) carries.
func sectionMachine(quick bool, only string) string {
	line := strings.TrimPrefix(strings.SplitN(machine(quick), "\n", 2)[0], "Run on ")
	return fmt.Sprintf("*This section was run on its own (`-only %s`) on %s; the others are of the run named at the top.*\n", only,
		strings.TrimSuffix(line, "."))
}

func machine(quick bool) string {
	cpu := "unknown"
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(line, "model name") {
				_, cpu, _ = strings.Cut(line, ": ")
				break
			}
		}
	}
	kernel, _ := exec.Command("uname", "-sr").Output()
	mode := "full"
	if quick {
		mode = "quick (-quick: fewer periods; figures are rougher)"
	}
	return fmt.Sprintf("Run on %s: %s, %d CPUs (%s), %s, %s; mode %s.\n\n"+
		"The machine is shared and noisy: read medians and ratios, not single absolute times.\n",
		time.Now().UTC().Format("2006-01-02"), strings.TrimSpace(string(kernel)), runtime.NumCPU(), cpu,
		runtime.Version(), runtime.GOARCH, mode)
}

func check(err error) {
	if err != nil {
		fail("%v", err)
	}
}

// atFail are run, last first, before fail exits: what the harness started
// outside its scratch directory (a redis-server) must not outlive it.
var atFail []func()

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "bench: "+format+"\n", args...)
	for i := len(atFail) - 1; i >= 0; i-- {
		atFail[i]()
	}
	os.Exit(1)
}
