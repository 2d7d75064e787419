package cli

import (
	"context"
	"encoding/json"
	"log/slog"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/internal/testdb"
	"github.com/tributary-go/tributary/internal/wire"
	"github.com/tributary-go/tributary/schedule"
	"github.com/tributary-go/tributary/workflow"
)

// scheduleHistory runs `schedule history --json` with args.
func scheduleHistory(t *testing.T, vars map[string]string, id uuid.UUID, args ...string) []*wire.Run {
	t.Helper()

	res := runCLI(t, vars, append([]string{"schedule", "history", id.String(), "--json"}, args...)...)
	require.Equal(t, ExitOK, res.code, res.stderr)
	var page wire.RunList
	require.NoError(t, json.Unmarshal([]byte(res.stdout), &page))
	return page.Runs
}

// getRun runs `workflow get --json`.
func getRun(t *testing.T, vars map[string]string, id uuid.UUID) *wire.Run {
	t.Helper()

	res := runCLI(t, vars, "workflow", "get", id.String(), "--json")
	require.Equal(t, ExitOK, res.code, res.stderr)
	var run wire.Run
	require.NoError(t, json.Unmarshal([]byte(res.stdout), &run))
	return &run
}

// grantClient returns a schedule client bound to an insert-only workflow
// client on db, to make execution grants with.
func grantClient(t *testing.T, db *testdb.DB) *schedule.Client {
	t.Helper()

	wf, err := workflow.NewClient(db.Pool, &workflow.Config{Schema: db.Schema, Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	sc, err := schedule.New(wf, nil)
	require.NoError(t, err)
	return sc
}

// metadataKey reads one key of a run's metadata.
func metadataKey(t *testing.T, run *wire.Run, key string) any {
	t.Helper()

	var meta map[string]any
	require.NoError(t, json.Unmarshal(run.Metadata, &meta))
	return meta[key]
}

func TestScheduleMoreCommands(t *testing.T) {
	t.Parallel()

	db, vars := migratedDB(t)
	grants := grantClient(t, db)

	t.Run("Update", func(t *testing.T) {
		t.Parallel()

		id := createSchedule(t, vars, "--name", "report", "--cron", "30 2 * * *", "--tz", "America/New_York", "--workflow", "send_report",
			"--owner", "update", "--description", "the ops report", "--input", `{"to": "ops"}`, "--catchup", "5m", "--max-attempts", "3", "--keep-runs", "30")
		require.Equal(t, 30, getSchedule(t, vars, id).KeepRuns)
		get := runCLI(t, vars, "schedule", "get", id.String())
		require.Contains(t, get.stdout, "Keeps runs:       the last 30 whatever their age")

		res := runCLI(t, vars, "schedule", "update", id.String(), "--name", "morning report", "--cron", "0 9 * * 1-5", "--tz", "Europe/Paris",
			"--input", `{"to": "team"}`, "--overlap", "allow", "--queue", "reports", "--priority", "2", "--timeout", "10m", "--keep-runs", "12")
		require.Equal(t, ExitOK, res.code, res.stderr)
		require.Empty(t, res.stderr)
		require.Regexp(t, `^updated schedule `+id.String()+` \("morning report"\); it fires next at \d{4}-\d\d-\d\d 09:00:00 CES?T \([^)]+\)\n$`, res.stdout)

		s := getSchedule(t, vars, id)
		require.Equal(t, "morning report", s.Name)
		require.Equal(t, "0 9 * * 1-5", s.Cron)
		require.Equal(t, "Europe/Paris", s.TimeZone)
		require.JSONEq(t, `{"to": "team"}`, string(s.Input))
		require.Equal(t, schedule.OverlapAllow, s.Overlap)
		require.Equal(t, "reports", s.Queue)
		require.Equal(t, 2, s.Priority)
		require.Equal(t, wire.Duration(10*time.Minute), s.Timeout)
		require.Equal(t, 12, s.KeepRuns)
		// The flags not given stay.
		require.Equal(t, "the ops report", s.Description)
		require.Equal(t, "update", s.Owner)
		require.Equal(t, "send_report", s.Workflow)
		require.Equal(t, wire.Duration(5*time.Minute), s.CatchUpWindow)
		require.Equal(t, 3, s.MaxAttempts)
		// The new timing took effect at once.
		require.NotNil(t, s.NextFireAt)
		next := s.NextFireAt.In(zoneOf(t, s))
		require.Equal(t, "09:00", next.Format("15:04"))
		require.NotContains(t, []time.Weekday{time.Saturday, time.Sunday}, next.Weekday())
		require.True(t, s.NextFireAt.Equal((*s.NextFireTimes)[0].At))

		// A flag's zero value is a setting too: it clears the description
		// and goes back to the workflow type's defaults.
		res = runCLI(t, vars, "schedule", "update", id.String(), "--description", "", "--max-attempts", "0", "--queue", "", "--json")
		require.Equal(t, ExitOK, res.code, res.stderr)
		require.Empty(t, res.stderr)
		var updated wire.Schedule
		require.NoError(t, json.Unmarshal([]byte(res.stdout), &updated))
		require.Equal(t, id, updated.ID)
		require.Empty(t, updated.Description)
		require.Zero(t, updated.MaxAttempts)
		require.Empty(t, updated.Queue)
		require.Equal(t, 2, updated.Priority)
		require.Equal(t, "morning report", updated.Name)

		// A paused schedule stays paused.
		res = runCLI(t, vars, "schedule", "pause", id.String())
		require.Equal(t, ExitOK, res.code, res.stderr)
		res = runCLI(t, vars, "schedule", "update", id.String(), "--cron", "0 10 * * *")
		require.Equal(t, ExitOK, res.code, res.stderr)
		require.Equal(t, "updated schedule "+id.String()+` ("morning report"); it is paused: no slot fires until 'tributary schedule resume `+id.String()+"'\n", res.stdout)
		s = getSchedule(t, vars, id)
		require.True(t, s.Paused)
		require.Nil(t, s.NextFireAt)
		require.Equal(t, "0 10 * * *", s.Cron)
	})

	t.Run("UpdateCatchUp", func(t *testing.T) {
		t.Parallel()

		// A window of 0 stays 0 through an update of another setting.
		id := createSchedule(t, vars, "--name", "strict", "--cron", "@daily", "--workflow", "w", "--owner", "update-catchup", "--catchup", "0")
		res := runCLI(t, vars, "schedule", "update", id.String(), "--name", "strict, renamed")
		require.Equal(t, ExitOK, res.code, res.stderr)
		s := getSchedule(t, vars, id)
		require.Equal(t, "strict, renamed", s.Name)
		require.Zero(t, s.CatchUpWindow)

		res = runCLI(t, vars, "schedule", "update", id.String(), "--catchup", "90s")
		require.Equal(t, ExitOK, res.code, res.stderr)
		require.Equal(t, wire.Duration(90*time.Second), getSchedule(t, vars, id).CatchUpWindow)
		res = runCLI(t, vars, "schedule", "update", id.String(), "--catchup", "0")
		require.Equal(t, ExitOK, res.code, res.stderr)
		require.Zero(t, getSchedule(t, vars, id).CatchUpWindow)
	})

	t.Run("UpdateInvalid", func(t *testing.T) {
		t.Parallel()

		id := createSchedule(t, vars, "--name", "keep me", "--cron", "0 9 * * *", "--workflow", "w", "--owner", "update-invalid")
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
				name: "BadZone", args: []string{"--tz", "Mars/Olympus_Mons"},
				stderr: `tributary: schedule: bad time zone "Mars/Olympus_Mons": unknown time zone; use an IANA name like "Europe/Paris" or "America/New_York", or "" for UTC`,
			},
			{
				name: "UnknownOverlap", args: []string{"--overlap", "sometimes"},
				stderr: `tributary: schedule: invalid Overlap: "sometimes" is not an overlap policy; use skip, allow, queue or replace`,
			},
			{
				name: "EmptyName", args: []string{"--name", " "},
				stderr: "tributary: schedule: invalid Name: is empty; give the schedule a name operators recognize",
			},
			{
				name: "BadQueue", args: []string{"--queue", "Reports!"},
				stderr: `tributary: schedule: invalid Queue: "Reports!" is not a valid River queue name; use lowercase letters, digits, _ and -`,
			},
		} {
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel()

				requireFailed(t, runCLI(t, vars, append([]string{"schedule", "update", id.String()}, tc.args...)...), ExitUsage, tc.stderr)

				s := getSchedule(t, vars, id) // nothing written
				require.Equal(t, "keep me", s.Name)
				require.Equal(t, "0 9 * * *", s.Cron)
				require.Equal(t, "UTC", s.TimeZone)
				require.Equal(t, schedule.OverlapSkip, s.Overlap)
				require.Empty(t, s.Queue)
			})
		}
	})

	t.Run("Trigger", func(t *testing.T) {
		t.Parallel()

		// No service works this database: the runs stay pending, and the
		// ledger shows what the overlap policy did.
		id := createSchedule(t, vars, "--name", "on demand", "--cron", "0 3 1 1 *", "--workflow", "export", "--owner", "trigger", "--input", `{"n": 1}`)

		res := runCLI(t, vars, "schedule", "trigger", id.String())
		require.Equal(t, ExitOK, res.code, res.stderr)
		require.Empty(t, res.stderr)
		require.Regexp(t, `^[0-9a-f-]{36}\n$`, res.stdout)
		first := uuid.MustParse(strings.TrimSpace(res.stdout))
		run := getRun(t, vars, first)
		require.Equal(t, workflow.StatusPending, run.Status)
		require.Equal(t, "export", run.Type)
		require.Equal(t, id, *run.ScheduleID)
		require.JSONEq(t, `{"n": 1}`, string(run.Input))
		require.WithinDuration(t, time.Now(), *run.FireAt, time.Minute)
		require.Equal(t, true, metadataKey(t, run, "schedule_trigger"))

		// The first run is unfinished: under the overlap policy skip, a
		// second trigger is recorded as skipped.
		res = runCLI(t, vars, "schedule", "trigger", id.String())
		require.Equal(t, ExitOK, res.code, res.stderr)
		second := uuid.MustParse(strings.TrimSpace(res.stdout))
		require.Equal(t, "note: run "+second.String()+" was recorded as skipped (overlap): a run of schedule "+id.String()+
			" is unfinished and its overlap policy is skip; pass --overlap allow to run alongside it\n", res.stderr)
		run = getRun(t, vars, second)
		require.Equal(t, workflow.StatusSkipped, run.Status)
		require.Equal(t, schedule.SkipReasonOverlap, run.SkipReason)

		// --overlap and --input override the schedule's, for this run.
		res = runCLI(t, vars, "schedule", "trigger", id.String(), "--overlap", "allow", "--input", `{"n": 2}`, "--json")
		require.Equal(t, ExitOK, res.code, res.stderr)
		require.Empty(t, res.stderr)
		var third wire.Run
		require.NoError(t, json.Unmarshal([]byte(res.stdout), &third))
		require.Equal(t, workflow.StatusPending, third.Status)
		require.JSONEq(t, `{"n": 2}`, string(third.Input))
		require.JSONEq(t, `{"n": 1}`, string(getSchedule(t, vars, id).Input)) // the schedule's stays

		runs := scheduleHistory(t, vars, id)
		require.Len(t, runs, 3)
		require.Equal(t, []uuid.UUID{third.ID, second, first}, []uuid.UUID{runs[0].ID, runs[1].ID, runs[2].ID})
		require.EqualValues(t, 2, getSchedule(t, vars, id).RunCount) // the skipped one did not run
	})

	t.Run("Backfill", func(t *testing.T) {
		t.Parallel()

		// 02:30 New York time, over the day clocks sprang forward in 2026:
		// that day's slot is at 03:00.
		id := createSchedule(t, vars, "--name", "nightly", "--cron", "30 2 * * *", "--tz", "America/New_York", "--workflow", "nightly",
			"--owner", "backfill", "--overlap", "allow", "--paused")

		res := runCLI(t, vars, "schedule", "backfill", id.String(), "--from", "2026-03-06T00:00:00-05:00", "--to", "2026-03-10T00:00:00-04:00")
		require.Equal(t, ExitOK, res.code, res.stderr)
		require.Empty(t, res.stderr)
		require.Equal(t, "backfilling 2026-03-06 00:00:00 EST … 2026-03-10 00:00:00 EDT: 4 slots: 1 started, 3 queued to run one after the other\n", res.stdout)

		runs := scheduleHistory(t, vars, id)
		require.Len(t, runs, 4)
		var fireTimes []string
		for _, run := range runs {
			require.Equal(t, workflow.StatusPending, run.Status)
			fireTimes = append(fireTimes, run.FireAt.UTC().Format(time.RFC3339))
		}
		require.Equal(t, []string{"2026-03-09T06:30:00Z", "2026-03-08T07:00:00Z", "2026-03-07T07:30:00Z", "2026-03-06T07:30:00Z"}, fireTimes)
		require.EqualValues(t, 4, getSchedule(t, vars, id).RunCount)

		// Each slot runs at most once.
		res = runCLI(t, vars, "schedule", "backfill", id.String(), "--from", "2026-03-06T05:00:00Z", "--to", "2026-03-10T04:00:00Z")
		require.Equal(t, ExitOK, res.code, res.stderr)
		require.Equal(t, "backfilling 2026-03-06 00:00:00 EST … 2026-03-10 00:00:00 EDT: 4 slots: 4 had run (or been skipped) already\n", res.stdout)
		res = runCLI(t, vars, "schedule", "backfill", id.String(), "--from", "2026-03-05T00:00:00Z", "--to", "2026-03-11T00:00:00Z", "--json")
		require.Equal(t, ExitOK, res.code, res.stderr)
		require.JSONEq(t, `{"schedule_id": "`+id.String()+`", "from": "2026-03-05T00:00:00Z", "to": "2026-03-11T00:00:00Z",
			"slots": 6, "started": 0, "queued": 2, "existing": 4, "rerun": 0, "skipped": {}}`, res.stdout)
		require.Len(t, scheduleHistory(t, vars, id), 6)

		// No slot in the range.
		res = runCLI(t, vars, "schedule", "backfill", id.String(), "--from", "2026-03-12T08:00:00Z", "--to", "2026-03-13T06:00:00Z")
		require.Equal(t, ExitOK, res.code, res.stderr)
		require.Equal(t, "backfilling 2026-03-12 04:00:00 EDT … 2026-03-13 02:00:00 EDT: no slot in this range\n", res.stdout)

		// Asked for the overlap policy skip, the first slot's run is
		// unfinished when the next ones start: they are recorded as
		// skipped, and the output says so. --rerun-skipped runs them.
		skipping := createSchedule(t, vars, "--name", "skipping", "--cron", "0 6 * * *", "--workflow", "nightly", "--owner", "backfill", "--paused")
		res = runCLI(t, vars, "schedule", "backfill", skipping.String(), "--from", "2026-03-01T00:00:00Z", "--to", "2026-03-04T00:00:00Z", "--overlap", "skip")
		require.Equal(t, ExitOK, res.code, res.stderr)
		require.Equal(t, "backfilling 2026-03-01 00:00:00 UTC … 2026-03-04 00:00:00 UTC: 3 slots: 1 started, 2 skipped (overlap)\n", res.stdout)
		require.Len(t, scheduleHistory(t, vars, skipping, "--status", "pending"), 1)
		skipped := scheduleHistory(t, vars, skipping, "--status", "skipped")
		require.Len(t, skipped, 2)
		require.Equal(t, schedule.SkipReasonOverlap, skipped[0].SkipReason)
		res = runCLI(t, vars, "schedule", "backfill", skipping.String(), "--from", "2026-03-01T00:00:00Z", "--to", "2026-03-04T00:00:00Z", "--rerun-skipped")
		require.Equal(t, ExitOK, res.code, res.stderr)
		require.Equal(t, "backfilling 2026-03-01 00:00:00 UTC … 2026-03-04 00:00:00 UTC: 3 slots: 2 queued to run one after the other, "+
			"1 had run (or been skipped) already, 2 of them run again after a skip\n", res.stdout)
		require.Len(t, scheduleHistory(t, vars, skipping, "--status", "pending"), 3)
		require.Empty(t, scheduleHistory(t, vars, skipping, "--status", "skipped"))
		res = runCLI(t, vars, "schedule", "backfill", skipping.String(), "--from", "2026-03-01T00:00:00Z", "--to", "2026-03-04T00:00:00Z", "--overlap", "sometimes")
		require.Equal(t, ExitUsage, res.code, res.stderr)
		require.Contains(t, res.stderr, `"sometimes" is not an overlap policy; use buffer (the default: all, one after the other), allow, skip, queue or replace`)
	})

	t.Run("BackfillBatches", func(t *testing.T) {
		t.Parallel()

		// 1,100 slots, one a minute: two calls of at most 1,000 slots.
		id := createSchedule(t, vars, "--name", "every minute", "--cron", "* * * * *", "--workflow", "tick", "--owner", "backfill-batches",
			"--overlap", "allow", "--paused")
		res := runCLI(t, vars, "schedule", "backfill", id.String(), "--from", "2026-03-01T00:00:00Z", "--to", "2026-03-01T18:20:00Z")
		require.Equal(t, ExitOK, res.code, res.stderr)
		require.Empty(t, res.stderr)
		require.Equal(t, ""+
			"backfilling 1100 slots in 2 batches of up to 1000, one transaction each\n"+
			"backfilling 2026-03-01 00:00:00 UTC … 2026-03-01 16:40:00 UTC: 1000 slots: 1 started, 999 queued to run one after the other (1000 of 1100 slots done)\n"+
			"backfilling 2026-03-01 16:40:00 UTC … 2026-03-01 18:20:00 UTC: 100 slots: 100 queued to run one after the other (1100 of 1100 slots done)\n"+
			"backfilled schedule "+id.String()+` ("every minute"): 1100 slots: 1 started, 1099 queued to run one after the other`+"\n", res.stdout)
		require.EqualValues(t, 1100, getSchedule(t, vars, id).RunCount)

		// A wider range: the slots that had their run are counted apart.
		res = runCLI(t, vars, "schedule", "backfill", id.String(), "--from", "2026-03-01T18:00:00Z", "--to", "2026-03-01T18:30:00Z", "--json")
		require.Equal(t, ExitOK, res.code, res.stderr)
		require.JSONEq(t, `{"schedule_id": "`+id.String()+`", "from": "2026-03-01T18:00:00Z", "to": "2026-03-01T18:30:00Z",
			"slots": 30, "started": 0, "queued": 10, "existing": 20, "rerun": 0, "skipped": {}}`, res.stdout)
		res = runCLI(t, vars, "schedule", "backfill", id.String(), "--from", "2026-03-01T18:00:00Z", "--to", "2026-03-01T18:40:00Z")
		require.Equal(t, ExitOK, res.code, res.stderr)
		require.Equal(t, "backfilling 2026-03-01 18:00:00 UTC … 2026-03-01 18:40:00 UTC: 40 slots: 10 queued to run one after the other, 30 had run (or been skipped) already\n", res.stdout)

		// Too many slots for one backfill.
		res = runCLI(t, vars, "schedule", "backfill", id.String(), "--from", "2026-01-01T00:00:00Z", "--to", "2026-05-01T00:00:00Z")
		require.Equal(t, ExitUsage, res.code, res.stderr)
		require.Empty(t, res.stdout)
		require.Equal(t, `tributary: 2026-01-01T00:00:00Z … 2026-05-01T00:00:00Z holds more than 100000 slots of "* * * * *"; backfill a shorter range at a time`+"\n", res.stderr)
	})

	t.Run("BackfillStopped", func(t *testing.T) {
		t.Parallel()

		// Stopped (as by Ctrl-C) after its first batch, a backfill says
		// what it did and how to finish.
		id := createSchedule(t, vars, "--name", "every minute", "--cron", "* * * * *", "--workflow", "tick", "--owner", "backfill-stopped",
			"--overlap", "allow", "--paused")
		backfill := startCLI(t, vars, regexp.MustCompile(`\(1000 of 1100 slots done\)\n`),
			"schedule", "backfill", id.String(), "--from", "2026-03-01T00:00:00Z", "--to", "2026-03-01T18:20:00Z")
		backfill.Paused(t)
		require.Equal(t, ExitError, backfill.Stop(t))
		require.Equal(t, "tributary: backfill stopped at 2026-03-01 16:40:00 UTC, after 1000 of 1100 slots: context canceled; "+
			"the slots before it are backfilled and stay so: to finish, run the command again with --from 2026-03-01T16:40:00Z\n", backfill.stderr.String())
		require.EqualValues(t, 1000, getSchedule(t, vars, id).RunCount)

		res := runCLI(t, vars, "schedule", "backfill", id.String(), "--from", "2026-03-01T16:40:00Z", "--to", "2026-03-01T18:20:00Z")
		require.Equal(t, ExitOK, res.code, res.stderr)
		require.Equal(t, "backfilling 2026-03-01 16:40:00 UTC … 2026-03-01 18:20:00 UTC: 100 slots: 100 queued to run one after the other\n", res.stdout)
		require.EqualValues(t, 1100, getSchedule(t, vars, id).RunCount)
	})

	t.Run("History", func(t *testing.T) {
		t.Parallel()

		id := createSchedule(t, vars, "--name", "dst", "--cron", "30 2 * * *", "--tz", "America/New_York", "--workflow", "nightly",
			"--owner", "history", "--overlap", "allow", "--paused")
		res := runCLI(t, vars, "schedule", "history", id.String())
		require.Equal(t, ExitOK, res.code, res.stderr)
		require.Equal(t, "no runs\n", res.stdout)

		res = runCLI(t, vars, "schedule", "backfill", id.String(), "--from", "2026-03-07T12:00:00Z", "--to", "2026-03-09T12:00:00Z")
		require.Equal(t, ExitOK, res.code, res.stderr)
		res = runCLI(t, vars, "schedule", "trigger", id.String())
		require.Equal(t, ExitOK, res.code, res.stderr)
		triggered := uuid.MustParse(strings.TrimSpace(res.stdout))
		runs := scheduleHistory(t, vars, id)
		require.Len(t, runs, 3)
		require.Equal(t, triggered, runs[0].ID)

		res = runCLI(t, vars, "schedule", "history", id.String())
		require.Equal(t, ExitOK, res.code, res.stderr)
		require.Empty(t, res.stderr)
		t.Logf("schedule history:\n%s", res.stdout)
		require.Regexp(t, `^RUN +FIRE AT +STATUS +SKIP REASON +ATTEMPT +FINISHED +NOTE\n`+
			triggered.String()+` +\d{4}-\d\d-\d\d \d\d:\d\d:\d\d E[SD]T +pending +- +0/10 +- +triggered\n`+
			runs[1].ID.String()+` +2026-03-09 02:30:00 EDT +pending +- +0/10 +- +-\n`+
			runs[2].ID.String()+` +2026-03-08 03:00:00 EDT +pending +- +0/10 +- +`+
			regexp.QuoteMeta("02:30 does not exist on 2026-03-08 in America/New_York (clocks jump from 02:00 to 03:00); runs at 03:00, right after the jump")+`\n$`,
			res.stdout)

		// Paging, as in 'workflow list'.
		res = runCLI(t, vars, "schedule", "history", id.String(), "--limit", "2")
		require.Equal(t, ExitOK, res.code, res.stderr)
		require.Regexp(t, `^RUN .*\n`+triggered.String()+` .*\n`+runs[1].ID.String()+` .*\n$`, res.stdout)
		require.Equal(t, "note: there may be more runs; see them with --after "+runs[1].ID.String()+"\n", res.stderr)
		after := scheduleHistory(t, vars, id, "--after", runs[1].ID.String())
		require.Len(t, after, 1)
		require.Equal(t, runs[2].ID, after[0].ID)
		require.Empty(t, scheduleHistory(t, vars, id, "--status", "completed"))
		res = runCLI(t, vars, "schedule", "history", id.String(), "--status", "failed")
		require.Equal(t, ExitOK, res.code, res.stderr)
		require.Equal(t, "no runs\n", res.stdout)
	})

	t.Run("ResumeMissed", func(t *testing.T) {
		t.Parallel()

		// A daily slot at midnight UTC, paused two and a half days ago:
		// the last three slots were missed.
		day := time.Now().UTC().Truncate(24 * time.Hour)
		missed := []time.Time{day.AddDate(0, 0, -2), day.AddDate(0, 0, -1), day}
		pausedSchedule := func(t *testing.T, name string) uuid.UUID {
			t.Helper()
			id := createSchedule(t, vars, "--name", name, "--cron", "0 0 * * *", "--workflow", "w", "--owner", "resume-missed", "--overlap", "allow", "--paused")
			_, err := db.Pool.Exec(context.Background(), "UPDATE schedules SET paused_at = $2 WHERE id = $1", id, day.Add(-60*time.Hour))
			require.NoError(t, err)
			return id
		}
		fireTimes := func(runs []*wire.Run) []string {
			out := []string{}
			for _, run := range runs {
				out = append(out, run.FireAt.UTC().Format(time.RFC3339))
			}
			return out
		}
		rfc3339 := func(times ...time.Time) []string {
			out := []string{}
			for _, t := range times {
				out = append(out, t.Format(time.RFC3339))
			}
			return out
		}
		nextFire := `it fires next at ` + regexp.QuoteMeta(day.AddDate(0, 0, 1).Format(zonedLayout)) + ` \(in \d+[hms]\)\n$`

		latest := pausedSchedule(t, "latest")
		res := runCLI(t, vars, "schedule", "resume", latest.String(), "--missed", "latest")
		require.Equal(t, ExitOK, res.code, res.stderr)
		require.Empty(t, res.stderr)
		require.Regexp(t, `^resumed schedule `+latest.String()+` \("latest"\); the latest slot missed while it was paused, `+
			regexp.QuoteMeta(day.Format(zonedLayout))+`, runs now; `+nextFire, res.stdout)
		require.Equal(t, rfc3339(day), fireTimes(scheduleHistory(t, vars, latest)))

		backfill := pausedSchedule(t, "backfill")
		res = runCLI(t, vars, "schedule", "resume", "--missed", "backfill", backfill.String())
		require.Equal(t, ExitOK, res.code, res.stderr)
		require.Regexp(t, `^resumed schedule `+backfill.String()+` \("backfill"\); the 3 slots missed while it was paused \(`+
			regexp.QuoteMeta(missed[0].Format(zonedLayout)+" … "+missed[2].Format(zonedLayout))+
			`\) run now, one after the other, oldest first; `+nextFire, res.stdout)
		require.Equal(t, rfc3339(missed[2], missed[1], missed[0]), fireTimes(scheduleHistory(t, vars, backfill)))
		require.False(t, getSchedule(t, vars, backfill).Paused)

		skip := pausedSchedule(t, "skip")
		res = runCLI(t, vars, "schedule", "resume", skip.String(), "--missed", "skip", "--json")
		require.Equal(t, ExitOK, res.code, res.stderr)
		var resumed wire.Schedule
		require.NoError(t, json.Unmarshal([]byte(res.stdout), &resumed))
		require.False(t, resumed.Paused)
		require.Empty(t, scheduleHistory(t, vars, skip))

		// A schedule paused just now missed nothing.
		none := createSchedule(t, vars, "--name", "none", "--cron", "0 0 * * *", "--workflow", "w", "--owner", "resume-missed", "--paused")
		res = runCLI(t, vars, "schedule", "resume", none.String(), "--missed", "backfill")
		require.Equal(t, ExitOK, res.code, res.stderr)
		require.Regexp(t, `^resumed schedule `+none.String()+` \("none"\); no slot was missed while it was paused; `+nextFire, res.stdout)
	})

	t.Run("DSTPolicy", func(t *testing.T) {
		t.Parallel()

		id := createSchedule(t, vars, "--name", "payroll", "--cron", "30 2 * * *", "--tz", "America/New_York", "--workflow", "w",
			"--owner", "dst-policy", "--dst-gap", "skip")
		s := getSchedule(t, vars, id)
		require.Equal(t, schedule.DSTGapSkip, s.DSTGap)
		require.Equal(t, schedule.DSTFoldFirst, s.DSTFold)
		res := runCLI(t, vars, "schedule", "get", id.String())
		require.Equal(t, ExitOK, res.code, res.stderr)
		require.Contains(t, res.stdout, "\nDST policy:       gap skip (a time the clocks jump over does not run; the slot is recorded as skipped), "+
			"fold first (a time that occurs twice runs at the first)\n")

		res = runCLI(t, vars, "schedule", "update", id.String(), "--dst-gap", "shift", "--dst-fold", "both")
		require.Equal(t, ExitOK, res.code, res.stderr)
		s = getSchedule(t, vars, id)
		require.Equal(t, schedule.DSTGapShift, s.DSTGap)
		require.Equal(t, schedule.DSTFoldBoth, s.DSTFold)

		// Back to the defaults: not shown.
		res = runCLI(t, vars, "schedule", "update", id.String(), "--dst-gap", "jump", "--dst-fold", "first")
		require.Equal(t, ExitOK, res.code, res.stderr)
		res = runCLI(t, vars, "schedule", "get", id.String())
		require.NotContains(t, res.stdout, "DST policy")

		res = runCLI(t, vars, "schedule", "update", id.String(), "--dst-fold", "twice")
		require.Equal(t, ExitUsage, res.code)
		require.Equal(t, "tributary: --dst-fold \"twice\" is not a DST fold policy; pass --dst-fold first, last or both\n", res.stderr)
		res = runCLI(t, vars, "schedule", "create", "--name", "x", "--cron", "@daily", "--workflow", "w", "--dst-gap", "later")
		require.Equal(t, ExitUsage, res.code)
		require.Equal(t, "tributary: --dst-gap \"later\" is not a DST gap policy; pass --dst-gap jump, shift or skip\n", res.stderr)
	})

	t.Run("RRule", func(t *testing.T) {
		t.Parallel()

		id := createSchedule(t, vars, "--name", "fortnightly", "--rrule", "DTSTART:20270105T090000;RRULE:FREQ=WEEKLY;INTERVAL=2;BYDAY=TU",
			"--tz", "Europe/Paris", "--workflow", "w", "--owner", "rrule")
		s := getSchedule(t, vars, id)
		require.Equal(t, "DTSTART:20270105T090000\nRRULE:FREQ=WEEKLY;INTERVAL=2;BYDAY=TU", s.RRule)
		require.Empty(t, s.Cron)
		require.Equal(t, time.Tuesday, s.NextFireAt.In(zoneOf(t, s)).Weekday())
		res := runCLI(t, vars, "schedule", "get", id.String())
		require.Equal(t, ExitOK, res.code, res.stderr)
		require.Contains(t, res.stdout, "\nRRULE:            DTSTART:20270105T090000; RRULE:FREQ=WEEKLY;INTERVAL=2;BYDAY=TU\n")
		res = runCLI(t, vars, "schedule", "list", "--owner", "rrule")
		require.Equal(t, ExitOK, res.code, res.stderr)
		require.Contains(t, res.stdout, "DTSTART:20270105T090000; RRULE:FREQ=WEEKLY;INTERVAL=2;BYDAY=TU")

		res = runCLI(t, vars, "schedule", "update", id.String(), "--cron", "0 9 * * 2")
		require.Equal(t, ExitOK, res.code, res.stderr)
		s = getSchedule(t, vars, id)
		require.Equal(t, "0 9 * * 2", s.Cron)
		require.Empty(t, s.RRule)
		res = runCLI(t, vars, "schedule", "update", id.String(), "--rrule", "DTSTART:20270105T090000;RRULE:FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=-1")
		require.Equal(t, ExitOK, res.code, res.stderr)
		s = getSchedule(t, vars, id)
		require.Equal(t, "DTSTART:20270105T090000\nRRULE:FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=-1", s.RRule)

		res = runCLI(t, vars, "schedule", "update", id.String(), "--cron", "@daily", "--rrule", "DTSTART:20270105T090000;RRULE:FREQ=DAILY")
		require.Equal(t, ExitUsage, res.code)
		require.Equal(t, "tributary: pass --cron or --rrule, not both; a schedule has one rule\n", res.stderr)
		res = runCLI(t, vars, "schedule", "create", "--name", "x", "--workflow", "w", "--rrule", "DTSTART:20270105T090000;RRULE:FREQ=FORTNIGHTLY")
		require.NotEqual(t, ExitOK, res.code)
		require.Contains(t, res.stderr, "FREQ=FORTNIGHTLY")
	})

	t.Run("CatchUpPolicy", func(t *testing.T) {
		t.Parallel()

		id := createSchedule(t, vars, "--name", "latest", "--cron", "@hourly", "--workflow", "w", "--owner", "catchup-policy", "--catchup-policy", "latest")
		s := getSchedule(t, vars, id)
		require.Equal(t, schedule.CatchUpLatest, s.CatchUp)
		require.Equal(t, wire.Duration(schedule.DefaultCatchUpWindow), s.CatchUpWindow)

		res := runCLI(t, vars, "schedule", "get", id.String())
		require.Equal(t, ExitOK, res.code, res.stderr)
		require.Contains(t, res.stdout, "\nCatch-up window:  1m (how late a slot may fire and still run)\n"+
			"Catch-up policy:  latest (of the slots found later than the catch-up window, only the most recent runs, once; the older ones do not run)\n")
		require.NotContains(t, res.stdout, "skipped as missed")

		// An update keeps it.
		res = runCLI(t, vars, "schedule", "update", id.String(), "--catchup", "10m")
		require.Equal(t, ExitOK, res.code, res.stderr)
		s = getSchedule(t, vars, id)
		require.Equal(t, schedule.CatchUpLatest, s.CatchUp)
		require.Equal(t, wire.Duration(10*time.Minute), s.CatchUpWindow)

		res = runCLI(t, vars, "schedule", "create", "--name", "window", "--cron", "@hourly", "--workflow", "w", "--owner", "catchup-policy", "--json")
		require.Equal(t, ExitOK, res.code, res.stderr)
		var created wire.Schedule
		require.NoError(t, json.Unmarshal([]byte(res.stdout), &created))
		require.Equal(t, schedule.CatchUpWindow, created.CatchUp)
	})

	t.Run("Grant", func(t *testing.T) {
		t.Parallel()

		ctx := context.Background()
		grant, err := grants.CreateGrant(ctx, &schedule.GrantParams{Subject: "user-42", Scopes: []string{schedule.ScopeExecute("digest")}})
		require.NoError(t, err)

		res := runCLI(t, vars, "schedule", "create", "--name", "user digest", "--cron", "0 8 * * *", "--workflow", "digest", "--owner", "grant",
			"--grant", grant.ID.String(), "--json")
		require.Equal(t, ExitOK, res.code, res.stderr)
		var s wire.Schedule
		require.NoError(t, json.Unmarshal([]byte(res.stdout), &s))
		require.Equal(t, grant.ID, *s.GrantID)

		res = runCLI(t, vars, "schedule", "get", s.ID.String())
		require.Equal(t, ExitOK, res.code, res.stderr)
		require.Contains(t, res.stdout, "\nGrant:            "+grant.ID.String()+` (subject "user-42", scopes workflow:execute:digest)`+"\n")
		require.Equal(t, grant.ID, *getSchedule(t, vars, s.ID).GrantID)

		// Runs started from the command line are checked against the grant
		// and act as its subject, like fired slots.
		res = runCLI(t, vars, "schedule", "trigger", s.ID.String())
		require.Equal(t, ExitOK, res.code, res.stderr)
		history := scheduleHistory(t, vars, s.ID)
		require.Len(t, history, 1)
		require.Contains(t, string(history[0].Metadata), `"grant_subject": "user-42"`)

		// Revoked: get says so, and create refuses it.
		_, err = grants.RevokeGrant(ctx, grant.ID, "left the team")
		require.NoError(t, err)
		res = runCLI(t, vars, "schedule", "get", s.ID.String())
		require.Equal(t, ExitOK, res.code, res.stderr)
		require.Regexp(t, `\nGrant: +`+grant.ID.String()+` \(subject "user-42"\): it was revoked (just now|\d+s ago) \(left the team\); each slot is skipped as "grant revoked"\n`, res.stdout)
		res = runCLI(t, vars, "schedule", "create", "--name", "n", "--cron", "@daily", "--workflow", "digest", "--owner", "grant", "--grant", grant.ID.String())
		require.Equal(t, ExitUsage, res.code, res.stderr)
		require.Regexp(t, `^tributary: execution grant `+grant.ID.String()+` was revoked (just now|\d+s ago) \(left the team\), so each slot would be skipped \("grant revoked"\); pass a grant that is in force\n$`, res.stderr)

		other, err := grants.CreateGrant(ctx, &schedule.GrantParams{Subject: "user-7", Scopes: []string{schedule.ScopeExecute("report"), "read"}})
		require.NoError(t, err)
		res = runCLI(t, vars, "schedule", "create", "--name", "n", "--cron", "@daily", "--workflow", "digest", "--owner", "grant", "--grant", other.ID.String())
		require.Equal(t, ExitUsage, res.code, res.stderr)
		require.Equal(t, "tributary: execution grant "+other.ID.String()+` does not allow workflow type "digest" (its scopes: workflow:execute:report, read), `+
			`so each slot would be skipped ("grant out of scope"); pass a grant with scope "workflow:execute:digest" or "*"`+"\n", res.stderr)

		expiring, err := grants.CreateGrant(ctx, &schedule.GrantParams{Subject: "user-8", Scopes: []string{"*"}, ExpiresAt: time.Now().Add(time.Hour)})
		require.NoError(t, err)
		_, err = db.Pool.Exec(ctx, "UPDATE execution_grants SET expires_at = now() - interval '2 hours' WHERE id = $1", expiring.ID)
		require.NoError(t, err)
		res = runCLI(t, vars, "schedule", "create", "--name", "n", "--cron", "@daily", "--workflow", "digest", "--owner", "grant", "--grant", expiring.ID.String())
		require.Equal(t, ExitUsage, res.code, res.stderr)
		require.Equal(t, "tributary: execution grant "+expiring.ID.String()+` expired 2h ago, so each slot would be skipped ("grant expired"); pass a grant that is in force`+"\n", res.stderr)

		unknown := uuid.Must(uuid.NewV7())
		res = runCLI(t, vars, "schedule", "create", "--name", "n", "--cron", "@daily", "--workflow", "digest", "--owner", "grant", "--grant", unknown.String())
		require.Equal(t, ExitUsage, res.code, res.stderr)
		require.Equal(t, "tributary: no execution grant "+unknown.String()+"; create one with schedule.Client.CreateGrant and pass its id (the CLI has no grant commands yet)\n", res.stderr)
		require.Equal(t, []uuid.UUID{s.ID}, listScheduleIDs(t, vars, "--owner", "grant")) // nothing written
	})

	t.Run("UnknownSchedule", func(t *testing.T) {
		t.Parallel()

		id := uuid.Must(uuid.NewV7())
		for _, args := range [][]string{
			{"update", id.String(), "--name", "x"},
			{"trigger", id.String()},
			{"backfill", id.String(), "--from", "2026-03-01T00:00:00Z", "--to", "2026-03-02T00:00:00Z"},
			{"history", id.String()},
			{"resume", id.String(), "--missed", "backfill"},
		} {
			requireFailed(t, runCLI(t, vars, append([]string{"schedule"}, args...)...), ExitError, "tributary: no schedule "+id.String()+"; see 'tributary schedule list'")
		}
	})
}

// TestScheduleRunsComplete triggers and backfills a schedule whose
// workflow type a working client registers, and reads the history of the
// runs it works.
func TestScheduleRunsComplete(t *testing.T) {
	t.Parallel()

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	db, vars := migratedDB(t)
	defs := newCLITestWorkflows(nil)
	client := startWorkingClient(ctx, t, db, &workflow.Config{Workflows: []workflow.Registrable{defs.quick}}, func(wf *workflow.Client) error {
		_, err := schedule.New(wf, nil)
		return err
	})

	// Paused, so that no slot of its own fires during the test.
	id := createSchedule(t, vars, "--name", "greeting", "--cron", "0 6 * * *", "--tz", "Europe/Paris", "--workflow", "cli_quick",
		"--input", `{"name": "Ada"}`, "--overlap", "allow", "--paused")

	res := runCLI(t, vars, "schedule", "trigger", id.String())
	require.Equal(t, ExitOK, res.code, res.stderr)
	triggered := uuid.MustParse(strings.TrimSpace(res.stdout))
	run := waitRunStatus(ctx, t, client, triggered, workflow.StatusCompleted)
	require.JSONEq(t, `"hello Ada"`, string(run.Output))

	res = runCLI(t, vars, "schedule", "backfill", id.String(), "--from", "2026-03-01T00:00:00+01:00", "--to", "2026-03-03T00:00:00+01:00")
	require.Equal(t, ExitOK, res.code, res.stderr)
	require.Equal(t, "backfilling 2026-03-01 00:00:00 CET … 2026-03-03 00:00:00 CET: 2 slots: 1 started, 1 queued to run one after the other\n", res.stdout)
	runs := scheduleHistory(t, vars, id)
	require.Len(t, runs, 3)
	for _, run := range runs {
		waitRunStatus(ctx, t, client, run.ID, workflow.StatusCompleted)
	}

	res = runCLI(t, vars, "schedule", "history", id.String())
	require.Equal(t, ExitOK, res.code, res.stderr)
	t.Logf("schedule history:\n%s", res.stdout)
	finished := `(just now|\d+s ago)`
	require.Regexp(t, `^RUN +FIRE AT +STATUS +SKIP REASON +ATTEMPT +FINISHED +NOTE\n`+
		runs[0].ID.String()+` +2026-03-02 06:00:00 CET +completed +- +1/10 +`+finished+` +-\n`+
		runs[1].ID.String()+` +2026-03-01 06:00:00 CET +completed +- +1/10 +`+finished+` +-\n`+
		triggered.String()+` +\d{4}-\d\d-\d\d \d\d:\d\d:\d\d CES?T +completed +- +1/10 +`+finished+` +triggered\n$`, res.stdout)
	require.Len(t, scheduleHistory(t, vars, id, "--status", "completed"), 3)

	s := getSchedule(t, vars, id)
	require.EqualValues(t, 3, s.RunCount)
}

func TestScheduleMoreUsage(t *testing.T) {
	t.Parallel()

	const id = "01a1ffb2-3fa1-781c-b9a9-3cd3e9d0123e"
	const idWithOwner = "tributary: " + id + " is a schedule id, and an id names the schedule alone: --owner goes with a key; leave --owner out, or pass the schedule's key instead of its id"
	const badJSON = `--input is not valid JSON: {to: ops}; pass a JSON value, quoted for the shell: --input '{"to": "ops"}', --input '"text"' or --input 42; or @file.json, or - for standard input`
	future := time.Now().Add(48 * time.Hour).UTC().Format(time.RFC3339)

	runFailureCases(t, []string{"schedule"}, []failureCase{
		{name: "UpdateIDWithOwner", args: []string{"update", id, "--owner", "acme", "--name", "n"}, code: ExitUsage, stderr: idWithOwner},
		{name: "TriggerIDWithOwner", args: []string{"trigger", id, "--owner", "acme"}, code: ExitUsage, stderr: idWithOwner},
		{name: "BackfillIDWithOwner", args: []string{"backfill", id, "--owner", "acme", "--from", "2026-03-01T00:00:00Z", "--to", "2026-03-02T00:00:00Z"}, code: ExitUsage, stderr: idWithOwner},
		{name: "HistoryIDWithOwner", args: []string{"history", "--owner", "acme", id}, code: ExitUsage, stderr: idWithOwner},
		{
			name: "UpdateNoID", args: []string{"update"}, code: ExitUsage,
			stderr: "tributary: schedule update needs <id-or-key>; run it as 'tributary schedule update <id-or-key> [--owner <owner>]'; find ids and keys with 'tributary schedule list'",
		},
		{
			name: "UpdateNothing", args: []string{"update", id, "--json"}, code: ExitUsage,
			stderr: "tributary: schedule update needs a setting to change; pass one or more of --name, --description, --workflow, --cron, --rrule, --tz, --input, --overlap, --catchup, " +
				`--max-attempts, --priority, --queue, --timeout, --keep-runs, --tenant, --calendars, --on-excluded, --dst-gap, --dst-fold, --retry-delay, --retry-backoff and --retry-jitter, e.g. tributary schedule update ` + id + ` --cron "0 3 * * *"`,
		},
		{
			name: "UpdateNothingByKey", args: []string{"update", "nightly-report", "--owner", "acme corp"}, code: ExitUsage,
			stderr: "tributary: schedule update needs a setting to change; pass one or more of --name, --description, --workflow, --cron, --rrule, --tz, --input, --overlap, --catchup, " +
				`--max-attempts, --priority, --queue, --timeout, --keep-runs, --tenant, --calendars, --on-excluded, --dst-gap, --dst-fold, --retry-delay, --retry-backoff and --retry-jitter, e.g. tributary schedule update nightly-report --owner "acme corp" --cron "0 3 * * *"`,
		},
		{name: "UpdateBadInput", args: []string{"update", id, "--input", "{to: ops}"}, code: ExitUsage, stderr: "tributary: " + badJSON},
		{
			name: "UpdateNegativeMaxAttempts", args: []string{"update", id, "--max-attempts", "-1"}, code: ExitUsage,
			stderr: "tributary: --max-attempts must be at least 1, or 0 for the workflow type's default, not -1; leave it out to keep the schedule's",
		},
		{
			name: "UpdateBadPriority", args: []string{"update", id, "--priority", "5"}, code: ExitUsage,
			stderr: "tributary: --priority must be from 1 to 4, or 0 for the workflow type's default, not 5; leave it out to keep the schedule's",
		},
		{
			name: "UpdateNegativeCatchup", args: []string{"update", id, "--catchup", "-1m"}, code: ExitUsage,
			stderr: "tributary: --catchup must not be negative, not -1m0s; pass --catchup 0 to skip every slot found late",
		},
		{
			// A key never changes.
			name: "UpdateUnknownFlag", args: []string{"update", id, "--key", "x"}, code: ExitUsage,
			stderr: "tributary: flag provided but not defined: -key; see 'tributary schedule update --help'",
		},
		{name: "TriggerBadInput", args: []string{"trigger", id, "--input", "{to: ops}"}, code: ExitUsage, stderr: "tributary: " + badJSON},
		{
			name: "TriggerBadOverlap", args: []string{"trigger", id, "--overlap", "sometimes"}, code: ExitUsage,
			stderr: `tributary: --overlap "sometimes" is not an overlap policy; use one of skip, allow, queue or replace`,
		},
		{
			name: "BackfillNeedsRange", args: []string{"backfill", id}, code: ExitUsage,
			stderr: "tributary: schedule backfill needs --from and --to; e.g. tributary schedule backfill " + id + " --from 2026-03-01T00:00:00Z --to 2026-03-08T00:00:00Z",
		},
		{
			name: "BackfillNeedsTo", args: []string{"backfill", id, "--from", "2026-03-01T00:00:00Z"}, code: ExitUsage,
			stderr: "tributary: schedule backfill needs --to; e.g. tributary schedule backfill " + id + " --from 2026-03-01T00:00:00Z --to 2026-03-08T00:00:00Z",
		},
		{
			name: "BackfillFromAfterTo", args: []string{"backfill", id, "--from", "2026-03-08T00:00:00Z", "--to", "2026-03-01T00:00:00Z"}, code: ExitUsage,
			stderr: "tributary: --from 2026-03-08T00:00:00Z is not before --to 2026-03-01T00:00:00Z; the range runs from --from up to --to; pass a --from earlier than --to",
		},
		{
			name: "BackfillEmptyRange", args: []string{"backfill", id, "--from", "2026-03-08T01:00:00+01:00", "--to", "2026-03-08T00:00:00Z"}, code: ExitUsage,
			stderr: "tributary: --from 2026-03-08T01:00:00+01:00 is not before --to 2026-03-08T00:00:00Z; the range runs from --from up to --to; pass a --from earlier than --to",
		},
		{
			name: "BackfillFuture", args: []string{"backfill", id, "--from", "2026-03-01T00:00:00Z", "--to", future}, code: ExitUsage,
			stderr: "tributary: --to " + future + " is in the future; a backfill runs past slots, and the future ones fire on their own; pass a --to up to now",
		},
		{
			name: "BackfillBadFrom", args: []string{"backfill", id, "--from", "2026-03-01", "--to", "2026-03-02T00:00:00Z"}, code: ExitUsage,
			stderr: `tributary: --from "2026-03-01" is not an RFC 3339 time; use a time like 2026-03-08T00:00:00Z or 2026-03-08T09:00:00+01:00`,
		},
		{
			name: "HistoryBadStatus", args: []string{"history", id, "--status", "done"}, code: ExitUsage,
			stderr: `tributary: --status "done" is not a run status; use one of pending, running, sleeping, waiting, completed, failed, cancelled or skipped`,
		},
		{
			name: "HistoryBadLimit", args: []string{"history", id, "--limit", "0"}, code: ExitUsage,
			stderr: "tributary: --limit must be from 1 to 1000, not 0; pass --limit 50, or up to --limit 1000 and page with --after",
		},
		{
			name: "HistoryBadAfter", args: []string{"history", id, "--after", "x"}, code: ExitUsage,
			stderr: `tributary: --after "x" is not a run id; run ids look like 01a1ffb2-3fa1-781c-b9a9-3cd3e9d0123e`,
		},
		{
			name: "ResumeBadMissed", args: []string{"resume", id, "--missed", "all"}, code: ExitUsage,
			stderr: `tributary: --missed "all" is not skip, latest or backfill; pass --missed skip to skip the slots missed while paused, latest to run the most recent of them, or backfill to run each`,
		},
		{
			name: "CreateBadCatchUpPolicy", args: []string{"create", "--name", "n", "--cron", "@daily", "--workflow", "w", "--catchup-policy", "all"}, code: ExitUsage,
			stderr: `tributary: --catchup-policy "all" is not window or latest; pass --catchup-policy window to skip the slots found late, or latest to run the most recent of them`,
		},
		{
			name: "CreateBadGrant", args: []string{"create", "--name", "n", "--cron", "@daily", "--workflow", "w", "--grant", "user-42"}, code: ExitUsage,
			stderr: `tributary: --grant "user-42" is not a grant id; grant ids look like 01a1ffb2-3fa1-781c-b9a9-3cd3e9d01250`,
		},
		{name: "NoDatabaseURLUpdate", args: []string{"update", id, "--name", "n"}, code: ExitError, stderr: noDatabaseURL},
		{name: "NoDatabaseURLTrigger", args: []string{"trigger", id}, code: ExitError, stderr: noDatabaseURL},
		{name: "NoDatabaseURLBackfill", args: []string{"backfill", id, "--from", "2026-03-01T00:00:00Z", "--to", "2026-03-02T00:00:00Z"}, code: ExitError, stderr: noDatabaseURL},
		{name: "NoDatabaseURLHistory", args: []string{"history", id}, code: ExitError, stderr: noDatabaseURL},
	})

	t.Run("Help", func(t *testing.T) {
		t.Parallel()

		res := runCLI(t, nil, "schedule", "--help")
		require.Equal(t, ExitOK, res.code)
		for _, name := range []string{"backfill", "history", "trigger", "update"} {
			require.Regexp(t, regexp.MustCompile(`(?m)^  `+name+` +\S`), res.stdout)
		}

		for cmd, flags := range map[string][]string{
			"update": {"--owner owner", "--name name", "--description text", "--workflow type", "--cron expression", "--tz zone", "--input JSON", "--overlap policy", "--catchup duration",
				"--max-attempts n", "--priority n", "--queue queue", "--timeout duration", "--json"},
			"trigger":  {"--owner owner", "--input JSON", "--overlap policy", "--json"},
			"backfill": {"--owner owner", "--from time", "--to time", "--json"},
			"history":  {"--owner owner", "--status status", "--limit n", "--after run-id", "--json"},
			"resume":   {"--owner owner", "--missed policy", "--json"},
			"create":   {"--catchup-policy policy", "--grant id"},
		} {
			res := runCLI(t, nil, "schedule", cmd, "--help")
			require.Equal(t, ExitOK, res.code, cmd)
			t.Logf("schedule %s --help:\n%s", cmd, res.stdout)
			for _, flag := range flags {
				require.Contains(t, res.stdout, "\n  "+flag+"\n", cmd)
			}
			if cmd != "create" {
				requireSameHelp(t, res, "schedule", cmd, id, "--help") // --help after the id prints the same help
			}
		}
	})
}
