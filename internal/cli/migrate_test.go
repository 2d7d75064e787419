package cli

import (
	"encoding/json"
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/internal/testdb"
	"github.com/tributary-go/tributary/migrations"
)

func TestMigrate(t *testing.T) {
	t.Parallel()

	t.Run("DownNeedsTarget", func(t *testing.T) {
		t.Parallel()

		res := runCLI(t, map[string]string{"DATABASE_URL": "postgres://unused"}, "migrate", "down")
		require.Equal(t, ExitUsage, res.code)
		require.Equal(t, "tributary: migrate down removes tables and their data, so it needs --target; "+
			"pass --target 0 to remove all of Tributary's tables, or the version to keep (see 'tributary migrate status')\n", res.stderr)
	})

	t.Run("MissingSchema", func(t *testing.T) {
		t.Parallel()

		db := testdb.NewEmpty(t)

		res := runCLI(t, nil, "migrate", "up", "--database-url", db.URL, "--schema", db.Schema+"_missing")
		require.Equal(t, ExitError, res.code)
		require.Regexp(t, `^tributary: migrations: schema "test_\w+_missing" does not exist; create it first \(CREATE SCHEMA "test_\w+_missing"\)\n$`, res.stderr)
	})

	t.Run("NoDatabaseURL", func(t *testing.T) {
		t.Parallel()

		for _, command := range []string{"up", "down --target 0", "status"} {
			args := append([]string{"migrate"}, regexp.MustCompile(` `).Split(command, -1)...)
			res := runCLI(t, nil, args...)
			require.Equal(t, ExitError, res.code, command)
			require.Empty(t, res.stdout)
			require.Equal(t, "tributary: no database URL given; pass --database-url or set DATABASE_URL, "+
				"e.g. DATABASE_URL=postgres://user:password@localhost:5432/app\n", res.stderr)
		}
	})

	t.Run("UnreachableDatabase", func(t *testing.T) {
		t.Parallel()

		res := runCLI(t, nil, "migrate", "status", "--database-url", "postgres://postgres@127.0.0.1:1/postgres?connect_timeout=1")
		require.Equal(t, ExitError, res.code)
		require.Regexp(t, `^tributary: connecting to the database: .*; check the database URL and that Postgres is running\n$`, res.stderr)
	})

	t.Run("UpStatusDown", func(t *testing.T) {
		t.Parallel()

		db := testdb.NewEmpty(t)
		vars := map[string]string{"DATABASE_URL": db.URL, "TRIBUTARY_SCHEMA": db.Schema}

		res := runCLI(t, vars, "migrate", "up")
		require.Equal(t, ExitOK, res.code, res.stderr)
		require.Empty(t, res.stderr)
		require.Regexp(t, `(?m)^applied river 001_create_river_migration \(\d.*\)$`, res.stdout)
		require.Regexp(t, `(?m)^applied 001_workflows \(\d.*\)\napplied 002_schedules \(\d.*\)\n$`, res.stdout) // Tributary's come last

		res = runCLI(t, vars, "migrate", "up")
		require.Equal(t, ExitOK, res.code, res.stderr)
		require.Equal(t, "nothing to apply; the database is up to date\n", res.stdout)

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
		require.Regexp(t, `^rolled back 002_schedules \(\d.*\)\nrolled back 001_workflows \(\d.*\)\n$`, res.stdout)

		res = runCLI(t, vars, "migrate", "status", "--json")
		require.Equal(t, ExitOK, res.code, res.stderr)
		require.NoError(t, json.Unmarshal([]byte(res.stdout), &status))
		require.False(t, status.Migrations[0].Applied)
		require.Nil(t, status.Migrations[0].AppliedAt)
		require.Positive(t, status.River.Version) // River's tables stay

		res = runCLI(t, vars, "migrate", "down", "--include-river")
		require.Equal(t, ExitOK, res.code, res.stderr)
		require.Regexp(t, `^rolled back river 0\d\d_`, res.stdout)

		res = runCLI(t, vars, "migrate", "status", "--json")
		require.Equal(t, ExitOK, res.code, res.stderr)
		require.NoError(t, json.Unmarshal([]byte(res.stdout), &status))
		require.Zero(t, status.River.Version)
	})
}
