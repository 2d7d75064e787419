package wfruntime

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/internal/testdb"
)

// TestRegistrySessionSurvivesASlowStatement: a heartbeat that overruns its
// deadline on a busy database is cancelled on the server, and the registry
// session, with the liveness lock it holds, lives on, where pgx's default
// cuts the connection (and Postgres releases the lock: other clients would
// take a live client for dead).
func TestRegistrySessionSurvivesASlowStatement(t *testing.T) {
	t.Parallel()

	db := testdb.New(t)
	ctx := ctxT(t)
	for _, tt := range []struct {
		name   string
		config *pgx.ConnConfig
		lives  bool
	}{
		{"registry session", registrySession(db.Pool.Config().ConnConfig), true},
		{"pgx's default", db.Pool.Config().ConnConfig.Copy(), false},
	} {
		conn, err := pgx.ConnectConfig(ctx, tt.config)
		require.NoError(t, err)
		t.Cleanup(func() { _ = conn.Close(context.Background()) })
		_, err = conn.Exec(ctx, "SELECT pg_advisory_lock($1)", rand.Int64())
		require.NoError(t, err)

		slowCtx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
		_, err = conn.Exec(slowCtx, "SELECT pg_sleep(30)")
		cancel()
		require.Error(t, err, tt.name)
		if tt.lives {
			require.False(t, conn.IsClosed(), "%s: the session lives on", tt.name)
			var locks int
			require.NoError(t, db.Pool.QueryRow(ctx, "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted AND pid = $1",
				conn.PgConn().PID()).Scan(&locks))
			require.Equal(t, 1, locks, "%s: the lock is held", tt.name)
			var one int
			require.NoError(t, conn.QueryRow(ctx, "SELECT 1").Scan(&one), "%s: the session serves the next beat", tt.name)
		} else {
			require.True(t, conn.IsClosed(), "%s: the connection is cut", tt.name)
		}
	}
}
