package state

// This file writes a Record's JSON by hand: the state file is written twice
// a run, and json.MarshalIndent spent 12 allocations and most of the
// encoding's time on reflection over a struct whose shape is fixed. The
// bytes are exactly MarshalIndent's (encode_test.go holds them to it, field
// by field, and fails when Record gains a field this file does not write).

import (
	"strconv"
	"time"
	"unicode/utf8"
)

// appendRecord appends c as json.MarshalIndent(c, "", "  ") writes it, c's
// times already canonical (UTC, no monotonic reading). It reports false,
// with b unusable, for a time json refuses to write (a year outside
// [0,9999]): the caller asks json for its error.
func appendRecord(b []byte, c *Record) ([]byte, bool) {
	ok := true
	// Every field after the first opens with ",\n  ", so the last one
	// present, whichever it is, closes without a comma.
	b = append(b, "{\n  \"version\": "...)
	b = strconv.AppendInt(b, int64(c.Version), 10)
	b = appendKey(b, "name")
	b = appendString(b, c.Name)
	b = appendKey(b, "command")
	switch {
	case c.Command == nil:
		b = append(b, "null"...)
	case len(c.Command) == 0:
		b = append(b, "[]"...)
	default:
		for i, a := range c.Command {
			if i == 0 {
				b = append(b, "[\n    "...)
			} else {
				b = append(b, ",\n    "...)
			}
			b = appendString(b, a)
		}
		b = append(b, "\n  ]"...)
	}
	b = appendKey(b, "schedule")
	b = appendString(b, c.Schedule)
	b = appendKey(b, "anchor")
	b = appendTime(b, &ok, c.Anchor)
	if !c.LastSlot.IsZero() {
		b = appendKey(b, "last_slot")
		b = appendTime(b, &ok, c.LastSlot)
	}
	if !c.LastRun.IsZero() {
		b = appendKey(b, "last_run")
		b = appendTime(b, &ok, c.LastRun)
	}
	if !c.LastEnd.IsZero() {
		b = appendKey(b, "last_end")
		b = appendTime(b, &ok, c.LastEnd)
	}
	b = appendKey(b, "running")
	b = strconv.AppendBool(b, c.Running)
	if c.LastResult != "" {
		b = appendKey(b, "last_result")
		b = appendString(b, c.LastResult)
	}
	b = appendInt(b, "last_exit_code", c.LastExitCode)
	b = appendInt(b, "last_attempts", c.LastAttempts)
	if !c.LastSuccess.IsZero() {
		b = appendKey(b, "last_success")
		b = appendTime(b, &ok, c.LastSuccess)
	}
	b = appendInt(b, "consecutive_failures", c.ConsecutiveFailures)
	b = appendInt(b, "runs", c.Runs)
	b = appendInt(b, "failures", c.Failures)
	b = appendInt(b, "skipped", c.Skipped)
	if c.Host != "" {
		b = appendKey(b, "host")
		b = appendString(b, c.Host)
	}
	if c.PID != 0 {
		b = appendInt(b, "pid", c.PID)
	}
	if c.Reserved != 0 {
		b = appendInt(b, "reserved", c.Reserved)
	}
	if c.Boot != "" {
		b = appendKey(b, "boot")
		b = appendString(b, c.Boot)
	}
	return append(b, "\n}"...), ok
}

// encodedSize bounds the length of c's encoding, and its newline, when no
// string needs escaping, so that one allocation holds it: every field
// present, its counters of 20 characters and its times of 30 (maxFixed),
// and the strings.
func encodedSize(c *Record) int {
	n := maxFixed + len(c.Name) + len(c.Schedule) + len(c.LastResult) + len(c.Host) + len(c.Boot)
	for _, a := range c.Command {
		n += len(a) + len(",\n    \"\"")
	}
	return n
}

// maxFixed is what encodedSize counts for a record of empty strings and
// one argument, that argument's own quotes and indent counted apart
// (TestEncodedSize).
const maxFixed = 702

// appendKey opens the next field: keys are plain ASCII, never escaped.
func appendKey(b []byte, key string) []byte {
	b = append(b, ",\n  \""...)
	b = append(b, key...)
	return append(b, "\": "...)
}

func appendInt(b []byte, key string, n int) []byte {
	return strconv.AppendInt(appendKey(b, key), int64(n), 10)
}

// appendTime writes t, in UTC, as time.Time's MarshalJSON does, and clears
// ok where MarshalJSON fails: a year that is not four digits.
func appendTime(b []byte, ok *bool, t time.Time) []byte {
	b = append(b, '"')
	n := len(b)
	b = t.AppendFormat(b, time.RFC3339Nano)
	if b[n+len("9999")] != '-' {
		*ok = false
	}
	return append(b, '"')
}

const hex = "0123456789abcdef"

// appendString writes s quoted as encoding/json does with its HTML
// escaping on (Marshal's default): \" \\ \b \f \n \r \t, other control
// characters and <, > and & as \u00xx, U+2028 and U+2029 escaped, and each
// byte of invalid UTF-8 as \ufffd.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c >= ' ' && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
