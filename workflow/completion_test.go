package workflow

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/internal/testdb"
)

// TestAsyncCompletion runs a parent and its children with completions
// committed asynchronously (both paths: one statement, and a transaction
// that also wakes a parent), and checks that the completion statement turns
// synchronous_commit off for its own transaction only when asked.
func TestAsyncCompletion(t *testing.T) {
	t.Parallel()

	parent := Define("async_parent", func(ctx Context, n int) (int, error) {
		return RunChild(ctx, "child", childDouble, n, nil)
	}, nil)
	db := testdb.New(t)
	config := testConfig(t, db, parent, childDouble)
	config.AsyncCompletion = true
	c, err := NewClient(db.Pool, config)
	require.NoError(t, err)
	require.NoError(t, c.Start(context.Background()))
	t.Cleanup(func() { stopClient(t, c) })
	ctx := ctxT(t)

	h, err := parent.Start(ctx, c, 21, nil)
	require.NoError(t, err)
	out, err := h.Result(ctx)
	require.NoError(t, err)
	require.Equal(t, 42, out)

	for _, async := range []bool{false, true} {
		err := pgx.BeginFunc(ctx, db.Pool, func(tx pgx.Tx) error {
			// A batch of one job that is not running: nothing completes.
			rows, err := tx.Query(ctx, c.q.completeRuns, []int64{-1}, []uuid.UUID{uuid.New()}, []string{"null"}, []int32{1}, []*time.Time{nil}, async)
			if err != nil {
				return err
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				return err
			}
			var mode string
			if err := tx.QueryRow(ctx, "SELECT current_setting('synchronous_commit')").Scan(&mode); err != nil {
				return err
			}
			want := map[bool]string{false: "on", true: "off"}[async]
			require.Equal(t, want, mode, "async=%t", async)
			return nil
		})
		require.NoError(t, err)
	}
}

// TestCompletionByRiverCompleter fails every completion batch of the
// engine: the runs must then complete with their jobs through River's own
// completer (the pilot), children waking their parent on the way. It fails
// if River stops routing its completions through the pilot: River would
// complete the jobs without their runs, and Result would never return.
func TestCompletionByRiverCompleter(t *testing.T) {
	t.Parallel()

	parent := Define("pilot_parent", func(ctx Context, n int) (int, error) {
		return RunChild(ctx, "child", childDouble, n, nil)
	}, nil)
	db := testdb.New(t)
	c, err := NewClient(db.Pool, testConfig(t, db, parent, childDouble))
	require.NoError(t, err)
	c.testFailCompletions.Store(true)
	require.NoError(t, c.Start(context.Background()))
	t.Cleanup(func() { stopClient(t, c) })
	ctx := ctxT(t)

	var handles []*Handle[int]
	for n := range 5 {
		h, err := parent.Start(ctx, c, n, nil)
		require.NoError(t, err)
		handles = append(handles, h)
	}
	for n, h := range handles {
		out, err := h.Result(ctx)
		require.NoError(t, err)
		require.Equal(t, 2*n, out)
	}
	require.Zero(t, countRows(t, db.Pool, `SELECT count(*) FROM workflow_runs WHERE status <> 'completed'`))
	require.Zero(t, countRows(t, db.Pool, `SELECT count(*) FROM workflow_runs r JOIN river_job j ON j.id = r.job_id WHERE j.state <> 'completed'`))
	require.Eventually(t, func() bool { return c.pending.len() == 0 }, 10*time.Second, 10*time.Millisecond,
		"the pilot forgets the completions it committed")
}

// TestCompletionWaitedFor runs with no room for pending completions: every
// worker then waits for its own run's completion to commit, as it does when
// more than maxPendingCompletions are pending.
func TestCompletionWaitedFor(t *testing.T) {
	t.Parallel()

	parent := Define("waited_parent", func(ctx Context, n int) (int, error) {
		return RunChild(ctx, "child", childDouble, n, nil)
	}, nil)
	db := testdb.New(t)
	c, err := NewClient(db.Pool, testConfig(t, db, parent, childDouble))
	require.NoError(t, err)
	c.pending.limit = 0
	require.NoError(t, c.Start(context.Background()))
	t.Cleanup(func() { stopClient(t, c) })
	ctx := ctxT(t)

	h, err := parent.Start(ctx, c, 4, nil)
	require.NoError(t, err)
	out, err := h.Result(ctx)
	require.NoError(t, err)
	require.Equal(t, 8, out)
	require.Zero(t, c.pending.len())
	require.Zero(t, countRows(t, db.Pool, `SELECT count(*) FROM workflow_runs r JOIN river_job j ON j.id = r.job_id WHERE r.status <> 'completed' OR j.state <> 'completed'`))
}
