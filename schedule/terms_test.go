package schedule

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestTermsNext pins each calendar term's first slots of 2027 (checked
// against a calendar by hand) and the months where a term names no day.
func TestTermsNext(t *testing.T) {
	t.Parallel()

	for _, tt := range []struct {
		expr string
		want []string // local dates from 2027-01-01
	}{
		// January 31 is a Sunday, April 30 a Friday, July 31 a Saturday.
		{"0 18 L * *", []string{"2027-01-31", "2027-02-28", "2027-03-31", "2027-04-30", "2027-05-31"}},
		{"0 18 L-2 * *", []string{"2027-01-29", "2027-02-26", "2027-03-29", "2027-04-28", "2027-05-29"}},
		{"0 18 L-30 * *", []string{"2027-01-01", "2027-03-01", "2027-05-01", "2027-07-01", "2027-08-01"}},
		{"0 18 LW * *", []string{"2027-01-29", "2027-02-26", "2027-03-31", "2027-04-30", "2027-05-31", "2027-06-30", "2027-07-30"}},
		// May 15 is a Saturday (to Friday 14), August 15 a Sunday (to Monday 16).
		{"0 9 15W * *", []string{"2027-01-15", "2027-02-15", "2027-03-15", "2027-04-15", "2027-05-14", "2027-06-15", "2027-07-15", "2027-08-16"}},
		// May 1 is a Saturday: Monday 3, not Friday 30 April.
		{"0 9 1W 5 *", []string{"2027-05-03", "2028-05-01"}},
		// October 31 is a Sunday: Friday 29, not Monday 1 November; no
		// slot in the 30-day months.
		{"0 9 31W * *", []string{"2027-01-29", "2027-03-31", "2027-05-31", "2027-07-30", "2027-08-31", "2027-10-29", "2027-12-31"}},
		{"0 9 * * 5L", []string{"2027-01-29", "2027-02-26", "2027-03-26", "2027-04-30", "2027-05-28"}},
		{"0 9 * * FRIL", []string{"2027-01-29", "2027-02-26", "2027-03-26", "2027-04-30", "2027-05-28"}},
		{"0 9 * * 7L", []string{"2027-01-31", "2027-02-28", "2027-03-28", "2027-04-25", "2027-05-30"}},
		{"0 9 * * MON#2", []string{"2027-01-11", "2027-02-08", "2027-03-08", "2027-04-12", "2027-05-10"}},
		{"0 9 * * 1#5", []string{"2027-03-29", "2027-05-31", "2027-08-30", "2027-11-29", "2028-01-31"}},
		// A fifth Friday in February: a leap year whose February begins on
		// a Friday.
		{"0 0 * 2 FRI#5", []string{"2036-02-29", "2064-02-29", "2092-02-29", "2104-02-29", "2132-02-29"}},
		// Terms in lists beside plain values, in both fields.
		{"0 9 1,15,L * *", []string{"2027-01-01", "2027-01-15", "2027-01-31", "2027-02-01", "2027-02-15", "2027-02-28"}},
		{"0 9 * * 1#1,5L", []string{"2027-01-04", "2027-01-29", "2027-02-01", "2027-02-26", "2027-03-01", "2027-03-26"}},
		// Both day fields restricted: either matches (cron's rule).
		{"0 9 L * MON#1", []string{"2027-01-04", "2027-01-31", "2027-02-01", "2027-02-28", "2027-03-01", "2027-03-31"}},
		// ? is * in both day fields.
		{"0 9 ? * MON#1", []string{"2027-01-04", "2027-02-01", "2027-03-01"}},
		{"0 9 L * ?", []string{"2027-01-31", "2027-02-28", "2027-03-31"}},
		// Day of week 7 is Sunday, as 0 is.
		{"0 9 * * 7", []string{"2027-01-03", "2027-01-10", "2027-01-17"}},
		{"0 9 * * 5-7", []string{"2027-01-01", "2027-01-02", "2027-01-03", "2027-01-08"}},
		{"0 9 * * SAT-7", []string{"2027-01-02", "2027-01-03", "2027-01-09"}},
		{"0 9 * * 1-7/3", []string{"2027-01-03", "2027-01-04", "2027-01-07", "2027-01-10"}},
	} {
		t.Run(tt.expr, func(t *testing.T) {
			t.Parallel()

			spec := mustParse(t, tt.expr, "America/New_York")
			var got []string
			for _, o := range spec.NextN(time.Date(2027, 1, 1, 0, 0, 0, 0, spec.Location()).Add(-time.Second), len(tt.want)) {
				got = append(got, o.At.Format(time.DateOnly))
			}
			require.Equal(t, tt.want, got)
		})
	}
}

// TestTermsFarAhead: years past 2100 are found, and a slot years away is
// found fast (Next walks days, never seconds).
func TestTermsFarAhead(t *testing.T) {
	t.Parallel()

	spec := mustParse(t, "0 0 29 2 *", "")
	o, ok := spec.Next(time.Date(2097, 1, 1, 0, 0, 0, 0, time.UTC))
	require.True(t, ok)
	require.Equal(t, "2104-02-29T00:00:00Z", o.At.Format(time.RFC3339)) // 2100 is not a leap year

	spec = mustParse(t, "0 0 * 2 FRI#5", "Europe/Paris")
	o, ok = spec.Next(time.Date(2092, 3, 1, 0, 0, 0, 0, time.UTC))
	require.True(t, ok)
	require.Equal(t, "2104-02-29T00:00:00+01:00", o.At.Format(time.RFC3339))
	o, ok = spec.Next(time.Date(2500, 1, 1, 0, 0, 0, 0, time.UTC))
	require.True(t, ok)
	require.Equal(t, 2500, o.At.Year()/10*10)
}

// TestTermsHorizon checks termHorizon: over the whole 400-year cycle, the
// rarest terms are never termHorizon years apart, so Next finds every
// slot of a spec ParseSpec accepts.
func TestTermsHorizon(t *testing.T) {
	t.Parallel()

	for _, expr := range []string{"0 0 * 2 FRI#5", "0 0 * 2 0#5", "0 0 29W 2 *", "0 0 L-28 2 *", "0 0 * 2 5L", "0 0 29 2 *"} {
		spec := mustParse(t, expr, "")
		from := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
		longest := time.Duration(0)
		for at := from; at.Before(from.AddDate(400, 0, 0)); {
			o, ok := spec.Next(at)
			require.True(t, ok, "%s after %s", expr, at)
			longest = max(longest, o.At.Sub(at))
			at = o.At
		}
		require.Less(t, longest, time.Duration(termHorizon-1)*365*24*time.Hour, expr)
		t.Logf("%s: longest gap %.1f years", expr, longest.Hours()/24/365.25)
	}
}

// TestTermsParseErrors: a malformed term is a *CronError naming its field
// and the term, and a term that names no day in 400 years is a
// *NoOccurrenceError.
func TestTermsParseErrors(t *testing.T) {
	t.Parallel()

	for _, tt := range []struct{ expr, field, term string }{
		{"0 0 L/2 * *", "day-of-month", "L/2"},
		{"0 0 1-L * *", "day-of-month", "1-L"},
		{"0 0 L-31 * *", "day-of-month", "L-31"},
		{"0 0 L-0 * *", "day-of-month", "L-0"},
		{"0 0 32W * *", "day-of-month", "32W"},
		{"0 0 0W * *", "day-of-month", "0W"},
		{"0 0 W * *", "day-of-month", "W"},
		{"0 0 5L * *", "day-of-month", "5L"},
		{"0 0 1,lw2 * *", "day-of-month", "lw2"},
		{"0 0 * * L", "day-of-week", "L"},
		{"0 0 * * 8L", "day-of-week", "8L"},
		{"0 0 * * MON#6", "day-of-week", "MON#6"},
		{"0 0 * * MON#0", "day-of-week", "MON#0"},
		{"0 0 * * 1#", "day-of-week", "1#"},
		{"0 0 * * #2", "day-of-week", "#2"},
		{"0 0 * * MON-FRIL", "day-of-week", "MON-FRIL"},
		{"0 0 * * FUNL", "day-of-week", "FUNL"},
	} {
		t.Run(tt.expr, func(t *testing.T) {
			t.Parallel()

			_, err := ParseSpec(tt.expr, "")
			var cronErr *CronError
			require.ErrorAs(t, err, &cronErr)
			require.ErrorIs(t, err, ErrInvalid)
			require.Equal(t, tt.field, cronErr.Field)
			require.Equal(t, tt.term, cronErr.Term)
			require.Contains(t, err.Error(), "the "+tt.field+" field's \""+tt.term+"\" is not a term")
		})
	}

	for _, expr := range []string{"0 0 L-29 2 *", "0 0 31W 4,6,9,11 *", "0 0 30W 2 *"} {
		_, err := ParseSpec(expr, "")
		require.True(t, errors.Is(err, ErrNoOccurrence), "%s: %v", expr, err)
	}
}

// TestNominal: nominal writes what Format(nominalLayout) does.
func TestNominal(t *testing.T) {
	t.Parallel()

	for _, w := range []time.Time{
		time.Date(2026, 3, 8, 2, 30, 0, 0, time.UTC), time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC),
		time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(-1, 6, 15, 12, 0, 7, 0, time.UTC), time.Date(2104, 2, 29, 0, 0, 0, 0, time.UTC),
	} {
		require.Equal(t, w.Format(nominalLayout), nominal(w))
	}
}
