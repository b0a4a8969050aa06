package scripttest

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/everycli/every/internal/testutil"
	"github.com/rogpeppe/go-internal/testscript"
)

// This file holds the script commands of the calendar scripts
// (testdata/script/cal_*.txtar): they check slots and start times against the
// real wall clock, and wait on it.

// stampCmd is "stamp FILE": write the wall clock now, RFC 3339 UTC with
// nanoseconds, to FILE: a time for slotcheck and waitclock to compare with.
func stampCmd(ts *testscript.TestScript, neg bool, args []string) {
	noNeg(ts, neg, "stamp")
	if len(args) != 1 {
		ts.Fatalf("usage: stamp FILE")
	}
	writeFile(ts.MkAbs(args[0]), time.Now().UTC().Format(time.RFC3339Nano)+"\n")
}

// logStampCmd is "logstamp REGEXP FILE": write the time of the first line
// of the last command's stderr that matches REGEXP (every's log: time=...,
// to the millisecond) to FILE, as stamp does: when every did something, such
// as decide what to catch up, for slotcheck to compare with.
func logStampCmd(ts *testscript.TestScript, neg bool, args []string) {
	noNeg(ts, neg, "logstamp")
	if len(args) != 2 {
		ts.Fatalf("usage: logstamp REGEXP FILE")
	}
	re, err := regexp.Compile(args[0])
	ts.Check(err)
	for line := range strings.Lines(ts.ReadFile("stderr")) {
		if !re.MatchString(line) {
			continue
		}
		v, ok := strings.CutPrefix(line, "time=")
		if !ok {
			ts.Fatalf("logstamp: line %q has no time= first", line)
		}
		t, err := time.Parse(time.RFC3339Nano, strings.Fields(v)[0])
		if err != nil {
			ts.Fatalf("logstamp: line %q: %v", line, err)
		}
		writeFile(ts.MkAbs(args[1]), t.UTC().Format(time.RFC3339Nano)+"\n")
		return
	}
	ts.Fatalf("logstamp: no line of stderr matches %s", args[0])
}

// fileTime reads the time a file stands for: the first field of its last
// line, RFC 3339 (a stamp file, or the last slot of a slots file).
func fileTime(ts *testscript.TestScript, name string) time.Time {
	lines := strings.Split(strings.TrimSpace(ts.ReadFile(name)), "\n")
	fields := strings.Fields(lines[len(lines)-1])
	if len(fields) == 0 {
		ts.Fatalf("%s: no time in it", name)
	}
	t, err := time.Parse(time.RFC3339Nano, fields[0])
	if err != nil {
		ts.Fatalf("%s: %v", name, err)
	}
	return t
}

// fileTimePlus reads "FILE" or "FILE+D" or "FILE-D": the time of FILE (see
// fileTime) moved by the duration D.
func fileTimePlus(ts *testscript.TestScript, ref string) time.Time {
	name, d := ref, time.Duration(0)
	if i := strings.LastIndexAny(ref, "+-"); i > 0 {
		var err error
		if d, err = time.ParseDuration(ref[i:]); err == nil {
			name = ref[:i]
		} else {
			d = 0
		}
	}
	return fileTime(ts, name).Add(d)
}

// waitClockCmd is "waitclock FILE+D": wait until the wall clock has passed
// the time of FILE (see fileTime) moved by D, for at most the wait bound. It
// waits on the clock itself, not for a guessed time.
func waitClockCmd(ts *testscript.TestScript, neg bool, args []string) {
	noNeg(ts, neg, "waitclock")
	if len(args) != 1 {
		ts.Fatalf("usage: waitclock FILE[+D]")
	}
	at := fileTimePlus(ts, args[0])
	if time.Until(at) > testutil.WaitBound {
		ts.Fatalf("waitclock %s: %v is more than %v ahead", args[0], at, testutil.WaitBound)
	}
	if !testutil.Eventually(func() bool { return !time.Now().Before(at) }) {
		ts.Fatalf("the clock did not pass %v within %v", at, testutil.WaitBound)
	}
}

// slotLine is one line a job wrote: "EVERY_SLOT START", START in Unix
// seconds with nanoseconds (date +%s.%N), optional.
type slotLine struct {
	text  string
	slot  time.Time
	start time.Time // zero: not given
}

func readSlotLines(ts *testscript.TestScript, name string) []slotLine {
	var lines []slotLine
	for _, text := range strings.Split(strings.TrimRight(ts.ReadFile(name), "\n"), "\n") {
		if text == "" {
			continue
		}
		f := strings.Fields(text)
		slot, err := time.Parse(time.RFC3339Nano, f[0])
		if err != nil {
			ts.Fatalf("%s: line %q: %v", name, text, err)
		}
		l := slotLine{text: text, slot: slot}
		if len(f) > 1 {
			sec, frac, _ := strings.Cut(f[1], ".")
			s, err1 := strconv.ParseInt(sec, 10, 64)
			ns, err2 := strconv.ParseInt((frac + "000000000")[:9], 10, 64)
			if err1 != nil || err2 != nil {
				ts.Fatalf("%s: line %q: start %q is not seconds.nanoseconds", name, text, f[1])
			}
			l.start = time.Unix(s, ns)
		}
		lines = append(lines, l)
	}
	return lines
}

// slotCheckCmd is "slotcheck FILE CHECK...": FILE has one line a run,
// "EVERY_SLOT START" (START from date +%s.%N), and each CHECK must hold:
//
//	count=N          exactly N lines
//	each=REGEXP      every line matches REGEXP
//	step=D           every slot is a whole multiple of D (Unix time) and
//	                 each slot is D after the one before
//	late=D           every start is at or after its slot, and less than D after
//	prompt=D         some start is less than D after its slot: the runs are
//	                 woken at their slots, whatever the load holds up
//	after=REF        every slot is after REF (FILE, FILE+D or FILE-D: see
//	                 fileTimePlus)
//	before=REF       every slot is before REF
//	startbefore=REF  every start is before REF
//
// A CHECK written "K:CHECK" applies to line K alone (from 1). Every failure
// names the line.
func slotCheckCmd(ts *testscript.TestScript, neg bool, args []string) {
	noNeg(ts, neg, "slotcheck")
	if len(args) < 2 {
		ts.Fatalf("usage: slotcheck FILE CHECK...")
	}
	lines := readSlotLines(ts, args[0])
	for _, check := range args[1:] {
		sel := lines
		first := 1
		if k, rest, ok := strings.Cut(check, ":"); ok {
			if n, err := strconv.Atoi(k); err == nil {
				if n < 1 || n > len(lines) {
					ts.Fatalf("%s: no line %d (%d lines)", args[0], n, len(lines))
				}
				sel, first, check = lines[n-1:n], n, rest
			}
		}
		key, val, ok := strings.Cut(check, "=")
		if !ok {
			ts.Fatalf("slotcheck: bad check %q", check)
		}
		if err := slotCheck(ts, key, val, sel, lines, first); err != nil {
			ts.Fatalf("%s: %s: %v", args[0], check, err)
		}
	}
}

// slotCheck runs one check of slotcheck on lines sel, the first of which is
// line first of all.
func slotCheck(ts *testscript.TestScript, key, val string, sel, all []slotLine, first int) error {
	needStart := func(l slotLine, i int) error {
		if l.start.IsZero() {
			return fmt.Errorf("line %d %q has no start time", i, l.text)
		}
		return nil
	}
	switch key {
	case "count":
		n, err := strconv.Atoi(val)
		ts.Check(err)
		if len(sel) != n {
			return fmt.Errorf("%d lines, want %d", len(sel), n)
		}
		return nil
	case "each":
		re, err := regexp.Compile(val)
		ts.Check(err)
		for i, l := range sel {
			if !re.MatchString(l.text) {
				return fmt.Errorf("line %d %q does not match", first+i, l.text)
			}
		}
		return nil
	}
	if key == "step" {
		d, err := time.ParseDuration(val)
		ts.Check(err)
		for i, l := range sel {
			if l.slot.UnixNano()%int64(d) != 0 {
				return fmt.Errorf("line %d: slot %s is not a whole multiple of %v", first+i, l.slot.Format(time.RFC3339Nano), d)
			}
			if k := first + i - 1; k > 0 {
				if gap := l.slot.Sub(all[k-1].slot); gap != d {
					return fmt.Errorf("line %d: slot %s is %v after the one before, want %v", first+i, l.slot.Format(time.RFC3339Nano), gap, d)
				}
			}
		}
		return nil
	}
	if key == "late" {
		d, err := time.ParseDuration(val)
		ts.Check(err)
		for i, l := range sel {
			if err := needStart(l, first+i); err != nil {
				return err
			}
			if late := l.start.Sub(l.slot); late < 0 || late >= d {
				return fmt.Errorf("line %d %q: started %v after its slot, want in [0, %v)", first+i, l.text, late, d)
			}
		}
		return nil
	}
	if key == "prompt" {
		d, err := time.ParseDuration(val)
		ts.Check(err)
		least := time.Duration(-1)
		for i, l := range sel {
			if err := needStart(l, first+i); err != nil {
				return err
			}
			if late := l.start.Sub(l.slot); least < 0 || late < least {
				least = late
			}
		}
		if least < 0 || least >= d {
			return fmt.Errorf("the least late of %d starts came %v after its slot, want less than %v", len(sel), least, d)
		}
		return nil
	}
	ref := fileTimePlus(ts, val)
	for i, l := range sel {
		var bad bool
		switch key {
		case "after":
			bad = !l.slot.After(ref)
		case "before":
			bad = !l.slot.Before(ref)
		case "startbefore":
			if err := needStart(l, first+i); err != nil {
				return err
			}
			bad = !l.start.Before(ref)
		default:
			ts.Fatalf("slotcheck: unknown check %q", key)
		}
		if bad {
			return fmt.Errorf("line %d %q is not %s %s", first+i, l.text, key, ref.Format(time.RFC3339Nano))
		}
	}
	return nil
}
