package schedule

import (
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/internal/testdb"
)

// TestDeleteWhileARunFinishes deletes a schedule while one of its runs is
// finishing. The run's status trigger locks the run, then the schedule;
// Delete must take its locks in the same order, or Postgres detects a
// deadlock and one of them fails.
func TestDeleteWhileARunFinishes(t *testing.T) {
	t.Parallel()

	db := testdb.New(t)
	sc := insertOnly(t, db)
	ctx := ctxT(t, 30*time.Second)
	s, err := sc.Create(ctx, &Params{Name: "d", Workflow: "tick", Cron: "0 0 1 1 *"})
	require.NoError(t, err)
	runID, err := sc.Trigger(ctx, ByID(s.ID), nil)
	require.NoError(t, err)

	finishing, err := db.Pool.Begin(ctx) // a run's completion, in progress: the run is locked
	require.NoError(t, err)
	defer finishing.Rollback(ctx) //nolint:errcheck // committed below
	_, err = finishing.Exec(ctx, "UPDATE workflow_runs SET updated_at = now() WHERE id = $1", runID)
	require.NoError(t, err)

	deleted := make(chan error, 1)
	go func() { deleted <- sc.Delete(ctx, ByID(s.ID)) }()
	db.WaitForLockWait(t, "%DELETE FROM%schedules%") // Delete waits for a lock
	_, err = finishing.Exec(ctx, "UPDATE workflow_runs SET status = 'completed', finished_at = now() WHERE id = $1", runID)
	require.NoError(t, err, "the finishing run's trigger must get the schedule")
	require.NoError(t, finishing.Commit(ctx))
	require.NoError(t, <-deleted)
}

// TestBackfillWhileARunFinishes backfills a range again while one of its
// slots' runs is finishing. Backfill holds the schedule; a run's status
// trigger needs it. Backfill must not wait on that run (by inserting a
// conflicting run), or Postgres detects a deadlock.
func TestBackfillWhileARunFinishes(t *testing.T) {
	t.Parallel()

	db := testdb.New(t)
	sc := insertOnly(t, db)
	ctx := ctxT(t, 30*time.Second)
	s, err := sc.Create(ctx, &Params{Name: "b", Workflow: "tick", Cron: "0 6 * * *", TimeZone: "America/New_York", Overlap: OverlapAllow})
	require.NoError(t, err)
	from, to := time.Date(2026, 3, 5, 0, 0, 0, 0, time.UTC), time.Date(2026, 3, 8, 0, 0, 0, 0, time.UTC)
	res, err := sc.Backfill(ctx, ByID(s.ID), from, to, nil)
	require.NoError(t, err)
	require.Equal(t, &BackfillResult{Slots: 3, Started: 1, Queued: 2}, res, "all of them, one after the other")
	var runID uuid.UUID
	require.NoError(t, db.Pool.QueryRow(ctx, "SELECT id FROM workflow_runs WHERE schedule_id = $1 ORDER BY fire_at LIMIT 1", s.ID).Scan(&runID))

	finishing, err := db.Pool.Begin(ctx) // the run's completion, in progress
	require.NoError(t, err)
	defer finishing.Rollback(ctx) //nolint:errcheck // committed below
	_, err = finishing.Exec(ctx, "UPDATE workflow_runs SET updated_at = now() WHERE id = $1", runID)
	require.NoError(t, err)

	type result struct {
		res *BackfillResult
		err error
	}
	again := make(chan result, 1)
	go func() {
		res, err := sc.Backfill(ctx, ByID(s.ID), from, to, nil)
		again <- result{res, err}
	}()
	select {
	case r := <-again:
		require.NoError(t, r.err)
		require.Equal(t, &BackfillResult{Slots: 3, Existing: 3}, r.res, "each slot at most once")
	case <-time.After(10 * time.Second):
		t.Fatal("Backfill waits for the finishing run")
	}
	_, err = finishing.Exec(ctx, "UPDATE workflow_runs SET status = 'completed', finished_at = now() WHERE id = $1", runID)
	require.NoError(t, err)
	require.NoError(t, finishing.Commit(ctx))
}

// TestReplaceWhileARunFinishes triggers a run under OverlapReplace, which
// cancels the unfinished run, while that run is finishing: the trigger must
// take the run before the schedule, as the run's status trigger does, or
// Postgres detects a deadlock.
func TestReplaceWhileARunFinishes(t *testing.T) {
	t.Parallel()

	db := testdb.New(t)
	sc := insertOnly(t, db)
	ctx := ctxT(t, 30*time.Second)
	s, err := sc.Create(ctx, &Params{Name: "r", Workflow: "tick", Cron: "0 0 1 1 *", Overlap: OverlapReplace})
	require.NoError(t, err)
	first, err := sc.Trigger(ctx, ByID(s.ID), nil)
	require.NoError(t, err)

	finishing, err := db.Pool.Begin(ctx) // the first run's completion, in progress
	require.NoError(t, err)
	defer finishing.Rollback(ctx) //nolint:errcheck // committed below
	_, err = finishing.Exec(ctx, "UPDATE workflow_runs SET updated_at = now() WHERE id = $1", first)
	require.NoError(t, err)

	type result struct {
		id  uuid.UUID
		err error
	}
	second := make(chan result, 1)
	go func() {
		id, err := sc.Trigger(ctx, ByID(s.ID), nil)
		second <- result{id, err}
	}()
	db.WaitForLockWait(t, "%") // the second trigger waits for the first run
	_, err = finishing.Exec(ctx, "UPDATE workflow_runs SET status = 'completed', finished_at = now() WHERE id = $1", first)
	require.NoError(t, err, "the finishing run's trigger must get the schedule")
	require.NoError(t, finishing.Commit(ctx))
	r := <-second
	require.NoError(t, r.err)
	require.NotEqual(t, first, r.id)
}
