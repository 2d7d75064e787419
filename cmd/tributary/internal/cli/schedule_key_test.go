package cli

import (
	"context"
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/internal/wire"
	"github.com/tributary-go/tributary/schedule"
)

func TestScheduleKeys(t *testing.T) {
	t.Parallel()

	db, vars := migratedDB(t)

	// keyRows counts the schedules of owner with key.
	keyRows := func(t *testing.T, owner, key string) int {
		t.Helper()
		var n int
		require.NoError(t, db.Pool.QueryRow(context.Background(), "SELECT count(*) FROM schedules WHERE owner = $1 AND key = $2", owner, key).Scan(&n))
		return n
	}

	t.Run("CreateTwice", func(t *testing.T) {
		t.Parallel()

		args := []string{"--key", "nightly-report", "--owner", "acme-twice", "--name", "nightly report", "--cron", "0 8 * * *",
			"--tz", "Europe/Paris", "--workflow", "send_report", "--input", `{"to": "ops"}`}
		id := createSchedule(t, vars, args...)

		// The same spec, its input spelled another way: the id as a new
		// schedule's, and a note on stderr.
		again := slices.Clone(args)
		again[len(again)-1] = `{"to":"ops"}`
		res := runCLI(t, vars, append([]string{"schedule", "create"}, again...)...)
		require.Equal(t, ExitOK, res.code, res.stderr)
		require.Equal(t, id.String()+"\n", res.stdout)
		require.Equal(t, "note: schedule "+id.String()+` (key "nightly-report" of owner "acme-twice") existed already with the same spec; nothing was created`+"\n",
			withoutNoWorkerWarning(res.stderr))
		require.Equal(t, 1, keyRows(t, "acme-twice", "nightly-report"))

		// --json says so too.
		res = runCLI(t, vars, append([]string{"schedule", "create", "--json"}, args...)...)
		require.Equal(t, ExitOK, res.code, res.stderr)
		var out map[string]any
		require.NoError(t, json.Unmarshal([]byte(res.stdout), &out))
		require.Equal(t, id.String(), out["id"])
		require.Equal(t, "nightly-report", out["key"])
		require.Equal(t, true, out["existing"])
		require.Equal(t, "cli", out["created_by"])
		require.Equal(t, 1, keyRows(t, "acme-twice", "nightly-report"))

		// A new schedule's JSON has its key, and "existing": false.
		res = runCLI(t, vars, "schedule", "create", "--json", "--key", "other", "--owner", "acme-twice", "--name", "other", "--cron", "@daily", "--workflow", "w")
		require.Equal(t, ExitOK, res.code, res.stderr)
		out = nil
		require.NoError(t, json.Unmarshal([]byte(res.stdout), &out))
		require.Equal(t, "other", out["key"])
		require.Equal(t, false, out["existing"])
		require.Empty(t, withoutNoWorkerWarning(res.stderr))

		// Keys are per owner: another owner's key makes another schedule.
		other := createSchedule(t, vars, append(slices.Clone(args), "--owner", "acme-twice-2")...) // the last --owner wins
		require.NotEqual(t, id, other)
		require.Equal(t, 1, keyRows(t, "acme-twice-2", "nightly-report"))
	})

	t.Run("CreateConflict", func(t *testing.T) {
		t.Parallel()

		args := []string{"--key", "digest", "--owner", "acme-conflict", "--name", "digest", "--workflow", "digest"}
		id := createSchedule(t, vars, append(args, "--cron", "0 8 * * *")...)

		res := runCLI(t, vars, append([]string{"schedule", "create"}, append(args, "--cron", "0 9 * * *")...)...)
		requireFailed(t, res, ExitError, `tributary: key "digest" of owner "acme-conflict" is schedule `+id.String()+
			` already, whose spec differs (stored → given): --cron "0 8 * * *" → "0 9 * * *"; pass another --key for a new schedule, `+
			`or give that one this spec with: tributary schedule update digest --owner acme-conflict --cron '0 9 * * *'`)
		require.Equal(t, 1, keyRows(t, "acme-conflict", "digest"))
		require.Equal(t, "0 8 * * *", getSchedule(t, vars, id).Cron) // unchanged

		// Several flags differ, one of which update can't change.
		res = runCLI(t, vars, append([]string{"schedule", "create"}, append(args, "--cron", "0 9 * * *", "--tz", "Europe/Paris", "--input", `{"n": 1}`,
			"--start", "2030-01-01T00:00:00Z")...)...)
		requireFailed(t, res, ExitError, `tributary: key "digest" of owner "acme-conflict" is schedule `+id.String()+
			` already, whose spec differs (stored → given): --input null → {"n":1}, --cron "0 8 * * *" → "0 9 * * *", --tz "UTC" → "Europe/Paris", `+
			`--start (none) → 2030-01-01T00:00:00Z; pass another --key for a new schedule, `+
			`or delete that one ('tributary schedule delete digest --owner acme-conflict') and create it again: update can't change --start`)
		require.Equal(t, 1, keyRows(t, "acme-conflict", "digest"))

		// The update the message gives makes the second create's spec the
		// stored one.
		res = runCLI(t, vars, "schedule", "update", "digest", "--owner", "acme-conflict", "--cron", "0 9 * * *")
		require.Equal(t, ExitOK, res.code, res.stderr)
		require.Empty(t, res.stderr)
		res = runCLI(t, vars, append([]string{"schedule", "create"}, append(args, "--cron", "0 9 * * *")...)...)
		require.Equal(t, ExitOK, res.code, res.stderr)
		require.Equal(t, id.String()+"\n", res.stdout)
		require.Contains(t, res.stderr, "existed already with the same spec; nothing was created\n")
	})

	t.Run("CreateBadKey", func(t *testing.T) {
		t.Parallel()

		for name, tc := range map[string]struct{ key, stderr string }{
			"Slash": {key: "reports/nightly",
				stderr: `tributary: schedule: invalid Key: "reports/nightly" holds '/'; use letters, digits and punctuation other than / (such as nightly-report or digest:user-42)`},
			"TooLong": {key: strings.Repeat("k", schedule.MaxKeyBytes+1),
				stderr: "tributary: schedule: invalid Key: is 201 bytes, the limit is 200; fix --key"},
			"Space": {key: "nightly report",
				stderr: `tributary: schedule: invalid Key: "nightly report" holds ' '; use letters, digits and punctuation other than / (such as nightly-report or digest:user-42)`},
			"LooksLikeAnID": {key: "01a1ffb2-3fa1-781c-b9a9-3cd3e9d0123e",
				stderr: `tributary: schedule: invalid Key: "01a1ffb2-3fa1-781c-b9a9-3cd3e9d0123e" looks like a schedule id; the CLI, the API and the dashboard take an id or a key in one place, ` +
					`so give the key a prefix (user-01a1ffb2-3fa1-781c-b9a9-3cd3e9d0123e)`},
		} {
			t.Run(name, func(t *testing.T) {
				t.Parallel()

				owner := "bad-key-" + name
				res := runCLI(t, vars, "schedule", "create", "--key", tc.key, "--owner", owner, "--name", "n", "--cron", "@daily", "--workflow", "w")
				requireFailed(t, res, ExitUsage, tc.stderr)
				require.Empty(t, listScheduleIDs(t, vars, "--owner", owner)) // nothing written
			})
		}
	})

	t.Run("ByKey", func(t *testing.T) {
		t.Parallel()

		// Three schedules with the key "report": acme's, another owner's,
		// and the one of owner "" (created without --owner).
		id := createSchedule(t, vars, "--key", "report", "--owner", "acme", "--name", "acme report", "--cron", "0 6 * * *",
			"--workflow", "report", "--overlap", "allow")
		otherOwner := createSchedule(t, vars, "--key", "report", "--owner", "acme-other", "--name", "other report", "--cron", "0 6 * * *", "--workflow", "report")
		noOwner := createSchedule(t, vars, "--key", "report", "--name", "own report", "--cron", "0 6 * * *", "--workflow", "report")
		require.Len(t, map[uuid.UUID]bool{id: true, otherOwner: true, noOwner: true}, 3)

		res := runCLI(t, vars, "schedule", "get", "report", "--owner", "acme")
		require.Equal(t, ExitOK, res.code, res.stderr)
		t.Logf("schedule get report --owner acme:\n%s", res.stdout)
		require.Regexp(t, `^ID: +`+id.String()+`\nName: +acme report\nOwner: +acme\nKey: +report\nRun tenant: +acme \(the owner\)\nOrigin: +created by hand with the CLI\nWorkflow: +report `, res.stdout)
		require.Equal(t, id, getScheduleArgs(t, vars, "--owner", "acme", "report").ID) // flags before the key work too
		require.Equal(t, noOwner, getScheduleArgs(t, vars, "report").ID)
		require.Equal(t, noOwner, getScheduleArgs(t, vars, "report", "--owner", "").ID)
		require.Equal(t, id, getScheduleArgs(t, vars, id.String()).ID)

		res = runCLI(t, vars, "schedule", "pause", "report", "--owner", "acme", "--note", "audit")
		require.Equal(t, ExitOK, res.code, res.stderr)
		require.Equal(t, "paused schedule "+id.String()+` ("acme report"); no slot fires until 'tributary schedule resume report --owner acme'`+"\n", res.stdout)
		require.True(t, getSchedule(t, vars, id).Paused)
		require.False(t, getSchedule(t, vars, otherOwner).Paused)
		require.False(t, getSchedule(t, vars, noOwner).Paused)
		res = runCLI(t, vars, "schedule", "get", "report", "--owner", "acme")
		require.Equal(t, ExitOK, res.code, res.stderr)
		require.Contains(t, res.stdout, "\nthe schedule is paused: these slots fire only once it is resumed ('tributary schedule resume report --owner acme')\n")

		res = runCLI(t, vars, "schedule", "resume", "report", "--owner", "acme")
		require.Equal(t, ExitOK, res.code, res.stderr)
		require.Regexp(t, `^resumed schedule `+id.String()+` \("acme report"\); it fires next at `, res.stdout)
		require.False(t, getSchedule(t, vars, id).Paused)

		res = runCLI(t, vars, "schedule", "update", "report", "--owner", "acme", "--cron", "0 7 * * *", "--workflow", "report_v2")
		require.Equal(t, ExitOK, res.code, res.stderr)
		require.Empty(t, res.stderr) // not a declared schedule: no note
		require.Regexp(t, `^updated schedule `+id.String()+` \("acme report"\); it fires next at `, res.stdout)
		s := getSchedule(t, vars, id)
		require.Equal(t, "0 7 * * *", s.Cron)
		require.Equal(t, "report_v2", s.Workflow)
		require.Equal(t, "0 6 * * *", getSchedule(t, vars, otherOwner).Cron)
		require.Equal(t, "0 6 * * *", getSchedule(t, vars, noOwner).Cron)

		res = runCLI(t, vars, "schedule", "trigger", "report", "--owner", "acme")
		require.Equal(t, ExitOK, res.code, res.stderr)
		triggered := uuid.MustParse(strings.TrimSpace(res.stdout))
		require.Equal(t, id, *getRun(t, vars, triggered).ScheduleID)

		res = runCLI(t, vars, "schedule", "backfill", "report", "--owner", "acme", "--from", "2026-03-01T00:00:00Z", "--to", "2026-03-03T00:00:00Z", "--json")
		require.Equal(t, ExitOK, res.code, res.stderr)
		var backfilled wire.Backfill
		require.NoError(t, json.Unmarshal([]byte(res.stdout), &backfilled))
		require.Equal(t, id, backfilled.ScheduleID)
		require.Equal(t, 2, backfilled.Slots)
		require.Equal(t, 2, backfilled.Started+backfilled.Queued)

		res = runCLI(t, vars, "schedule", "history", "report", "--owner", "acme", "--json")
		require.Equal(t, ExitOK, res.code, res.stderr)
		var page struct{ Runs []map[string]any }
		require.NoError(t, json.Unmarshal([]byte(res.stdout), &page))
		require.Len(t, page.Runs, 3)
		require.Equal(t, triggered.String(), page.Runs[2]["id"])
		require.Empty(t, scheduleHistory(t, vars, noOwner))

		res = runCLI(t, vars, "schedule", "delete", "report", "--owner", "acme")
		require.Equal(t, ExitOK, res.code, res.stderr)
		require.Equal(t, "deleted schedule "+id.String()+` ("acme report"); its past runs stay, and its pending slot does not fire`+"\n", res.stdout)
		requireFailed(t, runCLI(t, vars, "schedule", "get", "report", "--owner", "acme"), ExitError,
			`tributary: no schedule with key "report" of owner "acme"; see 'tributary schedule list --owner acme'`)
		require.Equal(t, noOwner, getScheduleArgs(t, vars, "report").ID)
		require.Equal(t, otherOwner, getScheduleArgs(t, vars, "report", "--owner", "acme-other").ID)
	})

	t.Run("UnknownKey", func(t *testing.T) {
		t.Parallel()

		createSchedule(t, vars, "--key", "known", "--owner", "acme corp", "--name", "known", "--cron", "@daily", "--workflow", "w")
		for _, args := range [][]string{
			{"get"},
			{"pause"},
			{"resume"},
			{"delete"},
			{"update", "--name", "x"},
			{"trigger"},
			{"backfill", "--from", "2026-03-01T00:00:00Z", "--to", "2026-03-02T00:00:00Z"},
			{"history"},
		} {
			cmd := append([]string{"schedule", args[0], "nope", "--owner", "acme corp"}, args[1:]...)
			requireFailed(t, runCLI(t, vars, cmd...), ExitError, `tributary: no schedule with key "nope" of owner "acme corp"; see 'tributary schedule list --owner "acme corp"'`)

			// Owner "" has no "known": a key is looked up within its owner.
			cmd = append([]string{"schedule", args[0], "known"}, args[1:]...)
			requireFailed(t, runCLI(t, vars, cmd...), ExitError, `tributary: no schedule with key "known" of owner ""; `+
				`keys are unique per owner: pass --owner for another owner's key, or see 'tributary schedule list'`)
		}

		// A truncated id is a key, which no schedule has.
		requireFailed(t, runCLI(t, vars, "schedule", "get", "01a1ffb2"), ExitError, `tributary: no schedule with key "01a1ffb2" of owner ""; `+
			`keys are unique per owner: pass --owner for another owner's key, or see 'tributary schedule list'`)
		// A key no schedule can have.
		requireFailed(t, runCLI(t, vars, "schedule", "pause", "reports/nightly", "--owner", "acme corp"), ExitUsage,
			`tributary: "reports/nightly" is not a schedule id, nor a key a schedule can have: "reports/nightly" holds '/'; `+
				`use letters, digits and punctuation other than / (such as nightly-report or digest:user-42)`)
		requireFailed(t, runCLI(t, vars, "schedule", "trigger", strings.Repeat("k", 201)), ExitUsage,
			`tributary: "`+strings.Repeat("k", 59)+`…" is not a schedule id, nor a key a schedule can have: it is 201 bytes, the limit is 200`)
	})

	t.Run("Declared", func(t *testing.T) {
		t.Parallel()

		ctx := context.Background()
		sc := grantClient(t, db)
		_, err := sc.Declare(ctx, &schedule.Declaration{Service: "reports", Schedules: []*schedule.Params{
			{Key: "weekly", Owner: "declared", Name: "weekly report", Workflow: "send_report", Cron: "0 7 * * 1"},
		}})
		require.NoError(t, err)
		const note = "a 'schedule update' lasts only until the service's next Declare puts the code's spec back"

		res := runCLI(t, vars, "schedule", "get", "weekly", "--owner", "declared")
		require.Equal(t, ExitOK, res.code, res.stderr)
		require.Regexp(t, `\nKey: +weekly\nRun tenant: +[^\n]+\nOrigin: +declared by service reports: `+regexp.QuoteMeta(note)+`\n`, res.stdout)

		res = runCLI(t, vars, "schedule", "update", "weekly", "--owner", "declared", "--cron", "0 8 * * 1")
		require.Equal(t, ExitOK, res.code, res.stderr)
		s := getScheduleArgs(t, vars, "weekly", "--owner", "declared")
		require.Regexp(t, `^updated schedule `+s.ID.String()+` \("weekly report"\); it fires next at `, res.stdout)
		require.Equal(t, "note: schedule "+s.ID.String()+" is declared by service reports: "+note+"\n", res.stderr)
		require.Equal(t, "0 8 * * 1", s.Cron)

		res = runCLI(t, vars, "schedule", "create", "--key", "weekly", "--owner", "declared", "--name", "weekly report", "--workflow", "send_report", "--cron", "0 9 * * 1")
		requireFailed(t, res, ExitError, `tributary: key "weekly" of owner "declared" is schedule `+s.ID.String()+
			` already, whose spec differs (stored → given): --cron "0 8 * * 1" → "0 9 * * 1"; pass another --key for a new schedule, `+
			`or change that one in the code of service reports, which declares it: `+note)
	})

	t.Run("Completion", func(t *testing.T) {
		t.Parallel()

		id := createSchedule(t, vars, "--key", "tab-report", "--owner", "completion", "--name", "tab report", "--cron", "@daily", "--workflow", "w")
		own := createSchedule(t, vars, "--key", "tab-own", "--name", "own tab report", "--cron", "@daily", "--workflow", "w")

		res := runCLI(t, vars, "__complete", "schedule", "get", "--owner", "completion", "")
		require.Equal(t, ExitOK, res.code, res.stderr)
		require.Equal(t, "tab-report\ttab report\n:4\n", res.stdout)
		res = runCLI(t, vars, "__complete", "schedule", "pause", "--owner", "completion", "tab-o")
		require.Equal(t, ":4\n", res.stdout)

		// Without --owner: the keys of owner "", and every schedule's id.
		res = runCLI(t, vars, "__complete", "schedule", "delete", "tab-")
		require.Equal(t, "tab-own\town tab report\n:4\n", res.stdout)
		res = runCLI(t, vars, "__complete", "schedule", "trigger", "")
		require.Contains(t, res.stdout, "tab-own\town tab report\n")
		require.Contains(t, res.stdout, id.String()+"\ttab report\n")
		require.Contains(t, res.stdout, own.String()+"\town tab report\n")
		res = runCLI(t, vars, "__complete", "schedule", "history", id.String()[:30])
		require.Equal(t, id.String()+"\ttab report\n:4\n", res.stdout)

		// One argument only; and no database, no completions.
		res = runCLI(t, vars, "__complete", "schedule", "get", id.String(), "")
		require.Equal(t, ":4\n", res.stdout)
		res = runCLI(t, nil, "__complete", "schedule", "get", "")
		require.Equal(t, ExitOK, res.code, res.stderr)
		require.Equal(t, ":4\n", res.stdout)
	})
}
