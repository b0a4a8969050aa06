package schedule

import "strings"

// IsCronField reports whether word has the shape of one field of a cron
// expression: digits, '*', '?', ',', '-', '/' and '#', month and weekday names
// (short or full, any case), and cronexpr's L and W (L, LW, 15W, 5L, friL). It
// says nothing of whether the field is valid ("99" has the shape of a minute,
// "L-3" of a day of the month): it is how the jobs file counts the time fields
// of a crontab line (docs/GUIDE.md, Cron expressions), and every word Parse
// takes as a field has it. cronie's random values ("6~15") do not have it.
func IsCronField(word string) bool {
	something := false // a value, not only punctuation
	for i := 0; i < len(word); {
		switch c := word[i]; {
		case c >= '0' && c <= '9' || c == '*' || c == '?':
			something = true
			i++
		case c == ',' || c == '-' || c == '/' || c == '#':
			i++
		default:
			j := i + strings.IndexAny(word[i:], "0123456789*?,-/#")
			if j < i {
				j = len(word)
			}
			if !isCronWord(word[i:j]) {
				return false
			}
			something = true
			i = j
		}
	}
	return something
}

// isCronWord reports whether s, a run of a field that is neither digits
// nor punctuation, is a month or weekday name, L, W, LW, or a weekday name
// and L ("friL", cronexpr's last Friday). Names are matched as value
// matches them, so that every field Parse takes has the shape.
func isCronWord(s string) bool {
	if strings.EqualFold(s, "l") || strings.EqualFold(s, "w") || strings.EqualFold(s, "lw") {
		return true
	}
	if isName(s, monthField) || isName(s, dowField) {
		return true
	}
	if n := len(s); n > 1 && (s[n-1] == 'l' || s[n-1] == 'L') {
		return isName(s[:n-1], dowField)
	}
	return false
}

// isName reports whether s is a name of the field's values.
func isName(s string, f field) bool {
	for i, n := range f.names {
		if strings.EqualFold(s, n) || strings.EqualFold(s, f.long[i]) {
			return true
		}
	}
	return false
}

// isDigits reports whether s is one or more ASCII digits.
func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
