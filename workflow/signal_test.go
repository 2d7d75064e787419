package workflow

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/internal/testdb"
)

// TestSendSignal checks what SendSignal says about the run it signals:
// whether it was waiting for the signal, what it was waiting for instead,
// and how many signals of the name are pending.
func TestSendSignal(t *testing.T) {
	t.Parallel()

	// waiter waits for "approve" under a custom step name, then for "ship".
	waiter := Define("two_waits", func(ctx Context, _ struct{}) (string, error) {
		a, err := WaitSignal[approval](ctx, "approve", &WaitOpts{Step: "manager-approval"})
		if err != nil {
			return "", err
		}
		_, err = WaitSignal[string](ctx, "ship", nil)
		return a.By, err
	}, nil)
	sleeper := Define("long_nap", func(ctx Context, _ struct{}) (string, error) {
		if err := Sleep(ctx, "nap", time.Hour); err != nil {
			return "", err
		}
		return WaitSignal[string](ctx, "approve", nil)
	}, nil)

	t.Run("WaitingForIt", func(t *testing.T) {
		t.Parallel()

		env := newTestEnv(t, waiter)
		ctx := ctxT(t)
		h, err := waiter.Start(ctx, env.client, struct{}{}, nil)
		require.NoError(t, err)
		waitStatus(t, env.client, h, StatusWaiting)

		res, err := env.client.SendSignal(ctx, h.ID, "approve", approval{By: "grace"})
		require.NoError(t, err)
		require.Equal(t, &SignalResult{Status: StatusWaiting, Waiting: true, WaitingFor: "approve", Pending: 1}, res)
		waitStepStatus(t, env.client, h.ID, "signal:ship", StepStatusWaiting)
		res, err = env.client.SendSignal(ctx, h.ID, "ship", "now")
		require.NoError(t, err)
		require.True(t, res.Waiting)
		out, err := h.Result(ctx)
		require.NoError(t, err)
		require.Equal(t, "grace", out)
	})

	t.Run("WaitingForAnother", func(t *testing.T) {
		t.Parallel()

		env := newTestEnv(t, waiter)
		ctx := ctxT(t)
		h, err := waiter.Start(ctx, env.client, struct{}{}, nil)
		require.NoError(t, err)
		waitStatus(t, env.client, h, StatusWaiting)

		res, err := env.client.SendSignal(ctx, h.ID, "ship", "early")
		require.NoError(t, err)
		require.Equal(t, &SignalResult{Status: StatusWaiting, Waiting: false, WaitingFor: "approve", Pending: 1}, res)
		res, err = env.client.SendSignal(ctx, h.ID, "ship", "twice")
		require.NoError(t, err)
		require.Equal(t, 2, res.Pending, "both are kept")
		require.Equal(t, 2, countRows(t, env.pool, `SELECT count(*) FROM workflow_signals WHERE name = 'ship' AND consumed_at IS NULL`))
	})

	t.Run("NotParkedInAWait", func(t *testing.T) {
		t.Parallel()

		env := newTestEnv(t, sleeper)
		ctx := ctxT(t)
		h, err := sleeper.Start(ctx, env.client, struct{}{}, nil)
		require.NoError(t, err)
		waitStatus(t, env.client, h, StatusSleeping)

		res, err := env.client.SendSignal(ctx, h.ID, "approve", "early")
		require.NoError(t, err)
		require.Equal(t, &SignalResult{Status: StatusSleeping, Pending: 1}, res)
	})

	t.Run("NotStarted", func(t *testing.T) {
		t.Parallel()

		db := testdb.New(t) // no client works the run: it stays pending
		client, err := NewClient(db.Pool, &Config{Schema: db.Schema, Workflows: []Registrable{waiter}})
		require.NoError(t, err)
		ctx := ctxT(t)
		h, err := waiter.Start(ctx, client, struct{}{}, nil)
		require.NoError(t, err)

		res, err := client.SendSignal(ctx, h.ID, "approve", approval{By: "early bird"})
		require.NoError(t, err)
		require.Equal(t, &SignalResult{Status: StatusPending, Pending: 1}, res)
	})

	t.Run("WaitRecordedBeforePositions", func(t *testing.T) {
		t.Parallel()

		env := newTestEnv(t, sleeper)
		ctx := ctxT(t)
		h, err := sleeper.Start(ctx, env.client, struct{}{}, nil)
		require.NoError(t, err)
		waitStatus(t, env.client, h, StatusSleeping)
		// A wait parked before migration 007 has no signal_name: its default
		// step name says what it waits for.
		_, err = env.pool.Exec(ctx, `INSERT INTO step_runs (run_id, name, kind, status) VALUES ($1, 'signal:approve', 'signal', 'waiting')`, h.ID)
		require.NoError(t, err)
		_, err = env.pool.Exec(ctx, `UPDATE workflow_runs SET status = 'waiting' WHERE id = $1`, h.ID)
		require.NoError(t, err)

		res, err := env.client.SendSignal(ctx, h.ID, "approve", "x")
		require.NoError(t, err)
		require.True(t, res.Waiting)
		require.Equal(t, "approve", res.WaitingFor)
	})

	t.Run("FinishedRun", func(t *testing.T) {
		t.Parallel()

		done := Define("done_at_once", func(ctx Context, _ struct{}) (int, error) { return 1, nil }, nil)
		env := newTestEnv(t, done)
		ctx := ctxT(t)
		h, err := done.Start(ctx, env.client, struct{}{}, nil)
		require.NoError(t, err)
		_, err = h.Result(ctx)
		require.NoError(t, err)

		res, err := env.client.SendSignal(ctx, h.ID, "approve", "late")
		require.ErrorIs(t, err, ErrRunFinished)
		require.ErrorContains(t, err, `is completed; signal "approve" not stored`)
		require.Nil(t, res)
		require.Zero(t, countRows(t, env.pool, `SELECT count(*) FROM workflow_signals`))
	})

	t.Run("Tx", func(t *testing.T) {
		t.Parallel()

		env := newTestEnv(t, waiter)
		ctx := ctxT(t)
		h, err := waiter.Start(ctx, env.client, struct{}{}, nil)
		require.NoError(t, err)
		waitStatus(t, env.client, h, StatusWaiting)

		// Rolled back: not stored, the run keeps waiting.
		err = pgx.BeginFunc(ctx, env.pool, func(tx pgx.Tx) error {
			res, err := env.client.SendSignalTx(ctx, tx, h.ID, "approve", approval{By: "nobody"})
			require.NoError(t, err)
			require.True(t, res.Waiting)
			return context.Canceled
		})
		require.ErrorIs(t, err, context.Canceled)
		require.Zero(t, countRows(t, env.pool, `SELECT count(*) FROM workflow_signals`))
		run, err := h.Get(ctx)
		require.NoError(t, err)
		require.Equal(t, StatusWaiting, run.Status)
	})
}

// waitStepStatus waits until the run parked with its step name in status
// want (see waitRun for the events it waits on).
func waitStepStatus(t *testing.T, c *Client, runID uuid.UUID, name string, want StepStatus) {
	t.Helper()
	waitRun(t, c, runID, fmt.Sprintf("step %q %s", name, want), func(run *Run) bool {
		for _, s := range run.Steps {
			if s.Name == name && s.Status == want && run.Status != StatusRunning {
				return true
			}
		}
		return false
	})
}
