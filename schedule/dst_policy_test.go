package schedule

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestDSTPolicies pins each DST policy on New York's and Lord Howe's
// clock changes, with the notes a ledger records; the oracle
// (TestNextMatchesOracle) checks them at random.
func TestDSTPolicies(t *testing.T) {
	t.Parallel()

	ny, err := time.LoadLocation("America/New_York")
	require.NoError(t, err)
	type want struct {
		at               string // RFC 3339
		nominal          string
		shifted, skipped bool
		note             string
	}
	gapNY := "02:30 does not exist on 2026-03-08 in America/New_York (clocks jump from 02:00 to 03:00)"
	for _, tt := range []struct {
		name, expr, zone string
		policy           DSTPolicy
		after            time.Time
		want             []want
	}{
		{"GapJump", "30 2 * * *", "America/New_York", DSTPolicy{}, time.Date(2026, 3, 8, 0, 0, 0, 0, ny),
			[]want{{"2026-03-08T03:00:00-04:00", "2026-03-08T02:30:00", true, false, gapNY + "; runs at 03:00, right after the jump"}}},
		{"GapShift", "30 2 * * *", "America/New_York", DSTPolicy{Gap: DSTGapShift}, time.Date(2026, 3, 8, 0, 0, 0, 0, ny),
			[]want{{"2026-03-08T03:30:00-04:00", "2026-03-08T02:30:00", true, false, gapNY + "; runs at 03:30, shifted by the jump's length (1h)"}}},
		{"GapSkip", "30 2 * * *", "America/New_York", DSTPolicy{Gap: DSTGapSkip}, time.Date(2026, 3, 8, 0, 0, 0, 0, ny),
			[]want{{"2026-03-08T03:00:00-04:00", "2026-03-08T02:30:00", false, true, gapNY + "; skipped, as the schedule's DST policy says (gap: skip)"}}},
		// Shifted onto a time that exists: one slot, the existing time's.
		{"GapShiftMerged", "0,30 2,3 * * *", "America/New_York", DSTPolicy{Gap: DSTGapShift}, time.Date(2026, 3, 8, 0, 0, 0, 0, ny),
			[]want{
				{"2026-03-08T03:00:00-04:00", "2026-03-08T03:00:00", false, false,
					"02:00 does not exist on 2026-03-08 in America/New_York (clocks jump from 02:00 to 03:00); runs at 03:00, shifted by the jump's length (1h)"},
				{"2026-03-08T03:30:00-04:00", "2026-03-08T03:30:00", false, false,
					gapNY + "; runs at 03:30, shifted by the jump's length (1h)"},
			}},
		// Skipped where a time that exists runs at the jump: it runs, and
		// says what was skipped.
		{"GapSkipBesideRealTime", "30 2,3 * * *", "America/New_York", DSTPolicy{Gap: DSTGapSkip}, time.Date(2026, 3, 8, 0, 0, 0, 0, ny),
			[]want{
				{"2026-03-08T03:00:00-04:00", "2026-03-08T02:30:00", false, true, gapNY + "; skipped, as the schedule's DST policy says (gap: skip)"},
				{"2026-03-08T03:30:00-04:00", "2026-03-08T03:30:00", false, false, ""},
			}},
		{"FoldFirst", "30 1 * * *", "America/New_York", DSTPolicy{}, time.Date(2026, 11, 1, 0, 0, 0, 0, ny),
			[]want{{"2026-11-01T01:30:00-04:00", "2026-11-01T01:30:00", false, false,
				"01:30 occurs twice on 2026-11-01 in America/New_York (clocks go back from 02:00 to 01:00); runs once, at the first (-04:00)"}}},
		{"FoldLast", "30 1 * * *", "America/New_York", DSTPolicy{Fold: DSTFoldLast}, time.Date(2026, 11, 1, 0, 0, 0, 0, ny),
			[]want{{"2026-11-01T01:30:00-05:00", "2026-11-01T01:30:00", false, false,
				"01:30 occurs twice on 2026-11-01 in America/New_York (clocks go back from 02:00 to 01:00); runs once, at the second (-05:00)"}}},
		// From inside the first pass, the last policy still finds the
		// second pass of an earlier wall time.
		{"FoldLastFromFirstPass", "30 1 * * *", "America/New_York", DSTPolicy{Fold: DSTFoldLast}, time.Date(2026, 11, 1, 5, 45, 0, 0, time.UTC),
			[]want{{"2026-11-01T01:30:00-05:00", "2026-11-01T01:30:00", false, false,
				"01:30 occurs twice on 2026-11-01 in America/New_York (clocks go back from 02:00 to 01:00); runs once, at the second (-05:00)"}}},
		{"FoldBoth", "30 1 * * *", "America/New_York", DSTPolicy{Fold: DSTFoldBoth}, time.Date(2026, 11, 1, 0, 0, 0, 0, ny),
			[]want{
				{"2026-11-01T01:30:00-04:00", "2026-11-01T01:30:00", false, false,
					"01:30 occurs twice on 2026-11-01 in America/New_York (clocks go back from 02:00 to 01:00); its DST policy runs it at both: this is the first (-04:00)"},
				{"2026-11-01T01:30:00-05:00", "2026-11-01T01:30:00", false, false,
					"01:30 occurs twice on 2026-11-01 in America/New_York (clocks go back from 02:00 to 01:00); its DST policy runs it at both: this is the second (-05:00)"},
			}},
		// Lord Howe moves its clocks by half an hour, at 02:00.
		{"HalfHourGapShift", "15 2 * * *", "Australia/Lord_Howe", DSTPolicy{Gap: DSTGapShift}, time.Date(2026, 10, 3, 12, 0, 0, 0, time.UTC),
			[]want{{"2026-10-04T02:45:00+11:00", "2026-10-04T02:15:00", true, false,
				"02:15 does not exist on 2026-10-04 in Australia/Lord_Howe (clocks jump from 02:00 to 02:30); runs at 02:45, shifted by the jump's length (30m)"}}},
		// A spec that is not fixed-time follows elapsed time whatever its
		// policy.
		{"ElapsedIgnoresPolicy", "30 * * * *", "America/New_York", DSTPolicy{Gap: DSTGapShift, Fold: DSTFoldFirst}, time.Date(2026, 3, 8, 1, 0, 0, 0, ny),
			[]want{
				{"2026-03-08T01:30:00-05:00", "2026-03-08T01:30:00", false, false, ""},
				{"2026-03-08T03:30:00-04:00", "2026-03-08T03:30:00", false, false,
					"02:30 does not exist on 2026-03-08 in America/New_York (clocks jump from 02:00 to 03:00); this schedule follows elapsed time, so it does not run"},
			}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()

			spec, err := mustParse(t, tt.expr, tt.zone).WithDST(tt.policy)
			require.NoError(t, err)
			var got []want
			for _, o := range spec.NextN(tt.after, len(tt.want)) {
				got = append(got, want{o.At.Format(time.RFC3339), o.Nominal, o.Shifted, o.Skipped, o.Note})
			}
			require.Equal(t, tt.want, got)
		})
	}

	_, err = mustParse(t, "@daily", "").WithDST(DSTPolicy{Gap: "later"})
	require.ErrorIs(t, err, ErrInvalid)
	require.EqualError(t, err, `schedule: invalid DSTGap: "later" is not a DST gap policy; use jump, shift or skip`)
	_, err = mustParse(t, "@daily", "").WithDST(DSTPolicy{Fold: "twice"})
	require.EqualError(t, err, `schedule: invalid DSTFold: "twice" is not a DST fold policy; use first, last or both`)
	require.Equal(t, DSTPolicy{Gap: DSTGapJump, Fold: DSTFoldFirst}, mustParse(t, "@daily", "").DST())
}
