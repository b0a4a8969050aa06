package jobsfile

// This file reads NAME=value lines as cronie reads them (its env.c,
// load_env), so that a crontab's settings mean in a jobs file what they
// mean to cron.

// envStates are the states of cronie's load_env, in order: each moves to the
// next, or to envBad.
const (
	envNameFirst  = iota // the first character of the name, maybe a quote
	envName              // the rest of the name
	envEq                // after the name, blanks up to the '='
	envValueBlank        // after the '=', blanks
	envValueFirst        // the first character of the value, maybe a quote
	envValue             // the rest of the value
	envEnd               // after a quoted value's closing quote: blanks only
	envBad
)

// envLine reads line (leading blanks already dropped) as cronie's load_env
// does: a name, optionally in quotes, then '=' with optional blanks around
// it, then the value: in single or double quotes (which keep leading and
// trailing blanks, and then must end the line), or the rest of the line,
// trailing blanks dropped. ok reports whether line is such a setting. A line
// that has a name and an '=' but is no setting (a quote not closed, words
// after the closing quote) is not one to cron either, but was surely meant
// as one: problem says what is wrong with it.
func envLine(line string) (name, value string, ok bool, problem string) {
	state := envNameFirst
	var quote byte
	var nameB, valueB []byte
	valued := false // past the '='
	for i := 0; i < len(line) && state != envBad; {
		c := line[i]
		switch state {
		case envNameFirst, envValueFirst:
			if c == '\'' || c == '"' {
				quote = c
				i++
			}
			state++
		case envName:
			switch {
			case quote != 0 && c == quote:
				state++
				i++
			case quote != 0 && c == '=':
				state = envBad
			case quote == 0 && isBlank(c):
				state++
				i++
			case quote == 0 && c == '=':
				state++
			default:
				nameB = append(nameB, c)
				i++
			}
		case envValue:
			if quote != 0 && c == quote {
				state++
				i++
				continue
			}
			valueB = append(valueB, c)
			i++
		case envEq:
			switch {
			case c == '=':
				state++
				quote = 0
				valued = true
			case !isBlank(c):
				state = envBad
			}
			i++
		case envValueBlank, envEnd:
			if isBlank(c) {
				i++
			} else {
				state++
			}
		}
	}
	switch {
	case state == envEnd || state == envValueBlank:
	case state == envValue && quote == 0:
		for len(valueB) > 0 && isBlank(valueB[len(valueB)-1]) {
			valueB = valueB[:len(valueB)-1]
		}
	case state == envValue:
		return "", "", false, "its value's quote is never closed; close it, or leave the quotes out"
	case state == envBad && valued:
		// Only a quoted value's end is left for something else than blanks.
		return "", "", false, "a quoted value must end the line (cron reads no comment after it); drop what follows the closing quote, or the quotes"
	default:
		return "", "", false, ""
	}
	return string(nameB), string(valueB), true, ""
}
