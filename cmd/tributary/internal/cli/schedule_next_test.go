package cli

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/internal/wire"
)

func TestScheduleNext(t *testing.T) {
	t.Parallel()

	t.Run("DefaultCountInUTC", func(t *testing.T) {
		t.Parallel()

		res := runCLI(t, nil, "schedule", "next", "--cron", "0 9 * * 1-5", "--from", "2026-03-06T12:00:00Z")
		require.Equal(t, ExitOK, res.code, res.stderr)
		require.Empty(t, res.stderr)
		require.Equal(t, "2026-03-09T09:00:00Z\n2026-03-10T09:00:00Z\n2026-03-11T09:00:00Z\n2026-03-12T09:00:00Z\n2026-03-13T09:00:00Z\n", res.stdout)
	})

	t.Run("SpringForward", func(t *testing.T) {
		t.Parallel()

		res := runCLI(t, nil, "schedule", "next", "--cron", "30 2 * * *", "--tz", "America/New_York",
			"--from", "2026-03-07T00:00:00-05:00", "--count", "3")
		require.Equal(t, ExitOK, res.code, res.stderr)
		require.Equal(t, "2026-03-07T02:30:00-05:00\n2026-03-08T03:00:00-04:00\n2026-03-09T02:30:00-04:00\n", res.stdout)
		require.Equal(t, "note: 2026-03-08T03:00:00-04:00: 02:30 does not exist on 2026-03-08 in America/New_York "+
			"(clocks jump from 02:00 to 03:00); runs at 03:00, right after the jump\n", res.stderr)
	})

	t.Run("FallBackJSON", func(t *testing.T) {
		t.Parallel()

		res := runCLI(t, nil, "schedule", "next", "--cron", "30 1 * * *", "--tz", "America/New_York",
			"--from", "2026-10-31T12:00:00Z", "--count", "2", "--json")
		require.Equal(t, ExitOK, res.code, res.stderr)
		require.Empty(t, res.stderr) // notes are in the JSON

		var out []map[string]any
		require.NoError(t, json.Unmarshal([]byte(res.stdout), &out))
		require.Equal(t, []map[string]any{
			{
				"at": "2026-11-01T05:30:00Z", "nominal": "2026-11-01T01:30:00", "shifted": false, "skipped": false, "excluded": "",
				"note": "01:30 occurs twice on 2026-11-01 in America/New_York (clocks go back from 02:00 to 01:00); runs once, at the first (-04:00)",
			},
			{"at": "2026-11-02T06:30:00Z", "nominal": "2026-11-02T01:30:00", "shifted": false, "skipped": false, "excluded": "", "note": ""},
		}, out)
	})

	t.Run("ShiftedJSON", func(t *testing.T) {
		t.Parallel()

		res := runCLI(t, nil, "schedule", "next", "--cron", "15 2 * * *", "--tz", "Australia/Lord_Howe",
			"--from", "2026-10-03T12:00:00+10:30", "--count", "1", "--json")
		require.Equal(t, ExitOK, res.code, res.stderr)
		var out []wire.Occurrence
		require.NoError(t, json.Unmarshal([]byte(res.stdout), &out))
		require.Len(t, out, 1)
		require.Equal(t, "2026-10-04T02:30:00+11:00", out[0].At.In(mustLoad(t, "Australia/Lord_Howe")).Format(time.RFC3339))
		require.Equal(t, time.UTC, out[0].At.Location(), "in UTC, as every time of the JSON")
		require.Equal(t, "2026-10-04T02:15:00", out[0].Nominal)
		require.True(t, out[0].Shifted)
		require.Contains(t, out[0].Note, "(clocks jump from 02:00 to 02:30); runs at 02:30, right after the jump")
	})

	t.Run("DSTPolicies", func(t *testing.T) {
		t.Parallel()

		res := runCLI(t, nil, "schedule", "next", "--cron", "30 2 * * *", "--tz", "America/New_York",
			"--from", "2026-03-07T00:00:00-05:00", "--count", "2", "--dst-gap", "skip")
		require.Equal(t, ExitOK, res.code, res.stderr)
		require.Equal(t, "2026-03-07T02:30:00-05:00\n2026-03-09T02:30:00-04:00\n", res.stdout)
		require.Equal(t, "note: skipped 2026-03-08T02:30:00: 02:30 does not exist on 2026-03-08 in America/New_York "+
			"(clocks jump from 02:00 to 03:00); skipped, as the schedule's DST policy says (gap: skip)\n", res.stderr)

		res = runCLI(t, nil, "schedule", "next", "--cron", "30 2 * * *", "--tz", "America/New_York",
			"--from", "2026-03-08T00:00:00-05:00", "--count", "1", "--dst-gap", "shift", "--json")
		require.Equal(t, ExitOK, res.code, res.stderr)
		require.JSONEq(t, `[{"at": "2026-03-08T07:30:00Z", "nominal": "2026-03-08T02:30:00", "shifted": true, "skipped": false, "excluded": "",
			"note": "02:30 does not exist on 2026-03-08 in America/New_York (clocks jump from 02:00 to 03:00); runs at 03:30, shifted by the jump's length (1h)"}]`, res.stdout)

		res = runCLI(t, nil, "schedule", "next", "--cron", "30 2 * * *", "--tz", "America/New_York",
			"--from", "2026-03-08T00:00:00-05:00", "--count", "1", "--dst-gap", "skip", "--json")
		require.Equal(t, ExitOK, res.code, res.stderr)
		var skipped []map[string]any
		require.NoError(t, json.Unmarshal([]byte(res.stdout), &skipped))
		require.Len(t, skipped, 2) // the skipped slot, then the one that runs
		require.Equal(t, true, skipped[0]["skipped"])
		require.Equal(t, false, skipped[1]["skipped"])

		res = runCLI(t, nil, "schedule", "next", "--cron", "30 1 * * *", "--tz", "America/New_York",
			"--from", "2026-11-01T00:00:00-04:00", "--count", "2", "--dst-fold", "both")
		require.Equal(t, ExitOK, res.code, res.stderr)
		require.Equal(t, "2026-11-01T01:30:00-04:00\n2026-11-01T01:30:00-05:00\n", res.stdout)

		res = runCLI(t, nil, "schedule", "next", "--cron", "30 1 * * *", "--tz", "America/New_York",
			"--from", "2026-11-01T00:00:00-04:00", "--count", "1", "--dst-fold", "last")
		require.Equal(t, ExitOK, res.code, res.stderr)
		require.Equal(t, "2026-11-01T01:30:00-05:00\n", res.stdout)

		// Calendar terms: the last business day of each month of 2027.
		res = runCLI(t, nil, "schedule", "next", "--cron", "0 18 LW * *", "--tz", "America/New_York",
			"--from", "2027-01-01T00:00:00Z", "--count", "3")
		require.Equal(t, ExitOK, res.code, res.stderr)
		require.Equal(t, "2027-01-29T18:00:00-05:00\n2027-02-26T18:00:00-05:00\n2027-03-31T18:00:00-04:00\n", res.stdout)
	})

	t.Run("Excluded", func(t *testing.T) {
		t.Parallel()

		// The last business day of each month of 2027 at 18:00 in New
		// York, skipping the US federal holidays of 2027 (observed dates).
		holidays := "2027-01-01,2027-01-18,2027-02-15,2027-05-31,2027-06-18,2027-07-05,2027-09-06,2027-10-11,2027-11-11,2027-11-25,2027-12-24,2027-12-31"
		res := runCLI(t, nil, "schedule", "next", "--cron", "0 18 LW * *", "--tz", "America/New_York",
			"--from", "2027-01-01T00:00:00Z", "--count", "10", "--exclude", holidays)
		require.Equal(t, ExitOK, res.code, res.stderr)
		require.Equal(t, "2027-01-29T18:00:00-05:00\n2027-02-26T18:00:00-05:00\n2027-03-31T18:00:00-04:00\n2027-04-30T18:00:00-04:00\n"+
			"2027-06-30T18:00:00-04:00\n2027-07-30T18:00:00-04:00\n2027-08-31T18:00:00-04:00\n2027-09-30T18:00:00-04:00\n"+
			"2027-10-29T18:00:00-04:00\n2027-11-30T18:00:00-05:00\n", res.stdout)
		require.Equal(t, "note: skipped 2027-05-31T18:00:00: 2027-05-31 is excluded by calendar --exclude; skipped\n", res.stderr)

		res = runCLI(t, nil, "schedule", "next", "--cron", "0 9 * * 1-5", "--from", "2026-12-24T12:00:00Z", "--count", "1",
			"--exclude", "2026-12-25", "--on-excluded", "next-business-day", "--json")
		require.Equal(t, ExitOK, res.code, res.stderr)
		require.JSONEq(t, `[{"at": "2026-12-28T09:00:00Z", "nominal": "2026-12-28T09:00:00", "shifted": false, "skipped": false, "excluded": "",
			"note": "2026-12-25 is excluded by calendar --exclude; runs on the next business day, 2026-12-28"}]`, res.stdout)
	})

	t.Run("RRule", func(t *testing.T) {
		t.Parallel()

		res := runCLI(t, nil, "schedule", "next", "--rrule", "DTSTART:20270105T090000;RRULE:FREQ=WEEKLY;INTERVAL=2;BYDAY=TU",
			"--tz", "Europe/Paris", "--from", "2027-01-01T00:00:00Z", "--count", "3")
		require.Equal(t, ExitOK, res.code, res.stderr)
		require.Equal(t, "2027-01-05T09:00:00+01:00\n2027-01-19T09:00:00+01:00\n2027-02-02T09:00:00+01:00\n", res.stdout)

		res = runCLI(t, nil, "schedule", "next", "--rrule", "RRULE:FREQ=DAILY", "--cron", "@daily")
		require.Equal(t, ExitUsage, res.code)
		require.Equal(t, "tributary: pass --cron or --rrule, not both; a schedule has one rule\n", res.stderr)
		res = runCLI(t, nil, "schedule", "next", "--rrule", "RRULE:FREQ=DAILY")
		require.Equal(t, ExitError, res.code)
		require.Contains(t, res.stderr, "DTSTART")
	})

	t.Run("DefaultFromIsNow", func(t *testing.T) {
		t.Parallel()

		before := time.Now()
		res := runCLI(t, nil, "schedule", "next", "--cron", "*/10 * * * * *", "--tz", "Asia/Tokyo", "--count", "3")
		require.Equal(t, ExitOK, res.code, res.stderr)
		lines := strings.Split(strings.TrimSuffix(res.stdout, "\n"), "\n")
		require.Len(t, lines, 3)
		for _, line := range lines {
			at, err := time.Parse(time.RFC3339, line)
			require.NoError(t, err)
			require.True(t, at.After(before.Add(-time.Second)), line)
			require.True(t, strings.HasSuffix(line, "+09:00"), line)
		}
	})

	t.Run("MaxCount", func(t *testing.T) {
		t.Parallel()

		res := runCLI(t, nil, "schedule", "next", "--cron", "@every 1s", "--from", "2026-01-01T00:00:00Z", "--count", "1000")
		require.Equal(t, ExitOK, res.code, res.stderr)
		require.Equal(t, 1000, strings.Count(res.stdout, "\n"))
		require.True(t, strings.HasSuffix(res.stdout, "\n2026-01-01T00:16:40Z\n"))
	})

	t.Run("Errors", func(t *testing.T) {
		t.Parallel()

		runFailureCases(t, []string{"schedule", "next"}, []failureCase{
			{
				name: "BadCron", args: []string{"--cron", "0 9 * *"}, code: ExitError,
				stderr: `tributary: schedule: bad cron expression "0 9 * *": expected 5 to 6 fields, found 4: [0 9 * *]; ` +
					`use 5 fields like "0 9 * * 1-5" or a descriptor like @daily`,
			},
			{
				name: "UnknownZone", args: []string{"--cron", "@daily", "--tz", "Europe/Pariss"}, code: ExitError,
				stderr: `tributary: schedule: bad time zone "Europe/Pariss": unknown time zone; use an IANA name like "Europe/Paris" or "America/New_York", or "" for UTC`,
			},
			{
				name: "LocalZone", args: []string{"--cron", "@daily", "--tz", "Local"}, code: ExitError,
				stderr: `tributary: schedule: bad time zone "Local": Local is the server's own zone, which differs from machine to machine; ` +
					`use an IANA name like "Europe/Paris" or "America/New_York", or "" for UTC`,
			},
			{
				name: "ZonePrefix", args: []string{"--cron", "CRON_TZ=Europe/Paris 0 9 * * *"}, code: ExitError,
				stderr: `tributary: schedule: bad cron expression "CRON_TZ=Europe/Paris 0 9 * * *": a time zone prefix (CRON_TZ=Europe/Paris) is not allowed in the expression; ` +
					`write "0 9 * * *" and set the schedule's time zone to "Europe/Paris" instead`,
			},
			{
				name: "NeverFires", args: []string{"--cron", "0 0 30 2 *"}, code: ExitError,
				stderr: `tributary: schedule: cron expression "0 0 30 2 *" never fires: no date matches its day-of-month, month and day-of-week fields; ` +
					`fix the day of month (February has 28 or 29 days; April, June, September and November have 30) or the month`,
			},
			{
				name: "NoCron", args: nil, code: ExitUsage,
				stderr: `tributary: schedule next needs --cron; pass a cron expression, e.g. --cron "0 9 * * 1-5" or --cron @daily`,
			},
			{
				name: "UnquotedCron", args: []string{"--cron", "0", "9", "*", "*", "*"}, code: ExitUsage,
				stderr: `tributary: unexpected argument "9"; quote the whole cron expression, e.g. --cron "0 9 * * 1-5"`,
			},
			{
				name: "StrayArgument", args: []string{"0 9 * * *"}, code: ExitUsage,
				stderr: `tributary: unexpected argument "0 9 * * *"; see 'tributary schedule next --help'`,
			},
			{
				name: "CountTooLarge", args: []string{"--cron", "@daily", "--count", "1001"}, code: ExitUsage,
				stderr: `tributary: --count must be from 1 to 1000, not 1001; pass --count 5, or up to --count 1000`,
			},
			{
				name: "CountZero", args: []string{"--cron", "@daily", "--count", "0"}, code: ExitUsage,
				stderr: `tributary: --count must be from 1 to 1000, not 0; pass --count 5, or up to --count 1000`,
			},
			{
				name: "CountNotANumber", args: []string{"--cron", "@daily", "--count", "five"}, code: ExitUsage,
				stderr: `tributary: invalid value "five" for flag -count: parse error; see 'tributary schedule next --help'`,
			},
			{
				name: "BadFrom", args: []string{"--cron", "@daily", "--from", "2026-03-08 00:00"}, code: ExitUsage,
				stderr: `tributary: --from "2026-03-08 00:00" is not an RFC 3339 time; use a time like 2026-03-08T00:00:00Z or 2026-03-08T09:00:00+01:00`,
			},
			{
				name: "BadDSTGap", args: []string{"--cron", "@daily", "--dst-gap", "later"}, code: ExitUsage,
				stderr: `tributary: --dst-gap "later" is not a DST gap policy; pass --dst-gap jump, shift or skip`,
			},
			{
				name: "BadDSTFold", args: []string{"--cron", "@daily", "--dst-fold", "twice"}, code: ExitUsage,
				stderr: `tributary: --dst-fold "twice" is not a DST fold policy; pass --dst-fold first, last or both`,
			},
			{
				name: "BadExclude", args: []string{"--cron", "@daily", "--exclude", "12/25"}, code: ExitUsage,
				stderr: `tributary: --exclude "12/25" is not a date; use dates like 2026-12-25, comma-separated`,
			},
			{
				name: "BadOnExcluded", args: []string{"--cron", "@daily", "--on-excluded", "later"}, code: ExitUsage,
				stderr: `tributary: --on-excluded "later" is not a policy for excluded dates; pass --on-excluded skip or next-business-day`,
			},
			{
				name: "EveryMoved", args: []string{"--cron", "@every 1h", "--exclude", "2026-12-25", "--on-excluded", "next-business-day"}, code: ExitUsage,
				stderr: `tributary: an @every schedule's slots follow each other by 1h0m0s, not by the calendar, so they cannot move to the next business day; pass --on-excluded skip`,
			},
			{
				name: "BadTerm", args: []string{"--cron", "0 9 * * MON#6"}, code: ExitError,
				stderr: `tributary: schedule: bad cron expression "0 9 * * MON#6": the day-of-week field's "MON#6" is not a term: ` +
					`n#k takes k from 1 to 5 (MON#2 is the second Monday of the month); write calendar terms alone or in comma lists, ` +
					`like "0 18 LW * *" (the last weekday of the month), "0 9 * * MON#2" or "0 9 1,15,L * *"`,
			},
			{
				name: "UnknownFlag", args: []string{"--cron", "@daily", "--zone", "UTC"}, code: ExitUsage,
				stderr: `tributary: flag provided but not defined: -zone; see 'tributary schedule next --help'`,
			},
		})
	})

	t.Run("Help", func(t *testing.T) {
		t.Parallel()

		res := runCLI(t, nil, "schedule", "--help")
		require.Equal(t, ExitOK, res.code)
		require.Regexp(t, `(?m)^  next +Print when a cron expression fires next`, res.stdout)

		res = runCLI(t, nil, "help", "schedule", "next")
		require.Equal(t, ExitOK, res.code)
		require.Contains(t, res.stdout, "Usage:\n  tributary schedule next --cron <expression> | --rrule <rule> [--tz <zone>] [--dst-gap jump|shift|skip] [--dst-fold first|last|both] [--exclude <dates>] [--on-excluded skip|next-business-day] [--from <time>] [--count <n>] [--json]\n")
		require.Contains(t, res.stdout, "  --cron expression\n")
		require.Contains(t, res.stdout, "  --tz zone\n")
	})
}

func TestAddScheduleCommand(t *testing.T) {
	t.Parallel()

	env := testEnv(nil, nil, nil)
	require.PanicsWithValue(t, "cli: command registered twice: schedule next", func() {
		root := newRootCommand(env)
		schedule, _, err := root.Find([]string{"schedule"})
		require.NoError(t, err)
		schedule.AddCommand(command(env, &cobra.Command{Use: "next", Short: "Again", Example: "tributary schedule next"}, setupScheduleNext))
		validate(root, nil)
	})
	require.Panics(t, func() {
		validate(command(env, &cobra.Command{Use: "-bad", Short: "x", Example: "x"}, setupScheduleNext), nil)
	})
}

// mustLoad loads the time zone name.
func mustLoad(t *testing.T, name string) *time.Location {
	t.Helper()

	loc, err := time.LoadLocation(name)
	require.NoError(t, err)
	return loc
}
