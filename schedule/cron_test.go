package schedule

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/robfig/cron/v3"
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

func TestParseSpec(t *testing.T) {
	t.Parallel()

	tests := []struct {
		expr, zone string
		wantExpr   string
		wantZone   string
		fixedTime  bool
		interval   time.Duration
	}{
		{expr: "30 2 * * *", zone: "America/New_York", wantExpr: "30 2 * * *", wantZone: "America/New_York", fixedTime: true},
		{expr: "  0   9 * *  1-5 ", zone: "", wantExpr: "0 9 * * 1-5", wantZone: "UTC", fixedTime: true},
		{expr: "0 9-17 * * MON-FRI", zone: "UTC", wantExpr: "0 9-17 * * MON-FRI", wantZone: "UTC", fixedTime: true},
		{expr: "0,30 8,20 * * *", zone: "Europe/Paris", wantExpr: "0,30 8,20 * * *", wantZone: "Europe/Paris", fixedTime: true},
		{expr: "*/10 30 2 * * *", zone: "", wantExpr: "*/10 30 2 * * *", wantZone: "UTC", fixedTime: true}, // seconds don't count
		{expr: "0 * * * *", zone: "", wantExpr: "0 * * * *", wantZone: "UTC"},
		{expr: "0 */2 * * *", zone: "", wantExpr: "0 */2 * * *", wantZone: "UTC"},
		{expr: "0 1-23/2 * * *", zone: "", wantExpr: "0 1-23/2 * * *", wantZone: "UTC"},
		{expr: "*/15 * * * *", zone: "", wantExpr: "*/15 * * * *", wantZone: "UTC"},
		{expr: "*/15 2 * * *", zone: "", wantExpr: "*/15 2 * * *", wantZone: "UTC"},
		{expr: "0-59/30 2 * * *", zone: "", wantExpr: "0-59/30 2 * * *", wantZone: "UTC"},
		{expr: "0 ? * * *", zone: "", wantExpr: "0 ? * * *", wantZone: "UTC"},
		{expr: "0 0 1 * * *", zone: "", wantExpr: "0 0 1 * * *", wantZone: "UTC", fixedTime: true},
		{expr: "@hourly", zone: "", wantExpr: "@hourly", wantZone: "UTC"},
		{expr: "@daily", zone: "Asia/Tokyo", wantExpr: "@daily", wantZone: "Asia/Tokyo", fixedTime: true},
		{expr: "@midnight", zone: "", wantExpr: "@midnight", wantZone: "UTC", fixedTime: true},
		{expr: "@weekly", zone: "", wantExpr: "@weekly", wantZone: "UTC", fixedTime: true},
		{expr: "@monthly", zone: "", wantExpr: "@monthly", wantZone: "UTC", fixedTime: true},
		{expr: "@yearly", zone: "", wantExpr: "@yearly", wantZone: "UTC", fixedTime: true},
		{expr: "@annually", zone: "", wantExpr: "@annually", wantZone: "UTC", fixedTime: true},
		{expr: " @every   1h30m ", zone: "", wantExpr: "@every 1h30m", wantZone: "UTC", interval: 90 * time.Minute},
		{expr: "0 0 29 2 *", zone: "", wantExpr: "0 0 29 2 *", wantZone: "UTC", fixedTime: true},
	}
	for _, tt := range tests {
		t.Run(tt.expr, func(t *testing.T) {
			t.Parallel()

			spec := mustParse(t, tt.expr, tt.zone)
			require.Equal(t, tt.wantExpr, spec.Expr())
			require.Equal(t, tt.wantZone, spec.Zone())
			require.Equal(t, tt.wantZone, spec.Location().String())
			require.Equal(t, tt.fixedTime, spec.FixedTime())
			require.Equal(t, tt.interval, spec.Interval())
		})
	}
}

func TestParseSpecErrors(t *testing.T) {
	t.Parallel()

	tests := []struct {
		name, expr, zone string
		wantType         error // a pointer to the typed error
		wantMessage      string
	}{
		{
			name: "TooFewFields", expr: "0 9 * *", wantType: &CronError{},
			wantMessage: `schedule: bad cron expression "0 9 * *": expected 5 to 6 fields, found 4: [0 9 * *]; use 5 fields like "0 9 * * 1-5" or a descriptor like @daily`,
		},
		{
			name: "TooManyFields", expr: "0 0 9 * * * *", wantType: &CronError{},
			wantMessage: `schedule: bad cron expression "0 0 9 * * * *": expected 5 to 6 fields, found 7: [0 0 9 * * * *]; use 5 fields like "0 9 * * 1-5" or a descriptor like @daily`,
		},
		{
			name: "Empty", expr: "  ", wantType: &CronError{},
			wantMessage: `schedule: bad cron expression "  ": the expression is empty; use 5 fields like "0 9 * * 1-5" or a descriptor like @daily`,
		},
		{
			name: "HourOutOfRange", expr: "0 24 * * *", wantType: &CronError{},
			wantMessage: `schedule: bad cron expression "0 24 * * *": end of range (24) above maximum (23): 24; use 5 fields like "0 9 * * 1-5" or a descriptor like @daily`,
		},
		{
			name: "NotANumber", expr: "x 9 * * *", wantType: &CronError{},
			wantMessage: `schedule: bad cron expression "x 9 * * *": failed to parse int from x: strconv.Atoi: parsing "x": invalid syntax; use 5 fields like "0 9 * * 1-5" or a descriptor like @daily`,
		},
		{
			name: "Sunday7", expr: "0 9 * * 7", wantType: &CronError{},
			wantMessage: `schedule: bad cron expression "0 9 * * 7": end of range (7) above maximum (6): 7; use 5 fields like "0 9 * * 1-5" or a descriptor like @daily`,
		},
		{
			name: "UnknownDescriptor", expr: "@fortnightly", wantType: &CronError{},
			wantMessage: `schedule: bad cron expression "@fortnightly": unrecognized descriptor: @fortnightly; use 5 fields like "0 9 * * 1-5" or a descriptor like @daily`,
		},
		{
			name: "EmptyField", expr: "0 , * * *", wantType: &CronError{},
			wantMessage: `schedule: bad cron expression "0 , * * *": the hour field has no values; use 5 fields like "0 9 * * 1-5" or a descriptor like @daily`,
		},
		{
			name: "EveryBadDuration", expr: "@every 1 hour", wantType: &CronError{},
			wantMessage: `schedule: bad cron expression "@every 1 hour": failed to parse duration @every 1 hour: time: unknown unit " hour" in duration "1 hour"; use 5 fields like "0 9 * * 1-5" or a descriptor like @daily`,
		},
		{
			name: "EveryTooShort", expr: "@every 500ms", wantType: &CronError{},
			wantMessage: `schedule: bad cron expression "@every 500ms": @every needs a duration of at least 1s, not 500ms; use a Go duration of whole seconds, like "@every 1h30m" or "@every 90s"`,
		},
		{
			name: "EveryNegative", expr: "@every -5m", wantType: &CronError{},
			wantMessage: `schedule: bad cron expression "@every -5m": @every needs a duration of at least 1s, not -5m0s; use a Go duration of whole seconds, like "@every 1h30m" or "@every 90s"`,
		},
		{
			name: "EveryFraction", expr: "@every 1.5s", wantType: &CronError{},
			wantMessage: `schedule: bad cron expression "@every 1.5s": @every takes whole seconds, not 1.5s; use a Go duration of whole seconds, like "@every 1h30m" or "@every 90s"`,
		},
		{
			name: "CronTZPrefix", expr: "CRON_TZ=Europe/Paris 0 9 * * *", wantType: &CronError{},
			wantMessage: `schedule: bad cron expression "CRON_TZ=Europe/Paris 0 9 * * *": a time zone prefix (CRON_TZ=Europe/Paris) is not allowed in the expression; ` +
				`write "0 9 * * *" and set the schedule's time zone to "Europe/Paris" instead`,
		},
		{
			name: "TZPrefix", expr: "TZ=UTC @daily", wantType: &CronError{},
			wantMessage: `schedule: bad cron expression "TZ=UTC @daily": a time zone prefix (TZ=UTC) is not allowed in the expression; ` +
				`write "@daily" and set the schedule's time zone to "UTC" instead`,
		},
		{
			// robfig/cron panics on this one (no space after the prefix).
			name: "TZPrefixAlone", expr: "cron_tz=Asia/Tokyo", wantType: &CronError{},
			wantMessage: `schedule: bad cron expression "cron_tz=Asia/Tokyo": a time zone prefix (cron_tz=Asia/Tokyo) is not allowed in the expression; ` +
				`remove it and set the schedule's time zone to "Asia/Tokyo" instead`,
		},
		{
			name: "UnknownZone", expr: "0 9 * * *", zone: "Mars/Olympus_Mons", wantType: &ZoneError{},
			wantMessage: `schedule: bad time zone "Mars/Olympus_Mons": unknown time zone; use an IANA name like "Europe/Paris" or "America/New_York", or "" for UTC`,
		},
		{
			name: "AbbreviationZone", expr: "0 9 * * *", zone: "PST", wantType: &ZoneError{},
			wantMessage: `schedule: bad time zone "PST": unknown time zone; use an IANA name like "Europe/Paris" or "America/New_York", or "" for UTC`,
		},
		{
			name: "PathZone", expr: "0 9 * * *", zone: "../../etc/passwd", wantType: &ZoneError{},
			wantMessage: `schedule: bad time zone "../../etc/passwd": unknown time zone; use an IANA name like "Europe/Paris" or "America/New_York", or "" for UTC`,
		},
		{
			name: "LocalZone", expr: "0 9 * * *", zone: "Local", wantType: &ZoneError{},
			wantMessage: `schedule: bad time zone "Local": Local is the server's own zone, which differs from machine to machine; ` +
				`use an IANA name like "Europe/Paris" or "America/New_York", or "" for UTC`,
		},
		{
			name: "February30", expr: "0 0 30 2 *", wantType: &NoOccurrenceError{},
			wantMessage: `schedule: cron expression "0 0 30 2 *" never fires: no date matches its day-of-month, month and day-of-week fields; ` +
				`fix the day of month (February has 28 or 29 days; April, June, September and November have 30) or the month`,
		},
		{name: "February31", expr: "0 0 31 2 *", wantType: &NoOccurrenceError{}},
		{name: "April31", expr: "0 0 31 4 *", wantType: &NoOccurrenceError{}},
		{name: "ShortMonths31", expr: "0 0 31 4,6,9,11 *", wantType: &NoOccurrenceError{}},
		{name: "WithSeconds", expr: "0 0 0 30,31 2 ?", wantType: &NoOccurrenceError{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()

			spec, err := ParseSpec(tt.expr, tt.zone)
			require.Nil(t, spec)
			require.Error(t, err)
			require.ErrorIs(t, err, ErrInvalid)
			require.IsType(t, tt.wantType, err)
			if tt.wantMessage != "" {
				require.Equal(t, tt.wantMessage, err.Error())
			}
			require.Equal(t, errors.Is(err, ErrNoOccurrence), fmt.Sprintf("%T", err) == "*schedule.NoOccurrenceError")

			switch err := err.(type) {
			case *CronError:
				require.Equal(t, tt.expr, err.Expr)
				require.NotEmpty(t, err.Reason)
			case *ZoneError:
				require.Equal(t, tt.zone, err.Zone)
			case *NoOccurrenceError:
				require.Equal(t, tt.expr, err.Expr)
			}
		})
	}

	t.Run("ZoneCheckedAfterExpression", func(t *testing.T) {
		t.Parallel()

		_, err := ParseSpec("0 9 * *", "Local")
		require.IsType(t, &CronError{}, err)
	})
}

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

// TestNextMatchesRobfigInUTC checks that, where there is no DST to get
// wrong, Next fires exactly when robfig/cron does.
func TestNextMatchesRobfigInUTC(t *testing.T) {
	t.Parallel()

	exprs := []string{
		"* * * * *", "*/7 * * * *", "0 9 * * 1-5", "5 4 * * sun", "0 0,12 1 */2 *", "0 0 13 * 5", "0 0 * * 5", "15 14 1 * *",
		"0 22 * * 1-5", "23 0-20/2 * * *", "0 0 1 1 *", "0 0 31 * *", "0 0 29 2 *", "30 59 23 31 12 *", "*/13 */7 */5 * * *",
		"0 0 L * *", // rejected: not a number
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
