package durfmt

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestRelative(t *testing.T) {
	t.Parallel()

	now := time.Date(2026, 3, 8, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name       string
		at         time.Time
		want, days string // Relative's, RelativeDays'
	}{
		{"Now", now, "just now", "just now"},
		{"WithinASecond", now.Add(-300 * time.Millisecond), "just now", "just now"},
		{"SoonWithinASecond", now.Add(999 * time.Millisecond), "just now", "just now"},
		{"Seconds", now.Add(-12 * time.Second), "12s ago", "12s ago"},
		{"SecondsToCome", now.Add(40 * time.Second), "in 40s", "in 40s"},
		{"MinutesCutDown", now.Add(-3*time.Minute - 50*time.Second), "3m ago", "3m ago"},
		{"MinutesToCome", now.Add(4 * time.Minute), "in 4m", "in 4m"},
		{"Hours", now.Add(-5 * time.Hour), "5h ago", "5h ago"},
		{"HoursUpToTwoDays", now.Add(-47 * time.Hour), "47h ago", "47h ago"},
		{"Days", now.Add(-72 * time.Hour), "3d ago", "3d ago"},
		{"DaysToCome", now.Add(29 * 24 * time.Hour), "in 29d", "in 29d"},
		{"BeyondAMonth", now.Add(-40 * 24 * time.Hour), "2026-01-27T12:00:00Z", "40d ago"},
		{"BeyondAMonthToCome", now.Add(45*24*time.Hour + time.Hour), "2026-04-22T13:00:00Z", "in 45d"},
		{"AMonthAgo", now.Add(-31 * 24 * time.Hour), "2026-02-05T12:00:00Z", "31d ago"},
		{"InUTC", now.In(time.FixedZone("EST", -5*3600)).Add(-40 * 24 * time.Hour), "2026-01-27T12:00:00Z", "40d ago"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()

			require.Equal(t, tc.want, Relative(tc.at, now))
			require.Equal(t, tc.days, RelativeDays(tc.at, now))
		})
	}
}
