package schedule

import (
	"testing"
	"time"
)

// BenchmarkRRuleNext measures next ten years or more after DTSTART, where an
// expansion that walks from DTSTART would be slow. Each iteration asks from
// a different wall time, spread over a year, so that the cases average over
// their periods.
func BenchmarkRRuleNext(b *testing.B) {
	for _, bb := range []struct {
		name, text string
	}{
		{"DailyAt9", "DTSTART:20160105T090000\nRRULE:FREQ=DAILY;BYHOUR=9"},
		{"EveryOtherTuesday", "DTSTART:20160105T090000\nRRULE:FREQ=WEEKLY;INTERVAL=2;BYDAY=TU"},
		{"LastBusinessDay", "DTSTART:20160129T170000\nRRULE:FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=-1"},
		{"February29", "DTSTART:20160229T000000\nRRULE:FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=29"},
		{"LastBusinessDayCount", "DTSTART:20160129T170000\nRRULE:FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=-1;COUNT=1000"},
	} {
		b.Run(bb.name, func(b *testing.B) {
			r, err := parseRRule(bb.text)
			if err != nil {
				b.Fatal(err)
			}
			from := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
			const spread = 365 * 24 * time.Hour
			step := 7919 * time.Second // a prime, so the wall times don't repeat the same phase
			i := time.Duration(0)
			for b.Loop() {
				after := from.Add(i * step % spread)
				if _, ok := r.next(after, after.AddDate(9, 0, 0)); !ok {
					b.Fatal("no occurrence")
				}
				i++
			}
		})
	}
}
