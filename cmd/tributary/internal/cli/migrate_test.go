package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/internal/testdb"
	"github.com/tributary-go/tributary/migrations"
)

func TestMigrate(t *testing.T) {
	t.Parallel()

	runFailureCases(t, []string{"migrate"}, []failureCase{
		{
			name: "DownNeedsTarget", vars: map[string]string{"DATABASE_URL": "postgres://unused"}, args: []string{"down"}, code: ExitUsage,
			stderr: "tributary: migrate down removes tables and their data, so it needs --target; " +
				"pass --target 0 to remove all of Tributary's tables, or the version to keep (see 'tributary migrate status')",
		},
		{name: "NoDatabaseURLUp", args: []string{"up"}, code: ExitError, stderr: noDatabaseURL},
		{name: "NoDatabaseURLDown", args: []string{"down", "--target", "0"}, code: ExitError, stderr: noDatabaseURL},
		{name: "NoDatabaseURLStatus", args: []string{"status"}, code: ExitError, stderr: noDatabaseURL},
		{
			name: "BadDatabaseURL", args: []string{"status", "--database-url", "mysql://localhost/app"}, code: ExitError,
			stderr: `re:^tributary: invalid database URL: .*; use a URL like postgres://user:password@localhost:5432/app$`,
		},
		{
			name: "UnreachableDatabase", args: []string{"status", "--database-url", "postgres://postgres@127.0.0.1:1/postgres?connect_timeout=1"}, code: ExitError,
			stderr: `re:^tributary: connecting to the database: .*; check the database URL and that Postgres is running$`,
		},
	})

	t.Run("MissingSchema", func(t *testing.T) {
		t.Parallel()

		db := testdb.NewEmpty(t)
		res := runCLI(t, nil, "migrate", "up", "--database-url", db.URL, "--schema", db.Schema+"_missing")
		require.Equal(t, ExitError, res.code)
		require.Equal(t, "migrating: River's migrations first, then Tributary's…\n", res.stdout)
		require.Regexp(t, `^tributary: migrations: schema "test_\w+_missing" does not exist; create it first \(CREATE SCHEMA "test_\w+_missing"\)\n$`, res.stderr)
	})

	t.Run("UpStatusDown", func(t *testing.T) {
		t.Parallel()

		db := testdb.NewEmpty(t)
		vars := dbVars(db)

		// A line as each migration is applied, River's first.
		res := runCLI(t, vars, "migrate", "up")
		require.Equal(t, ExitOK, res.code, res.stderr)
		require.Empty(t, res.stderr)
		require.Regexp(t, `^migrating: River's migrations first, then Tributary's…\n`+
			`applied river 001_create_river_migration \(\d.*\)\n(applied river 0\d\d_\w+ \(\d.*\)\n)+`+
			`applied 001_workflows \(\d.*\)\napplied 002_schedules \(\d.*\)\napplied 003_lighter_writes \(\d.*\)\napplied 004_set_based_firing \(\d.*\)\napplied 005_worker_registry \(\d.*\)\napplied 006_river_ui_actions \(\d.*\)\napplied 007_step_positions \(\d.*\)\napplied 008_run_search \(\d.*\)\napplied 009_retention \(\d.*\)\napplied 010_keep_runs \(\d.*\)\napplied 011_queued_runs_index \(\d.*\)\napplied 012_schedule_keys \(\d.*\)\napplied 013_run_tenants \(\d.*\)\napplied 014_tenant_limits \(\d.*\)\napplied 015_fair_turns \(\d.*\)\napplied 016_debounce \(\d.*\)\napplied 017_tenant_rates \(\d.*\)\napplied 018_tenant_limits_at_fetch \(\d.*\)\napplied 019_tenant_rate_overrides \(\d.*\)\napplied 020_dst_policy \(\d.*\)\napplied 021_calendars \(\d.*\)\napplied 022_retry_policy \(\d.*\)\napplied 023_run_forks \(\d.*\)\napplied 024_prepared_slots \(\d.*\)\napplied 025_status_trigger_plans \(\d.*\)\napplied 026_status_trigger_early_exit \(\d.*\)\napplied 027_status_trigger_unchanged \(\d.*\)\n$`, res.stdout)

		res = runCLI(t, vars, "migrate", "up")
		require.Equal(t, ExitOK, res.code, res.stderr)
		require.Equal(t, "migrating: River's migrations first, then Tributary's…\nnothing to apply; the database is up to date\n", res.stdout)

		res = runCLI(t, vars, "migrate", "status")
		require.Equal(t, ExitOK, res.code, res.stderr)
		require.Regexp(t, `^VERSION +NAME +STATUS +APPLIED AT\n001 +workflows +applied +\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC\n`, res.stdout)
		require.Regexp(t, `\nRiver: version (\d+) of \d+\n$`, res.stdout)

		res = runCLI(t, vars, "migrate", "status", "--json")
		require.Equal(t, ExitOK, res.code, res.stderr)
		var status statusJSON
		require.NoError(t, json.Unmarshal([]byte(res.stdout), &status))
		require.Len(t, status.Migrations, migrations.Latest())
		require.Equal(t, "workflows", status.Migrations[0].Name)
		require.True(t, status.Migrations[0].Applied)
		require.NotNil(t, status.Migrations[0].AppliedAt)
		require.Positive(t, status.River.Version)
		require.Equal(t, status.River.Latest, status.River.Version)

		// Flags win over the environment.
		res = runCLI(t, map[string]string{"DATABASE_URL": "postgres://wrong"}, "migrate", "down", "--target", "0", "--yes",
			"--database-url", db.URL, "--schema", db.Schema)
		require.Equal(t, ExitOK, res.code, res.stderr)
		require.Regexp(t, `^rolling back Tributary's migrations above version 0…\nrolled back 027_status_trigger_unchanged \(\d.*\)\nrolled back 026_status_trigger_early_exit \(\d.*\)\nrolled back 025_status_trigger_plans \(\d.*\)\nrolled back 024_prepared_slots \(\d.*\)\nrolled back 023_run_forks \(\d.*\)\nrolled back 022_retry_policy \(\d.*\)\nrolled back 021_calendars \(\d.*\)\nrolled back 020_dst_policy \(\d.*\)\nrolled back 019_tenant_rate_overrides \(\d.*\)\nrolled back 018_tenant_limits_at_fetch \(\d.*\)\nrolled back 017_tenant_rates \(\d.*\)\nrolled back 016_debounce \(\d.*\)\nrolled back 015_fair_turns \(\d.*\)\nrolled back 014_tenant_limits \(\d.*\)\nrolled back 013_run_tenants \(\d.*\)\nrolled back 012_schedule_keys \(\d.*\)\nrolled back 011_queued_runs_index \(\d.*\)\nrolled back 010_keep_runs \(\d.*\)\nrolled back 009_retention \(\d.*\)\nrolled back 008_run_search \(\d.*\)\nrolled back 007_step_positions \(\d.*\)\nrolled back 006_river_ui_actions \(\d.*\)\nrolled back 005_worker_registry \(\d.*\)\nrolled back 004_set_based_firing \(\d.*\)\nrolled back 003_lighter_writes \(\d.*\)\nrolled back 002_schedules \(\d.*\)\nrolled back 001_workflows \(\d.*\)\n$`, res.stdout)

		res = runCLI(t, vars, "migrate", "status", "--json")
		require.Equal(t, ExitOK, res.code, res.stderr)
		require.NoError(t, json.Unmarshal([]byte(res.stdout), &status))
		require.False(t, status.Migrations[0].Applied)
		require.Nil(t, status.Migrations[0].AppliedAt)
		require.Positive(t, status.River.Version) // River's tables stay

		res = runCLI(t, vars, "migrate", "down", "--include-river", "--yes")
		require.Equal(t, ExitOK, res.code, res.stderr)
		require.Regexp(t, `^rolling back all of Tributary's migrations, then River's…\n(rolled back river 0\d\d_\w+ \(\d.*\)\n)+$`, res.stdout)

		res = runCLI(t, vars, "migrate", "status", "--json")
		require.Equal(t, ExitOK, res.code, res.stderr)
		require.NoError(t, json.Unmarshal([]byte(res.stdout), &status))
		require.Zero(t, status.River.Version)
	})
}

// TestMigrateDownConfirms: migrate down says what it would drop and how
// many rows that holds, and rolls back nothing unless told --yes or answered
// "yes" at a terminal.
func TestMigrateDownConfirms(t *testing.T) {
	t.Parallel()

	db, vars := migratedDB(t)
	ctx := context.Background()
	_, err := db.Pool.Exec(ctx, `INSERT INTO schedules (id, name, workflow_type, cron) VALUES (gen_random_uuid(), 'live', 'report', '@daily')`)
	require.NoError(t, err)
	applied := func() bool {
		t.Helper()
		res := runCLI(t, vars, "migrate", "status", "--json")
		require.Equal(t, ExitOK, res.code, res.stderr)
		var status statusJSON
		require.NoError(t, json.Unmarshal([]byte(res.stdout), &status))
		return status.Migrations[0].Applied && status.Migrations[len(status.Migrations)-1].Applied
	}
	// downAt runs migrate down at a terminal where answer is typed.
	downAt := func(answer string, args ...string) runResult {
		var stdout, stderr bytes.Buffer
		env := testEnv(vars, &stdout, &stderr)
		env.Stdin, env.Interactive = strings.NewReader(answer), func() bool { return true }
		code := Main(ctx, append([]string{"migrate", "down"}, args...), env)
		return runResult{code: code, stdout: stdout.String(), stderr: stderr.String()}
	}

	// Not at a terminal: refused, with what it would drop.
	res := runCLI(t, vars, "migrate", "down", "--target", "0")
	requireFailed(t, res, ExitUsage, "re:^tributary: migrate down would roll back 027_status_trigger_unchanged, 026_status_trigger_early_exit, 025_status_trigger_plans, 024_prepared_slots, 023_run_forks, 022_retry_policy, 021_calendars, 020_dst_policy, 019_tenant_rate_overrides, 018_tenant_limits_at_fetch, 017_tenant_rates, 016_debounce, 015_fair_turns, 014_tenant_limits, 013_run_tenants, 012_schedule_keys, 011_queued_runs_index, 010_keep_runs, 009_retention, 008_run_search, 007_step_positions, 006_river_ui_actions, 005_worker_registry, 004_set_based_firing, 003_lighter_writes, "+
		"002_schedules, 001_workflows, dropping 1 schedule, 0 workflow runs; "+
		"nothing was rolled back: pass --yes to confirm, or run it at a terminal to be asked$")
	require.True(t, applied())

	// At a terminal, anything but yes is a no.
	res = downAt("no\n", "--target", "1")
	require.Equal(t, ExitError, res.code)
	require.Contains(t, res.stderr, "migrate down will roll back 027_status_trigger_unchanged, 026_status_trigger_early_exit, 025_status_trigger_plans, 024_prepared_slots, 023_run_forks, 022_retry_policy, 021_calendars, 020_dst_policy, 019_tenant_rate_overrides, 018_tenant_limits_at_fetch, 017_tenant_rates, 016_debounce, 015_fair_turns, 014_tenant_limits, 013_run_tenants, 012_schedule_keys, 011_queued_runs_index, 010_keep_runs, 009_retention, 008_run_search, 007_step_positions, 006_river_ui_actions, 005_worker_registry, 004_set_based_firing, 003_lighter_writes, 002_schedules, dropping 1 schedule.\nType yes to go on: ")
	require.Contains(t, res.stderr, "not confirmed, so nothing was rolled back; type yes, or pass --yes")
	require.True(t, applied())

	// A version already rolled back needs no confirmation; nothing to do.
	res = downAt("yes\n", "--target", "3")
	require.Equal(t, ExitOK, res.code, res.stderr)
	require.Contains(t, res.stdout, "rolled back 004_set_based_firing")
	res = runCLI(t, vars, "migrate", "down", "--target", "3")
	require.Equal(t, ExitOK, res.code, res.stderr)
	require.Contains(t, res.stdout, "nothing to roll back")

	// With only River's migrations left to roll back, they are named alone.
	res = runCLI(t, vars, "migrate", "down", "--target", "0", "--yes")
	require.Equal(t, ExitOK, res.code, res.stderr)
	res = runCLI(t, vars, "migrate", "down", "--include-river")
	requireFailed(t, res, ExitUsage, `re:^tributary: migrate down would roll back River's migrations, dropping \d+ River jobs?; nothing was rolled back`)

	res = runCLI(t, vars, "migrate", "up")
	require.Equal(t, ExitOK, res.code, res.stderr)
	require.True(t, applied())
}
