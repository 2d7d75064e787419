package durfmt

import (
	"strconv"
	"time"
)

// month is where Relative stops counting and writes the time itself.
const month = 30 * 24 * time.Hour

// Relative says how far t is from now, for a time shown on its own (a
// table's column, "next in 4m"): "just now" within a second, then "12s
// ago", "3m ago", "47h ago" (hours up to two days), "3d ago", or "in 4m"
// for a time to come. Each unit is whole, cut down, not rounded. Beyond 30
// days, where a count of days says less than the date, it is t itself in
// RFC 3339, in UTC: "2026-01-27T12:00:00Z".
//
// A time shown beside its absolute value takes RelativeDays instead.
func Relative(t, now time.Time) string {
	if d := t.Sub(now); d >= month || d <= -month {
		return t.UTC().Format(time.RFC3339)
	}
	return RelativeDays(t, now)
}

// RelativeDays is Relative for a time shown beside its absolute value,
// such as "Sun 2026-03-08 09:00:00 EST (in 45d)": beyond 30 days it goes
// on counting days ("in 45d", "31d ago") rather than repeat the date.
func RelativeDays(t, now time.Time) string {
	d := t.Sub(now)
	future := d > 0
	if !future {
		d = -d
	}
	var amount string
	switch {
	case d < time.Second:
		return "just now"
	case d < time.Minute:
		amount = strconv.Itoa(int(d/time.Second)) + "s"
	case d < time.Hour:
		amount = strconv.Itoa(int(d/time.Minute)) + "m"
	case d < 48*time.Hour:
		amount = strconv.Itoa(int(d/time.Hour)) + "h"
	default:
		amount = strconv.Itoa(int(d/(24*time.Hour))) + "d"
	}
	if future {
		return "in " + amount
	}
	return amount + " ago"
}
