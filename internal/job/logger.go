package job

import (
	"io"
	"log/slog"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// NewLogger builds every's logger: logfmt or JSON on w (stderr), by
// --log-format, --log-level and -q; every jobs logs its own lines with one.
// When stderr is the systemd journal, which stamps each line itself, text
// lines leave out their own time; JSON keeps it, as a field for machines.
func NewLogger(w io.Writer, format, level string, quiet bool) *slog.Logger {
	var lv slog.Level
	_ = lv.UnmarshalText([]byte(level)) // checked by the command line
	if quiet && lv < slog.LevelWarn {
		lv = slog.LevelWarn
	}
	opts := &slog.HandlerOptions{Level: lv}
	if format == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	if f, ok := w.(*os.File); ok && isJournal(os.Getenv("JOURNAL_STREAM"), f) {
		opts.ReplaceAttr = dropTime
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

// dropTime leaves out a record's time.
func dropTime(groups []string, a slog.Attr) slog.Attr {
	if len(groups) == 0 && a.Key == slog.TimeKey {
		return slog.Attr{}
	}
	return a
}

// isJournal reports whether f is the journal's stream that systemd names in
// JOURNAL_STREAM ("DEV:INODE" of the socket it gave as stdout or stderr).
// The variable alone is not enough: it is inherited by processes whose
// stderr was redirected elsewhere, and those lines would lose their time.
func isJournal(journalStream string, f *os.File) bool {
	dev, ino, ok := strings.Cut(journalStream, ":")
	if !ok {
		return false
	}
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		return false
	}
	return dev == strconv.FormatUint(uint64(st.Dev), 10) && ino == strconv.FormatUint(st.Ino, 10)
}
