// Command bench measures every against what users run today: a shell loop,
// and cron's flock + timeout per run. It prints markdown tables and writes
// them, with the machine's description, to bench/RESULTS.md.
//
//	go run ./bench            # about 5 minutes
//	go run ./bench -quick     # under a minute
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
}

func main() {
	quick := flag.Bool("quick", false, "a run of under a minute, with fewer periods")
	out := flag.String("out", "bench/RESULTS.md", "write the tables to `FILE` (empty: don't)")
	only := flag.String("only", "", "run only the sections `N,M` (1 timing and 2 its cost, 3 overhead, 4 stop, 5 scale, 6 calendar, 7 operations); default all")
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
	cfg.every = build(dir, ".", "every")
	cfg.stamp = build(dir, "./bench/stamp", "stamp")

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

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "bench: "+format+"\n", args...)
	os.Exit(1)
}
