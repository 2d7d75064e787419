package schedule

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func excludedDates(t *testing.T, calendar string, dates ...string) []ExcludedDate {
	t.Helper()
	var out []ExcludedDate
	for _, text := range dates {
		date, err := time.Parse(time.DateOnly, text)
		require.NoError(t, err)
		out = append(out, ExcludedDate{Date: date, Calendar: calendar})
	}
	return out
}

// TestExclusions pins what a slot on an excluded date does, with the
// notes a ledger records; the oracle (TestNextMatchesOracle) checks it at
// random.
func TestExclusions(t *testing.T) {
	t.Parallel()

	type want struct {
		at, nominal, excluded string
		skipped               bool
		note                  string
	}
	for _, tt := range []struct {
		name, expr, zone string
		dst              DSTPolicy
		dates            []string
		on               OnExcluded
		after            time.Time
		want             []want
	}{
		{"Skip", "0 9 * * 1-5", "Europe/Paris", DSTPolicy{}, []string{"2026-12-25"}, ExcludedSkip, time.Date(2026, 12, 24, 12, 0, 0, 0, time.UTC),
			[]want{
				{"2026-12-25T09:00:00+01:00", "2026-12-25T09:00:00", "2026-12-25 (holidays)", true, "2026-12-25 is excluded by calendar holidays; skipped"},
				{"2026-12-28T09:00:00+01:00", "2026-12-28T09:00:00", "", false, ""},
			}},
		// Moved onto a slot of the date it lands on: one slot.
		{"NextBusinessDayMerged", "0 9 * * 1-5", "Europe/Paris", DSTPolicy{}, []string{"2026-12-25"}, ExcludedNextBusinessDay, time.Date(2026, 12, 24, 12, 0, 0, 0, time.UTC),
			[]want{
				{"2026-12-28T09:00:00+01:00", "2026-12-28T09:00:00", "", false, "2026-12-25 is excluded by calendar holidays; runs on the next business day, 2026-12-28"},
				{"2026-12-29T09:00:00+01:00", "2026-12-29T09:00:00", "", false, ""},
			}},
		// Moved past a weekend and an excluded Monday, to a date the spec
		// does not fire on otherwise.
		{"NextBusinessDayPastHolidays", "0 18 1 * *", "America/New_York", DSTPolicy{}, []string{"2027-01-01", "2027-01-04"}, ExcludedNextBusinessDay, time.Date(2026, 12, 31, 0, 0, 0, 0, time.UTC),
			[]want{
				{"2027-01-05T18:00:00-05:00", "2027-01-01T18:00:00", "2027-01-01 (holidays)", false, "2027-01-01 is excluded by calendar holidays; runs on the next business day, 2027-01-05"},
				{"2027-02-01T18:00:00-05:00", "2027-02-01T18:00:00", "", false, ""},
			}},
		// A moved slot found from after its own date: it still runs.
		{"MovedSlotAfterItsDate", "0 18 1 * *", "America/New_York", DSTPolicy{}, []string{"2027-01-01"}, ExcludedNextBusinessDay, time.Date(2027, 1, 2, 0, 0, 0, 0, time.UTC),
			[]want{
				{"2027-01-04T18:00:00-05:00", "2027-01-01T18:00:00", "2027-01-01 (holidays)", false, "2027-01-01 is excluded by calendar holidays; runs on the next business day, 2027-01-04"},
			}},
		// A moved slot resolves on its new date with the DST policy: in
		// Jerusalem clocks jump from 02:00 to 03:00 on Friday 27 March
		// 2026, so Thursday's 02:30 moved there runs at 03:30 with gap
		// shift, one slot with Friday's own 02:30.
		{"MovedIntoAGap", "30 2 * * *", "Asia/Jerusalem", DSTPolicy{Gap: DSTGapShift}, []string{"2026-03-26"}, ExcludedNextBusinessDay, time.Date(2026, 3, 25, 12, 0, 0, 0, time.UTC),
			[]want{
				{"2026-03-27T03:30:00+03:00", "2026-03-27T02:30:00", "", false,
					"02:30 does not exist on 2026-03-27 in Asia/Jerusalem (clocks jump from 02:00 to 03:00); runs at 03:30, shifted by the jump's length (1h). " +
						"2026-03-26 is excluded by calendar holidays; runs on the next business day, 2026-03-27"},
				{"2026-03-28T02:30:00+03:00", "2026-03-28T02:30:00", "", false, ""},
			}},
		// Without a slot of its own there, the moved one runs alone,
		// skipped by gap skip.
		{"MovedIntoASkippedGap", "30 2 26 3 *", "Asia/Jerusalem", DSTPolicy{Gap: DSTGapSkip}, []string{"2026-03-26"}, ExcludedNextBusinessDay, time.Date(2026, 3, 25, 12, 0, 0, 0, time.UTC),
			[]want{
				{"2026-03-27T03:00:00+03:00", "2026-03-26T02:30:00", "2026-03-26 (holidays)", true,
					"2026-03-26 is excluded by calendar holidays; runs on the next business day, 2026-03-27. " +
						"02:30 does not exist on 2026-03-27 in Asia/Jerusalem (clocks jump from 02:00 to 03:00); skipped, as the schedule's DST policy says (gap: skip)"},
			}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()

			spec, err := mustParse(t, tt.expr, tt.zone).WithDST(tt.dst)
			require.NoError(t, err)
			spec, err = spec.WithExclusions(excludedDates(t, "holidays", tt.dates...), tt.on)
			require.NoError(t, err)
			var got []want
			for _, o := range spec.NextN(tt.after, len(tt.want)) {
				got = append(got, want{o.At.Format(time.RFC3339), o.Nominal, o.Excluded, o.Skipped, o.Note})
			}
			require.Equal(t, tt.want, got)
		})
	}

	_, err := mustParse(t, "@daily", "").WithExclusions(nil, "later")
	require.EqualError(t, err, `schedule: invalid OnExcluded: "later" is not a policy for excluded dates; use skip or next-business-day`)
	_, err = mustParse(t, "@every 1h", "").WithExclusions(nil, ExcludedNextBusinessDay)
	require.ErrorIs(t, err, ErrInvalid)
	spec, err := mustParse(t, "@every 6h", "").WithExclusions(excludedDates(t, "holidays", "2026-12-25"), ExcludedSkip)
	require.NoError(t, err)
	var skipped int
	for _, o := range spec.NextN(time.Date(2026, 12, 24, 23, 0, 0, 0, time.UTC), 8) {
		if o.Skipped {
			skipped++
		}
	}
	require.Equal(t, 4, skipped, "the 4 slots of 25 December")
}
