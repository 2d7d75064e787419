package schedule

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// mustLoad loads a time zone or fails the test.
func mustLoad(t testing.TB, zone string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(zone)
	require.NoError(t, err)
	return loc
}

// mustParse parses a spec or fails the test.
func mustParse(t testing.TB, expr, zone string) *Spec {
	t.Helper()
	spec, err := ParseSpec(expr, zone)
	require.NoError(t, err)
	return spec
}

// formatAll formats occurrences' instants as RFC 3339, in their zone.
func formatAll(occurrences []Occurrence) []string {
	out := make([]string, len(occurrences))
	for i, occurrence := range occurrences {
		out[i] = occurrence.At.Format(time.RFC3339)
	}
	return out
}

// onDay returns the occurrences whose instant falls on a local date.
func onDay(t *testing.T, spec *Spec, year int, month time.Month, day int) []Occurrence {
	t.Helper()
	date := time.Date(year, month, day, 0, 0, 0, 0, time.UTC)
	after := time.Date(year, month, day, 0, 0, 0, 0, spec.Location()).Add(-30 * time.Hour)
	var out []Occurrence
	for range 100_000 {
		occurrence, ok := spec.Next(after)
		require.True(t, ok)
		y, m, d := occurrence.At.Date()
		local := time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
		if local.After(date) {
			return out
		}
		if local.Equal(date) {
			out = append(out, occurrence)
		}
		after = occurrence.At
	}
	require.FailNow(t, "too many occurrences")
	return nil
}

func TestNextCalendar(t *testing.T) {
	t.Parallel()

	tests := []struct {
		name, expr, zone string
		after            string
		want             []string
	}{
		{
			name: "LeapDayOverTwelveYears", expr: "0 0 29 2 *", zone: "Europe/Paris", after: "2024-01-01T00:00:00Z",
			want: []string{"2024-02-29T00:00:00+01:00", "2028-02-29T00:00:00+01:00", "2032-02-29T00:00:00+01:00", "2036-02-29T00:00:00+01:00"},
		},
		{
			// 2100 is not a leap year: 8 years between two 29 Februaries,
			// more than robfig/cron's 5-year search.
			name: "LeapDayAcross2100", expr: "0 12 29 2 *", zone: "", after: "2096-03-01T00:00:00Z",
			want: []string{"2104-02-29T12:00:00Z", "2108-02-29T12:00:00Z"},
		},
		{
			name: "MonthEnd31", expr: "0 0 31 * *", zone: "America/New_York", after: "2026-01-01T05:00:00Z",
			want: []string{
				"2026-01-31T00:00:00-05:00", "2026-03-31T00:00:00-04:00", "2026-05-31T00:00:00-04:00", "2026-07-31T00:00:00-04:00",
				"2026-08-31T00:00:00-04:00", "2026-10-31T00:00:00-04:00", "2026-12-31T00:00:00-05:00", "2027-01-31T00:00:00-05:00",
			},
		},
		{
			name: "MonthEnd30", expr: "30 6 30 * *", zone: "", after: "2027-12-31T00:00:00Z",
			want: []string{"2028-01-30T06:30:00Z", "2028-03-30T06:30:00Z", "2028-04-30T06:30:00Z"},
		},
		{
			name: "DayOfMonthOrDayOfWeek", expr: "0 9 13 * 5", zone: "", after: "2026-02-01T00:00:00Z",
			want: []string{"2026-02-06T09:00:00Z", "2026-02-13T09:00:00Z", "2026-02-20T09:00:00Z", "2026-02-27T09:00:00Z", "2026-03-06T09:00:00Z", "2026-03-13T09:00:00Z"},
		},
		{
			name: "DayOfWeekOnly", expr: "0 9 * * MON", zone: "", after: "2026-02-01T00:00:00Z",
			want: []string{"2026-02-02T09:00:00Z", "2026-02-09T09:00:00Z"},
		},
		{
			name: "DayOfMonthStarAndDayOfWeek", expr: "0 9 1-7 * 1", zone: "", after: "2026-02-01T00:00:00Z",
			// Restricted both: the 1st to the 7th, or a Monday.
			want: []string{"2026-02-01T09:00:00Z", "2026-02-02T09:00:00Z", "2026-02-03T09:00:00Z"},
		},
		{
			name: "QuestionMark", expr: "0 9 ? * 1", zone: "", after: "2026-02-01T00:00:00Z",
			want: []string{"2026-02-02T09:00:00Z", "2026-02-09T09:00:00Z"},
		},
		{
			name: "Seconds", expr: "*/20 * * * * *", zone: "Asia/Tokyo", after: "2026-03-08T00:00:05Z",
			want: []string{"2026-03-08T09:00:20+09:00", "2026-03-08T09:00:40+09:00", "2026-03-08T09:01:00+09:00"},
		},
		{
			name: "SecondsFixed", expr: "30 0 9 * * *", zone: "", after: "2026-03-08T09:00:30Z",
			want: []string{"2026-03-09T09:00:30Z", "2026-03-10T09:00:30Z"},
		},
		{
			name: "Weekdays", expr: "0 9 * * 1-5", zone: "Europe/Berlin", after: "2026-03-27T12:00:00Z",
			want: []string{"2026-03-30T09:00:00+02:00", "2026-03-31T09:00:00+02:00"},
		},
		{
			name: "Months", expr: "0 0 1 JAN,jul *", zone: "", after: "2026-03-27T12:00:00Z",
			want: []string{"2026-07-01T00:00:00Z", "2027-01-01T00:00:00Z"},
		},
		{name: "Hourly", expr: "@hourly", zone: "", after: "2026-03-08T10:59:59Z", want: []string{"2026-03-08T11:00:00Z", "2026-03-08T12:00:00Z"}},
		{name: "Daily", expr: "@daily", zone: "", after: "2026-03-08T10:00:00Z", want: []string{"2026-03-09T00:00:00Z", "2026-03-10T00:00:00Z"}},
		{name: "Midnight", expr: "@midnight", zone: "", after: "2026-03-08T10:00:00Z", want: []string{"2026-03-09T00:00:00Z"}},
		{name: "Weekly", expr: "@weekly", zone: "", after: "2026-03-08T10:00:00Z", want: []string{"2026-03-15T00:00:00Z", "2026-03-22T00:00:00Z"}}, // Sundays
		{name: "Monthly", expr: "@monthly", zone: "", after: "2026-03-08T10:00:00Z", want: []string{"2026-04-01T00:00:00Z", "2026-05-01T00:00:00Z"}},
		{name: "Yearly", expr: "@yearly", zone: "", after: "2026-03-08T10:00:00Z", want: []string{"2027-01-01T00:00:00Z", "2028-01-01T00:00:00Z"}},
		{name: "Annually", expr: "@annually", zone: "Pacific/Auckland", after: "2026-03-08T10:00:00Z", want: []string{"2027-01-01T00:00:00+13:00"}},
		{
			name: "Every", expr: "@every 90m", zone: "America/New_York", after: "2026-03-08T05:30:00.75Z",
			// Real elapsed time through the jump; the fraction of a second is dropped.
			want: []string{"2026-03-08T03:00:00-04:00", "2026-03-08T04:30:00-04:00", "2026-03-08T06:00:00-04:00"},
		},
		{
			// Past 2037, Go computes zones from a rule and gets the end of leap
			// years wrong (golang/go#81583).
			name: "LeapYearEndAfter2037", expr: "0 3 * * *", zone: "Europe/London", after: "2040-12-30T12:00:00Z",
			want: []string{"2040-12-31T03:00:00Z", "2041-01-01T03:00:00Z"},
		},
		{
			name: "LeapYearEndAfter2037Elapsed", expr: "0 */6 * * *", zone: "Australia/Sydney", after: "2040-12-30T12:00:00Z",
			want: []string{"2040-12-31T00:00:00+11:00", "2040-12-31T06:00:00+11:00", "2040-12-31T12:00:00+11:00", "2040-12-31T18:00:00+11:00", "2041-01-01T00:00:00+11:00"},
		},
		{
			name: "FractionOfASecond", expr: "0 9 * * *", zone: "", after: "2026-03-08T08:59:59.999Z",
			want: []string{"2026-03-08T09:00:00Z"},
		},
		{
			name: "StrictlyAfter", expr: "0 9 * * *", zone: "", after: "2026-03-08T09:00:00Z",
			want: []string{"2026-03-09T09:00:00Z"},
		},
		{
			name: "JustPastAnOccurrence", expr: "0 9 * * *", zone: "", after: "2026-03-08T09:00:00.001Z",
			want: []string{"2026-03-09T09:00:00Z"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()

			after, err := time.Parse(time.RFC3339Nano, tt.after)
			require.NoError(t, err)
			spec := mustParse(t, tt.expr, tt.zone)
			require.Equal(t, tt.want, formatAll(spec.NextN(after, len(tt.want))))
		})
	}

	t.Run("LeapDayEveryFourYears", func(t *testing.T) {
		t.Parallel()

		spec := mustParse(t, "0 0 29 2 *", "")
		var years []int
		for _, occurrence := range spec.NextN(time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC), 30) {
			years = append(years, occurrence.At.Year())
		}
		require.Equal(t, []int{
			2028, 2032, 2036, 2040, 2044, 2048, 2052, 2056, 2060, 2064, 2068, 2072, 2076, 2080, 2084, 2088, 2092, 2096,
			2104, 2108, 2112, 2116, 2120, 2124, 2128, 2132, 2136, 2140, 2144, 2148,
		}, years)
	})

	t.Run("NextNZeroAndNegative", func(t *testing.T) {
		t.Parallel()

		spec := mustParse(t, "@daily", "")
		require.Empty(t, spec.NextN(time.Now(), 0))
		require.Empty(t, spec.NextN(time.Now(), -1))
	})
}
