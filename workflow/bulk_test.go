package workflow

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/internal/testdb"
)

type bulkBundle struct {
	client *Client
	db     *testdb.DB
}

// setupBulk is an insert-only client on a fresh schema: a bulk action's
// work is all in its transactions.
func setupBulk(t *testing.T) *bulkBundle {
	t.Helper()
	db := testdb.New(t)
	c, err := NewClient(db.Pool, &Config{Schema: db.Schema})
	require.NoError(t, err)
	return &bulkBundle{client: c, db: db}
}

// insertRuns inserts n runs of typ in status, newest last, with message as
// their error (none for ""), finished at finishedAt for a finished status;
// it returns their ids.
func (b *bulkBundle) insertRuns(t *testing.T, typ string, status Status, n int, message string, finishedAt time.Time) []uuid.UUID {
	t.Helper()
	ids := make([]uuid.UUID, n)
	for i := range ids {
		ids[i] = uuid.Must(uuid.NewV7())
	}
	var finished *time.Time
	if status.Finished() {
		finished = &finishedAt
	}
	_, err := b.db.Pool.Exec(ctxT(t), `INSERT INTO workflow_runs (id, workflow_type, max_attempts, queue, status, attempt, error, finished_at)
		SELECT id, $2, 3, 'default', $3, 3, CASE WHEN $4 <> '' THEN jsonb_build_object('kind', 'error', 'message', $4::text) END, $5
		FROM unnest($1::uuid[]) id`, ids, typ, string(status), message, finished)
	require.NoError(t, err)
	return ids
}

// statuses counts the runs of typ by status.
func (b *bulkBundle) statuses(t *testing.T, typ string) map[Status]int {
	t.Helper()
	rows, err := b.db.Pool.Query(ctxT(t), `SELECT status, count(*) FROM workflow_runs WHERE workflow_type = $1 GROUP BY status`, typ)
	require.NoError(t, err)
	defer rows.Close()
	out := map[Status]int{}
	for rows.Next() {
		var s string
		var n int
		require.NoError(t, rows.Scan(&s, &n))
		out[Status(s)] = n
	}
	require.NoError(t, rows.Err())
	return out
}

// TestRetryRunsInBatches retries 1,200 failed runs in batches of 500:
// each once, each on a new River job.
func TestRetryRunsInBatches(t *testing.T) {
	t.Parallel()

	b := setupBulk(t)
	ctx := ctxT(t)
	failed := b.insertRuns(t, "bulk_retry", StatusFailed, 1200, "partner timed out", time.Now())
	b.insertRuns(t, "bulk_retry", StatusCompleted, 3, "", time.Now())

	var progress []int
	res, err := b.client.RetryRuns(ctx, &BulkParams{
		Filter:   ListParams{Type: "bulk_retry", Status: StatusFailed},
		Progress: func(r *BulkResult) { progress = append(progress, len(r.Changed)) },
	})
	require.NoError(t, err)
	require.Equal(t, 1200, res.Matched)
	require.Equal(t, 1200, res.Eligible)
	require.Equal(t, map[Status]int{StatusFailed: 1200}, res.ByStatus)
	require.Equal(t, 3, res.Batches)
	require.Equal(t, []int{500, 1000, 1200}, progress)
	require.Empty(t, res.Skipped)
	require.ElementsMatch(t, failed, res.Changed) // each once

	require.Equal(t, map[Status]int{StatusPending: 1200, StatusCompleted: 3}, b.statuses(t, "bulk_retry"))
	var jobs, distinct int
	require.NoError(t, b.db.Pool.QueryRow(ctx, `SELECT count(*), count(DISTINCT r.job_id) FROM workflow_runs r JOIN river_job j ON j.id = r.job_id
		WHERE r.workflow_type = 'bulk_retry' AND j.state = 'available'`).Scan(&jobs, &distinct))
	require.Equal(t, 1200, jobs)
	require.Equal(t, 1200, distinct)

	// Again: the runs are pending now, so the filter matches none.
	_, err = b.client.RetryRuns(ctx, &BulkParams{Filter: ListParams{Type: "bulk_retry", Status: StatusFailed}})
	require.ErrorIs(t, err, ErrNoRunsMatch)
	require.EqualError(t, err, "workflow: no run matches the filter; nothing to retry")
}

// TestCancelRunsMixed cancels the runs of a type, some of them finished
// already (skipped, with the reason), and retries some with a filter on
// their error and finish time.
func TestCancelRunsMixed(t *testing.T) {
	t.Parallel()

	b := setupBulk(t)
	ctx := ctxT(t)
	now := time.Now()
	pending := b.insertRuns(t, "bulk_cancel", StatusPending, 7, "", now)
	sleeping := b.insertRuns(t, "bulk_cancel", StatusSleeping, 2, "", now)
	completed := b.insertRuns(t, "bulk_cancel", StatusCompleted, 4, "", now)
	b.insertRuns(t, "bulk_other", StatusPending, 5, "", now)

	dry, err := b.client.CancelRuns(ctx, &BulkParams{Filter: ListParams{Type: "bulk_cancel"}, DryRun: true, BatchSize: 3})
	require.NoError(t, err)
	require.True(t, dry.DryRun)
	require.Equal(t, 13, dry.Matched)
	require.Equal(t, 9, dry.Eligible)
	require.Equal(t, map[Status]int{StatusPending: 7, StatusSleeping: 2, StatusCompleted: 4}, dry.ByStatus)
	require.Empty(t, dry.Changed)
	require.Equal(t, 0, dry.Batches)
	require.Equal(t, map[Status]int{StatusPending: 7, StatusSleeping: 2, StatusCompleted: 4}, b.statuses(t, "bulk_cancel"), "a dry run writes nothing")

	res, err := b.client.CancelRuns(ctx, &BulkParams{Filter: ListParams{Type: "bulk_cancel"}, BatchSize: 3})
	require.NoError(t, err)
	require.Equal(t, 13, res.Matched)
	require.Equal(t, 5, res.Batches)
	require.ElementsMatch(t, append(append([]uuid.UUID{}, pending...), sleeping...), res.Changed)
	require.Len(t, res.Skipped, 4)
	for _, s := range res.Skipped {
		require.Contains(t, completed, s.ID)
		require.Equal(t, SkipFinished, s.Reason)
		require.Equal(t, StatusCompleted, s.Status)
	}
	require.Equal(t, map[Status]int{StatusCancelled: 9, StatusCompleted: 4}, b.statuses(t, "bulk_cancel"))
	require.Equal(t, map[Status]int{StatusPending: 5}, b.statuses(t, "bulk_other"))

	run, err := b.client.GetRun(ctx, pending[0])
	require.NoError(t, err)
	require.Equal(t, StatusCancelled, run.Status)
	require.Equal(t, ErrorKindCancelled, run.Error.Kind, "as Cancel cancels one")

	// Retry what the error text and finish time select, of all types.
	old := b.insertRuns(t, "bulk_cancel", StatusFailed, 2, "Partner TIMED OUT after 30s", now.Add(-48*time.Hour))
	recent := b.insertRuns(t, "bulk_cancel", StatusFailed, 3, "partner timed out after 30s", now.Add(-time.Hour))
	b.insertRuns(t, "bulk_cancel", StatusFailed, 2, "bad input", now.Add(-time.Hour))
	res, err = b.client.RetryRuns(ctx, &BulkParams{ErrorContains: "timed out", FinishedAfter: now.Add(-24 * time.Hour)})
	require.NoError(t, err)
	require.ElementsMatch(t, recent, res.Changed)
	res, err = b.client.RetryRuns(ctx, &BulkParams{ErrorContains: "timed OUT", FinishedBefore: now.Add(-24 * time.Hour), DryRun: true})
	require.NoError(t, err)
	require.Equal(t, 2, res.Matched)
	require.Len(t, old, 2)

	// The cancelled runs, by their error text ("run cancelled while pending").
	res, err = b.client.RetryRuns(ctx, &BulkParams{Filter: ListParams{Type: "bulk_cancel"}, ErrorContains: "cancelled"})
	require.NoError(t, err)
	require.Len(t, res.Changed, 9)

	_, err = b.client.CancelRuns(ctx, &BulkParams{Filter: ListParams{Type: "bulk_cancel", Limit: 10}})
	require.ErrorIs(t, err, ErrInvalid)
	_, err = b.client.CancelRuns(ctx, &BulkParams{Filter: ListParams{Type: "bulk_cancel", Status: "broken"}})
	require.ErrorIs(t, err, ErrInvalid)
}

// TestBulkCap refuses an action over more runs than MaxRuns, saying how
// many, and changes nothing; a dry run counts them all.
func TestBulkCap(t *testing.T) {
	t.Parallel()

	b := setupBulk(t)
	ctx := ctxT(t)
	b.insertRuns(t, "bulk_cap", StatusPending, 30, "", time.Now())

	res, err := b.client.CancelRuns(ctx, &BulkParams{Filter: ListParams{Type: "bulk_cap"}, MaxRuns: 25})
	var tooMany *TooManyRunsError
	require.ErrorAs(t, err, &tooMany)
	require.ErrorIs(t, err, ErrTooManyRuns)
	require.Equal(t, 30, tooMany.Matched)
	require.Equal(t, 25, tooMany.MaxRuns)
	require.Contains(t, err.Error(), "matches 30 runs, more than the 25 a bulk cancel may act on; nothing was done: narrow the filter, or raise BulkParams.MaxRuns to at least 30")
	require.Equal(t, 30, res.Matched)
	require.Empty(t, res.Changed)
	require.Equal(t, map[Status]int{StatusPending: 30}, b.statuses(t, "bulk_cap"))

	res, err = b.client.CancelRuns(ctx, &BulkParams{Filter: ListParams{Type: "bulk_cap"}, MaxRuns: 25, DryRun: true})
	require.NoError(t, err)
	require.Equal(t, 30, res.Matched)

	res, err = b.client.CancelRuns(ctx, &BulkParams{Filter: ListParams{Type: "bulk_cap"}, MaxRuns: 30})
	require.NoError(t, err)
	require.Len(t, res.Changed, 30)
}

// TestBulkStopsBetweenBatches cancels the context after the first batch:
// the action returns what that batch changed, exactly, with the error.
func TestBulkStopsBetweenBatches(t *testing.T) {
	t.Parallel()

	b := setupBulk(t)
	b.insertRuns(t, "bulk_stop", StatusPending, 25, "", time.Now())

	ctx, cancel := context.WithCancel(ctxT(t))
	defer cancel()
	res, err := b.client.CancelRuns(ctx, &BulkParams{Filter: ListParams{Type: "bulk_stop"}, BatchSize: 10,
		Progress: func(*BulkResult) { cancel() }})
	require.ErrorIs(t, err, context.Canceled)
	require.Contains(t, err.Error(), "stopped after 1 batches (10 runs changed)")
	require.Equal(t, 1, res.Batches)
	require.Len(t, res.Changed, 10)

	cancelled, err := b.client.ListRuns(ctxT(t), &ListParams{Type: "bulk_stop", Status: StatusCancelled})
	require.NoError(t, err)
	var ids []uuid.UUID
	for _, r := range cancelled {
		ids = append(ids, r.ID)
	}
	require.ElementsMatch(t, ids, res.Changed, fmt.Sprintf("changed %d, cancelled %d", len(res.Changed), len(ids)))
	require.Equal(t, map[Status]int{StatusPending: 15, StatusCancelled: 10}, b.statuses(t, "bulk_stop"))
}

// TestForkRuns forks the finished runs of a type from a step: those that
// never reached it and those not finished are skipped, with the reason;
// each fork copies the steps before it.
func TestForkRuns(t *testing.T) {
	t.Parallel()

	b := setupBulk(t)
	ctx := ctxT(t)
	now := time.Now()
	reached := b.insertRuns(t, "bulk_fork", StatusFailed, 5, "bad config", now)
	early := b.insertRuns(t, "bulk_fork", StatusFailed, 2, "partner down", now)
	pending := b.insertRuns(t, "bulk_fork", StatusPending, 1, "", now)
	// The runs that reached step "two" recorded "one" (completed) and
	// "two" (failed); the early ones only "one", failed.
	_, err := b.db.Pool.Exec(ctx, `INSERT INTO step_runs (run_id, name, kind, status, output, seq)
		SELECT id, 'one', 'step', 'completed', '100'::jsonb, 1 FROM unnest($1::uuid[]) id
		UNION ALL SELECT id, 'two', 'step', 'failed', NULL::jsonb, 2 FROM unnest($1::uuid[]) id
		UNION ALL SELECT id, 'one', 'step', 'failed', NULL, 1 FROM unnest($2::uuid[]) id`, reached, early)
	require.NoError(t, err)

	_, err = b.client.ForkRuns(ctx, &BulkParams{Filter: ListParams{Type: "bulk_fork"}}, "")
	require.ErrorIs(t, err, ErrInvalid)

	dry, err := b.client.ForkRuns(ctx, &BulkParams{Filter: ListParams{Type: "bulk_fork"}, DryRun: true}, "two")
	require.NoError(t, err)
	require.Equal(t, BulkFork, dry.Action)
	require.Equal(t, "two", dry.FromStep)
	require.Equal(t, 8, dry.Matched)
	require.Equal(t, 5, dry.Eligible, "the finished runs that recorded the step")
	require.Equal(t, map[Status]int{StatusFailed: 7, StatusPending: 1}, dry.ByStatus)
	require.Equal(t, map[Status]int{StatusFailed: 7, StatusPending: 1}, b.statuses(t, "bulk_fork"), "a dry run writes nothing")

	res, err := b.client.ForkRuns(ctx, &BulkParams{Filter: ListParams{Type: "bulk_fork"}, BatchSize: 3}, "two")
	require.NoError(t, err)
	require.Equal(t, 3, res.Batches)
	require.ElementsMatch(t, reached, res.Changed)
	require.Len(t, res.Forks, 5)
	reasons := map[uuid.UUID]string{}
	for _, s := range res.Skipped {
		reasons[s.ID] = s.Reason
	}
	require.Equal(t, map[uuid.UUID]string{early[0]: SkipStepNotRecorded, early[1]: SkipStepNotRecorded, pending[0]: SkipNotFinished}, reasons)

	// The originals are as they were; each fork is pending, from its
	// origin's step "two", with "one" copied.
	require.Equal(t, map[Status]int{StatusFailed: 7, StatusPending: 6}, b.statuses(t, "bulk_fork"))
	for i, id := range res.Forks {
		fork, err := b.client.GetRun(ctx, id)
		require.NoError(t, err)
		require.Equal(t, StatusPending, fork.Status)
		require.Equal(t, res.Changed[i], *fork.ForkedFrom)
		require.Equal(t, "two", fork.ForkedFromStep)
		require.Len(t, fork.Steps, 1)
		require.Equal(t, "one", fork.Steps[0].Name)
	}

	// Again, with the status filter: the forks are pending, so not matched.
	res, err = b.client.ForkRuns(ctx, &BulkParams{Filter: ListParams{Type: "bulk_fork", Status: StatusFailed}, ErrorContains: "bad config"}, "two")
	require.NoError(t, err)
	require.Len(t, res.Changed, 5)
}
