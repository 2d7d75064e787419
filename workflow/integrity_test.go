package workflow

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/internal/engine"
)

// TestStepsBelongToTheirRun checks the rules that stand in for a foreign key
// from step_runs to workflow_runs (migration 003): no memo is written for a
// run that does not exist, deleting or truncating runs deletes their steps,
// and a run deleted while one of its memos is being written waits for that
// memo and deletes it too.
func TestStepsBelongToTheirRun(t *testing.T) {
	t.Parallel()

	twoSteps := Define("integrity_two_steps", func(ctx Context, n int) (int, error) {
		a, err := Step(ctx, "a", func(context.Context) (int, error) { return n + 1, nil })
		if err != nil {
			return 0, err
		}
		return Step(ctx, "b", func(context.Context) (int, error) { return a + 1, nil })
	}, nil)

	// finishedRun runs twoSteps to completion and returns its id.
	finishedRun := func(t *testing.T, env *testEnv) uuid.UUID {
		t.Helper()
		ctx := ctxT(t)
		h, err := twoSteps.Start(ctx, env.client, 1, nil)
		require.NoError(t, err)
		out, err := h.Result(ctx)
		require.NoError(t, err)
		require.Equal(t, 3, out)
		require.Equal(t, 2, countRows(t, env.pool, `SELECT count(*) FROM step_runs WHERE run_id = $1`, h.ID))
		return h.ID
	}

	t.Run("NoMemoWithoutRun", func(t *testing.T) {
		t.Parallel()
		env := newTestEnv(t, twoSteps)
		ctx := ctxT(t)
		missing := uuid.New()

		// The batched memo writes (insert and upsert), and the single-row
		// writes of a parked step and a failed step.
		for _, fresh := range []bool{true, false} {
			require.NoError(t, env.client.writeMemo(ctx, missing, &memo{Name: "x", Kind: StepKindStep, Status: StepStatusCompleted, Output: []byte("1")}, time.Now(), fresh))
		}
		wakeAt := time.Now()
		err := env.client.db.InsertParkedStep(ctx, env.pool, &engine.ParkedStepParams{
			RunID: missing, Name: "nap", Kind: string(StepKindSleep), Status: string(StepStatusSleeping), WakeAt: &wakeAt, Seq: -1,
		})
		require.NoError(t, err)
		err = env.client.db.RecordStepFailed(ctx, env.pool, &engine.StepFailedParams{
			RunID: missing, Name: "boom", ResultType: "int", Error: []byte(`{"message":"x"}`), StartedAt: time.Now(), Seq: -1,
		})
		require.NoError(t, err)
		require.Equal(t, 0, countRows(t, env.pool, `SELECT count(*) FROM step_runs`))
	})

	t.Run("DeleteRunDeletesSteps", func(t *testing.T) {
		t.Parallel()
		env := newTestEnv(t, twoSteps)
		gone, kept := finishedRun(t, env), finishedRun(t, env)

		_, err := env.pool.Exec(ctxT(t), `DELETE FROM workflow_runs WHERE id = $1`, gone)
		require.NoError(t, err)
		require.Equal(t, 0, countRows(t, env.pool, `SELECT count(*) FROM step_runs WHERE run_id = $1`, gone))
		require.Equal(t, 2, countRows(t, env.pool, `SELECT count(*) FROM step_runs WHERE run_id = $1`, kept))
	})

	t.Run("TruncateRunsEmptiesSteps", func(t *testing.T) {
		t.Parallel()
		env := newTestEnv(t, twoSteps)
		finishedRun(t, env)

		_, err := env.pool.Exec(ctxT(t), `TRUNCATE workflow_runs CASCADE`)
		require.NoError(t, err)
		require.Equal(t, 0, countRows(t, env.pool, `SELECT count(*) FROM step_runs`))
	})

	t.Run("DeleteWaitsForMemoBeingWritten", func(t *testing.T) {
		t.Parallel()
		env := newTestEnv(t, twoSteps)
		ctx := ctxT(t)
		runID := finishedRun(t, env)

		// A memo written in a transaction still open, as StepTx writes one.
		tx, err := env.pool.Begin(ctx)
		require.NoError(t, err)
		defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
		stored, err := env.client.db.UpsertMemo(ctx, tx, &engine.Memo{
			RunID: runID, Name: "late", Kind: string(StepKindStep), Status: string(StepStatusCompleted), ResultType: "int",
			Output: []byte("7"), StartedAt: time.Now(), FinishedAt: time.Now(),
		})
		require.NoError(t, err)
		require.True(t, stored)

		deleted := make(chan error, 1)
		go func() {
			// The comment marks the statement for WaitForLockWait.
			_, err := env.pool.Exec(ctx, `DELETE FROM workflow_runs WHERE id = $1 /* delete `+runID.String()+` */`, runID)
			deleted <- err
		}()
		env.db.WaitForLockWait(t, "%delete "+runID.String()+"%")
		require.NoError(t, tx.Commit(ctx))
		select {
		case err := <-deleted:
			require.NoError(t, err)
		case <-ctx.Done():
			t.Fatal("the delete did not finish after the memo's transaction committed")
		}
		require.Equal(t, 0, countRows(t, env.pool, `SELECT count(*) FROM step_runs WHERE run_id = $1`, runID))
	})
}

// TestMemoWriteMeetsExistingRecord checks that a memo written as a first
// write (a plain insert) over a step record another attempt stored
// meanwhile falls back to the upsert: a failed record is completed, a
// completed one is kept.
func TestMemoWriteMeetsExistingRecord(t *testing.T) {
	t.Parallel()

	def := Define("memo_meets_record", func(ctx Context, n int) (int, error) { return n, nil }, nil)
	env := newTestEnv(t, def)
	ctx := ctxT(t)
	h, err := def.Start(ctx, env.client, 1, nil)
	require.NoError(t, err)
	_, err = h.Result(ctx)
	require.NoError(t, err)

	err = env.client.db.RecordStepFailed(ctx, env.pool, &engine.StepFailedParams{
		RunID: h.ID, Name: "s", ResultType: "int", Error: []byte(`{"message":"boom"}`), StartedAt: time.Now(), Seq: -1,
	})
	require.NoError(t, err)
	write := func(output string) {
		t.Helper()
		require.NoError(t, env.client.writeMemo(ctx, h.ID, &memo{Name: "s", Kind: StepKindStep, Status: StepStatusCompleted, ResultType: "int", Output: []byte(output)}, time.Now(), true))
	}
	step := func() (status string, output string, attempts int) {
		t.Helper()
		require.NoError(t, env.pool.QueryRow(ctx, `SELECT status, output::text, attempts FROM step_runs WHERE run_id = $1 AND name = 's'`, h.ID).Scan(&status, &output, &attempts))
		return status, output, attempts
	}

	write("7")
	status, output, attempts := step()
	require.Equal(t, "completed", status)
	require.Equal(t, "7", output)
	require.Equal(t, 2, attempts)

	write("8") // a completed record is kept
	_, output, _ = step()
	require.Equal(t, "7", output)
}
