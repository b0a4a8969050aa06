package ping

import "time"

// summaryEvery is how often a repeated failure is summarised: a check whose
// service is down, pinged every 10ms, must not drown the log.
const summaryEvery = time.Minute

// repeat is a failure while it repeats: logged when it starts, summarised
// with a count at most once every summaryEvery, and once more when it ends.
type repeat struct {
	n, shown int       // occurrences since it started, and those a line has counted
	lines    int       // lines logged for it
	since    time.Time // when it started
	last     time.Time // when it was last logged
}

// note counts n occurrences at now. It returns how many occurrences a line
// logged now stands for, and whether one is due: at the first occurrence,
// then once summaryEvery has passed since the last line.
func (r *repeat) note(now time.Time, n int) (count int, due bool) {
	if r.n == 0 {
		r.since = now
	} else if now.Sub(r.last) < summaryEvery {
		r.n += n
		return n, false
	}
	r.n += n
	count, r.shown, r.last = r.n-r.shown, r.n, now
	r.lines++
	return count, true
}

// end ends the repetition. It returns the occurrences in all and those no
// line has counted yet; ok is false when nothing repeated, or when its one
// line told all of it.
func (r *repeat) end() (total, unshown int, since time.Time, ok bool) {
	defer func() { *r = repeat{} }()
	if r.n == 0 || r.lines == 1 && r.shown == r.n {
		return 0, 0, time.Time{}, false
	}
	return r.n, r.n - r.shown, r.since, true
}
