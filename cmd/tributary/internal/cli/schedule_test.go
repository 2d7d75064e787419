package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/internal/wire"
	"github.com/tributary-go/tributary/schedule"
)

// createSchedule runs `schedule create` with args and returns the new
// schedule's id.
func createSchedule(t *testing.T, vars map[string]string, args ...string) uuid.UUID {
	t.Helper()

	res := runCLI(t, vars, append([]string{"schedule", "create"}, args...)...)
	require.Equal(t, ExitOK, res.code, res.stderr)
	require.Empty(t, withoutNoWorkerWarning(res.stderr))
	require.Regexp(t, `^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\n$`, res.stdout)
	return uuid.MustParse(strings.TrimSuffix(res.stdout, "\n"))
}

// listScheduleIDs runs `schedule list --json` with args and returns the ids
// listed.
func listScheduleIDs(t *testing.T, vars map[string]string, args ...string) []uuid.UUID {
	t.Helper()

	res := runCLI(t, vars, append([]string{"schedule", "list", "--json"}, args...)...)
	require.Equal(t, ExitOK, res.code, res.stderr)
	var page wire.ScheduleList
	require.NoError(t, json.Unmarshal([]byte(res.stdout), &page))
	ids := []uuid.UUID{}
	for _, s := range page.Schedules {
		ids = append(ids, s.ID)
	}
	return ids
}

// getSchedule runs `schedule get --json`.
func getSchedule(t *testing.T, vars map[string]string, id uuid.UUID) *wire.Schedule {
	t.Helper()

	return getScheduleArgs(t, vars, id.String())
}

// getScheduleArgs runs `schedule get --json` with args, which name the
// schedule: its id, or its key and --owner.
func getScheduleArgs(t *testing.T, vars map[string]string, args ...string) *wire.Schedule {
	t.Helper()

	res := runCLI(t, vars, append([]string{"schedule", "get", "--json"}, args...)...)
	require.Equal(t, ExitOK, res.code, res.stderr)
	out := &wire.Schedule{}
	require.NoError(t, json.Unmarshal([]byte(res.stdout), out))
	return out
}

// zoneOf is the time zone of s, a schedule read with --json.
func zoneOf(t *testing.T, s *wire.Schedule) *time.Location {
	t.Helper()

	loc, err := time.LoadLocation(s.TimeZone)
	require.NoError(t, err)
	return loc
}

// nextSpringForward returns local midnight of the first day, at least three
// days from now, on which 02:30 does not exist in loc.
func nextSpringForward(t *testing.T, loc *time.Location) time.Time {
	t.Helper()

	day := time.Now().In(loc).AddDate(0, 0, 3)
	for range 400 {
		if time.Date(day.Year(), day.Month(), day.Day(), 2, 30, 0, 0, loc).Hour() != 2 {
			return time.Date(day.Year(), day.Month(), day.Day(), 0, 0, 0, 0, loc)
		}
		day = day.AddDate(0, 0, 1)
	}
	t.Fatalf("no spring-forward day in %s within 400 days", loc)
	return time.Time{}
}

func TestScheduleCommands(t *testing.T) {
	t.Parallel()

	db, vars := migratedDB(t)

	// hasFireJob reports whether a River job waits to fire schedule id's
	// next slot (one job per instant, shared by the schedules due then).
	hasFireJob := func(t *testing.T, id uuid.UUID) bool {
		t.Helper()
		var ok bool
		require.NoError(t, db.Pool.QueryRow(context.Background(), `SELECT EXISTS (SELECT FROM river_job j JOIN schedules s
			ON (j.args->>'fire_at')::timestamptz = s.next_fire_at WHERE j.kind = 'tributary:schedule_fire' AND s.id = $1)`, id).Scan(&ok))
		return ok
	}

	t.Run("Create", func(t *testing.T) {
		t.Parallel()

		start := time.Now().Add(48 * time.Hour).Truncate(time.Second).UTC()
		end := start.Add(30 * 24 * time.Hour)
		id := createSchedule(t, vars, "--name", "nightly report", "--cron", "30 2 * * *", "--tz", "America/New_York",
			"--workflow", "send_report", "--input", `{"to": "ops"}`, "--owner", "create", "--description", "the ops report",
			"--overlap", "allow", "--catchup", "5m", "--start", start.Format(time.RFC3339), "--end", end.Format(time.RFC3339),
			"--max-attempts", "3", "--queue", "reports", "--priority", "2", "--timeout", "10m")

		s := getSchedule(t, vars, id)
		require.Equal(t, id, s.ID)
		require.Equal(t, "nightly report", s.Name)
		require.Equal(t, "the ops report", s.Description)
		require.Equal(t, "create", s.Owner)
		require.Equal(t, "send_report", s.Workflow) // no service registers it: the CLI can't know
		require.JSONEq(t, `{"to": "ops"}`, string(s.Input))
		require.Equal(t, "30 2 * * *", s.Cron)
		require.Equal(t, "America/New_York", s.TimeZone)
		require.True(t, start.Equal(*s.StartAt))
		require.True(t, end.Equal(*s.EndAt))
		require.Equal(t, schedule.OverlapAllow, s.Overlap)
		require.Equal(t, wire.Duration(5*time.Minute), s.CatchUpWindow)
		require.Equal(t, 3, s.MaxAttempts)
		require.Equal(t, "reports", s.Queue)
		require.Equal(t, 2, s.Priority)
		require.Equal(t, wire.Duration(10*time.Minute), s.Timeout)
		require.False(t, s.Paused)
		require.NotNil(t, s.NextFireAt)
		require.False(t, s.NextFireAt.Before(start))
		// 02:30 New York time, or 03:00 on the day clocks spring forward.
		require.Contains(t, []string{"02:30", "03:00"}, s.NextFireAt.In(zoneOf(t, s)).Format("15:04"))
		require.True(t, hasFireJob(t, id)) // the first slot's job, for a service to fire
	})

	t.Run("CreateJSON", func(t *testing.T) {
		t.Parallel()

		res := runCLI(t, vars, "schedule", "create", "--name", "paused digest", "--cron", "0 9 * * 1-5", "--tz", "Europe/Paris",
			"--workflow", "digest", "--owner", "create-json", "--catchup", "0", "--paused", "--note", "until the migration is done", "--json")
		require.Equal(t, ExitOK, res.code, res.stderr)
		require.Empty(t, withoutNoWorkerWarning(res.stderr))
		var s wire.Schedule
		require.NoError(t, json.Unmarshal([]byte(res.stdout), &s))
		require.Equal(t, "paused digest", s.Name)
		require.True(t, s.Paused)
		require.Equal(t, "until the migration is done", s.PauseNote)
		require.Nil(t, s.NextFireAt)
		require.Zero(t, s.CatchUpWindow) // --catchup 0: no slot runs late
		require.False(t, hasFireJob(t, s.ID))
		require.Equal(t, []uuid.UUID{s.ID}, listScheduleIDs(t, vars, "--owner", "create-json"))

		// The defaults.
		res = runCLI(t, vars, "schedule", "create", "--json", "--name", "every minute", "--cron", "* * * * *", "--workflow", "tick", "--owner", "create-json")
		require.Equal(t, ExitOK, res.code, res.stderr)
		require.NoError(t, json.Unmarshal([]byte(res.stdout), &s))
		require.Equal(t, "UTC", s.TimeZone)
		require.Equal(t, schedule.OverlapSkip, s.Overlap)
		require.Equal(t, wire.Duration(schedule.DefaultCatchUpWindow), s.CatchUpWindow)
		require.JSONEq(t, `null`, string(s.Input))
		require.Nil(t, s.StartAt)
		require.Nil(t, s.EndAt)
		require.Zero(t, s.MaxAttempts)
		require.False(t, s.Paused)
		require.NotNil(t, s.NextFireAt)
		require.WithinDuration(t, time.Now(), *s.NextFireAt, time.Minute+time.Second)
		require.True(t, hasFireJob(t, s.ID))
	})

	t.Run("CreateInvalid", func(t *testing.T) {
		t.Parallel()

		for _, tc := range []struct {
			name   string
			args   []string
			stderr string
		}{
			{
				name: "BadCron", args: []string{"--cron", "0 9 * *"},
				stderr: `tributary: schedule: bad cron expression "0 9 * *": expected 5 to 6 fields, found 4: [0 9 * *]; use 5 fields like "0 9 * * 1-5" or a descriptor like @daily`,
			},
			{
				name: "BadZone", args: []string{"--cron", "@daily", "--tz", "Mars/Olympus_Mons"},
				stderr: `tributary: schedule: bad time zone "Mars/Olympus_Mons": unknown time zone; use an IANA name like "Europe/Paris" or "America/New_York", or "" for UTC`,
			},
			{
				name: "EndBeforeStart", args: []string{"--cron", "@daily", "--start", "2030-02-01T00:00:00Z", "--end", "2030-01-01T00:00:00Z"},
				stderr: "tributary: schedule: invalid EndAt: 2030-01-01T00:00:00Z is not after StartAt 2030-02-01T00:00:00Z; pass an --end later than --start",
			},
			{
				name: "NeverFires", args: []string{"--cron", "0 0 31 2 *"},
				stderr: `tributary: schedule: cron expression "0 0 31 2 *" never fires: no date matches its day-of-month, month and day-of-week fields; ` +
					`fix the day of month (February has 28 or 29 days; April, June, September and November have 30) or the month`,
			},
			{
				name: "NoOccurrenceInRange", args: []string{"--cron", "0 0 1 1 *", "--start", "2030-01-02T00:00:00Z", "--end", "2030-01-03T00:00:00Z"},
				stderr: `tributary: schedule: invalid Cron: "0 0 1 1 *" has no occurrence between now (or StartAt) and EndAt; widen the range or change the expression`,
			},
			{
				// The schedule package's message says which policies it
				// supports, which changes as it gains them.
				name: "UnknownOverlap", args: []string{"--cron", "@daily", "--overlap", "sometimes"},
				stderr: `re:^tributary: schedule: invalid Overlap: "sometimes" is not [^;]+; use [^;]*\bskip\b[^;]*\ballow\b[^;]*$`,
			},
			{
				name: "NameTooLong", args: []string{"--cron", "@daily", "--name", strings.Repeat("n", 201)},
				stderr: "tributary: schedule: invalid Name: is 201 bytes, the limit is 200; pass a shorter --name",
			},
		} {
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel()

				owner := "invalid-" + tc.name
				args := append([]string{"schedule", "create", "--name", "bad", "--workflow", "w", "--owner", owner}, tc.args...)
				requireFailed(t, runCLI(t, vars, args...), ExitUsage, tc.stderr)
				require.Empty(t, listScheduleIDs(t, vars, "--owner", owner)) // nothing written
			})
		}
	})

	t.Run("List", func(t *testing.T) {
		t.Parallel()

		a1 := createSchedule(t, vars, "--name", "morning digest", "--cron", "0 9 * * *", "--tz", "Europe/Paris", "--workflow", "digest", "--owner", "list-a", "--key", "digest:morning")
		a2 := createSchedule(t, vars, "--name", "hourly sync", "--cron", "@hourly", "--workflow", "sync", "--owner", "list-a", "--paused")
		b1 := createSchedule(t, vars, "--name", "other tenant", "--cron", "@daily", "--workflow", "digest", "--owner", "list-b")

		res := runCLI(t, vars, "schedule", "list", "--owner", "list-a")
		require.Equal(t, ExitOK, res.code, res.stderr)
		require.Empty(t, res.stderr)
		t.Logf("schedule list:\n%s", res.stdout)
		// Newest first.
		require.Regexp(t, `^ID +NAME +OWNER +KEY +TENANT +WORKFLOW +CRON +ZONE +NEXT +RUNS +FAILURES +PAUSED\n`+
			a2.String()+` +hourly sync +list-a +- +list-a \(the owner\) +sync +@hourly +UTC +- +0 +0 +yes\n`+
			a1.String()+` +morning digest +list-a +digest:morning +list-a \(the owner\) +digest +0 9 \* \* \* +Europe/Paris +\d{4}-\d\d-\d\d 09:00:00 CES?T \([^)]+\) +0 +0 +no\n$`, res.stdout)

		require.Equal(t, []uuid.UUID{a2, a1}, listScheduleIDs(t, vars, "--owner", "list-a"))
		require.Equal(t, []uuid.UUID{b1}, listScheduleIDs(t, vars, "--owner", "list-b"))
		require.Equal(t, []uuid.UUID{a2}, listScheduleIDs(t, vars, "--owner", "list-a", "--paused", "true"))
		require.Equal(t, []uuid.UUID{a1}, listScheduleIDs(t, vars, "--owner", "list-a", "--paused", "false"))
		require.Equal(t, []uuid.UUID{a2}, listScheduleIDs(t, vars, "--owner", "list-a", "--workflow", "sync"))
		require.Equal(t, []uuid.UUID{a1}, listScheduleIDs(t, vars, "--owner", "list-a", "--name", "DIGEST"))

		res = runCLI(t, vars, "schedule", "list", "--owner", "list-a", "--json")
		require.Equal(t, ExitOK, res.code, res.stderr)
		var page wire.ScheduleList
		require.NoError(t, json.Unmarshal([]byte(res.stdout), &page))
		schedules := page.Schedules
		require.Len(t, schedules, 2)
		require.Equal(t, "morning digest", schedules[1].Name)
		require.Equal(t, "digest:morning", schedules[1].Key)
		require.Empty(t, schedules[0].Key)
		require.NotContains(t, res.stdout, `"existing"`) // only create says so
		require.Equal(t, "Europe/Paris", schedules[1].TimeZone)
		require.True(t, schedules[0].Paused)

		// Paging: the note says how to go on.
		res = runCLI(t, vars, "schedule", "list", "--owner", "list-a", "--limit", "1")
		require.Equal(t, ExitOK, res.code, res.stderr)
		require.Regexp(t, `^ID +NAME.*\n`+a2.String()+` .*\n$`, res.stdout)
		require.Equal(t, "note: there may be more schedules; see them with --after "+a2.String()+"\n", res.stderr)
		require.Equal(t, []uuid.UUID{a1}, listScheduleIDs(t, vars, "--owner", "list-a", "--after", a2.String()))

		res = runCLI(t, vars, "schedule", "list", "--owner", "nobody")
		require.Equal(t, ExitOK, res.code, res.stderr)
		require.Equal(t, "no schedules\n", res.stdout)
		res = runCLI(t, vars, "schedule", "list", "--owner", "nobody", "--json")
		require.Equal(t, ExitOK, res.code, res.stderr)
		require.JSONEq(t, `{"schedules": [], "next_after": null}`, res.stdout)
	})

	t.Run("Get", func(t *testing.T) {
		t.Parallel()

		// Start two days before clocks spring forward in New York, so that
		// the third fire time is moved to 03:00.
		loc, err := time.LoadLocation("America/New_York")
		require.NoError(t, err)
		gapDay := nextSpringForward(t, loc)
		start := gapDay.AddDate(0, 0, -2)
		id := createSchedule(t, vars, "--name", "dst report", "--cron", "30 2 * * *", "--tz", "America/New_York",
			"--workflow", "send_report", "--input", `{"to": "ops"}`, "--owner", "get", "--start", start.Format(time.RFC3339))

		var fireTimes []time.Time
		for i := range 5 {
			day := start.AddDate(0, 0, i)
			hour, minute := 2, 30
			if i == 2 {
				hour, minute = 3, 0
			}
			fireTimes = append(fireTimes, time.Date(day.Year(), day.Month(), day.Day(), hour, minute, 0, 0, loc))
		}
		row := func(i int, note string) string {
			return regexp.QuoteMeta(fireTimes[i].Format(zonedLayout)) + ` +` + regexp.QuoteMeta(fireTimes[i].UTC().Format(time.RFC3339)) +
				` +in \d+[dh] +` + regexp.QuoteMeta(note) + `\n`
		}
		gapNote := fmt.Sprintf("02:30 does not exist on %s in America/New_York (clocks jump from 02:00 to 03:00); runs at 03:00, right after the jump",
			gapDay.Format(time.DateOnly))

		res := runCLI(t, vars, "schedule", "get", id.String())
		require.Equal(t, ExitOK, res.code, res.stderr)
		require.Empty(t, res.stderr)
		t.Logf("schedule get:\n%s", res.stdout)
		require.Regexp(t, `^ID: +`+id.String()+`\nName: +dst report\nOwner: +get\nRun tenant: +get \(the owner\)\nOrigin: +created by hand with the CLI\nWorkflow: +send_report \(warning: no live worker serves workflow type "send_report": [^\n]+\)\nInput: +\{"to": "ops"\}\n`+
			`Cron: +30 2 \* \* \*\nTime zone: +America/New_York\n`+
			`Start: +`+regexp.QuoteMeta(start.Format(zonedLayout)+" ("+start.UTC().Format(time.RFC3339)+")")+"\n"+
			`Overlap: +skip \(a slot is skipped while the previous run is unfinished\)\n`+
			`Catch-up window: +1m \(how late a slot may fire and still run\)\n`+
			`Catch-up policy: +window \(a slot found later than the catch-up window is skipped as missed\)\n`+
			`Run policy: +the workflow type's defaults\n`+
			`Paused: +no\n`+
			`Next fire: +`+regexp.QuoteMeta(fireTimes[0].Format(zonedLayout)+" ("+fireTimes[0].UTC().Format(time.RFC3339)+", ")+`in \d+[dh]\)\n`+
			`Last fire: +never\nRuns: +0 started, 0 failed\nCreated: +\S+Z \((just now|\d+s ago)\)\n\n`+
			`NEXT FIRE TIMES +UTC +IN +NOTE\n`+row(0, "-")+row(1, "-")+row(2, gapNote)+row(3, "-")+row(4, "-")+`$`, res.stdout)

		// Flags before the id work too.
		res = runCLI(t, vars, "schedule", "get", "--json", id.String())
		require.Equal(t, ExitOK, res.code, res.stderr)
		var out wire.Schedule
		require.NoError(t, json.Unmarshal([]byte(res.stdout), &out))
		require.Equal(t, id, out.ID)
		require.Equal(t, "dst report", out.Name)
		require.Len(t, *out.NextFireTimes, wire.NextFireTimes)
		for i, occurrence := range (*out.NextFireTimes)[:len(fireTimes)] {
			require.True(t, fireTimes[i].Equal(occurrence.At), "%d: %s", i, occurrence.At)
			require.Equal(t, i == 2, occurrence.Shifted, "%d", i)
		}
		require.Equal(t, gapDay.Format(time.DateOnly)+"T02:30:00", (*out.NextFireTimes)[2].Nominal)
		require.Equal(t, gapNote, (*out.NextFireTimes)[2].Note)
	})

	t.Run("PauseResumeDelete", func(t *testing.T) {
		t.Parallel()

		id := createSchedule(t, vars, "--name", "to pause", "--cron", "0 9 * * *", "--tz", "Europe/Paris", "--workflow", "digest", "--owner", "pause")
		other := createSchedule(t, vars, "--name", "to delete", "--cron", "@daily", "--workflow", "digest", "--owner", "pause")

		res := runCLI(t, vars, "schedule", "pause", id.String(), "--note", "db upgrade")
		require.Equal(t, ExitOK, res.code, res.stderr)
		require.Empty(t, res.stderr)
		require.Equal(t, fmt.Sprintf("paused schedule %s (\"to pause\"); no slot fires until 'tributary schedule resume %s'\n", id, id), res.stdout)
		require.Equal(t, []uuid.UUID{id}, listScheduleIDs(t, vars, "--owner", "pause", "--paused", "true"))

		res = runCLI(t, vars, "schedule", "get", id.String())
		require.Equal(t, ExitOK, res.code, res.stderr)
		t.Logf("schedule get (paused):\n%s", res.stdout)
		require.Regexp(t, `(?m)^Paused: +yes: db upgrade\nNext fire: +- \(paused\)$`, res.stdout)
		require.Regexp(t, `\nNEXT FIRE TIMES +UTC +IN +NOTE\n(\d{4}-\d\d-\d\d 09:00:00 CES?T .*\n){5}\n`+
			`the schedule is paused: these slots fire only once it is resumed \('tributary schedule resume `+id.String()+`'\)\n$`, res.stdout)

		// Pausing again keeps the note, unless a new one is given.
		res = runCLI(t, vars, "schedule", "pause", id.String())
		require.Equal(t, ExitOK, res.code, res.stderr)
		require.Equal(t, "schedule "+id.String()+` ("to pause") is already paused`+"\n", res.stdout)
		require.Equal(t, "db upgrade", getSchedule(t, vars, id).PauseNote)
		res = runCLI(t, vars, "schedule", "pause", "--note", "db upgrade, take two", id.String())
		require.Equal(t, ExitOK, res.code, res.stderr)
		require.Equal(t, "schedule "+id.String()+` ("to pause") was already paused; its note is now "db upgrade, take two"`+"\n", res.stdout)
		require.Equal(t, "db upgrade, take two", getSchedule(t, vars, id).PauseNote)

		res = runCLI(t, vars, "schedule", "resume", id.String())
		require.Equal(t, ExitOK, res.code, res.stderr)
		require.Empty(t, res.stderr)
		require.Regexp(t, `^resumed schedule `+id.String()+` \("to pause"\); it fires next at \d{4}-\d\d-\d\d 09:00:00 CES?T \([^)]+\)\n$`, res.stdout)
		s := getSchedule(t, vars, id)
		require.False(t, s.Paused)
		require.Empty(t, s.PauseNote)
		require.NotNil(t, s.NextFireAt)

		res = runCLI(t, vars, "schedule", "resume", id.String())
		require.Equal(t, ExitOK, res.code, res.stderr)
		require.Regexp(t, `^schedule `+id.String()+` \("to pause"\) is not paused; it fires next at \d{4}-\d\d-\d\d 09:00:00 CES?T \([^)]+\)\n$`, res.stdout)

		// --json prints the schedule as it is after the change.
		res = runCLI(t, vars, "schedule", "pause", id.String(), "--json")
		require.Equal(t, ExitOK, res.code, res.stderr)
		var after wire.Schedule
		require.NoError(t, json.Unmarshal([]byte(res.stdout), &after))
		require.True(t, after.Paused)
		require.Nil(t, after.NextFireAt)
		res = runCLI(t, vars, "schedule", "resume", id.String(), "--json")
		require.Equal(t, ExitOK, res.code, res.stderr)
		require.NoError(t, json.Unmarshal([]byte(res.stdout), &after))
		require.False(t, after.Paused)
		require.NotNil(t, after.NextFireAt)

		res = runCLI(t, vars, "schedule", "delete", id.String())
		require.Equal(t, ExitOK, res.code, res.stderr)
		require.Empty(t, res.stderr)
		require.Equal(t, "deleted schedule "+id.String()+` ("to pause"); its past runs stay, and its pending slot does not fire`+"\n", res.stdout)
		res = runCLI(t, vars, "schedule", "get", id.String())
		require.Equal(t, ExitError, res.code)
		require.Equal(t, "tributary: no schedule "+id.String()+"; see 'tributary schedule list'\n", res.stderr)

		// delete --json prints the schedule as it was.
		res = runCLI(t, vars, "schedule", "delete", other.String(), "--json")
		require.Equal(t, ExitOK, res.code, res.stderr)
		require.NoError(t, json.Unmarshal([]byte(res.stdout), &after))
		require.Equal(t, other, after.ID)
		require.Equal(t, "to delete", after.Name)
		require.Empty(t, listScheduleIDs(t, vars, "--owner", "pause"))
	})

	t.Run("UnknownSchedule", func(t *testing.T) {
		t.Parallel()

		id := uuid.Must(uuid.NewV7())
		for _, cmd := range []string{"get", "pause", "resume", "delete"} {
			res := runCLI(t, vars, "schedule", cmd, id.String())
			require.Equal(t, ExitError, res.code, cmd)
			require.Empty(t, res.stdout, cmd)
			require.Equal(t, "tributary: no schedule "+id.String()+"; see 'tributary schedule list'\n", res.stderr, cmd)
		}
	})

	t.Run("MissingTables", func(t *testing.T) {
		t.Parallel()

		res := runCLI(t, vars, "schedule", "list", "--schema", db.Schema+"_missing")
		require.Equal(t, ExitError, res.code)
		require.Regexp(t, `^tributary: .*; check --schema or TRIBUTARY_SCHEMA, and that 'tributary migrate up' has run\n$`, res.stderr)
	})
}

func TestScheduleCommandsUsage(t *testing.T) {
	t.Parallel()

	const id = "01a1ffb2-3fa1-781c-b9a9-3cd3e9d0123e"
	create := []string{"create", "--name", "n", "--cron", "@daily", "--workflow", "w"}

	runFailureCases(t, []string{"schedule"}, []failureCase{
		{
			name: "IDWithOwner", args: []string{"get", id, "--owner", "acme"}, code: ExitUsage,
			stderr: "tributary: " + id + " is a schedule id, and an id names the schedule alone: --owner goes with a key; leave --owner out, or pass the schedule's key instead of its id",
		},
		{
			name: "IDWithEmptyOwner", args: []string{"pause", "--owner", "", id, "--note", "x"}, code: ExitUsage,
			stderr: "tributary: " + id + " is a schedule id, and an id names the schedule alone: --owner goes with a key; leave --owner out, or pass the schedule's key instead of its id",
		},
		{
			name: "IDWithOwnerResume", args: []string{"resume", id, "--owner", "acme"}, code: ExitUsage,
			stderr: "tributary: " + id + " is a schedule id, and an id names the schedule alone: --owner goes with a key; leave --owner out, or pass the schedule's key instead of its id",
		},
		{
			name: "EmptyRef", args: []string{"delete", ""}, code: ExitUsage,
			stderr: "tributary: schedule delete: the schedule's id or key is empty; pass the id or the key of a schedule; find them with 'tributary schedule list'",
		},
		{
			name: "NoID", args: []string{"delete"}, code: ExitUsage,
			stderr: "tributary: schedule delete needs <id-or-key>; run it as 'tributary schedule delete <id-or-key> [--owner <owner>]'; find ids and keys with 'tributary schedule list'",
		},
		{
			name: "CreateEmptyKey", args: append(create, "--key", ""), code: ExitUsage,
			stderr: "tributary: --key is empty; pass a key such as nightly-report, or leave --key out for a schedule without one",
		},
		{
			name: "ExtraArgument", args: []string{"get", id, "extra"}, code: ExitUsage,
			stderr: `tributary: unexpected argument "extra"; see 'tributary schedule get --help'`,
		},
		{
			name: "FlagAfterIDUnknown", args: []string{"pause", id, "--reason", "x"}, code: ExitUsage,
			stderr: "tributary: flag provided but not defined: -reason; see 'tributary schedule pause --help'",
		},
		{
			name: "BadAfter", args: []string{"list", "--after", "x"}, code: ExitUsage,
			stderr: `tributary: --after "x" is not a schedule id; schedule ids look like 01a1ffb2-3fa1-781c-b9a9-3cd3e9d0123e`,
		},
		{
			name: "BadPaused", args: []string{"list", "--paused", "maybe"}, code: ExitUsage,
			stderr: `tributary: --paused "maybe" is not true or false; pass --paused true for paused schedules, or --paused false for active ones`,
		},
		{
			name: "LimitTooLarge", args: []string{"list", "--limit", "1001"}, code: ExitUsage,
			stderr: "tributary: --limit must be from 1 to 1000, not 1001; pass --limit 50, or up to --limit 1000 and page with --after",
		},
		{
			name: "CreateNeedsFlags", args: []string{"create", "--cron", "@daily"}, code: ExitUsage,
			stderr: `tributary: schedule create needs --name and --workflow; e.g. tributary schedule create --name "nightly report" --cron "30 2 * * *" --workflow send_report`,
		},
		{
			name: "CreateUnquotedCron", args: []string{"create", "--name", "n", "--workflow", "w", "--cron", "0", "9", "*", "*", "*"}, code: ExitUsage,
			stderr: `tributary: unexpected argument "9"; quote the whole cron expression, e.g. --cron "0 9 * * 1-5"`,
		},
		{
			name: "CreateBadInput", args: append(create, "--input", "{to: ops}"), code: ExitUsage,
			stderr: `tributary: --input is not valid JSON: {to: ops}; pass a JSON value, quoted for the shell: --input '{"to": "ops"}', --input '"text"' or --input 42; or @file.json, or - for standard input`,
		},
		{
			name: "CreateBadStart", args: append(create, "--start", "2026-03-08 09:00"), code: ExitUsage,
			stderr: `tributary: --start "2026-03-08 09:00" is not an RFC 3339 time; use a time like 2026-03-08T00:00:00Z or 2026-03-08T09:00:00+01:00`,
		},
		{
			name: "CreateBadEnd", args: append(create, "--end", "tomorrow"), code: ExitUsage,
			stderr: `tributary: --end "tomorrow" is not an RFC 3339 time; use a time like 2026-03-08T00:00:00Z or 2026-03-08T09:00:00+01:00`,
		},
		{
			name: "CreateBadCatchup", args: append(create, "--catchup", "soon"), code: ExitUsage,
			stderr: `tributary: invalid value "soon" for flag -catchup: parse error; see 'tributary schedule create --help'`,
		},
		{
			name: "CreateNegativeCatchup", args: append(create, "--catchup", "-1m"), code: ExitUsage,
			stderr: "tributary: --catchup must not be negative, not -1m0s; pass --catchup 0 to skip every slot found late",
		},
		{
			name: "CreateBadPriority", args: append(create, "--priority", "5"), code: ExitUsage,
			stderr: "tributary: --priority must be from 1 to 4, not 5; leave it out for the workflow type's default",
		},
		{
			name: "CreateNoteWithoutPaused", args: append(create, "--note", "why"), code: ExitUsage,
			stderr: "tributary: --note is the note of a paused schedule; pass --paused too, or leave --note out",
		},
		{name: "NoDatabaseURLCreate", args: create, code: ExitError, stderr: noDatabaseURL},
		{name: "NoDatabaseURLList", args: []string{"list"}, code: ExitError, stderr: noDatabaseURL},
		{name: "NoDatabaseURLGet", args: []string{"get", id}, code: ExitError, stderr: noDatabaseURL},
		{name: "NoDatabaseURLGetKey", args: []string{"get", "nightly", "--owner", "acme"}, code: ExitError, stderr: noDatabaseURL},
		{name: "NoDatabaseURLResume", args: []string{"resume", id}, code: ExitError, stderr: noDatabaseURL},
		{name: "BadDatabaseURL", args: []string{"list", "--database-url", "http://localhost/app"}, code: ExitError,
			stderr: "re:^tributary: invalid database URL: .*; use a URL like postgres://user:password@localhost:5432/app$"},
	})

	t.Run("Help", func(t *testing.T) {
		t.Parallel()

		res := runCLI(t, nil, "schedule", "--help")
		require.Equal(t, ExitOK, res.code)
		t.Logf("schedule --help:\n%s", res.stdout)
		for _, name := range []string{"create", "delete", "get", "list", "next", "pause", "resume"} {
			require.Regexp(t, regexp.MustCompile(`(?m)^  `+name+` +\S`), res.stdout)
		}

		res = runCLI(t, nil, "schedule", "create", "--help")
		require.Equal(t, ExitOK, res.code)
		t.Logf("schedule create --help:\n%s", res.stdout)
		require.Contains(t, res.stdout, "Usage:\n  tributary schedule create --name <name> --cron <expression> --workflow <type> [--tz <zone>] [--input <json>] [--key <key>] [flags]\n")
		for _, flag := range []string{"--name name", "--cron expression", "--workflow type", "--tz zone", "--input JSON", "--owner owner", "--key key",
			"--overlap policy", "--catchup duration", "--start time", "--end time", "--paused", "--note text", "--json", "--database-url URL"} {
			require.Contains(t, res.stdout, "\n  "+flag+"\n")
		}

		// --help after the id prints the same help.
		res = runCLI(t, nil, "schedule", "pause", "--help")
		require.Equal(t, ExitOK, res.code)
		require.Contains(t, res.stdout, "Usage:\n  tributary schedule pause <id-or-key> [--owner <owner>] [--note <text>] [flags]\n")
		require.Contains(t, res.stdout, "\n  --owner owner\n")
		requireSameHelp(t, res, "schedule", "pause", id, "--help")
		requireSameHelp(t, runCLI(t, nil, "schedule", "get", "--help"), "schedule", "get", "not-an-id", "-h")
	})
}

func TestScheduleTables(t *testing.T) {
	t.Parallel()

	now := time.Date(2026, 3, 6, 12, 0, 0, 0, time.UTC)
	at := func(d time.Duration) *time.Time { t := now.Add(d); return &t }
	start := time.Date(2026, 3, 6, 5, 0, 0, 0, time.UTC)
	nightly := &schedule.Schedule{
		ID: uuid.MustParse("01a1ffb2-3fa1-781c-b9a9-3cd3e9d0123e"), Name: "nightly report", Description: "the ops report\nfor the team",
		Owner: "team-42", Key: "nightly-report", DeclaredBy: "reports", Workflow: "send_report", Input: json.RawMessage(`{"to": "ops"}`), Cron: "30 2 * * *", TimeZone: "America/New_York",
		StartAt: &start, Overlap: schedule.OverlapSkip, CatchUpWindow: 5 * time.Minute, MaxAttempts: 3, Queue: "reports",
		NextFireAt: at(19*time.Hour + 30*time.Minute), LastFireAt: at(-4*time.Hour - 30*time.Minute), RunCount: 12, FailureCount: 1,
		LastRunStatus: "completed", CreatedAt: now.Add(-40 * 24 * time.Hour),
	}
	paused := &schedule.Schedule{
		ID: uuid.MustParse("01a1ffb2-3fa1-781c-b9a9-3cd3e9d01240"), Name: "a name much longer than the forty runes of its column",
		Workflow: "sync", Cron: "@every 90m", TimeZone: "UTC", Overlap: schedule.OverlapAllow, Paused: true, PauseNote: "db upgrade",
		CreatedAt: now.Add(-time.Hour),
	}

	var out strings.Builder
	require.NoError(t, printSchedulesTable(&out, []*schedule.Schedule{nightly, paused}, now))
	t.Logf("schedule list:\n%s", out.String())
	require.Equal(t, ""+
		"ID                                    NAME                                      OWNER    KEY             TENANT               WORKFLOW     CRON        ZONE              NEXT                              RUNS  FAILURES  PAUSED\n"+
		"01a1ffb2-3fa1-781c-b9a9-3cd3e9d0123e  nightly report                            team-42  nightly-report  team-42 (the owner)  send_report  30 2 * * *  America/New_York  2026-03-07 02:30:00 EST (in 19h)  12    1         no\n"+
		"01a1ffb2-3fa1-781c-b9a9-3cd3e9d01240  a name much longer than the forty runes…  -        -               -                    sync         @every 90m  UTC               -                                 0     0         yes\n",
		out.String())

	spec, err := schedule.ParseSpec(nightly.Cron, nightly.TimeZone)
	require.NoError(t, err)
	out.Reset()
	require.NoError(t, printSchedule(&out, nightly, nil, spec.NextN(now, 5), true, now))
	t.Logf("schedule get:\n%s", out.String())
	require.Equal(t, ""+
		"ID:               01a1ffb2-3fa1-781c-b9a9-3cd3e9d0123e\n"+
		"Name:             nightly report\n"+
		"Description:      the ops report for the team\n"+
		"Owner:            team-42\n"+
		"Key:              nightly-report\n"+
		"Run tenant:       team-42 (the owner)\n"+
		"Origin:           declared by service reports: a 'schedule update' lasts only until the service's next Declare puts the code's spec back\n"+
		"Workflow:         send_report\n"+
		"Input:            {\"to\": \"ops\"}\n"+
		"Cron:             30 2 * * *\n"+
		"Time zone:        America/New_York\n"+
		"Start:            2026-03-06 00:00:00 EST (2026-03-06T05:00:00Z)\n"+
		"Overlap:          skip (a slot is skipped while the previous run is unfinished)\n"+
		"Catch-up window:  5m (how late a slot may fire and still run)\n"+
		"Catch-up policy:  window (a slot found later than the catch-up window is skipped as missed)\n"+
		"Run policy:       max attempts 3, queue reports (the rest: the workflow type's defaults)\n"+
		"Paused:           no\n"+
		"Next fire:        2026-03-07 02:30:00 EST (2026-03-07T07:30:00Z, in 19h)\n"+
		"Last fire:        2026-03-06 02:30:00 EST (2026-03-06T07:30:00Z, 4h ago)\n"+
		"Runs:             12 started, 1 failed\n"+
		"Last run status:  completed\n"+
		"Created:          2026-01-25T12:00:00Z (40d ago)\n"+
		"\n"+
		"NEXT FIRE TIMES          UTC                   IN      NOTE\n"+
		"2026-03-07 02:30:00 EST  2026-03-07T07:30:00Z  in 19h  -\n"+
		"2026-03-08 03:00:00 EDT  2026-03-08T07:00:00Z  in 43h  02:30 does not exist on 2026-03-08 in America/New_York (clocks jump from 02:00 to 03:00); runs at 03:00, right after the jump\n"+
		"2026-03-09 02:30:00 EDT  2026-03-09T06:30:00Z  in 2d   -\n"+
		"2026-03-10 02:30:00 EDT  2026-03-10T06:30:00Z  in 3d   -\n"+
		"2026-03-11 02:30:00 EDT  2026-03-11T06:30:00Z  in 4d   -\n",
		out.String())

	out.Reset()
	require.NoError(t, printSchedule(&out, paused, nil, nil, true, now))
	require.Contains(t, out.String(), "\nOwner:            -\nRun tenant:       none (the schedule has neither an owner nor a tenant)\n"+
		"Origin:           created by application code\nWorkflow:         sync\n") // no key
	require.Contains(t, out.String(), "\nOverlap:          allow (a slot starts its run even while the previous one is unfinished)\n")
	require.Contains(t, out.String(), "\nPaused:           yes: db upgrade\nNext fire:        - (paused)\nLast fire:        never\n")
	require.True(t, strings.HasSuffix(out.String(), "\n\nno fire times left before its end\n"), out.String())

	require.Equal(t, "a, b and c", joinWords([]string{"a", "b", "c"}))
	require.Equal(t, "a", joinWords([]string{"a"}))
}
