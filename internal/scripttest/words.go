package scripttest

import (
	"fmt"
	"strings"
)

// HelpExamples returns the example lines of a --help text, without their
// comments.
func HelpExamples(text string) []string {
	_, ex, _ := strings.Cut(text, "\n   Examples:\n")
	var lines []string
	for _, l := range strings.Split(ex, "\n") {
		if !strings.HasPrefix(l, "      every ") {
			break
		}
		cmd, _, _ := strings.Cut(l, "  # ") // its comment
		lines = append(lines, strings.TrimSpace(cmd))
	}
	return lines
}

// ShellWords splits a command line as sh does for the quoting the examples
// use: blanks, '...', "..." and backslashes. No expansion.
func ShellWords(line string) ([]string, error) {
	var (
		words   []string
		cur     strings.Builder
		inWord  bool
		quote   rune
		escaped bool
	)
	for _, r := range line {
		switch {
		case escaped:
			cur.WriteRune(r)
			escaped = false
		case quote == '\'':
			if r == '\'' {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case quote == '"':
			switch r {
			case '"':
				quote = 0
			case '\\':
				escaped = true
			default:
				cur.WriteRune(r)
			}
		case r == '\\':
			escaped, inWord = true, true
		case r == '\'' || r == '"':
			quote, inWord = r, true
		case r == ' ' || r == '\t':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if quote != 0 || escaped {
		return nil, fmt.Errorf("unterminated quote in %q", line)
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}
