package engine_test

import (
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/internal/engine"
	"github.com/tributary-go/tributary/internal/testdb"
)

// TestRiverLeavesPendingJobsAlone pins what prepared slots stand on
// (slot_prepared.go): River never moves a job in its pending state by
// itself, however long past its scheduled_at (no producer fetches it, its
// scheduler does not promote it), and PromotePreparedTx makes one
// available, with the insert notification, so that a producer starts it
// at once.
func TestRiverLeavesPendingJobsAlone(t *testing.T) {
	t.Parallel()

	db := testdb.New(t)
	var pending, control int64
	require.NoError(t, db.Pool.QueryRow(ctx(t), `
INSERT INTO river_job (args, kind, max_attempts, queue, state, priority, scheduled_at)
VALUES ('{}', 'conformance_noop', 5, 'q', 'pending', 1, now() - interval '1 hour') RETURNING id`).Scan(&pending))
	// A scheduled job just as overdue: once River's scheduler has made it
	// available and a producer has worked it, both have passed the pending
	// one by.
	require.NoError(t, db.Pool.QueryRow(ctx(t), `
INSERT INTO river_job (args, kind, max_attempts, queue, state, priority, scheduled_at)
VALUES ('{}', 'conformance_noop', 5, 'q', 'scheduled', 1, now() - interval '1 hour') RETURNING id`).Scan(&control))

	workers := river.NewWorkers()
	river.AddWorker(workers, &noopWorker{})
	client := startRiver(t, db, nil, &river.Config{
		FetchCooldown: 20 * time.Millisecond, FetchPollInterval: 50 * time.Millisecond,
		Workers: workers,
	})
	events, cancel := client.Subscribe(river.EventKindJobCompleted)
	defer cancel()
	waitCompleted(t, events, control)
	require.Equal(t, "pending", readJob(t, db, pending).state, "River moved a pending job")

	q := engine.NewQueries(db.Schema)
	require.NoError(t, pgx.BeginFunc(ctx(t), db.Pool, func(tx pgx.Tx) error {
		promoted, err := q.PromotePreparedTx(ctx(t), tx, []int64{pending, control}, nil)
		require.Equal(t, []int64{pending}, promoted, "only the pending job is promoted")
		return err
	}))
	waitCompleted(t, events, pending)
}
