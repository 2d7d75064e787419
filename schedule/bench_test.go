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
