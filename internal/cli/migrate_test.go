package cli

import (
	"encoding/json"
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
			`applied 001_workflows \(\d.*\)\napplied 002_schedules \(\d.*\)\napplied 003_lighter_writes \(\d.*\)\napplied 004_set_based_firing \(\d.*\)\n$`, res.stdout)

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
		res = runCLI(t, map[string]string{"DATABASE_URL": "postgres://wrong"}, "migrate", "down", "--target", "0",
			"--database-url", db.URL, "--schema", db.Schema)
		require.Equal(t, ExitOK, res.code, res.stderr)
		require.Regexp(t, `^rolling back Tributary's migrations above version 0…\nrolled back 004_set_based_firing \(\d.*\)\nrolled back 003_lighter_writes \(\d.*\)\nrolled back 002_schedules \(\d.*\)\nrolled back 001_workflows \(\d.*\)\n$`, res.stdout)

		res = runCLI(t, vars, "migrate", "status", "--json")
		require.Equal(t, ExitOK, res.code, res.stderr)
		require.NoError(t, json.Unmarshal([]byte(res.stdout), &status))
		require.False(t, status.Migrations[0].Applied)
		require.Nil(t, status.Migrations[0].AppliedAt)
		require.Positive(t, status.River.Version) // River's tables stay

		res = runCLI(t, vars, "migrate", "down", "--include-river")
		require.Equal(t, ExitOK, res.code, res.stderr)
		require.Regexp(t, `^rolling back all of Tributary's migrations, then River's…\n(rolled back river 0\d\d_\w+ \(\d.*\)\n)+$`, res.stdout)

		res = runCLI(t, vars, "migrate", "status", "--json")
		require.Equal(t, ExitOK, res.code, res.stderr)
		require.NoError(t, json.Unmarshal([]byte(res.stdout), &status))
		require.Zero(t, status.River.Version)
	})
}
