package jobsfile

import (
	"fmt"
	"strings"
)

// This file splits an every line into words as sh(1) splits a command line,
// with nothing expanded: what sh would expand or run (a $, a `, a glob, a
// leading ~, a | or a >) is refused where it stands outside the quotes that
// would keep it, so that a line never runs other than it would as typed in a
// shell (docs/GUIDE.md, Many jobs: every jobs).

// isBlank reports whether c separates words: a space or a tab, as for sh
// (and cron's fields, with the rest of C's isspace but the newline).
func isBlank(c byte) bool { return c == ' ' || c == '\t' || c == '\v' || c == '\f' || c == '\r' }

// shellWords splits line into words as sh splits a simple command: blanks
// separate words; single quotes keep everything up to the next one; double
// quotes keep everything up to the next unescaped one, a backslash in them
// escaping only $ ` " and \; a backslash outside quotes keeps the character
// after it; an unquoted # that starts a word starts a comment. Nothing is
// expanded, so what sh would expand or treat as an operator is refused
// outside the quotes that keep it literal; an unterminated quote, or a
// backslash that ends the line (a continuation, which a jobs file does not
// read), is an error. Its columns count from indent, the blanks before line.
func shellWords(line string, indent int) ([]string, error) {
	var words []string
	var w strings.Builder
	inWord := false
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case isBlank(c):
			if inWord {
				words = append(words, w.String())
				w.Reset()
				inWord = false
			}
		case c == '#' && !inWord:
			return words, nil // a comment, as sh reads one
		case c == '\\':
			if i+1 == len(line) {
				return nil, fmt.Errorf("the line ends with a backslash: a job is one line, with no continuation; join the lines")
			}
			i++
			w.WriteByte(line[i])
			inWord = true
		case c == '\'':
			end := strings.IndexByte(line[i+1:], '\'')
			if end < 0 {
				return nil, fmt.Errorf("a single quote at column %d is never closed; close it, or escape it as \\'", indent+i+1)
			}
			w.WriteString(line[i+1 : i+1+end])
			i += 1 + end
			inWord = true
		case c == '"':
			j, err := doubleQuoted(line, i, indent, &w)
			if err != nil {
				return nil, err
			}
			i = j
			inWord = true
		default:
			if err := unquoted(line, i, inWord); err != nil {
				return nil, err
			}
			w.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, w.String())
	}
	return words, nil
}

// doubleQuoted reads the double-quoted string that opens at line[open] into
// w, and returns the index of its closing quote (indent: as shellWords').
func doubleQuoted(line string, open, indent int, w *strings.Builder) (int, error) {
	for i := open + 1; i < len(line); i++ {
		switch c := line[i]; c {
		case '"':
			return i, nil
		case '\\':
			if i+1 < len(line) && strings.IndexByte("$`\"\\", line[i+1]) >= 0 {
				i++
				w.WriteByte(line[i])
				continue
			}
			w.WriteByte(c)
		case '$', '`':
			return 0, expansion(c)
		default:
			w.WriteByte(c)
		}
	}
	return 0, fmt.Errorf("a double quote at column %d is never closed; close it, or escape it as \\\"", indent+open+1)
}

// expansion is the error of a $ or a ` that sh would expand.
func expansion(c byte) error {
	return fmt.Errorf("%q would be expanded by a shell, and an every line expands nothing: put it in single quotes to pass it as it is, or run a shell for it: -- sh -c '...'", string(c))
}

// unquoted checks the unquoted character at line[i]: one that sh would
// expand or read as an operator is an error. inWord tells whether a word
// has begun (a ~ expands only at a word's start).
func unquoted(line string, i int, inWord bool) error {
	switch c := line[i]; c {
	case '$', '`':
		return expansion(c)
	case '|', '&', ';', '<', '>', '(', ')':
		return fmt.Errorf("%q is shell syntax, and an every line runs its command without a shell: quote it to pass it as a word, or run a shell: -- sh -c '...'", string(c))
	case '*', '?', '[':
		return fmt.Errorf("%q would be a file name pattern to a shell, and an every line expands none: quote it to pass it as it is", string(c))
	case '~':
		if !inWord {
			return fmt.Errorf("a leading ~ would be the home directory to a shell, and an every line expands nothing: write the path in full")
		}
	}
	return nil
}
