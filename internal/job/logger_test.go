package job

import (
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// devIno is a file's JOURNAL_STREAM value.
func devIno(t *testing.T, f *os.File) string {
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%d:%d", st.Dev, st.Ino)
}

func TestIsJournal(t *testing.T) {
	f, err := os.Create(t.TempDir() + "/stderr")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	other, err := os.Create(t.TempDir() + "/other")
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	dev, ino, _ := strings.Cut(devIno(t, f), ":")
	tests := []struct {
		env  string
		want bool
	}{
		{dev + ":" + ino, true},
		{devIno(t, other), false},
		{dev + ":" + ino + "0", false},
		{"0" + dev + "x:" + ino, false},
		{dev, false},
		{"", false},
	}
	for _, tt := range tests {
		if got := isJournal(tt.env, f); got != tt.want {
			t.Errorf("isJournal(%q) = %v, want %v", tt.env, got, tt.want)
		}
	}
}

// TestJournalLogs checks the logger's lines on a file that JOURNAL_STREAM
// names, and on one it does not name.
func TestJournalLogs(t *testing.T) {
	logLine := func(f *os.File, journal, format string) string {
		t.Setenv("JOURNAL_STREAM", journal)
		NewLogger(f, format, "info", false).Info("hello", "event", "start")
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(f)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	tests := []struct {
		name, format string
		named        bool
		want         string
	}{
		{"journal, text: no time", "text", true, "^level=INFO msg=hello event=start\n$"},
		{"another stream, text: time", "text", false, "^time=\\S+ level=INFO msg=hello event=start\n$"},
		{"journal, json: time kept", "json", true, `^\{"time":"[^"]+","level":"INFO","msg":"hello","event":"start"\}` + "\n$"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := os.Create(t.TempDir() + "/stderr")
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			journal := "1:1"
			if tt.named {
				journal = devIno(t, f)
			}
			if got := logLine(f, journal, tt.format); !regexp.MustCompile(tt.want).MatchString(got) {
				t.Errorf("logged %q, want %s", got, tt.want)
			}
		})
	}
}
