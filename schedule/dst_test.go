package schedule

import (
	"testing"
	"time"
)

// The expected instants below are literal UTC times worked out by hand from
// each zone's published rules, never with the code under test nor with
// time.Date in the zone. Weekdays: 1 Jan 2026 is a Thursday, 1 Jan 2027 a
// Friday; +31 days is +3 weekdays, +30 is +2, +28 is +0.
//
// America/New_York: EST = UTC-5, EDT = UTC-4. US rule (since 2007): EDT
// starts the second Sunday of March at 02:00 EST (-> 03:00 EDT, at 07:00Z;
// 02:00-03:00 does not exist) and ends the first Sunday of November at
// 02:00 EDT (-> 01:00 EST, at 06:00Z; 01:00-02:00 occurs twice: 05:00-06:00Z
// EDT, then 06:00-07:00Z EST).
//   2026: 1 Mar is a Sunday (Jan 1 Thu + 59 days) -> Sun 8 Mar, 07:00Z;
//         1 Nov is a Sunday (+304 days) -> Sun 1 Nov, 06:00Z.
//   2027: 1 Mar is a Monday -> Sun 14 Mar, 07:00Z; 1 Nov is a Monday ->
//         Sun 7 Nov, 06:00Z.
//
// Europe/Berlin: CET = UTC+1, CEST = UTC+2. EU rule: CEST starts the last
// Sunday of March at 01:00 UTC (02:00 CET -> 03:00 CEST; 02:00-03:00 does
// not exist) and ends the last Sunday of October at 01:00 UTC (03:00 CEST
// -> 02:00 CET; 02:00-03:00 occurs twice: 00:00-01:00Z CEST, 01:00-02:00Z CET).
//   2026: Sundays of March 1,8,15,22,29 -> 29 Mar; 1 Oct is a Thursday ->
//         Sundays 4,11,18,25 -> 25 Oct.
//   2027: 1 Mar is a Monday -> Sundays 7,...,28 -> 28 Mar; 1 Oct is a
//         Friday -> Sundays 3,...,31 -> 31 Oct.
//
// Australia/Lord_Howe: standard +10:30, summer +11:00 (a 30-minute DST).
// Summer time ends the first Sunday of April at 02:00 local summer time
// (-> 01:30 standard; instant 02:00+11:00 = 15:00Z the Saturday; 01:30-02:00
// occurs twice: 14:30-15:00Z at +11, then 15:00-15:30Z at +10:30); it starts
// the first Sunday of October at 02:00 local standard time (-> 02:30;
// instant 02:00+10:30 = 15:30Z the Saturday; 02:00-02:30 does not exist).
//   2026: 1 Apr is a Wednesday -> Sun 5 Apr (Sat 4 Apr 15:00Z); 1 Oct is a
//         Thursday -> Sun 4 Oct (Sat 3 Oct 15:30Z).
//   2027: 1 Apr is a Thursday -> Sun 4 Apr (Sat 3 Apr 15:00Z); 1 Oct is a
//         Friday -> Sun 3 Oct (Sat 2 Oct 15:30Z).
//
// Asia/Kolkata: IST = UTC+5:30 all year, no DST (since 1945).
//
// America/Santiago: standard -04, summer -03. Chile's rule: summer time
// ends the first Sunday of April on or after the 2nd at 03:00 UTC (Saturday
// 24:00 -03 -> 23:00 -04: Saturday 23:00-24:00 occurs twice) and starts
// the first Sunday of September on or after the 2nd at 04:00 UTC (Sunday
// 00:00 -04 -> 01:00 -03: midnight does not exist).
//   2026: 1 Apr is a Wednesday -> Sun 5 Apr, 03:00Z; 1 Sep is a Tuesday ->
//         Sun 6 Sep, 04:00Z.

// dstCase is one walk of Next from an instant.
type dstCase struct {
	name   string
	zone   string
	sched  string
	align  bool
	from   string
	want   []string // the next slots, in UTC
	shifts []Shift  // Shift of each, if given
}

var dstCases = []dstCase{
	// New York, spring 2026 (gap 02:00-03:00 local on 8 Mar, at 07:00Z).
	{"ny hourly spring", "America/New_York", "@hourly", false, "2026-03-08T04:30:00Z",
		[]string{"2026-03-08T05:00:00Z", "2026-03-08T06:00:00Z", "2026-03-08T07:00:00Z", "2026-03-08T08:00:00Z"},
		[]Shift{NoShift, NoShift, NoShift, NoShift}},
	{"ny */15 spring", "America/New_York", "*/15 * * * *", false, "2026-03-08T06:20:00Z",
		[]string{"2026-03-08T06:30:00Z", "2026-03-08T06:45:00Z", "2026-03-08T07:00:00Z", "2026-03-08T07:15:00Z"},
		[]Shift{NoShift, NoShift, NoShift, NoShift}},
	// Wildcard: 02:00 does not exist that day, so no run for it.
	{"ny 0 */2 spring", "America/New_York", "0 */2 * * *", false, "2026-03-08T04:00:00Z",
		[]string{"2026-03-08T05:00:00Z", "2026-03-08T08:00:00Z", "2026-03-08T10:00:00Z"}, nil},
	// Fixed-time: 02:30 on 8 Mar runs at the end of the gap, 03:00 EDT.
	{"ny 30 2 spring", "America/New_York", "30 2 * * *", false, "2026-03-07T00:00:00Z",
		[]string{"2026-03-07T07:30:00Z", "2026-03-08T07:00:00Z", "2026-03-09T06:30:00Z"},
		[]Shift{NoShift, Gap, NoShift}},
	{"ny 0 2 spring", "America/New_York", "0 2 * * *", false, "2026-03-08T00:00:00Z",
		[]string{"2026-03-08T07:00:00Z", "2026-03-09T06:00:00Z"}, []Shift{Gap, NoShift}},
	{"ny @daily spring", "America/New_York", "@daily", false, "2026-03-07T12:00:00Z",
		[]string{"2026-03-08T05:00:00Z", "2026-03-09T04:00:00Z"}, []Shift{NoShift, NoShift}},
	// Two gap times map to one instant: it runs once.
	{"ny 30,45 2 spring", "America/New_York", "30,45 2 * * *", false, "2026-03-08T00:00:00Z",
		[]string{"2026-03-08T07:00:00Z", "2026-03-09T06:30:00Z", "2026-03-09T06:45:00Z"}, []Shift{Gap, NoShift, NoShift}},
	// 02:00 and 02:30 end the gap at 03:00, which is a slot itself: once.
	{"ny 0,30 2-3 spring", "America/New_York", "0,30 2-3 * * *", false, "2026-03-08T00:00:00Z",
		[]string{"2026-03-08T07:00:00Z", "2026-03-08T07:30:00Z", "2026-03-09T06:00:00Z"}, nil},
	// Seconds in a gap: 02:30:15 also runs at 03:00:00 EDT.
	{"ny 15 30 2 spring", "America/New_York", "15 30 2 * * *", false, "2026-03-08T00:00:00Z",
		[]string{"2026-03-08T07:00:00Z", "2026-03-09T06:30:15Z"}, []Shift{Gap, NoShift}},

	// New York, fall 2026 (01:00-02:00 local twice on 1 Nov; 06:00Z).
	{"ny hourly fall", "America/New_York", "@hourly", false, "2026-11-01T03:30:00Z",
		[]string{"2026-11-01T04:00:00Z", "2026-11-01T05:00:00Z", "2026-11-01T06:00:00Z", "2026-11-01T07:00:00Z", "2026-11-01T08:00:00Z"},
		[]Shift{NoShift, NoShift, NoShift, NoShift, NoShift}},
	{"ny */15 fall", "America/New_York", "*/15 * * * *", false, "2026-11-01T05:40:00Z",
		[]string{"2026-11-01T05:45:00Z", "2026-11-01T06:00:00Z", "2026-11-01T06:15:00Z", "2026-11-01T06:30:00Z", "2026-11-01T06:45:00Z", "2026-11-01T07:00:00Z"}, nil},
	// Fixed-time: 01:30 runs once, at its first occurrence (EDT).
	{"ny 30 1 fall", "America/New_York", "30 1 * * *", false, "2026-10-31T00:00:00Z",
		[]string{"2026-10-31T05:30:00Z", "2026-11-01T05:30:00Z", "2026-11-02T06:30:00Z"},
		[]Shift{NoShift, Repeat, NoShift}},
	{"ny 0 1 fall", "America/New_York", "0 1 * * *", false, "2026-11-01T00:00:00Z",
		[]string{"2026-11-01T05:00:00Z", "2026-11-02T06:00:00Z"}, []Shift{Repeat, NoShift}},
	// 02:30 occurs once on 1 Nov, in EST.
	{"ny 30 2 fall", "America/New_York", "30 2 * * *", false, "2026-10-31T00:00:00Z",
		[]string{"2026-10-31T06:30:00Z", "2026-11-01T07:30:00Z", "2026-11-02T07:30:00Z"},
		[]Shift{NoShift, NoShift, NoShift}},

	// New York 2027.
	{"ny 30 2 spring 2027", "America/New_York", "30 2 * * *", false, "2027-03-14T00:00:00Z",
		[]string{"2027-03-14T07:00:00Z", "2027-03-15T06:30:00Z"}, []Shift{Gap, NoShift}},
	{"ny 30 1 fall 2027", "America/New_York", "30 1 * * *", false, "2027-11-07T00:00:00Z",
		[]string{"2027-11-07T05:30:00Z", "2027-11-08T06:30:00Z"}, []Shift{Repeat, NoShift}},
	{"ny hourly spring 2027", "America/New_York", "@hourly", false, "2027-03-14T05:30:00Z",
		[]string{"2027-03-14T06:00:00Z", "2027-03-14T07:00:00Z", "2027-03-14T08:00:00Z"}, nil},

	// New York, aligned. 15m: an even real-time grid (01:45 EST, 03:00 EDT;
	// every slot of the repeated hour, twice).
	{"ny 15m align spring", "America/New_York", "15m", true, "2026-03-08T06:40:00Z",
		[]string{"2026-03-08T06:45:00Z", "2026-03-08T07:00:00Z", "2026-03-08T07:15:00Z"},
		[]Shift{NoShift, NoShift, NoShift}},
	{"ny 15m align fall", "America/New_York", "15m", true, "2026-11-01T05:40:00Z",
		[]string{"2026-11-01T05:45:00Z", "2026-11-01T06:00:00Z", "2026-11-01T06:15:00Z", "2026-11-01T06:30:00Z", "2026-11-01T06:45:00Z", "2026-11-01T07:00:00Z"},
		[]Shift{NoShift, NoShift, NoShift, NoShift, NoShift, NoShift}},
	{"ny 1h align fall", "America/New_York", "1h", true, "2026-11-01T04:30:00Z",
		[]string{"2026-11-01T05:00:00Z", "2026-11-01T06:00:00Z", "2026-11-01T07:00:00Z"}, nil},
	// 1d: local midnight (00:00 EST = 05:00Z, 00:00 EDT = 04:00Z).
	{"ny 1d align", "America/New_York", "1d", true, "2026-03-07T12:00:00Z",
		[]string{"2026-03-08T05:00:00Z", "2026-03-09T04:00:00Z"}, nil},
	{"ny 1d align fall", "America/New_York", "1d", true, "2026-10-31T12:00:00Z",
		[]string{"2026-11-01T04:00:00Z", "2026-11-02T05:00:00Z"}, nil},
	// 6h: 00 06 12 18 local, fixed-time (none is in the gap).
	{"ny 6h align", "America/New_York", "6h", true, "2026-03-07T20:00:00Z",
		[]string{"2026-03-07T23:00:00Z", "2026-03-08T05:00:00Z", "2026-03-08T10:00:00Z", "2026-03-08T16:00:00Z"}, nil},
	// 2h: fixed-time; 02:00 on 8 Mar runs at the end of the gap; on 1 Nov
	// 02:00 EST exists once (07:00Z).
	{"ny 2h align spring", "America/New_York", "2h", true, "2026-03-08T06:00:00Z",
		[]string{"2026-03-08T07:00:00Z", "2026-03-08T08:00:00Z"}, []Shift{Gap, NoShift}},
	{"ny 2h align fall", "America/New_York", "2h", true, "2026-11-01T04:30:00Z",
		[]string{"2026-11-01T07:00:00Z", "2026-11-01T09:00:00Z"}, []Shift{NoShift, NoShift}},
	// 90m: 01:30 on 1 Nov runs once, in EDT (05:30Z); then 03:00 EST = 08:00Z.
	{"ny 90m align fall", "America/New_York", "90m", true, "2026-11-01T03:30:00Z",
		[]string{"2026-11-01T04:00:00Z", "2026-11-01T05:30:00Z", "2026-11-01T08:00:00Z"}, []Shift{NoShift, Repeat, NoShift}},

	// Berlin 2026 (gap 02:00-03:00 on 29 Mar at 01:00Z; 02:00-03:00 twice on 25 Oct).
	{"berlin 30 2 spring", "Europe/Berlin", "30 2 * * *", false, "2026-03-28T00:00:00Z",
		[]string{"2026-03-28T01:30:00Z", "2026-03-29T01:00:00Z", "2026-03-30T00:30:00Z"}, []Shift{NoShift, Gap, NoShift}},
	{"berlin 30 2 fall", "Europe/Berlin", "30 2 * * *", false, "2026-10-24T00:00:00Z",
		[]string{"2026-10-24T00:30:00Z", "2026-10-25T00:30:00Z", "2026-10-26T01:30:00Z"}, []Shift{NoShift, Repeat, NoShift}},
	{"berlin */15 spring", "Europe/Berlin", "*/15 * * * *", false, "2026-03-29T00:40:00Z",
		[]string{"2026-03-29T00:45:00Z", "2026-03-29T01:00:00Z", "2026-03-29T01:15:00Z"}, nil},
	{"berlin hourly fall", "Europe/Berlin", "@hourly", false, "2026-10-24T23:30:00Z",
		[]string{"2026-10-25T00:00:00Z", "2026-10-25T01:00:00Z", "2026-10-25T02:00:00Z"}, []Shift{NoShift, NoShift, NoShift}},
	{"berlin 1d align", "Europe/Berlin", "1d", true, "2026-03-28T12:00:00Z",
		[]string{"2026-03-28T23:00:00Z", "2026-03-29T22:00:00Z"}, nil},
	{"berlin 30 2 spring 2027", "Europe/Berlin", "30 2 * * *", false, "2027-03-28T00:00:00Z",
		[]string{"2027-03-28T01:00:00Z", "2027-03-29T00:30:00Z"}, []Shift{Gap, NoShift}},
	{"berlin 30 2 fall 2027", "Europe/Berlin", "30 2 * * *", false, "2027-10-31T00:00:00Z",
		[]string{"2027-10-31T00:30:00Z", "2027-11-01T01:30:00Z"}, []Shift{Repeat, NoShift}},

	// Lord Howe 2026 (02:00-02:30 missing on 4 Oct at Sat 15:30Z; 01:30-02:00
	// twice on 5 Apr, change at Sat 15:00Z).
	{"lord howe 0 2 start", "Australia/Lord_Howe", "0 2 * * *", false, "2026-10-02T00:00:00Z",
		[]string{"2026-10-02T15:30:00Z", "2026-10-03T15:30:00Z", "2026-10-04T15:00:00Z"}, []Shift{NoShift, Gap, NoShift}},
	{"lord howe 15 2 start", "Australia/Lord_Howe", "15 2 * * *", false, "2026-10-03T00:00:00Z",
		[]string{"2026-10-03T15:30:00Z", "2026-10-04T15:15:00Z"}, []Shift{Gap, NoShift}},
	// 02:00 on 5 Apr occurs once (02:00+11:00 never shows: the clock reads 01:30).
	{"lord howe 0 2 end", "Australia/Lord_Howe", "0 2 * * *", false, "2026-04-03T00:00:00Z",
		[]string{"2026-04-03T15:00:00Z", "2026-04-04T15:30:00Z", "2026-04-05T15:30:00Z"}, []Shift{NoShift, NoShift, NoShift}},
	{"lord howe 45 1 end", "Australia/Lord_Howe", "45 1 * * *", false, "2026-04-04T00:00:00Z",
		[]string{"2026-04-04T14:45:00Z", "2026-04-05T15:15:00Z"}, []Shift{Repeat, NoShift}},
	// Wildcard: both 01:30s run; half-hourly in real time around them.
	{"lord howe 30 * end", "Australia/Lord_Howe", "30 * * * *", false, "2026-04-04T13:00:00Z",
		[]string{"2026-04-04T13:30:00Z", "2026-04-04T14:30:00Z", "2026-04-04T15:00:00Z", "2026-04-04T16:00:00Z"},
		[]Shift{NoShift, NoShift, NoShift, NoShift}},
	{"lord howe 30 * start", "Australia/Lord_Howe", "30 * * * *", false, "2026-10-03T13:30:00Z",
		[]string{"2026-10-03T14:00:00Z", "2026-10-03T15:00:00Z", "2026-10-03T15:30:00Z", "2026-10-03T16:30:00Z"}, nil},
	// Wildcard: no 02:00 on 4 Oct; 01:00+10:30 = 14:30Z, 03:00+11 = 16:00Z.
	{"lord howe hourly start", "Australia/Lord_Howe", "@hourly", false, "2026-10-03T13:00:00Z",
		[]string{"2026-10-03T13:30:00Z", "2026-10-03T14:30:00Z", "2026-10-03T16:00:00Z", "2026-10-03T17:00:00Z"}, nil},
	{"lord howe 30m align end", "Australia/Lord_Howe", "30m", true, "2026-04-04T14:00:00Z",
		[]string{"2026-04-04T14:30:00Z", "2026-04-04T15:00:00Z", "2026-04-04T15:30:00Z", "2026-04-04T16:00:00Z"}, nil},
	// 90m (fixed-time): 00:00+11 = 13:00Z, 01:30 first at +11 = 14:30Z, 03:00+10:30 = 16:30Z.
	{"lord howe 90m align end", "Australia/Lord_Howe", "90m", true, "2026-04-04T12:00:00Z",
		[]string{"2026-04-04T13:00:00Z", "2026-04-04T14:30:00Z", "2026-04-04T16:30:00Z"}, []Shift{NoShift, Repeat, NoShift}},
	// Lord Howe 2027.
	{"lord howe 0 2 start 2027", "Australia/Lord_Howe", "0 2 * * *", false, "2027-10-02T00:00:00Z",
		[]string{"2027-10-02T15:30:00Z", "2027-10-03T15:00:00Z"}, []Shift{Gap, NoShift}},
	{"lord howe 45 1 end 2027", "Australia/Lord_Howe", "45 1 * * *", false, "2027-04-03T00:00:00Z",
		[]string{"2027-04-03T14:45:00Z", "2027-04-04T15:15:00Z"}, []Shift{Repeat, NoShift}},

	// Kolkata: on the local hour is :30 UTC.
	{"kolkata 1h align", "Asia/Kolkata", "1h", true, "2026-06-01T00:00:00Z",
		[]string{"2026-06-01T00:30:00Z", "2026-06-01T01:30:00Z", "2026-06-01T02:30:00Z"}, []Shift{NoShift, NoShift, NoShift}},
	{"kolkata 15m align", "Asia/Kolkata", "15m", true, "2026-06-01T00:00:00Z",
		[]string{"2026-06-01T00:15:00Z", "2026-06-01T00:30:00Z"}, nil},
	// 45m from local midnight: 05:30 IST is 330 min, next multiple 360 = 06:00 IST.
	{"kolkata 45m align", "Asia/Kolkata", "45m", true, "2026-06-01T00:00:00Z",
		[]string{"2026-06-01T00:30:00Z", "2026-06-01T01:15:00Z", "2026-06-01T02:00:00Z"}, nil},
	{"kolkata 6h align", "Asia/Kolkata", "6h", true, "2026-06-01T00:00:00Z",
		[]string{"2026-06-01T00:30:00Z", "2026-06-01T06:30:00Z", "2026-06-01T12:30:00Z", "2026-06-01T18:30:00Z"}, nil},
	{"kolkata 1d align", "Asia/Kolkata", "1d", true, "2026-06-01T00:00:00Z",
		[]string{"2026-06-01T18:30:00Z", "2026-06-02T18:30:00Z"}, []Shift{NoShift, NoShift}},
	{"kolkata 30 2", "Asia/Kolkata", "30 2 * * *", false, "2026-06-01T00:00:00Z",
		[]string{"2026-06-01T21:00:00Z", "2026-06-02T21:00:00Z"}, nil},
	{"kolkata hourly", "Asia/Kolkata", "@hourly", false, "2026-06-01T00:00:00Z",
		[]string{"2026-06-01T00:30:00Z", "2026-06-01T01:30:00Z"}, nil},

	// Santiago: midnight itself is skipped (6 Sep 2026) or follows a repeated
	// hour (5 Apr 2026).
	{"santiago 6h align start", "America/Santiago", "6h", true, "2026-09-05T20:00:00Z",
		[]string{"2026-09-05T22:00:00Z", "2026-09-06T04:00:00Z", "2026-09-06T09:00:00Z"}, []Shift{NoShift, Gap, NoShift}},
	{"santiago 1d align start", "America/Santiago", "1d", true, "2026-09-05T00:00:00Z",
		[]string{"2026-09-05T04:00:00Z", "2026-09-06T04:00:00Z", "2026-09-07T03:00:00Z"}, []Shift{NoShift, Gap, NoShift}},
	{"santiago @daily start", "America/Santiago", "@daily", false, "2026-09-05T00:00:00Z",
		[]string{"2026-09-05T04:00:00Z", "2026-09-06T04:00:00Z", "2026-09-07T03:00:00Z"}, []Shift{NoShift, Gap, NoShift}},
	{"santiago hourly start", "America/Santiago", "0 * * * *", false, "2026-09-06T02:30:00Z",
		[]string{"2026-09-06T03:00:00Z", "2026-09-06T04:00:00Z", "2026-09-06T05:00:00Z"}, nil},
	{"santiago 6h align end", "America/Santiago", "6h", true, "2026-04-04T20:00:00Z",
		[]string{"2026-04-04T21:00:00Z", "2026-04-05T04:00:00Z", "2026-04-05T10:00:00Z"}, []Shift{NoShift, NoShift, NoShift}},
	// 23:00 -03 on 3 Apr, the first 23:00 (-03) on 4 Apr, 23:00 -04 on 5 Apr.
	{"santiago 0 23 end", "America/Santiago", "0 23 * * *", false, "2026-04-04T00:00:00Z",
		[]string{"2026-04-04T02:00:00Z", "2026-04-05T02:00:00Z", "2026-04-06T03:00:00Z"}, []Shift{NoShift, Repeat, NoShift}},
}

func TestDSTNext(t *testing.T) {
	for _, tc := range dstCases {
		t.Run(tc.name, func(t *testing.T) {
			s := mustParse(t, tc.sched, Options{Zone: zone(t, tc.zone), Align: tc.align})
			var want []time.Time
			for _, w := range tc.want {
				want = append(want, at(t, w))
			}
			got := nextN(s, at(t, tc.from), len(want))
			if !sameInstants(got, want) {
				t.Fatalf("%q in %s from %s:\n got  %s\n want %s", tc.sched, tc.zone, tc.from, utcList(got), utcList(want))
			}
			// Prev finds each slot again, and the one before from just after it.
			for i, w := range want {
				if p := s.Prev(w); !p.Equal(w) {
					t.Errorf("Prev(%s) = %s, want the slot itself", fmtT(w), fmtT(p))
				}
				if i > 0 {
					if p := s.Prev(w.Add(-time.Nanosecond)); !p.Equal(want[i-1]) {
						t.Errorf("Prev(%s - 1ns) = %s, want %s", fmtT(w), fmtT(p), fmtT(want[i-1]))
					}
				}
			}
			if tc.shifts == nil {
				return
			}
			c, ok := s.(*Calendar)
			if !ok {
				t.Fatalf("%T is not a *Calendar", s)
			}
			for i, w := range want {
				if got := c.Shift(w); got != tc.shifts[i] {
					t.Errorf("Shift(%s) = %v, want %v", fmtT(w), got, tc.shifts[i])
				}
			}
		})
	}
}

// TestDSTPrev checks Prev from instants between slots, across transitions.
func TestDSTPrev(t *testing.T) {
	tests := []struct {
		zone, sched string
		align       bool
		at, want    string
	}{
		// The second 01:30 (06:30Z, EST) is not a slot of a fixed-time job.
		{"America/New_York", "30 1 * * *", false, "2026-11-01T06:45:00Z", "2026-11-01T05:30:00Z"},
		{"America/New_York", "30 1 * * *", false, "2026-11-01T05:29:59Z", "2026-10-31T05:30:00Z"},
		// 01:10 EST: the wall clock has gone back past 01:30, but its first
		// occurrence (05:30Z) has happened.
		{"America/New_York", "30 1 * * *", false, "2026-11-01T06:10:00Z", "2026-11-01T05:30:00Z"},
		{"Australia/Lord_Howe", "45 1 * * *", false, "2026-04-04T15:05:00Z", "2026-04-04T14:45:00Z"},
		// But it is one of a wildcard job.
		{"America/New_York", "30 * * * *", false, "2026-11-01T06:45:00Z", "2026-11-01T06:30:00Z"},
		{"America/New_York", "30 2 * * *", false, "2026-03-08T12:00:00Z", "2026-03-08T07:00:00Z"},
		{"America/New_York", "30 2 * * *", false, "2026-03-08T06:59:59.999Z", "2026-03-07T07:30:00Z"},
		{"America/New_York", "0 */2 * * *", false, "2026-03-08T07:59:00Z", "2026-03-08T05:00:00Z"},
		{"Europe/Berlin", "30 2 * * *", false, "2026-10-25T01:45:00Z", "2026-10-25T00:30:00Z"},
		{"Europe/Berlin", "30 2 * * *", false, "2026-03-29T05:00:00Z", "2026-03-29T01:00:00Z"},
		{"Australia/Lord_Howe", "0 2 * * *", false, "2026-10-03T16:00:00Z", "2026-10-03T15:30:00Z"},
		{"Australia/Lord_Howe", "45 1 * * *", false, "2026-04-04T15:20:00Z", "2026-04-04T14:45:00Z"},
		{"America/Santiago", "1d", true, "2026-09-06T03:59:59Z", "2026-09-05T04:00:00Z"},
		{"America/Santiago", "1d", true, "2026-09-06T04:00:00Z", "2026-09-06T04:00:00Z"},
		{"Asia/Kolkata", "1h", true, "2026-06-01T00:29:59Z", "2026-05-31T23:30:00Z"},
	}
	for _, tc := range tests {
		s := mustParse(t, tc.sched, Options{Zone: zone(t, tc.zone), Align: tc.align})
		if got := s.Prev(at(t, tc.at)); !got.Equal(at(t, tc.want)) {
			t.Errorf("%q in %s: Prev(%s) = %s, want %s", tc.sched, tc.zone, tc.at, fmtT(got), tc.want)
		}
	}
}

// utcSeq is n instants from a literal UTC start, step apart (UTC arithmetic,
// for the long lists of wildcard slots, which are evenly spaced in real time).
func utcSeq(t *testing.T, start string, step time.Duration, n int) []time.Time {
	out := make([]time.Time, n)
	for i := range out {
		out[i] = at(t, start).Add(time.Duration(i) * step)
	}
	return out
}

// TestDSTDayCounts lists and counts the slots of whole local days of a
// transition: 23 hourly runs on a spring-forward day, 25 on a fall-back day.
func TestDSTDayCounts(t *testing.T) {
	cat := func(parts ...[]time.Time) []time.Time {
		var out []time.Time
		for _, p := range parts {
			out = append(out, p...)
		}
		return out
	}
	tests := []struct {
		name, zone, sched string
		align             bool
		from, to          string // the local day, as UTC instants
		want              []time.Time
	}{
		// 8 Mar 2026 NY: 00:00 EST = 05:00Z to 00:00 EDT 9 Mar = 04:00Z, 23h.
		{"ny spring hourly", "America/New_York", "@hourly", false, "2026-03-08T05:00:00Z", "2026-03-09T04:00:00Z",
			utcSeq(t, "2026-03-08T05:00:00Z", time.Hour, 23)},
		{"ny spring 1h align", "America/New_York", "1h", true, "2026-03-08T05:00:00Z", "2026-03-09T04:00:00Z",
			utcSeq(t, "2026-03-08T05:00:00Z", time.Hour, 23)},
		{"ny spring */15", "America/New_York", "*/15 * * * *", false, "2026-03-08T05:00:00Z", "2026-03-09T04:00:00Z",
			utcSeq(t, "2026-03-08T05:00:00Z", 15*time.Minute, 92)},
		{"ny spring 15m align", "America/New_York", "15m", true, "2026-03-08T05:00:00Z", "2026-03-09T04:00:00Z",
			utcSeq(t, "2026-03-08T05:00:00Z", 15*time.Minute, 92)},
		// 1 Nov 2026 NY: 00:00 EDT = 04:00Z to 00:00 EST 2 Nov = 05:00Z, 25h.
		{"ny fall hourly", "America/New_York", "@hourly", false, "2026-11-01T04:00:00Z", "2026-11-02T05:00:00Z",
			utcSeq(t, "2026-11-01T04:00:00Z", time.Hour, 25)},
		{"ny fall */15", "America/New_York", "*/15 * * * *", false, "2026-11-01T04:00:00Z", "2026-11-02T05:00:00Z",
			utcSeq(t, "2026-11-01T04:00:00Z", 15*time.Minute, 100)},
		{"ny fall 30 1", "America/New_York", "30 1 * * *", false, "2026-11-01T04:00:00Z", "2026-11-02T05:00:00Z",
			[]time.Time{at(t, "2026-11-01T05:30:00Z")}},
		{"ny spring 30 2", "America/New_York", "30 2 * * *", false, "2026-03-08T05:00:00Z", "2026-03-09T04:00:00Z",
			[]time.Time{at(t, "2026-03-08T07:00:00Z")}},
		// 2027 NY: 14 Mar (23h, from 05:00Z) and 7 Nov (25h, from 04:00Z).
		{"ny spring hourly 2027", "America/New_York", "@hourly", false, "2027-03-14T05:00:00Z", "2027-03-15T04:00:00Z",
			utcSeq(t, "2027-03-14T05:00:00Z", time.Hour, 23)},
		{"ny fall hourly 2027", "America/New_York", "@hourly", false, "2027-11-07T04:00:00Z", "2027-11-08T05:00:00Z",
			utcSeq(t, "2027-11-07T04:00:00Z", time.Hour, 25)},
		// Berlin 29 Mar 2026: 00:00 CET = 28 Mar 23:00Z to 00:00 CEST = 29 Mar 22:00Z.
		{"berlin spring hourly", "Europe/Berlin", "@hourly", false, "2026-03-28T23:00:00Z", "2026-03-29T22:00:00Z",
			utcSeq(t, "2026-03-28T23:00:00Z", time.Hour, 23)},
		// Berlin 25 Oct 2026: 00:00 CEST = 24 Oct 22:00Z to 00:00 CET = 25 Oct 23:00Z.
		{"berlin fall hourly", "Europe/Berlin", "@hourly", false, "2026-10-24T22:00:00Z", "2026-10-25T23:00:00Z",
			utcSeq(t, "2026-10-24T22:00:00Z", time.Hour, 25)},
		// Lord Howe 4 Oct 2026: 00:00+10:30 = 3 Oct 13:30Z to 00:00+11 = 4 Oct
		// 13:00Z; 00:00 and 01:00 at +10:30, no 02:00, 03:00..23:00 at +11.
		{"lord howe start hourly", "Australia/Lord_Howe", "@hourly", false, "2026-10-03T13:30:00Z", "2026-10-04T13:00:00Z",
			cat(utcSeq(t, "2026-10-03T13:30:00Z", time.Hour, 2), utcSeq(t, "2026-10-03T16:00:00Z", time.Hour, 21))},
		// Lord Howe 5 Apr 2026: 00:00+11 = 4 Apr 13:00Z to 00:00+10:30 = 5 Apr
		// 13:30Z; 00:00 and 01:00 at +11, 02:00..23:00 at +10:30: 24 runs.
		{"lord howe end hourly", "Australia/Lord_Howe", "@hourly", false, "2026-04-04T13:00:00Z", "2026-04-05T13:30:00Z",
			cat(utcSeq(t, "2026-04-04T13:00:00Z", time.Hour, 2), utcSeq(t, "2026-04-04T15:30:00Z", time.Hour, 22))},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := mustParse(t, tc.sched, Options{Zone: zone(t, tc.zone), Align: tc.align})
			from, to := at(t, tc.from), at(t, tc.to)
			if n := Count(s, from, to, 1000); n != int64(len(tc.want)) {
				t.Errorf("Count = %d, want %d", n, len(tc.want))
			}
			var got []time.Time
			for v := s.Prev(from); ; {
				if !v.Before(from) {
					got = append(got, v)
				}
				if v = s.Next(v); !v.Before(to) {
					break
				}
				if len(got) > 2000 {
					break
				}
			}
			if !sameInstants(got, tc.want) {
				t.Errorf("slots of the day:\n got  %s\n want %s", utcList(got), utcList(tc.want))
			}
		})
	}
}
