package cli

import (
	"strconv"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// signalSeeds are --stop-signal and --kill-signal values.
var signalSeeds = []string{
	"", "TERM", "term", "SIGTERM", "sigterm", "SigTerm", "SIG", "SIGSIGTERM", "KILL", "INT", "HUP", "USR1",
	"IOT", "SIGIOT", "POLL", "CLD", "SIGRTMIN", "RTMIN", "RTMIN+1", "SIGRTMAX", "STKFLT", "UNUSED", "SYS",
	"0", "1", "9", "15", "31", "32", "34", "64", "65", "-1", "-15", "+15", "015", "0x0f", "1e1", " 15", "15 ",
	"9223372036854775807", "9223372036854775808", "4294967311", "ſigterm", "ＴＥＲＭ", "TERM\x00", "٣",
}

// FuzzParseSignal checks parseSignal on any string: no panic, and a signal
// it accepts is one a process can be sent (1 to 64).
func FuzzParseSignal(f *testing.F) {
	for _, s := range signalSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		sig, ok := parseSignal(s)
		if ok && (sig < 1 || sig > 64) {
			t.Fatalf("parseSignal(%q) = %d, true; want 1 to 64", s, sig)
		}
		// A name is read as the kernel's signal of that name.
		if name := "SIG" + strings.TrimPrefix(strings.ToUpper(s), "SIG"); unix.SignalNum(name) != 0 &&
			(!ok || sig != unix.SignalNum(name)) {
			t.Fatalf("parseSignal(%q) = %d, %v; want %d (%s)", s, sig, ok, unix.SignalNum(name), name)
		}
	})
}

// TestParseSignalNames reads back every signal's name, with or without
// "SIG", in any case, and every signal's number.
func TestParseSignalNames(t *testing.T) {
	named := 0
	for n := 1; n <= 64; n++ {
		sig := syscall.Signal(n)
		ins := []string{strconv.Itoa(n), "0" + strconv.Itoa(n)}
		if name := unix.SignalName(sig); name != "" {
			named++
			short := strings.TrimPrefix(name, "SIG")
			ins = append(ins, name, strings.ToLower(name), short, strings.ToLower(short))
		}
		for _, in := range ins {
			if got, ok := parseSignal(in); !ok || got != sig {
				t.Errorf("parseSignal(%q) = %d, %v; want %d", in, got, ok, sig)
			}
		}
	}
	if named < 31 {
		t.Errorf("only %d signals have names; want the 31 standard ones", named)
	}
	for _, in := range []string{"", "0", "65", "-1", "SIG", "SIGSIGTERM", "NOSUCH", "SIGRTMIN", "15 "} {
		if got, ok := parseSignal(in); ok {
			t.Errorf("parseSignal(%q) = %d, true; want not a signal", in, got)
		}
	}
}
