package workflow

import (
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/internal/testdb"
)

// TestDeleteExpiredRuns: finished runs past their retention are deleted
// with their steps and signals, in batches; unfinished runs never are,
// however old, and a negative retention keeps runs forever.
func TestDeleteExpiredRuns(t *testing.T) {
	t.Parallel()

	db := testdb.New(t)
	ctx := ctxT(t)
	old := time.Now().Add(-40 * 24 * time.Hour)
	insert := func(status string, created, finished time.Time) uuid.UUID {
		t.Helper()
		id := firstIDAt(created)
		id[15] = byte(countRows(t, db.Pool, "SELECT count(*) FROM workflow_runs")) // distinct ids within a millisecond
		var fin *time.Time
		if status != "sleeping" {
			fin = &finished
		}
		_, err := db.Pool.Exec(ctx, `INSERT INTO workflow_runs (id, workflow_type, input, max_attempts, queue, priority, metadata, tags, status, created_at, updated_at, finished_at)
			VALUES ($1, 'echo', 'null', 1, 'default', 1, '{}', '{}', $2, $3, $3, $4)`, id, status, created, fin)
		require.NoError(t, err)
		_, err = db.Pool.Exec(ctx, `INSERT INTO step_runs (run_id, name, kind, status, result_type, output) VALUES ($1, 'one', 'step', 'completed', 'x', '1')`, id)
		require.NoError(t, err)
		_, err = db.Pool.Exec(ctx, `INSERT INTO workflow_signals (run_id, name, payload, consumed_at) VALUES ($1, 'go', 'null', now())`, id)
		require.NoError(t, err)
		return id
	}
	completedOld := insert("completed", old, old)
	skippedOld := insert("skipped", old, old)
	failedOld := insert("failed", old, old)                             // 40 days: past the failed runs' 30 too
	failed20 := insert("failed", old, time.Now().Add(-20*24*time.Hour)) // finished 20 days ago: kept
	completedRecent := insert("completed", old, time.Now().Add(-time.Hour))
	sleepingOld := insert("sleeping", old, time.Time{})
	fresh := insert("completed", time.Now(), time.Now())

	c, err := NewClient(db.Pool, &Config{Schema: db.Schema})
	require.NoError(t, err)
	n, err := c.DeleteExpiredRuns(ctx)
	require.NoError(t, err)
	require.Equal(t, 3, n)
	left := func() []uuid.UUID {
		rows, err := db.Pool.Query(ctx, "SELECT id FROM workflow_runs ORDER BY id")
		require.NoError(t, err)
		var ids []uuid.UUID
		for rows.Next() {
			var id uuid.UUID
			require.NoError(t, rows.Scan(&id))
			ids = append(ids, id)
		}
		return ids
	}
	require.ElementsMatch(t, []uuid.UUID{failed20, completedRecent, sleepingOld, fresh}, left())
	for _, id := range []uuid.UUID{completedOld, skippedOld, failedOld} {
		require.Zero(t, countRows(t, db.Pool, "SELECT count(*) FROM step_runs WHERE run_id = $1", id))
		require.Zero(t, countRows(t, db.Pool, "SELECT count(*) FROM workflow_signals WHERE run_id = $1", id))
	}

	// Keeping failed runs forever, and completed ones a day.
	keep, err := NewClient(db.Pool, &Config{Schema: db.Schema, CompletedRunRetention: 24 * time.Hour, FailedRunRetention: -1})
	require.NoError(t, err)
	n, err = keep.DeleteExpiredRuns(ctx)
	require.NoError(t, err)
	require.Zero(t, n, "the completed run finished an hour ago")
	require.ElementsMatch(t, []uuid.UUID{failed20, completedRecent, sleepingOld, fresh}, left())
}
