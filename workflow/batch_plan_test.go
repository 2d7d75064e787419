package workflow

import (
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/internal/engine"
	"github.com/tributary-go/tributary/internal/testdb"
)

// TestBatchPlansStayOnIndexes: a batch pool connection makes each batched
// statement's generic plan once and keeps it. Planned while the tables are
// empty (a new schema), the plans must still look rows up by index once
// the tables have grown, not scan them whole on every batch (as the
// completion statement did at 100,000 slots: see newBatchPool).
func TestBatchPlansStayOnIndexes(t *testing.T) {
	t.Parallel()

	db := testdb.New(t)
	ctx := ctxT(t)
	bp, err := newBatchPool(db.Pool)
	require.NoError(t, err)
	t.Cleanup(bp.Close)
	conn, err := bp.Acquire(ctx)
	require.NoError(t, err)
	defer conn.Release()

	q := engine.NewQueries(db.Schema)
	now := time.Now()
	batch := func() {
		t.Helper()
		_, err := q.BeginAttempts(ctx, conn, [][16]byte{{1}, {2}})
		require.NoError(t, err)
		memos := engine.NewMemoBatch(1)
		memos.Add(&engine.Memo{RunID: [16]byte{1}, Name: "s", Kind: "step", Status: "completed", ResultType: "int", Output: []byte("1"), StartedAt: now, FinishedAt: now})
		require.NoError(t, q.InsertMemos(ctx, conn, &memos))
		_, err = q.CompleteRuns(ctx, conn, &engine.CompleteRunsParams{
			JobIDs: []int64{1, 2}, RunIDs: [][16]byte{{1}, {2}}, Outputs: []string{"null", "null"},
			Attempts: []int32{1, 1}, StartedAts: []*time.Time{&now, &now},
		})
		require.NoError(t, err)
	}
	batch() // plans on empty tables

	_, err = db.Pool.Exec(ctx, `INSERT INTO river_job (kind, args, max_attempts, queue, state)
		SELECT 'bench', '{}', 1, 'default', 'available' FROM generate_series(1, 20000)`)
	require.NoError(t, err)
	_, err = db.Pool.Exec(ctx, `INSERT INTO workflow_runs (id, workflow_type, input, max_attempts, queue, priority, metadata, tags, status)
		SELECT gen_random_uuid(), 'echo', 'null', 1, 'default', 1, '{}', '{}', 'pending' FROM generate_series(1, 20000)`)
	require.NoError(t, err)

	seqScans := func() map[string]int64 {
		t.Helper()
		_, err := conn.Exec(ctx, "SELECT pg_stat_force_next_flush()")
		require.NoError(t, err)
		_, err = conn.Exec(ctx, "SELECT 1") // flushes this backend's counts
		require.NoError(t, err)
		counts := map[string]int64{}
		err = pgx.BeginFunc(ctx, db.Pool, func(tx pgx.Tx) error {
			rows, err := tx.Query(ctx, `SELECT relname, coalesce(seq_scan, 0) FROM pg_stat_user_tables
				WHERE schemaname = $1 AND relname IN ('river_job', 'workflow_runs', 'step_runs')`, db.Schema)
			if err != nil {
				return err
			}
			var (
				name string
				n    int64
			)
			_, err = pgx.ForEachRow(rows, []any{&name, &n}, func() error { counts[name] = n; return nil })
			return err
		})
		require.NoError(t, err)
		return counts
	}
	before := seqScans()
	batch()
	require.Equal(t, before, seqScans(), "sequential scans of the grown tables by the batched statements' cached plans")
}
