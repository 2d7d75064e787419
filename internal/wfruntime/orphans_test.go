package wfruntime

import (
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/internal/engine"
	"github.com/tributary-go/tributary/internal/testdb"
)

// TestOrphanRescueLeavesReservedJobs: the orphan rescue after a server
// change takes the client's running jobs it neither works nor holds in a
// producer's reserve (engine.Driver.ReservedJobs), and leaves those.
func TestOrphanRescueLeavesReservedJobs(t *testing.T) {
	t.Parallel()

	db := testdb.New(t)
	ctx := ctxT(t)
	insert := func() int64 {
		t.Helper()
		var id int64
		require.NoError(t, db.Pool.QueryRow(ctx, `INSERT INTO river_job (args, kind, max_attempts, queue, state, attempt, attempted_at, attempted_by)
			VALUES ('{}', 'workflow:x', 5, 'default', 'running', 1, now() - interval '1 minute', '{c}') RETURNING id`).Scan(&id))
		return id
	}
	reserved, orphan := insert(), insert()

	r := NewRegistry(RegistryConfig{
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Pool: db.Pool, Jobs: engine.NewJobs(engine.NewQueries(db.Schema)),
		ClientID: "c", Held: &HeldJobs{}, Pending: &Pending{},
		Reserved: func() []int64 { return []int64{reserved} },
	})
	require.NoError(t, r.rescueOrphans(ctx, time.Now().Add(time.Minute)))

	state := func(id int64) string {
		t.Helper()
		var s string
		require.NoError(t, db.Pool.QueryRow(ctx, `SELECT state::text FROM river_job WHERE id = $1`, id).Scan(&s))
		return s
	}
	require.Equal(t, "running", state(reserved), "in a producer's reserve: left alone")
	require.Equal(t, "available", state(orphan), "neither worked nor reserved: rescued")
}
