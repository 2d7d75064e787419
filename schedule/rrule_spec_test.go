package schedule

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestParseRRuleSpec: an RRULE's wall times placed in a zone as a cron
// spec's are, with DST policies and excluded dates.
func TestParseRRuleSpec(t *testing.T) {
	t.Parallel()

	ny, err := time.LoadLocation("America/New_York")
	require.NoError(t, err)
	at := func(specs ...Occurrence) []string {
		var out []string
		for _, o := range specs {
			out = append(out, o.At.Format(time.RFC3339))
		}
		return out
	}

	// Every other Tuesday at 02:30 from 3 March 2026: across spring
	// forward (no gap on a Tuesday), and a fixed-time rule.
	spec, err := ParseRRule("DTSTART:20260303T023000\nRRULE:FREQ=WEEKLY;INTERVAL=2;BYDAY=TU", "America/New_York")
	require.NoError(t, err)
	require.True(t, spec.FixedTime())
	require.Equal(t, "DTSTART:20260303T023000\nRRULE:FREQ=WEEKLY;INTERVAL=2;BYDAY=TU", spec.Describe())
	require.Equal(t, []string{"2026-03-03T02:30:00-05:00", "2026-03-17T02:30:00-04:00", "2026-03-31T02:30:00-04:00"},
		at(spec.NextN(time.Date(2026, 3, 1, 0, 0, 0, 0, ny), 3)...))

	// Daily at 02:30: the spring-forward day by each gap policy.
	spec, err = ParseRRule("DTSTART:20260301T023000\nRRULE:FREQ=DAILY", "America/New_York")
	require.NoError(t, err)
	after := time.Date(2026, 3, 8, 0, 0, 0, 0, ny)
	o, _ := spec.Next(after)
	require.Equal(t, "2026-03-08T03:00:00-04:00", o.At.Format(time.RFC3339))
	require.True(t, o.Shifted)
	shift, err := spec.WithDST(DSTPolicy{Gap: DSTGapShift})
	require.NoError(t, err)
	o, _ = shift.Next(after)
	require.Equal(t, "2026-03-08T03:30:00-04:00", o.At.Format(time.RFC3339))
	skip, err := spec.WithDST(DSTPolicy{Gap: DSTGapSkip})
	require.NoError(t, err)
	o, _ = skip.Next(after)
	require.True(t, o.Skipped)

	// Hourly follows elapsed time: 23 slots on the spring-forward day.
	spec, err = ParseRRule("DTSTART:20260301T000000\nRRULE:FREQ=HOURLY", "America/New_York")
	require.NoError(t, err)
	require.False(t, spec.FixedTime())
	var day []Occurrence
	for _, o := range spec.NextN(time.Date(2026, 3, 8, 0, 0, 0, 0, ny).Add(-time.Second), 30) {
		if o.At.Before(time.Date(2026, 3, 9, 0, 0, 0, 0, ny)) {
			day = append(day, o)
		}
	}
	require.Len(t, day, 23)

	// The last business day of the month, skipping an excluded date.
	spec, err = ParseRRule("DTSTART:20270101T180000\nRRULE:FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=-1", "America/New_York")
	require.NoError(t, err)
	spec, err = spec.WithExclusions(excludedDates(t, "us", "2027-05-31"), ExcludedSkip)
	require.NoError(t, err)
	got := spec.NextN(time.Date(2027, 4, 1, 0, 0, 0, 0, ny), 3)
	require.Equal(t, []string{"2027-04-30T18:00:00-04:00", "2027-05-31T18:00:00-04:00", "2027-06-30T18:00:00-04:00"}, at(got...))
	require.True(t, got[1].Skipped)

	// COUNT spent: no more, at once.
	spec, err = ParseRRule("DTSTART:20260101T090000\nRRULE:FREQ=DAILY;COUNT=3", "Europe/Paris")
	require.NoError(t, err)
	require.Len(t, spec.NextN(time.Date(2025, 12, 31, 0, 0, 0, 0, time.UTC), 10), 3)
	_, ok := spec.Next(time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC))
	require.False(t, ok)

	_, err = ParseRRule("RRULE:FREQ=DAILY", "")
	require.ErrorIs(t, err, ErrInvalid)
	_, err = ParseRRule("DTSTART:20260101T090000\nRRULE:FREQ=DAILY", "Mars/Olympus")
	require.ErrorIs(t, err, ErrInvalid)
}
