package testdb

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/internal/pgcluster"
	"github.com/tributary-go/tributary/migrations"
)

func TestMain(m *testing.M) {
	Main(m)
}

func TestFindServer(t *testing.T) {
	t.Parallel()

	ctx := context.Background()
	unreachable := []string{"postgres://postgres@127.0.0.1:1/postgres?sslmode=disable&connect_timeout=1"}

	t.Run("StartsClusterWhenNoServer", func(t *testing.T) {
		t.Parallel()

		if _, err := pgcluster.FindBinDir(); err != nil {
			t.Skipf("no Postgres binaries to start a cluster from: %v", err)
		}

		serverURL, cluster, err := findServer(func(string) string { return "" }, unreachable)
		require.NoError(t, err)
		require.NotNil(t, cluster)
		t.Cleanup(func() { require.NoError(t, cluster.Stop(context.Background())) })
		require.Equal(t, cluster.URL, serverURL)

		require.NoError(t, execOnce(ctx, serverURL, "SELECT 1"))
	})

	t.Run("TestDatabaseURLUnreachable", func(t *testing.T) {
		t.Parallel()

		getenv := func(string) string { return unreachable[0] }
		_, cluster, err := findServer(getenv, nil)
		require.Nil(t, cluster)
		require.ErrorContains(t, err, "TEST_DATABASE_URL is set but the server can't be reached")
	})

	t.Run("TestDatabaseURLWins", func(t *testing.T) {
		t.Parallel()

		getenv := func(string) string { return ServerURL(t) }
		serverURL, cluster, err := findServer(getenv, unreachable)
		require.NoError(t, err)
		require.Nil(t, cluster)
		require.Equal(t, ServerURL(t), serverURL)
	})
}

func TestNew(t *testing.T) {
	t.Parallel()

	ctx := context.Background()

	t.Run("MigratedSchemaOnSearchPath", func(t *testing.T) {
		t.Parallel()

		db := New(t)

		var currentSchema string
		require.NoError(t, db.Pool.QueryRow(ctx, "SELECT current_schema()").Scan(&currentSchema))
		require.Equal(t, db.Schema, currentSchema)

		// Bare table names resolve to the schema: River's and Tributary's
		// tables are there.
		var riverJobs, runs, version int
		require.NoError(t, db.Pool.QueryRow(ctx, "SELECT count(*) FROM river_job").Scan(&riverJobs))
		require.NoError(t, db.Pool.QueryRow(ctx, "SELECT count(*) FROM workflow_runs").Scan(&runs))
		require.NoError(t, db.Pool.QueryRow(ctx, "SELECT max(version) FROM tributary_migration").Scan(&version))
		require.Equal(t, migrations.Latest(), version)
	})

	t.Run("SchemasAreUnique", func(t *testing.T) {
		t.Parallel()

		db1, db2 := NewEmpty(t), NewEmpty(t)
		require.NotEqual(t, db1.Schema, db2.Schema)
		require.Regexp(t, `^test_testdb_[0-9a-f]{8}$`, db1.Schema)
	})

	t.Run("SchemaDroppedOnCleanup", func(t *testing.T) {
		t.Parallel()

		var schema string
		t.Run("UsesSchema", func(t *testing.T) {
			// Not parallel: the outer test checks the schema after this
			// subtest's cleanup has run.
			schema = NewEmpty(t).Schema
		})

		conn, err := pgx.Connect(ctx, ServerURL(t))
		require.NoError(t, err)
		t.Cleanup(func() { require.NoError(t, conn.Close(context.Background())) })

		var exists bool
		require.NoError(t, conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1)", schema).Scan(&exists))
		require.False(t, exists)
	})

	t.Run("URLSelectsSchema", func(t *testing.T) {
		t.Parallel()

		db := NewEmpty(t)

		conn, err := pgx.Connect(ctx, db.URL)
		require.NoError(t, err)
		t.Cleanup(func() { require.NoError(t, conn.Close(context.Background())) })

		var currentSchema string
		require.NoError(t, conn.QueryRow(ctx, "SELECT current_schema()").Scan(&currentSchema))
		require.Equal(t, db.Schema, currentSchema)
	})
}

func TestWithSearchPath(t *testing.T) {
	t.Parallel()

	t.Run("KeywordValue", func(t *testing.T) {
		t.Parallel()

		require.Equal(t, "host=localhost user=postgres options='-csearch_path=test_a'",
			withSearchPath("host=localhost user=postgres", "test_a"))
	})

	t.Run("URL", func(t *testing.T) {
		t.Parallel()

		require.Equal(t, "postgres://postgres@127.0.0.1:5432/postgres?options=-csearch_path%3Dtest_a&sslmode=disable",
			withSearchPath("postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable", "test_a"))
	})

	t.Run("URLWithOptions", func(t *testing.T) {
		t.Parallel()

		config, err := pgx.ParseConfig(withSearchPath("postgres://postgres@127.0.0.1/postgres?options=-cstatement_timeout%3D5s", "test_a"))
		require.NoError(t, err)
		require.Equal(t, "-cstatement_timeout=5s -csearch_path=test_a", config.RuntimeParams["options"])
	})
}
