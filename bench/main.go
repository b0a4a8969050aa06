// Command bench measures every against what users run today: a shell loop,
// cron's flock + timeout per run, and two references built from bench/: a
// minimal Go exec loop (bench/minloop) and a static Go hello-world
// (bench/hello). It prints markdown tables and writes them, with the
// machine's description, to bench/RESULTS.md. The every measured is built
// from the tree at run time, as are the references (static, CGO_ENABLED=0).
//
//	go run ./bench                  # about 16 minutes
//	go run ./bench -quick           # a few minutes, rougher figures
//	go run ./bench -only 8,10       # sections 8 and 10 only
//	go run ./bench -peers           # add supercronic (go install, pinned) to section 8
//	go run ./bench -runitor PATH    # add runitor, from a binary given by path, to section 8
//
// -peers installs supercronic at a pinned version (supercronicVersion) with
// `go install` into a temporary GOBIN through the module proxy; nothing is
// vendored or kept. runitor's module path is not served by the proxy, so it
// is a row only when a binary is given.
//
// Other schedulers can be added as rows of the timing table with -extra,
// a command template: {interval} is the interval in seconds, {job} the job.
//
//	go run ./bench -extra 'supercronic=sh -c "..."'
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"
)

type config struct {
	quick bool
	dir   string // scratch: binaries, state, stamps
	every string // the every binary
	stamp string // the job binary
	extra map[string]string

	minloop     string // bench/minloop: the minimal Go exec loop
	hello       string // bench/hello: a static Go hello-world
	supercronic string // with -peers
	runitor     string // with -runitor
}

func main() {
	quick := flag.Bool("quick", false, "a run of under a minute, with fewer periods")
	out := flag.String("out", "bench/RESULTS.md", "write the tables to `FILE` (empty: don't)")
	only := flag.String("only", "", "run only the sections `N,M` (1 timing and 2 its cost, 3 overhead, 4 stop, 5 scale, 6 calendar, "+
		"7 operations, 8 cost per run beside peers, 9 RSS steady, 10 start-up, 11 fleet); default all")
	peers := flag.Bool("peers", false, "add supercronic "+supercronicVersion+" to section 8, installed with go install into a temporary GOBIN")
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
	}

	var report strings.Builder
	fmt.Fprintf(&report, "# every benchmark\n\n%s\n", machine(cfg.quick))
	section := func(title string, f func(*config) string) {
		if n, _, _ := strings.Cut(title, "."); *only != "" && !slices.Contains(strings.Split(*only, ","), n) {
			return
		}
		start := time.Now()
		fmt.Fprintf(os.Stderr, "bench: %s...\n", title)
		body := f(cfg)
		fmt.Fprintf(&report, "## %s\n\n%s\n", title, body)
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

	fmt.Print(report.String())
	if *out != "" {
		check(os.WriteFile(*out, []byte(report.String()), 0o644))
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
