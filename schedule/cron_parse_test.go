package schedule

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

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
			wantMessage: `schedule: bad cron expression "0 24 * * *": the hour field "24" is not valid: end of range (24) above maximum (23); hours go from 0 to 23, with lists (1,15), ranges (1-5), steps (*/15) and *`,
		},
		{
			name: "NotANumber", expr: "x 9 * * *", wantType: &CronError{},
			wantMessage: `schedule: bad cron expression "x 9 * * *": the minute field "x" is not valid: failed to parse int from x: strconv.Atoi: parsing "x": invalid syntax; minutes go from 0 to 59, with lists (1,15), ranges (1-5), steps (*/15) and *`,
		},
		{
			name: "SecondsOutOfRange", expr: "60 0 9 * * *", wantType: &CronError{},
			wantMessage: `schedule: bad cron expression "60 0 9 * * *": the second field "60" is not valid: end of range (60) above maximum (59); seconds go from 0 to 59 (a 6-field expression begins with seconds), with lists (1,15), ranges (1-5), steps (*/15) and *`,
		},
		{
			name: "MonthName", expr: "0 9 1 FOO *", wantType: &CronError{},
			wantMessage: `schedule: bad cron expression "0 9 1 FOO *": the month field "FOO" is not valid: failed to parse int from FOO: strconv.Atoi: parsing "FOO": invalid syntax; months go from 1 to 12, or JAN to DEC, with lists (1,15), ranges (1-5), steps (*/15) and *`,
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
