package workflow

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestMemoDurableBeforeProgress checks when Step's memo commits: before the
// next step boundary does anything, within memoSaveDelay when the workflow
// reaches none, with the run's completion, and before a failed attempt ends.
func TestMemoDurableBeforeProgress(t *testing.T) {
	t.Parallel()

	t.Run("BeforeTheNextStepRuns", func(t *testing.T) {
		t.Parallel()

		var env *testEnv
		def := Define("memo_before_next", func(ctx Context, _ struct{}) (int, error) {
			a, err := Step(ctx, "one", func(context.Context) (int, error) { return 1, nil })
			if err != nil {
				return 0, err
			}
			// Read from another connection: what is committed, not what
			// this attempt knows.
			return Step(ctx, "two", func(ctx context.Context) (int, error) {
				var status string
				err := env.pool.QueryRow(ctx, `SELECT status FROM step_runs WHERE name = 'one'`).Scan(&status)
				if err != nil {
					return 0, NonRetryable(err)
				}
				if status != string(StepStatusCompleted) {
					return 0, NonRetryable(errors.New("step one is " + status))
				}
				return a + 1, nil
			})
		}, nil)
		env = newTestEnv(t, def)
		ctx := ctxT(t)

		h, err := def.Start(ctx, env.client, struct{}{}, nil)
		require.NoError(t, err)
		out, err := h.Result(ctx)
		require.NoError(t, err, "step one's memo must be committed before step two runs")
		require.Equal(t, 2, out)

		// Step two's memo went with the completion.
		run, err := env.client.GetRun(ctx, h.ID)
		require.NoError(t, err)
		require.Len(t, run.Steps, 2)
		for _, s := range run.Steps {
			require.Equal(t, StepStatusCompleted, s.Status, "step %q", s.Name)
			require.Equal(t, 1, s.Attempts, "step %q", s.Name)
			require.NotNil(t, s.FinishedAt, "step %q", s.Name)
		}
		require.JSONEq(t, `2`, string(run.Steps[1].Output))
	})

	t.Run("WithinTheDelayWhenTheWorkflowGoesOn", func(t *testing.T) {
		t.Parallel()

		release := make(chan struct{})
		done := sync.OnceFunc(func() { close(release) })
		t.Cleanup(done) // before the client stops, should the test fail
		def := Define("memo_long_tail", func(ctx Context, _ struct{}) (int, error) {
			n, err := Step(ctx, "fetch", func(context.Context) (int, error) { return 7, nil })
			if err != nil {
				return 0, err
			}
			<-release // long work between steps, with no step boundary
			return n, nil
		}, nil)
		env := newTestEnv(t, def)
		ctx := ctxT(t)

		h, err := def.Start(ctx, env.client, struct{}{}, nil)
		require.NoError(t, err)
		// The memo is stored behind the function's back: no event says so.
		waitCond(t, "the memo of a step the workflow moved on from to be stored", nil, func(ctx context.Context) (bool, error) {
			var n int
			err := env.pool.QueryRow(ctx, `SELECT count(*) FROM step_runs WHERE run_id = $1 AND name = 'fetch' AND status = 'completed'`, h.ID).Scan(&n)
			return n > 0, err
		})
		run, err := h.Get(ctx)
		require.NoError(t, err)
		require.Equal(t, StatusRunning, run.Status, "the memo was stored while the function still ran")
		done()
		out, err := h.Result(ctx)
		require.NoError(t, err)
		require.Equal(t, 7, out)
	})

	t.Run("BeforeAFailedAttemptEnds", func(t *testing.T) {
		t.Parallel()

		var calls, attempts atomic.Int32
		def := Define("memo_then_fail", func(ctx Context, _ struct{}) (int, error) {
			n, err := Step(ctx, "once", func(context.Context) (int, error) { calls.Add(1); return 5, nil })
			if err != nil {
				return 0, err
			}
			if attempts.Add(1) == 1 {
				return 0, errors.New("fails after its step, not in it")
			}
			return n, nil
		}, nil)
		env := newTestEnv(t, def)
		ctx := ctxT(t)

		h, err := def.Start(ctx, env.client, struct{}{}, nil)
		require.NoError(t, err)
		out, err := h.Result(ctx)
		require.NoError(t, err)
		require.Equal(t, 5, out)
		require.Equal(t, int32(2), attempts.Load())
		require.Equal(t, int32(1), calls.Load(), "the retry replays the step the failed attempt completed")
	})

	t.Run("BeforeASleepParks", func(t *testing.T) {
		t.Parallel()

		def := Define("memo_then_sleep", func(ctx Context, _ struct{}) (int, error) {
			n, err := Step(ctx, "before", func(context.Context) (int, error) { return 3, nil })
			if err != nil {
				return 0, err
			}
			if err := Sleep(ctx, "nap", time.Hour); err != nil {
				return 0, err
			}
			return n, nil
		}, nil)
		env := newTestEnv(t, def)
		ctx := ctxT(t)

		h, err := def.Start(ctx, env.client, struct{}{}, nil)
		require.NoError(t, err)
		run := waitStatus(t, env.client, h, StatusSleeping)
		require.Len(t, run.Steps, 2)
		require.Equal(t, "before", run.Steps[0].Name)
		require.Equal(t, StepStatusCompleted, run.Steps[0].Status)
		require.Equal(t, StepStatusSleeping, run.Steps[1].Status)
	})
}
