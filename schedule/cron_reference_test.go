package schedule

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// referenceFires computes by brute force, minute by minute, the instants in
// [from, to) at which a spec without seconds fires: an instant fires when
// its wall time matches (by robfig/cron, in UTC, where it has no DST to get
// wrong); a fixed-time spec fires only at the first instant of a wall time,
// and also at the first instant after a gap that jumped over a matching
// wall time.
func referenceFires(t *testing.T, spec *Spec, from, to time.Time) []time.Time {
	t.Helper()
	robfig, err := parser.Parse(spec.Expr())
	require.NoError(t, err)
	matches := func(wall time.Time) bool { return robfig.Next(wall.Add(-time.Second)).Equal(wall) }

	var fires []time.Time
	seen := make(map[time.Time]bool)
	previous := wallOf(from.Add(-time.Minute).In(spec.Location()))
	for instant := from; instant.Before(to); instant = instant.Add(time.Minute) {
		wall := wallOf(instant.In(spec.Location()))
		fire := matches(wall)
		if spec.FixedTime() {
			fire = fire && !seen[wall]
			seen[wall] = true
			for skipped := previous.Add(time.Minute); skipped.Before(wall); skipped = skipped.Add(time.Minute) {
				fire = fire || matches(skipped)
			}
		}
		if fire {
			fires = append(fires, instant)
		}
		previous = wall
	}
	return fires
}

// TestNextMatchesReference compares Next with referenceFires over three
// days around every DST change of dstZones.
func TestNextMatchesReference(t *testing.T) {
	t.Parallel()

	exprs := []string{
		"30 2 * * *", "0 2 * * *", "59 1 * * *", "0 3 * * *", "0,30 2,3 * * *", "15 0 * * *", "0 0 * * *",
		"30 23 * * *", "45 1 * * *", "0 1-3 * * *", "0 0-3 * * *", "0,15,30,45 2 * * *", "@daily",
		"0 * * * *", "*/15 * * * *", "*/15 2 * * *", "30 */2 * * *", "@hourly", "* 2 * * *", "*/7 1-3 * * *",
		"0-59/30 2 * * *", "5 * * * *", "0 23,0,1 * * *", "59 23 * * *", "0 0 4-6 * *", "20 1,2 * * 0",
	}
	for _, z := range dstZones {
		for _, day := range []time.Time{z.springDay, z.fallDay} {
			for _, expr := range exprs {
				t.Run(fmt.Sprintf("%s/%s/%s", strings.ReplaceAll(z.zone, "/", "_"), day.Format(time.DateOnly), expr), func(t *testing.T) {
					t.Parallel()

					spec := mustParse(t, expr, z.zone)
					from := time.Date(day.Year(), day.Month(), day.Day(), 0, 0, 0, 0, spec.Location()).Add(-24 * time.Hour)
					to := from.Add(72 * time.Hour)

					want := referenceFires(t, spec, from, to)
					var got []time.Time
					for after := from.Add(-time.Second); ; {
						occurrence, ok := spec.Next(after)
						require.True(t, ok)
						if !occurrence.At.Before(to) {
							break
						}
						got = append(got, occurrence.At)
						after = occurrence.At

						require.Equal(t, occurrence.Shifted, occurrence.Nominal != occurrence.At.Format(nominalLayout))
					}
					require.Equal(t, want, got)
				})
			}
		}
	}
}

// TestNextMatchesRobfigInUTC checks that, where there is no DST to get
// wrong, Next fires exactly when robfig/cron does.
func TestNextMatchesRobfigInUTC(t *testing.T) {
	t.Parallel()

	exprs := []string{
		"* * * * *", "*/7 * * * *", "0 9 * * 1-5", "5 4 * * sun", "0 0,12 1 */2 *", "0 0 13 * 5", "0 0 * * 5", "15 14 1 * *",
		"0 22 * * 1-5", "23 0-20/2 * * *", "0 0 1 1 *", "0 0 31 * *", "0 0 29 2 *", "30 59 23 31 12 *", "*/13 */7 */5 * * *",
		"0 0 L/2 * *", // rejected: a term in a step
		"@hourly", "@daily", "@weekly", "@monthly", "@yearly", "@every 7m13s",
	}
	for _, expr := range exprs {
		t.Run(expr, func(t *testing.T) {
			t.Parallel()

			spec, err := ParseSpec(expr, "")
			if err != nil {
				require.IsType(t, &CronError{}, err)
				return
			}
			robfig, err := parser.Parse(expr)
			require.NoError(t, err)

			after := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
			for _, occurrence := range spec.NextN(after, 500) {
				want := robfig.Next(after)
				if want.IsZero() {
					break // nothing within robfig/cron's 5 years
				}
				require.Equal(t, want.Format(time.RFC3339), occurrence.At.Format(time.RFC3339), "after %s", after)
				after = occurrence.At
			}
		})
	}
}

// fuzzZones are the zones FuzzNext picks from: no DST, both hemispheres,
// half-hour changes, changes at midnight, and Samoa, which skipped
// 30 December 2011.
var fuzzZones = []string{
	"", "America/New_York", "Australia/Lord_Howe", "America/Santiago", "Europe/London", "Pacific/Auckland",
	"Asia/Tokyo", "Pacific/Apia", "America/Sao_Paulo", "Asia/Kolkata", "Europe/Berlin", "Australia/Sydney",
}

func FuzzNext(f *testing.F) {
	for _, seed := range []struct {
		expr string
		zone uint8
		unix int64
	}{
		{"30 2 * * *", 1, 1772850000}, {"30 1 * * *", 1, 1793400000}, {"0 * * * *", 1, 1772900000}, {"*/15 2 * * *", 1, 1772850000},
		{"15 2 * * *", 2, 1790900000}, {"45 1 * * *", 2, 1775200000}, {"@daily", 3, 1788600000}, {"30 23 * * *", 3, 1775200000},
		{"0,30 2,3 * * *", 1, 1772850000}, {"* 30 2 * * *", 1, 1772850000}, {"0 0 29 2 *", 0, 4000000000}, {"@every 1h", 1, 1793400000},
		{"0 12 * * *", 7, 1325000000}, {"* * 30 12 *", 7, 1325000000}, {"0 0 13 * 5", 4, 1700000000}, {"@hourly", 2, 1775200000},
		{"0 0 30 2 *", 0, 0}, {"CRON_TZ=UTC * * * * *", 0, 0}, {"*/5 * * * * *", 5, 1790000000}, {"0 0-3 * * *", 8, 0},
	} {
		f.Add(seed.expr, seed.zone, seed.unix)
	}

	// after is kept from 1900 to 2200.
	const minUnix, maxUnix = -2208988800, 7258118400

	f.Fuzz(func(t *testing.T, expr string, zoneIndex uint8, afterUnix int64) {
		zone := fuzzZones[int(zoneIndex)%len(fuzzZones)]
		spec, err := ParseSpec(expr, zone)
		if err != nil {
			require.ErrorIs(t, err, ErrInvalid)
			var cronErr *CronError
			var noOccurrenceErr *NoOccurrenceError
			require.True(t, errors.As(err, &cronErr) || errors.As(err, &noOccurrenceErr), "%T", err)
			return
		}

		after := time.Unix(minUnix+(afterUnix%(maxUnix-minUnix)+(maxUnix-minUnix))%(maxUnix-minUnix), 0)
		occurrences := spec.NextN(after, 50)
		require.Len(t, occurrences, 50)

		previous := after
		for _, occurrence := range occurrences {
			require.True(t, occurrence.At.After(previous), "%s is not after %s", occurrence.At, previous)
			require.Zero(t, occurrence.At.Nanosecond())
			require.Equal(t, spec.Location(), occurrence.At.Location())

			nominal, err := time.Parse(nominalLayout, occurrence.Nominal)
			require.NoError(t, err)
			if every := spec.Interval(); every != 0 {
				require.Equal(t, every, occurrence.At.Sub(previous))
				require.Equal(t, occurrence.Nominal, occurrence.At.Format(nominalLayout))
				previous = occurrence.At
				continue
			}

			require.True(t, spec.fields.matches(nominal), "%s does not match %q", occurrence.Nominal, expr)
			p := place(nominal, spec.Location())
			if occurrence.Shifted {
				// Only fixed-time specs shift, to the end of the gap.
				require.True(t, spec.FixedTime())
				require.True(t, p.gap, "%s exists", occurrence.Nominal)
				require.True(t, p.first.Equal(occurrence.At), "%s is not the end of the gap %s", occurrence.At, p.first)
				require.NotEmpty(t, occurrence.Note)
			} else {
				require.Equal(t, occurrence.Nominal, occurrence.At.Format(nominalLayout))
				if spec.FixedTime() {
					require.True(t, p.first.Equal(occurrence.At), "%s is not the first %s", occurrence.At, occurrence.Nominal)
				}
			}
			previous = occurrence.At
		}

		// Without DST, Next is robfig/cron's Next (within its 5-year search).
		if zone == "" {
			robfig, err := parser.Parse(spec.Expr())
			require.NoError(t, err)
			previous := after
			for _, occurrence := range occurrences {
				want := robfig.Next(previous)
				if want.IsZero() {
					break
				}
				require.Equal(t, want.Unix(), occurrence.At.Unix())
				previous = occurrence.At
			}
		}
	})
}
