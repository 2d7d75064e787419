package schedule

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/robfig/cron/v3"
	"github.com/stretchr/testify/require"
)

// dstZone describes one zone's daylight saving time changes in 2026.
type dstZone struct {
	zone string

	// The spring-forward day, the wall time the clocks jump from and to,
	// and the transition instant.
	springDay            time.Time
	springFrom, springTo string
	springAt             string

	// The fall-back day, the wall time the clocks go back from and to, and
	// the offset before the transition (the first pass).
	fallDay          time.Time
	fallFrom, fallTo string
	fallFirstOffset  string

	// Fires of "0 * * * *", "*/15 * * * *" and "@every 1h" on each day.
	springHourly, springQuarterly, springEvery int
	fallHourly, fallQuarterly, fallEvery       int
}

func date(year int, month time.Month, day int) time.Time {
	return time.Date(year, month, day, 0, 0, 0, 0, time.UTC)
}

// dstZones are checked against zdump -v -c 2026,2027.
var dstZones = []dstZone{
	{
		zone:      "America/New_York",
		springDay: date(2026, 3, 8), springFrom: "02:00", springTo: "03:00", springAt: "2026-03-08T03:00:00-04:00",
		fallDay: date(2026, 11, 1), fallFrom: "02:00", fallTo: "01:00", fallFirstOffset: "-04:00",
		springHourly: 23, springQuarterly: 92, springEvery: 23,
		fallHourly: 25, fallQuarterly: 100, fallEvery: 25,
	},
	{
		zone:      "Europe/London",
		springDay: date(2026, 3, 29), springFrom: "01:00", springTo: "02:00", springAt: "2026-03-29T02:00:00+01:00",
		fallDay: date(2026, 10, 25), fallFrom: "02:00", fallTo: "01:00", fallFirstOffset: "+01:00",
		springHourly: 23, springQuarterly: 92, springEvery: 23,
		fallHourly: 25, fallQuarterly: 100, fallEvery: 25,
	},
	{
		zone:      "Europe/Berlin",
		springDay: date(2026, 3, 29), springFrom: "02:00", springTo: "03:00", springAt: "2026-03-29T03:00:00+02:00",
		fallDay: date(2026, 10, 25), fallFrom: "03:00", fallTo: "02:00", fallFirstOffset: "+02:00",
		springHourly: 23, springQuarterly: 92, springEvery: 23,
		fallHourly: 25, fallQuarterly: 100, fallEvery: 25,
	},
	{
		zone:      "Australia/Sydney",
		springDay: date(2026, 10, 4), springFrom: "02:00", springTo: "03:00", springAt: "2026-10-04T03:00:00+11:00",
		fallDay: date(2026, 4, 5), fallFrom: "03:00", fallTo: "02:00", fallFirstOffset: "+11:00",
		springHourly: 23, springQuarterly: 92, springEvery: 23,
		fallHourly: 25, fallQuarterly: 100, fallEvery: 25,
	},
	{
		// 30-minute changes: 23.5 and 24.5 hour days.
		zone:      "Australia/Lord_Howe",
		springDay: date(2026, 10, 4), springFrom: "02:00", springTo: "02:30", springAt: "2026-10-04T02:30:00+11:00",
		fallDay: date(2026, 4, 5), fallFrom: "02:00", fallTo: "01:30", fallFirstOffset: "+11:00",
		springHourly: 23, springQuarterly: 94, springEvery: 24,
		fallHourly: 24, fallQuarterly: 98, fallEvery: 25,
	},
	{
		// Changes at midnight: midnight does not exist on the spring-forward
		// day, and 23:00 to 23:59 occur twice on the Saturday before the
		// fall-back Sunday.
		zone:      "America/Santiago",
		springDay: date(2026, 9, 6), springFrom: "00:00", springTo: "01:00", springAt: "2026-09-06T01:00:00-03:00",
		fallDay: date(2026, 4, 4), fallFrom: "24:00", fallTo: "23:00", fallFirstOffset: "-03:00",
		springHourly: 23, springQuarterly: 92, springEvery: 23,
		fallHourly: 25, fallQuarterly: 100, fallEvery: 25,
	},
	{
		zone:      "Pacific/Auckland",
		springDay: date(2026, 9, 27), springFrom: "02:00", springTo: "03:00", springAt: "2026-09-27T03:00:00+13:00",
		fallDay: date(2026, 4, 5), fallFrom: "03:00", fallTo: "02:00", fallFirstOffset: "+13:00",
		springHourly: 23, springQuarterly: 92, springEvery: 23,
		fallHourly: 25, fallQuarterly: 100, fallEvery: 25,
	},
}

// clockOf parses "02:30" as a duration since midnight.
func clockOf(t *testing.T, s string) time.Duration {
	t.Helper()
	var h, m int
	_, err := fmt.Sscanf(s, "%d:%d", &h, &m)
	require.NoError(t, err)
	return time.Duration(h)*time.Hour + time.Duration(m)*time.Minute
}

// cronAt returns a daily cron expression at a wall time of day.
func cronAt(d time.Duration) string {
	return fmt.Sprintf("%d %d * * *", int(d/time.Minute)%60, int(d/time.Hour))
}

func TestNextDST(t *testing.T) {
	t.Parallel()

	for _, z := range dstZones {
		t.Run(strings.ReplaceAll(z.zone, "/", "_"), func(t *testing.T) {
			t.Parallel()

			t.Run("SpringForwardFixedTimeRunsOnceAfterTheJump", func(t *testing.T) {
				t.Parallel()

				// 15 minutes into the gap.
				nominal := z.springDay.Add(clockOf(t, z.springFrom) + 15*time.Minute)
				spec := mustParse(t, cronAt(clockOf(t, z.springFrom)+15*time.Minute), z.zone)

				fires := onDay(t, spec, z.springDay.Year(), z.springDay.Month(), z.springDay.Day())
				require.Len(t, fires, 1)
				require.Equal(t, z.springAt, fires[0].At.Format(time.RFC3339))
				require.Equal(t, nominal.Format(nominalLayout), fires[0].Nominal)
				require.True(t, fires[0].Shifted)
				require.Equal(t, fmt.Sprintf("%s does not exist on %s in %s (clocks jump from %s to %s); runs at %s, right after the jump",
					nominal.Format("15:04"), z.springDay.Format(time.DateOnly), z.zone, z.springFrom, z.springTo, z.springTo), fires[0].Note)

				// The days around it are ordinary.
				for _, day := range []time.Time{z.springDay.AddDate(0, 0, -1), z.springDay.AddDate(0, 0, 1)} {
					fires := onDay(t, spec, day.Year(), day.Month(), day.Day())
					require.Len(t, fires, 1)
					require.False(t, fires[0].Shifted)
					require.Empty(t, fires[0].Note)
					require.Equal(t, day.Add(clockOf(t, z.springFrom)+15*time.Minute).Format(nominalLayout), fires[0].Nominal)
					require.Equal(t, fires[0].Nominal, fires[0].At.Format(nominalLayout))
				}
			})

			t.Run("FallBackFixedTimeRunsOnceAtTheFirst", func(t *testing.T) {
				t.Parallel()

				// 15 minutes into the stretch that occurs twice.
				wall := clockOf(t, z.fallTo) + 15*time.Minute
				spec := mustParse(t, cronAt(wall), z.zone)

				fires := onDay(t, spec, z.fallDay.Year(), z.fallDay.Month(), z.fallDay.Day())
				require.Len(t, fires, 1)
				require.Equal(t, z.fallDay.Add(wall).Format(nominalLayout), fires[0].Nominal)
				require.Equal(t, fires[0].Nominal, fires[0].At.Format(nominalLayout))
				require.Equal(t, z.fallFirstOffset, fires[0].At.Format("-07:00"))
				require.False(t, fires[0].Shifted)
				fallFrom := z.fallFrom
				if fallFrom == "24:00" {
					fallFrom = "00:00"
				}
				require.Equal(t, fmt.Sprintf("%s occurs twice on %s in %s (clocks go back from %s to %s); runs once, at the first (%s)",
					z.fallDay.Add(wall).Format("15:04"), z.fallDay.Format(time.DateOnly), z.zone, fallFrom, z.fallTo, z.fallFirstOffset), fires[0].Note)

				// Next from the second pass of the wall time goes to the next day.
				second := fires[0].At.Add(clockOf(t, z.fallFrom) - clockOf(t, z.fallTo))
				require.Equal(t, fires[0].Nominal, second.Format(nominalLayout), "the second pass")
				next, ok := spec.Next(second.Add(-time.Second))
				require.True(t, ok)
				require.Equal(t, z.fallDay.AddDate(0, 0, 1).Add(wall).Format(nominalLayout), next.Nominal)
			})

			t.Run("DailyRunsOnceEveryDay", func(t *testing.T) {
				t.Parallel()

				for _, expr := range []string{"@daily", "0 0 * * *", "59 23 * * *", "30 1 * * *", "30 2 * * *", "30 3 * * *", "0 12 * * *"} {
					spec := mustParse(t, expr, z.zone)
					for _, day := range []time.Time{z.springDay, z.fallDay} {
						fires := onDay(t, spec, day.Year(), day.Month(), day.Day())
						require.Len(t, fires, 1, "%s on %s", expr, day.Format(time.DateOnly))
					}
				}
			})

			t.Run("ElapsedTimeFiresPerDay", func(t *testing.T) {
				t.Parallel()

				for _, tt := range []struct {
					expr                   string
					spring, fall, ordinary int
				}{
					{"0 * * * *", z.springHourly, z.fallHourly, 24},
					{"@hourly", z.springHourly, z.fallHourly, 24},
					{"*/15 * * * *", z.springQuarterly, z.fallQuarterly, 96},
					{"0 0 * * * *", z.springHourly, z.fallHourly, 24},
				} {
					spec := mustParse(t, tt.expr, z.zone)
					require.Len(t, onDay(t, spec, z.springDay.Year(), z.springDay.Month(), z.springDay.Day()), tt.spring, tt.expr)
					require.Len(t, onDay(t, spec, z.fallDay.Year(), z.fallDay.Month(), z.fallDay.Day()), tt.fall, tt.expr)
					for _, ordinary := range []time.Time{z.springDay.AddDate(0, 0, 7), z.fallDay.AddDate(0, 0, -7)} {
						require.Len(t, onDay(t, spec, ordinary.Year(), ordinary.Month(), ordinary.Day()), tt.ordinary, tt.expr)
					}
				}

				// @every 1h from the first instant of the day.
				spec := mustParse(t, "@every 1h", z.zone)
				for _, tt := range []struct {
					day  time.Time
					want int
				}{{z.springDay, z.springEvery}, {z.fallDay, z.fallEvery}} {
					start := tt.day.Add(-16 * time.Hour)
					for start.In(spec.Location()).Day() != tt.day.Day() {
						start = start.Add(time.Minute)
					}
					n := 0
					for _, occurrence := range spec.NextN(start.Add(-time.Hour), 30) {
						if occurrence.At.Day() == tt.day.Day() {
							n++
						}
					}
					require.Equal(t, tt.want, n, tt.day.Format(time.DateOnly))
				}
			})
		})
	}
}

// TestNextNoDST checks zones without daylight saving time: every day is
// ordinary.
func TestNextNoDST(t *testing.T) {
	t.Parallel()

	for _, zone := range []string{"", "UTC", "Asia/Tokyo", "Asia/Kolkata"} {
		t.Run(zone, func(t *testing.T) {
			t.Parallel()

			for _, tt := range []struct {
				expr string
				want int
			}{{"0 * * * *", 24}, {"*/15 * * * *", 96}, {"30 2 * * *", 1}, {"@daily", 1}, {"*/30 * * * * *", 2880}} {
				spec := mustParse(t, tt.expr, zone)
				for month := time.January; month <= time.December; month++ {
					fires := onDay(t, spec, 2026, month, 8)
					require.Len(t, fires, tt.want, "%s on 2026-%02d-08", tt.expr, month)
					for _, fire := range fires {
						require.False(t, fire.Shifted)
						require.Empty(t, fire.Note)
						require.Equal(t, fire.Nominal, fire.At.Format(nominalLayout))
					}
				}
			}

			spec := mustParse(t, "30 2 * * *", zone)
			occurrence, ok := spec.Next(time.Date(2026, 3, 8, 0, 0, 0, 0, spec.Location()))
			require.True(t, ok)
			require.Equal(t, "2026-03-08T02:30:00", occurrence.At.Format(nominalLayout))
		})
	}
}

// TestRobfigAloneGetsDSTWrong shows what robfig/cron does with a zone on
// the two DST days in New York, and what Tributary does instead.
func TestRobfigAloneGetsDSTWrong(t *testing.T) {
	t.Parallel()

	ny := mustLoad(t, "America/New_York")
	next := func(schedule cron.Schedule, after time.Time, n int) []string {
		var out []string
		for range n {
			after = schedule.Next(after)
			out = append(out, after.Format(time.RFC3339))
		}
		return out
	}

	t.Run("SpringForward", func(t *testing.T) {
		t.Parallel()

		after := time.Date(2026, 3, 7, 12, 0, 0, 0, ny)

		robfig, err := cron.ParseStandard("CRON_TZ=America/New_York 30 2 * * *")
		require.NoError(t, err)
		require.Equal(t, []string{
			"2026-03-09T02:30:00-04:00", // 8 March skipped
			"2026-03-10T02:30:00-04:00",
		}, next(robfig, after, 2))

		spec := mustParse(t, "30 2 * * *", "America/New_York")
		require.Equal(t, []string{
			"2026-03-08T03:00:00-04:00", // once, right after the jump
			"2026-03-09T02:30:00-04:00",
			"2026-03-10T02:30:00-04:00",
		}, formatAll(spec.NextN(after, 3)))
	})

	t.Run("FallBack", func(t *testing.T) {
		t.Parallel()

		after := time.Date(2026, 10, 31, 12, 0, 0, 0, ny)

		robfig, err := cron.ParseStandard("CRON_TZ=America/New_York 30 1 * * *")
		require.NoError(t, err)
		require.Equal(t, []string{
			"2026-11-01T01:30:00-04:00",
			"2026-11-01T01:30:00-05:00", // twice on 1 November
			"2026-11-02T01:30:00-05:00",
		}, next(robfig, after, 3))

		spec := mustParse(t, "30 1 * * *", "America/New_York")
		require.Equal(t, []string{
			"2026-11-01T01:30:00-04:00", // once, at the first
			"2026-11-02T01:30:00-05:00",
			"2026-11-03T01:30:00-05:00",
		}, formatAll(spec.NextN(after, 3)))
	})

	t.Run("ElapsedTimeAgrees", func(t *testing.T) {
		t.Parallel()

		// Where following elapsed time is right, Tributary agrees with robfig.
		robfig, err := cron.ParseStandard("CRON_TZ=America/New_York 0 * * * *")
		require.NoError(t, err)
		spec := mustParse(t, "0 * * * *", "America/New_York")
		for _, after := range []time.Time{time.Date(2026, 3, 7, 22, 0, 0, 0, ny), time.Date(2026, 10, 31, 22, 0, 0, 0, ny)} {
			require.Equal(t, next(robfig, after, 30), formatAll(spec.NextN(after, 30)))
		}
	})
}

func TestNextNotes(t *testing.T) {
	t.Parallel()

	ny := mustLoad(t, "America/New_York")
	spring := time.Date(2026, 3, 7, 12, 0, 0, 0, ny)
	fall := time.Date(2026, 10, 31, 12, 0, 0, 0, ny)

	tests := []struct {
		name, expr string
		after      time.Time
		want       []Occurrence // only those on the DST day
	}{
		{
			name: "GapMergedWithJumpTime", expr: "0,30 2,3 * * *", after: spring,
			want: []Occurrence{
				{At: time.Date(2026, 3, 8, 3, 0, 0, 0, ny), Nominal: "2026-03-08T02:00:00", Shifted: true,
					Note: "02:00 and 02:30 do not exist on 2026-03-08 in America/New_York (clocks jump from 02:00 to 03:00); " +
						"they run once, at 03:00, right after the jump, merged with the 03:00 time"},
				{At: time.Date(2026, 3, 8, 3, 30, 0, 0, ny), Nominal: "2026-03-08T03:30:00"},
			},
		},
		{
			name: "GapSeveralTimes", expr: "*/10 30 2 * * *", after: spring,
			want: []Occurrence{
				{At: time.Date(2026, 3, 8, 3, 0, 0, 0, ny), Nominal: "2026-03-08T02:30:00", Shifted: true,
					Note: "the 6 times from 02:30 to 02:30:50 do not exist on 2026-03-08 in America/New_York (clocks jump from 02:00 to 03:00); " +
						"they run once, at 03:00, right after the jump"},
			},
		},
		{
			name: "GapWithSeconds", expr: "15 0 2 * * *", after: spring,
			want: []Occurrence{
				{At: time.Date(2026, 3, 8, 3, 0, 0, 0, ny), Nominal: "2026-03-08T02:00:15", Shifted: true,
					Note: "02:00:15 does not exist on 2026-03-08 in America/New_York (clocks jump from 02:00 to 03:00); runs at 03:00, right after the jump"},
			},
		},
		{
			name: "ElapsedGapSkipped", expr: "0 * * * *", after: spring,
			want: append(hourly(ny, 2026, 3, 8, 0, 1), append([]Occurrence{
				{At: time.Date(2026, 3, 8, 3, 0, 0, 0, ny), Nominal: "2026-03-08T03:00:00",
					Note: "02:00 does not exist on 2026-03-08 in America/New_York (clocks jump from 02:00 to 03:00); this schedule follows elapsed time, so it does not run"},
			}, hourly(ny, 2026, 3, 8, 4, 23)...)...),
		},
		{
			name: "ElapsedGapSkippedUntilTheNextDay", expr: "*/20 2 * * *", after: spring,
			want: nil, // and the next day's 02:00 says why
		},
		{
			name: "ElapsedTwice", expr: "30 * * * *", after: fall,
			want: append(hourly30(ny, 2026, 11, 1, 0, 0), append([]Occurrence{
				{At: time.Date(2026, 11, 1, 5, 30, 0, 0, time.UTC).In(ny), Nominal: "2026-11-01T01:30:00",
					Note: "01:30 occurs twice on 2026-11-01 in America/New_York (clocks go back from 02:00 to 01:00); " +
						"this schedule follows elapsed time, so it runs at both: this is the first (-04:00)"},
				{At: time.Date(2026, 11, 1, 6, 30, 0, 0, time.UTC).In(ny), Nominal: "2026-11-01T01:30:00",
					Note: "01:30 occurs twice on 2026-11-01 in America/New_York (clocks go back from 02:00 to 01:00); " +
						"this schedule follows elapsed time, so it runs at both: this is the second (-05:00)"},
			}, hourly30(ny, 2026, 11, 1, 2, 23)...)...),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()

			spec := mustParse(t, tt.expr, "America/New_York")
			dstDay := tt.after.AddDate(0, 0, 1)
			got := onDay(t, spec, dstDay.Year(), dstDay.Month(), dstDay.Day())
			require.Equal(t, formatAll(tt.want), formatAll(got))
			for i := range tt.want {
				require.Equal(t, tt.want[i].Nominal, got[i].Nominal)
				require.Equal(t, tt.want[i].Shifted, got[i].Shifted)
				require.Equal(t, tt.want[i].Note, got[i].Note)
			}
		})
	}

	t.Run("ElapsedGapNoteOnTheNextOccurrence", func(t *testing.T) {
		t.Parallel()

		spec := mustParse(t, "*/20 2 * * *", "America/New_York")
		occurrences := spec.NextN(spring, 4)
		require.Equal(t, []string{
			"2026-03-09T02:00:00-04:00", "2026-03-09T02:20:00-04:00", "2026-03-09T02:40:00-04:00", "2026-03-10T02:00:00-04:00",
		}, formatAll(occurrences))
		require.Equal(t, "the 3 times from 02:00 to 02:40 do not exist on 2026-03-08 in America/New_York (clocks jump from 02:00 to 03:00); "+
			"this schedule follows elapsed time, so they do not run", occurrences[0].Note)
		require.Empty(t, occurrences[1].Note)
	})
}

// hourly returns the on-the-hour occurrences of a day from hour from to
// hour to, none of them touched by DST.
func hourly(loc *time.Location, year int, month time.Month, day, from, to int) []Occurrence {
	var out []Occurrence
	for h := from; h <= to; h++ {
		at := time.Date(year, month, day, h, 0, 0, 0, loc)
		out = append(out, Occurrence{At: at, Nominal: at.Format(nominalLayout)})
	}
	return out
}

// hourly30 is hourly at half past.
func hourly30(loc *time.Location, year int, month time.Month, day, from, to int) []Occurrence {
	out := hourly(loc, year, month, day, from, to)
	for i := range out {
		out[i].At = out[i].At.Add(30 * time.Minute)
		out[i].Nominal = out[i].At.Format(nominalLayout)
	}
	return out
}
