package migrations_test

import (
	"context"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/internal/testdb"
	"github.com/tributary-go/tributary/migrations"
)

func TestPlanDown(t *testing.T) {
	t.Parallel()

	ctx := context.Background()

	type testBundle struct {
		db       *testdb.DB
		migrator *migrations.Migrator
	}

	// setup migrates an empty schema up and gives it one schedule, two
	// workflow runs and three River jobs.
	setup := func(t *testing.T) *testBundle {
		t.Helper()

		db := testdb.NewEmpty(t)
		migrator, err := migrations.New(db.Pool, &migrations.Config{Schema: db.Schema})
		require.NoError(t, err)
		_, err = migrator.Up(ctx)
		require.NoError(t, err)
		for _, sql := range []string{
			`INSERT INTO schedules (id, name, workflow_type, cron) VALUES (gen_random_uuid(), 'live', 'report', '@daily')`,
			`INSERT INTO workflow_runs (id, workflow_type, max_attempts, queue) SELECT gen_random_uuid(), 'report', 1, 'default' FROM generate_series(1, 2)`,
			`INSERT INTO river_job (args, kind, max_attempts) SELECT '{}', 'noop', 1 FROM generate_series(1, 3)`,
		} {
			_, err := db.Pool.Exec(ctx, sql)
			require.NoError(t, err, sql)
		}
		return &testBundle{db: db, migrator: migrator}
	}

	// newestFirst is the embedded migrations above target, newest first.
	newestFirst := func(target int) []migrations.Version {
		var versions []migrations.Version
		for _, v := range slices.Backward(migrations.Versions()) {
			if v.Version > target {
				versions = append(versions, v)
			}
		}
		return versions
	}

	t.Run("ToATarget", func(t *testing.T) {
		t.Parallel()

		bundle := setup(t)

		plan, err := bundle.migrator.PlanDown(ctx, &migrations.DownOpts{TargetVersion: 1})
		require.NoError(t, err)
		require.Equal(t, newestFirst(1), plan.Versions)
		require.Equal(t, []migrations.TableRows{{Rows: 1, Table: migrations.TableSchedules}}, plan.Tables)
		require.False(t, plan.River)

		// It changed nothing; Down then does what it said.
		status, err := bundle.migrator.Status(ctx)
		require.NoError(t, err)
		for _, v := range status.Versions {
			require.True(t, v.Applied, "version %d", v.Version)
		}
		res, err := bundle.migrator.Down(ctx, &migrations.DownOpts{TargetVersion: 1})
		require.NoError(t, err)
		require.Len(t, res.Versions, len(plan.Versions))
		for i, v := range res.Versions {
			require.Equal(t, plan.Versions[i], migrations.Version{Name: v.Name, Version: v.Version})
		}

		// With that done, the same Down has nothing left to do.
		plan, err = bundle.migrator.PlanDown(ctx, &migrations.DownOpts{TargetVersion: 1})
		require.NoError(t, err)
		require.Equal(t, &migrations.DownPlan{}, plan)
	})

	t.Run("EverythingWithRiver", func(t *testing.T) {
		t.Parallel()

		bundle := setup(t)

		plan, err := bundle.migrator.PlanDown(ctx, &migrations.DownOpts{IncludeRiver: true})
		require.NoError(t, err)
		require.Equal(t, newestFirst(0), plan.Versions)
		require.True(t, plan.River)
		require.Equal(t, []migrations.TableRows{
			{Rows: 1, Table: migrations.TableSchedules},
			{Rows: 2, Table: migrations.TableWorkflowRuns},
			{Rows: 3, Table: migrations.TableRiverJobs},
		}, plan.Tables)

		// A nil *DownOpts, as Down's: all of Tributary's, River's kept.
		plan, err = bundle.migrator.PlanDown(ctx, nil)
		require.NoError(t, err)
		require.Equal(t, newestFirst(0), plan.Versions)
		require.False(t, plan.River)
		require.Equal(t, []migrations.TableRows{
			{Rows: 1, Table: migrations.TableSchedules},
			{Rows: 2, Table: migrations.TableWorkflowRuns},
		}, plan.Tables)
	})

	t.Run("EmptySchema", func(t *testing.T) {
		t.Parallel()

		db := testdb.NewEmpty(t)
		migrator, err := migrations.New(db.Pool, &migrations.Config{Schema: db.Schema})
		require.NoError(t, err)

		plan, err := migrator.PlanDown(ctx, &migrations.DownOpts{IncludeRiver: true})
		require.NoError(t, err)
		require.Equal(t, &migrations.DownPlan{}, plan)
	})

	t.Run("OtherMigrationsCountNothing", func(t *testing.T) {
		t.Parallel()

		// Versions 1 and 2 of another set are not workflows and schedules.
		db := testdb.NewEmpty(t)
		migrator, err := migrations.NewWithFS(db.Pool, &migrations.Config{Schema: db.Schema}, threeMigrations, "sql")
		require.NoError(t, err)
		_, err = migrator.Up(ctx)
		require.NoError(t, err)

		plan, err := migrator.PlanDown(ctx, nil)
		require.NoError(t, err)
		require.Equal(t, []migrations.Version{{Name: "third", Version: 3}, {Name: "second", Version: 2}, {Name: "first", Version: 1}}, plan.Versions)
		require.Empty(t, plan.Tables)
	})

	t.Run("DownsErrors", func(t *testing.T) {
		t.Parallel()

		bundle := setup(t)

		_, err := bundle.migrator.PlanDown(ctx, &migrations.DownOpts{TargetVersion: migrations.Latest() + 1})
		require.ErrorContains(t, err, "does not exist")

		_, err = bundle.migrator.PlanDown(ctx, &migrations.DownOpts{IncludeRiver: true, TargetVersion: 1})
		require.ErrorContains(t, err, "needs TargetVersion 0")

		_, err = bundle.db.Pool.Exec(ctx, "INSERT INTO tributary_migration (version, name) VALUES (999, 'from_the_future')")
		require.NoError(t, err)
		_, err = bundle.migrator.PlanDown(ctx, nil)
		require.ErrorContains(t, err, "migration 999, which this build doesn't know")
	})
}
