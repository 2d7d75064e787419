package migrations_test

import (
	"bytes"
	"context"
	"log/slog"
	"sync"
	"testing"
	"testing/fstest"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/internal/testdb"
	"github.com/tributary-go/tributary/migrations"
)

// threeMigrations is a test set with three versions, for rolling back to a
// target in between.
var threeMigrations = fstest.MapFS{
	"sql/001_first.up.sql":    {Data: []byte("CREATE TABLE /* TEMPLATE: schema */first (id int);")},
	"sql/001_first.down.sql":  {Data: []byte("DROP TABLE /* TEMPLATE: schema */first;")},
	"sql/002_second.up.sql":   {Data: []byte("CREATE TABLE /* TEMPLATE: schema */second (id int);")},
	"sql/002_second.down.sql": {Data: []byte("DROP TABLE /* TEMPLATE: schema */second;")},
	"sql/003_third.up.sql":    {Data: []byte("CREATE TABLE /* TEMPLATE: schema */third (id int);\nCREATE INDEX ON /* TEMPLATE: schema */third (id);")},
	"sql/003_third.down.sql":  {Data: []byte("DROP TABLE /* TEMPLATE: schema */third;")},
}

func TestMigrator(t *testing.T) {
	t.Parallel()

	ctx := context.Background()

	type testBundle struct {
		db       *testdb.DB
		migrator *migrations.Migrator
	}

	setup := func(t *testing.T) *testBundle {
		t.Helper()

		db := testdb.NewEmpty(t)
		migrator, err := migrations.New(db.Pool, &migrations.Config{Schema: db.Schema})
		require.NoError(t, err)
		return &testBundle{db: db, migrator: migrator}
	}

	// tables lists the tables of a schema, sorted.
	tables := func(t *testing.T, pool *pgxpool.Pool, schema string) []string {
		t.Helper()

		var names []string
		require.NoError(t, pool.QueryRow(ctx,
			"SELECT coalesce(array_agg(table_name::text ORDER BY table_name), '{}') FROM information_schema.tables WHERE table_schema = $1",
			schema).Scan(&names))
		return names
	}

	t.Run("ConcurrentUp", func(t *testing.T) {
		t.Parallel()

		db := testdb.NewEmpty(t)

		const callers = 8
		var (
			results = make([]*migrations.Result, callers)
			errs    = make([]error, callers)
			wg      sync.WaitGroup
		)
		for i := range callers {
			// Each caller has a pool of its own, as separate processes would.
			pool, err := pgxpool.New(ctx, db.URL)
			require.NoError(t, err)
			t.Cleanup(pool.Close)
			migrator, err := migrations.New(pool, &migrations.Config{Schema: db.Schema})
			require.NoError(t, err)

			wg.Go(func() { results[i], errs[i] = migrator.Up(ctx) })
		}
		wg.Wait()

		appliedTimes := make(map[int]int)
		riverAppliedTimes := make(map[int]int)
		for i := range callers {
			require.NoError(t, errs[i])
			for _, version := range results[i].Versions {
				appliedTimes[version.Version]++
			}
			for _, version := range results[i].River {
				riverAppliedTimes[version.Version]++
			}
		}
		for _, version := range migrations.Versions() {
			require.Equal(t, 1, appliedTimes[version.Version], "version %d", version.Version)
		}
		require.NotEmpty(t, riverAppliedTimes)
		for version, times := range riverAppliedTimes {
			require.Equal(t, 1, times, "River version %d", version)
		}

		var rows int
		require.NoError(t, db.Pool.QueryRow(ctx, "SELECT count(*) FROM tributary_migration").Scan(&rows))
		require.Equal(t, migrations.Latest(), rows)
	})

	t.Run("DownIncludeRiverEmptiesSchema", func(t *testing.T) {
		t.Parallel()

		bundle := setup(t)

		_, err := bundle.migrator.Up(ctx)
		require.NoError(t, err)

		res, err := bundle.migrator.Down(ctx, &migrations.DownOpts{IncludeRiver: true})
		require.NoError(t, err)
		require.Equal(t, migrations.DirectionDown, res.Direction)
		require.Len(t, res.Versions, migrations.Latest())
		require.NotEmpty(t, res.River)
		require.Empty(t, tables(t, bundle.db.Pool, bundle.db.Schema))

		// Rolling back an empty schema is a no-op.
		res, err = bundle.migrator.Down(ctx, &migrations.DownOpts{IncludeRiver: true})
		require.NoError(t, err)
		require.Empty(t, res.Versions)
		require.Empty(t, res.River)
	})

	t.Run("DownInvalidOpts", func(t *testing.T) {
		t.Parallel()

		bundle := setup(t)

		_, err := bundle.migrator.Down(ctx, &migrations.DownOpts{TargetVersion: migrations.Latest() + 1})
		require.ErrorContains(t, err, "does not exist")

		_, err = bundle.migrator.Down(ctx, &migrations.DownOpts{TargetVersion: -1})
		require.ErrorContains(t, err, "does not exist")

		_, err = bundle.migrator.Down(ctx, &migrations.DownOpts{IncludeRiver: true, TargetVersion: 1})
		require.ErrorContains(t, err, "needs TargetVersion 0")
	})

	t.Run("DownToTarget", func(t *testing.T) {
		t.Parallel()

		db := testdb.NewEmpty(t)
		migrator, err := migrations.NewWithFS(db.Pool, &migrations.Config{Schema: db.Schema}, threeMigrations, "sql")
		require.NoError(t, err)

		res, err := migrator.Up(ctx)
		require.NoError(t, err)
		require.Len(t, res.Versions, 3)
		require.Subset(t, tables(t, db.Pool, db.Schema), []string{"first", "second", "third"})

		res, err = migrator.Down(ctx, &migrations.DownOpts{TargetVersion: 1})
		require.NoError(t, err)
		require.Equal(t, []int{3, 2}, versionNumbers(res.Versions))
		require.Contains(t, tables(t, db.Pool, db.Schema), "first")
		require.NotContains(t, tables(t, db.Pool, db.Schema), "second")

		status, err := migrator.Status(ctx)
		require.NoError(t, err)
		require.True(t, status.Versions[0].Applied)
		require.False(t, status.Versions[1].Applied)
		require.False(t, status.Versions[2].Applied)

		res, err = migrator.Up(ctx)
		require.NoError(t, err)
		require.Equal(t, []int{2, 3}, versionNumbers(res.Versions))
	})

	t.Run("DownUnknownVersion", func(t *testing.T) {
		t.Parallel()

		bundle := setup(t)

		_, err := bundle.migrator.Up(ctx)
		require.NoError(t, err)
		_, err = bundle.db.Pool.Exec(ctx, "INSERT INTO tributary_migration (version, name) VALUES (999, 'from_the_future')")
		require.NoError(t, err)

		_, err = bundle.migrator.Down(ctx, nil)
		require.ErrorContains(t, err, "migration 999, which this build doesn't know")

		status, err := bundle.migrator.Status(ctx)
		require.NoError(t, err)
		last := status.Versions[len(status.Versions)-1]
		require.Equal(t, 999, last.Version)
		require.Equal(t, "from_the_future", last.Name)
		require.True(t, last.Applied)
	})

	t.Run("InvalidSchema", func(t *testing.T) {
		t.Parallel()

		db := testdb.NewEmpty(t)
		for _, schema := range []string{" ", " padded", "a\x00b", string(bytes.Repeat([]byte("s"), 64))} {
			_, err := migrations.New(db.Pool, &migrations.Config{Schema: schema})
			require.Error(t, err, "schema %q", schema)
		}
	})

	t.Run("LogsAppliedMigrations", func(t *testing.T) {
		t.Parallel()

		db := testdb.NewEmpty(t)
		var logs bytes.Buffer
		logger := slog.New(slog.NewTextHandler(&logs, nil))
		migrator, err := migrations.New(db.Pool, &migrations.Config{Logger: logger, Schema: db.Schema})
		require.NoError(t, err)

		_, err = migrator.Up(ctx)
		require.NoError(t, err)
		require.Contains(t, logs.String(), `msg="tributary: Applied migration" direction=up`)
		require.Contains(t, logs.String(), "name=workflows version=1")
		require.Contains(t, logs.String(), `msg="rivermigrate.Migrator[v5.Tx]: Applied migration"`)
	})

	t.Run("LockKeyPerSchema", func(t *testing.T) {
		t.Parallel()

		require.Equal(t, migrations.LockKey("a"), migrations.LockKey("a"))
		require.NotEqual(t, migrations.LockKey("a"), migrations.LockKey("b"))
	})

	t.Run("MissingSchema", func(t *testing.T) {
		t.Parallel()

		bundle := setup(t)
		migrator, err := migrations.New(bundle.db.Pool, &migrations.Config{Schema: bundle.db.Schema + "_missing"})
		require.NoError(t, err)

		_, err = migrator.Up(ctx)
		require.ErrorContains(t, err, "does not exist; create it first")
		_, err = migrator.Status(ctx)
		require.ErrorContains(t, err, "does not exist; create it first")
	})

	t.Run("SchemaFromSearchPath", func(t *testing.T) {
		t.Parallel()

		db := testdb.NewEmpty(t)
		migrator, err := migrations.New(db.Pool, nil) // db.Pool's search_path selects db.Schema
		require.NoError(t, err)

		_, err = migrator.Up(ctx)
		require.NoError(t, err)
		require.Subset(t, tables(t, db.Pool, db.Schema), []string{"river_job", "tributary_migration", "workflow_runs"})
	})

	t.Run("SchemaTemplating", func(t *testing.T) {
		t.Parallel()

		target := testdb.NewEmpty(t)
		other := testdb.NewEmpty(t)

		// A pool whose search_path is another schema: the tables must land
		// in the configured one regardless.
		migrator, err := migrations.New(other.Pool, &migrations.Config{Schema: target.Schema})
		require.NoError(t, err)
		_, err = migrator.Up(ctx)
		require.NoError(t, err)

		require.Subset(t, tables(t, other.Pool, target.Schema),
			[]string{"river_job", "river_migration", "step_runs", "tributary_migration", "workflow_runs", "workflow_signals"})
		require.Empty(t, tables(t, other.Pool, other.Schema))
	})

	t.Run("Status", func(t *testing.T) {
		t.Parallel()

		bundle := setup(t)

		status, err := bundle.migrator.Status(ctx)
		require.NoError(t, err)
		require.Zero(t, status.RiverVersion)
		require.Positive(t, status.RiverLatest)
		require.Len(t, status.Versions, migrations.Latest())
		for _, version := range status.Versions {
			require.False(t, version.Applied)
			require.True(t, version.AppliedAt.IsZero())
		}

		_, err = bundle.migrator.Up(ctx)
		require.NoError(t, err)

		status, err = bundle.migrator.Status(ctx)
		require.NoError(t, err)
		require.Equal(t, status.RiverLatest, status.RiverVersion)
		require.Equal(t, "workflows", status.Versions[0].Name)
		for _, version := range status.Versions {
			require.True(t, version.Applied)
			require.False(t, version.AppliedAt.IsZero())
		}
	})

	t.Run("UpDownUp", func(t *testing.T) {
		t.Parallel()

		bundle := setup(t)

		res, err := bundle.migrator.Up(ctx)
		require.NoError(t, err)
		require.Equal(t, migrations.DirectionUp, res.Direction)
		require.NotEmpty(t, res.River)
		require.Len(t, res.Versions, migrations.Latest())
		require.Equal(t, "workflows", res.Versions[0].Name)
		require.Positive(t, res.Versions[0].Duration)
		require.Contains(t, tables(t, bundle.db.Pool, bundle.db.Schema), "workflow_runs")

		res, err = bundle.migrator.Down(ctx, nil)
		require.NoError(t, err)
		require.Len(t, res.Versions, migrations.Latest())
		require.Empty(t, res.River)
		remaining := tables(t, bundle.db.Pool, bundle.db.Schema)
		require.NotContains(t, remaining, "workflow_runs")
		require.NotContains(t, remaining, "tributary_migration")
		require.Contains(t, remaining, "river_job") // River's tables stay

		res, err = bundle.migrator.Up(ctx)
		require.NoError(t, err)
		require.Empty(t, res.River)
		require.Len(t, res.Versions, migrations.Latest())
	})

	t.Run("LighterWritesKeepDataBothWays", func(t *testing.T) {
		t.Parallel()

		// 003 moves column rules to domains and the step_runs foreign key to
		// triggers; both directions keep the rows and the rules.
		bundle := setup(t)
		_, err := bundle.migrator.Up(ctx)
		require.NoError(t, err)
		pool := bundle.db.Pool
		exec := func(sql string) error {
			_, err := pool.Exec(ctx, sql)
			return err
		}
		fkExists := func() bool {
			var n int
			require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM pg_constraint
				WHERE conname = 'step_runs_run_id_fkey' AND connamespace = $1::regnamespace`, bundle.db.Schema).Scan(&n))
			return n == 1
		}
		const runID = "01a20000-0000-7000-8000-000000000001"
		require.NoError(t, exec(`INSERT INTO workflow_runs (id, workflow_type, max_attempts, queue) VALUES ('`+runID+`', 'w', 1, 'default')`))
		require.NoError(t, exec(`INSERT INTO step_runs (run_id, name, kind, status) VALUES ('`+runID+`', 's', 'step', 'completed')`))
		require.False(t, fkExists())
		require.ErrorContains(t, exec(`UPDATE workflow_runs SET status = 'bogus'`), "tributary_run_status")
		require.ErrorContains(t, exec(`UPDATE step_runs SET kind = 'bogus'`), "tributary_step_kind")

		_, err = bundle.migrator.Down(ctx, &migrations.DownOpts{TargetVersion: 2})
		require.NoError(t, err)
		require.True(t, fkExists())
		require.ErrorContains(t, exec(`UPDATE workflow_runs SET status = 'bogus'`), "workflow_runs_status_check")
		require.ErrorContains(t, exec(`UPDATE step_runs SET kind = 'bogus'`), "step_runs_kind_check")
		var steps int
		require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM step_runs`).Scan(&steps))
		require.Equal(t, 1, steps)

		_, err = bundle.migrator.Up(ctx)
		require.NoError(t, err)
		require.False(t, fkExists())
		require.NoError(t, exec(`DELETE FROM workflow_runs`))
		require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM step_runs`).Scan(&steps))
		require.Equal(t, 0, steps, "deleting a run deletes its steps")
	})

	t.Run("UpIsIdempotent", func(t *testing.T) {
		t.Parallel()

		bundle := setup(t)

		_, err := bundle.migrator.Up(ctx)
		require.NoError(t, err)

		res, err := bundle.migrator.Up(ctx)
		require.NoError(t, err)
		require.Empty(t, res.River)
		require.Empty(t, res.Versions)
	})
}

func versionNumbers(versions []migrations.MigrateVersion) []int {
	numbers := make([]int, len(versions))
	for i, version := range versions {
		numbers[i] = version.Version
	}
	return numbers
}
