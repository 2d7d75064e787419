package schedule

import (
	"testing"
	"time"
)

func BenchmarkNext(b *testing.B) {
	for _, bb := range []struct{ name, expr, zone string }{
		{"FixedTimeUTC", "30 2 * * *", ""},
		{"FixedTimeNewYork", "30 2 * * *", "America/New_York"},
		{"ElapsedNewYork", "*/15 * * * *", "America/New_York"},
		{"EverySecondNewYork", "* * * * * *", "America/New_York"},
		{"LeapDay", "0 0 29 2 *", "Europe/Paris"},

		// Calendar terms, one kind each.
		{"LastDay", "0 18 L * *", "America/New_York"},
		{"BeforeLastDay", "0 18 L-2 * *", "America/New_York"},
		{"NearestWeekday", "0 9 15W * *", "America/New_York"},
		{"LastWeekday", "0 18 LW * *", "America/New_York"},
		{"LastFriday", "0 9 * * 5L", "America/New_York"},
		{"SecondMonday", "0 9 * * MON#2", "America/New_York"},
		{"FifthFridayOfFebruary", "0 0 * 2 FRI#5", "America/New_York"},
	} {
		b.Run(bb.name, func(b *testing.B) {
			spec := mustParse(b, bb.expr, bb.zone)
			after := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
			b.ReportAllocs()
			for b.Loop() {
				occurrence, _ := spec.Next(after)
				after = occurrence.At
			}
		})
	}
}
