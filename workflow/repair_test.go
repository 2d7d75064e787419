package workflow

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestRepairRuns(t *testing.T) {
	t.Parallel()

	waiter := Define("repair_waiter", func(ctx Context, _ struct{}) (string, error) {
		return WaitSignal[string](ctx, "never", nil)
	}, nil)

	type testBundle struct {
		env *testEnv
		h   *Handle[string]
		run *Run
	}
	setup := func(t *testing.T) *testBundle {
		t.Helper()
		env := newTestEnv(t, waiter)
		// These tests are about the periodic pass, which repairs what the
		// announcements of migration 006 missed (a listener reconnecting).
		env.client.testIgnoreRepairs.Store(true)
		h, err := waiter.Start(ctxT(t), env.client, struct{}{}, nil)
		require.NoError(t, err)
		run := waitStatus(t, env.client, h, StatusWaiting)
		return &testBundle{env: env, h: h, run: run}
	}
	// age pretends the run and its job last changed a minute ago, beyond
	// RepairRuns' grace period.
	age := func(t *testing.T, b *testBundle) {
		t.Helper()
		_, err := b.env.pool.Exec(context.Background(), "UPDATE workflow_runs SET updated_at = now() - interval '1 minute' WHERE id = $1", b.h.ID)
		require.NoError(t, err)
		_, err = b.env.pool.Exec(context.Background(), "UPDATE river_job SET finalized_at = now() - interval '1 minute' WHERE id = $1 AND finalized_at IS NOT NULL", b.run.JobID)
		require.NoError(t, err)
	}

	t.Run("DiscardedJobFailsRun", func(t *testing.T) {
		t.Parallel()

		b := setup(t)
		ctx := ctxT(t)
		// What River's rescuer does to a stuck job with no attempts left.
		_, err := b.env.pool.Exec(ctx, `UPDATE river_job SET state = 'discarded', finalized_at = now(), attempt = max_attempts,
			errors = array_append(errors, '{"attempt": 1, "error": "Stuck job rescued by JobRescuer", "at": "2026-01-01T00:00:00Z"}'::jsonb)
			WHERE id = $1`, b.run.JobID)
		require.NoError(t, err)

		n, err := b.env.client.RepairRuns(ctx)
		require.NoError(t, err)
		require.Zero(t, n, "within the grace period nothing is touched")

		age(t, b)
		n, err = b.env.client.RepairRuns(ctx)
		require.NoError(t, err)
		require.Equal(t, 1, n)
		_, err = b.h.Result(ctx)
		var runErr *RunError
		require.ErrorAs(t, err, &runErr)
		require.Contains(t, runErr.Message, "Stuck job rescued by JobRescuer")

		n, err = b.env.client.RepairRuns(ctx)
		require.NoError(t, err)
		require.Zero(t, n)
	})

	t.Run("RescuedWithAttemptsLeftContinues", func(t *testing.T) {
		t.Parallel()

		b := setup(t)
		ctx := ctxT(t)
		// What the rescuer of a leader that does not know the kind does to a
		// stuck job, attempts left or not (tributary serve leading).
		_, err := b.env.pool.Exec(ctx, `UPDATE river_job SET state = 'discarded', finalized_at = now(), attempt = 1, max_attempts = 5,
			errors = array_append(errors, '{"attempt": 1, "error": "Stuck job rescued by JobRescuer", "at": "2026-01-01T00:00:00Z"}'::jsonb)
			WHERE id = $1`, b.run.JobID)
		require.NoError(t, err)
		age(t, b)

		n, err := b.env.client.RepairRuns(ctx)
		require.NoError(t, err)
		require.Equal(t, 1, n)
		run := waitStatus(t, b.env.client, b.h, StatusWaiting) // replayed on the new job, waiting again
		require.NotEqual(t, b.run.JobID, run.JobID)
		var maxAttempts int
		require.NoError(t, b.env.pool.QueryRow(ctx, "SELECT max_attempts FROM river_job WHERE id = $1", run.JobID).Scan(&maxAttempts))
		require.Equal(t, 4, maxAttempts, "the new job has the attempts the old one had left")

		n, err = b.env.client.RepairRuns(ctx)
		require.NoError(t, err)
		require.Zero(t, n)
	})

	t.Run("DeletedJobCancelsRun", func(t *testing.T) {
		t.Parallel()

		b := setup(t)
		ctx := ctxT(t)
		_, err := b.env.client.River().JobDelete(ctx, b.run.JobID)
		require.NoError(t, err)
		age(t, b)

		n, err := b.env.client.RepairRuns(ctx)
		require.NoError(t, err)
		require.Equal(t, 1, n)
		_, err = b.h.Result(ctx)
		require.ErrorIs(t, err, ErrCancelled)
	})

	t.Run("HealthyRunsUntouched", func(t *testing.T) {
		t.Parallel()

		b := setup(t)
		ctx := ctxT(t)
		age(t, b)
		n, err := b.env.client.RepairRuns(ctx)
		require.NoError(t, err)
		require.Zero(t, n)
		run, err := b.env.client.GetRun(ctx, b.h.ID)
		require.NoError(t, err)
		require.Equal(t, StatusWaiting, run.Status)
	})
}
