package migrations_test

import (
	"context"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/internal/testdb"
	"github.com/tributary-go/tributary/migrations"
)

func TestMigratorProgress(t *testing.T) {
	t.Parallel()

	ctx := context.Background()

	type testBundle struct {
		db       *testdb.DB
		events   *[]migrations.Progress
		migrator *migrations.Migrator
	}

	// setup returns a migrator of set (the embedded migrations when nil)
	// on an empty schema, which records its progress calls. They come from
	// the goroutine that calls Up or Down, so they need no lock.
	setup := func(t *testing.T, set fstest.MapFS) *testBundle {
		t.Helper()

		db := testdb.NewEmpty(t)
		events := &[]migrations.Progress{}
		config := &migrations.Config{
			Progress: func(p migrations.Progress) { *events = append(*events, p) },
			Schema:   db.Schema,
		}
		var (
			migrator *migrations.Migrator
			err      error
		)
		if set == nil {
			migrator, err = migrations.New(db.Pool, config)
		} else {
			migrator, err = migrations.NewWithFS(db.Pool, config, set, "sql")
		}
		require.NoError(t, err)
		return &testBundle{db: db, events: events, migrator: migrator}
	}

	// requireReported checks that events hold a start, then a done, for
	// each migration of res, River's first, in res's order, and nothing
	// else.
	requireReported := func(t *testing.T, res *migrations.Result, events []migrations.Progress) {
		t.Helper()

		var want []migrations.Progress
		add := func(river bool, versions []migrations.MigrateVersion) {
			for _, v := range versions {
				want = append(want,
					migrations.Progress{Direction: res.Direction, Name: v.Name, Phase: migrations.PhaseStart, River: river, Version: v.Version},
					migrations.Progress{Direction: res.Direction, Duration: v.Duration, Name: v.Name, Phase: migrations.PhaseDone, River: river, Version: v.Version})
			}
		}
		if res.Direction == migrations.DirectionUp {
			add(true, res.River)
			add(false, res.Versions)
		} else {
			add(false, res.Versions)
			add(true, res.River)
		}
		require.Equal(t, want, events)
	}

	t.Run("UpThenDown", func(t *testing.T) {
		t.Parallel()

		bundle := setup(t, nil)

		res, err := bundle.migrator.Up(ctx)
		require.NoError(t, err)
		require.NotEmpty(t, res.River)
		require.Len(t, res.Versions, migrations.Latest())
		requireReported(t, res, *bundle.events)
		first := (*bundle.events)[0]
		require.Equal(t, migrations.Progress{Direction: migrations.DirectionUp, Name: "create river migration", Phase: migrations.PhaseStart, River: true, Version: 1}, first)
		for _, p := range *bundle.events {
			if p.Phase == migrations.PhaseDone {
				require.Positive(t, p.Duration, "%+v", p)
			}
		}

		// Up to date: no calls.
		*bundle.events = nil
		res, err = bundle.migrator.Up(ctx)
		require.NoError(t, err)
		require.Empty(t, res.River)
		require.Empty(t, res.Versions)
		require.Empty(t, *bundle.events)

		*bundle.events = nil
		res, err = bundle.migrator.Down(ctx, &migrations.DownOpts{IncludeRiver: true})
		require.NoError(t, err)
		require.Len(t, res.Versions, migrations.Latest())
		require.NotEmpty(t, res.River)
		requireReported(t, res, *bundle.events)
		last := (*bundle.events)[len(*bundle.events)-1]
		require.Equal(t, migrations.Direction("down"), last.Direction)
		require.True(t, last.River)
		require.Equal(t, 1, last.Version, "River's first migration is rolled back last")
	})

	t.Run("FailedMigrationHasNoDone", func(t *testing.T) {
		t.Parallel()

		bundle := setup(t, fstest.MapFS{
			"sql/001_first.up.sql":    {Data: []byte("CREATE TABLE /* TEMPLATE: schema */first (id int);")},
			"sql/001_first.down.sql":  {Data: []byte("DROP TABLE /* TEMPLATE: schema */first;")},
			"sql/002_broken.up.sql":   {Data: []byte("CREATE TABLE /* TEMPLATE: schema */broken (id no_such_type);")},
			"sql/002_broken.down.sql": {Data: []byte("DROP TABLE /* TEMPLATE: schema */broken;")},
		})

		_, err := bundle.migrator.Up(ctx)
		require.ErrorContains(t, err, "up 002_broken")
		events := *bundle.events
		require.GreaterOrEqual(t, len(events), 3)
		require.Equal(t, migrations.Progress{Direction: migrations.DirectionUp, Name: "broken", Phase: migrations.PhaseStart, Version: 2}, events[len(events)-1])
		done := events[len(events)-2]
		require.Equal(t, migrations.PhaseDone, done.Phase)
		require.Equal(t, 1, done.Version)
		require.False(t, done.River)
	})

	t.Run("DatabaseWithNewerRiverMigration", func(t *testing.T) {
		t.Parallel()

		// A newer build applied a River migration this build doesn't know:
		// River's migrator runs in one call, and Up still works.
		bundle := setup(t, fstest.MapFS{
			"sql/001_first.up.sql":   {Data: []byte("CREATE TABLE /* TEMPLATE: schema */first (id int);")},
			"sql/001_first.down.sql": {Data: []byte("DROP TABLE /* TEMPLATE: schema */first;")},
		})
		_, err := bundle.migrator.Up(ctx)
		require.NoError(t, err)
		_, err = bundle.db.Pool.Exec(ctx, "INSERT INTO river_migration (line, version) VALUES ('main', 999)")
		require.NoError(t, err)
		// Tributary's migration is rolled back behind the migrator's back,
		// so that Up has one to apply.
		_, err = bundle.db.Pool.Exec(ctx, "DROP TABLE first; DELETE FROM tributary_migration")
		require.NoError(t, err)

		*bundle.events = nil
		res, err := bundle.migrator.Up(ctx)
		require.NoError(t, err)
		require.Empty(t, res.River)
		require.Len(t, res.Versions, 1)
		requireReported(t, res, *bundle.events)
	})
}
