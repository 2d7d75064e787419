package workflow

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
)

type greetIn struct {
	Name string `json:"name"`
}

type greetOut struct {
	Greeting string `json:"greeting"`
}

func TestStepReplay(t *testing.T) {
	t.Parallel()

	t.Run("CompletedStepsRunOnceWhileLaterStepRetries", func(t *testing.T) {
		t.Parallel()

		var calls [3]atomic.Int32
		def := Define("three_steps", func(ctx Context, in greetIn) (greetOut, error) {
			a, err := Step(ctx, "one", func(context.Context) (string, error) { calls[0].Add(1); return "hello", nil })
			if err != nil {
				return greetOut{}, err
			}
			b, err := Step(ctx, "two", func(context.Context) (int, error) { calls[1].Add(1); return 2, nil })
			if err != nil {
				return greetOut{}, err
			}
			c, err := Step(ctx, "three", func(context.Context) (string, error) {
				if calls[2].Add(1) <= 2 {
					return "", errors.New("flaky downstream")
				}
				return in.Name, nil
			})
			if err != nil {
				return greetOut{}, err
			}
			return greetOut{Greeting: fmt.Sprintf("%s %s x%d", a, c, b)}, nil
		}, nil)
		env := newTestEnv(t, def)
		ctx := ctxT(t)

		h, err := def.Start(ctx, env.client, greetIn{Name: "ada"}, nil)
		require.NoError(t, err)
		out, err := h.Result(ctx)
		require.NoError(t, err)
		require.Equal(t, "hello ada x2", out.Greeting)
		again, err := def.Handle(env.client, h.ID).Result(ctx) // a handle from the id alone
		require.NoError(t, err)
		require.Equal(t, out, again)
		raw, err := env.client.Result(ctx, h.ID)
		require.NoError(t, err)
		require.JSONEq(t, `{"greeting": "hello ada x2"}`, string(raw))
		_, err = env.client.Result(ctx, uuid.Must(uuid.NewV7()))
		require.ErrorIs(t, err, ErrNotFound)
		require.Equal(t, int32(1), calls[0].Load())
		require.Equal(t, int32(1), calls[1].Load())
		require.Equal(t, int32(3), calls[2].Load())

		run, err := env.client.GetRun(ctx, h.ID)
		require.NoError(t, err)
		require.Equal(t, StatusCompleted, run.Status)
		require.Equal(t, 3, run.Attempt)
		require.Len(t, run.Steps, 3)
		byName := map[string]StepRun{}
		for _, s := range run.Steps {
			byName[s.Name] = s
		}
		require.Equal(t, 1, byName["one"].Attempts)
		require.Equal(t, 3, byName["three"].Attempts)
		require.Equal(t, "int", byName["two"].ResultType)
		require.JSONEq(t, `{"greeting":"hello ada x2"}`, string(run.Output))
	})

	t.Run("NonRetryableFailsAtOnce", func(t *testing.T) {
		t.Parallel()

		var calls atomic.Int32
		def := Define("non_retryable", func(ctx Context, _ struct{}) (int, error) {
			return Step(ctx, "boom", func(context.Context) (int, error) {
				calls.Add(1)
				return 0, NonRetryable(errors.New("card declined"))
			})
		}, nil)
		env := newTestEnv(t, def)
		ctx := ctxT(t)

		h, err := def.Start(ctx, env.client, struct{}{}, nil)
		require.NoError(t, err)
		_, err = h.Result(ctx)
		var runErr *RunError
		require.ErrorAs(t, err, &runErr)
		require.Equal(t, ErrorKindNonRetryable, runErr.Kind)
		require.Equal(t, "boom", runErr.Step)
		require.Contains(t, runErr.Message, "card declined")
		require.Equal(t, int32(1), calls.Load())

		run, err := env.client.GetRun(ctx, h.ID)
		require.NoError(t, err)
		require.Equal(t, StatusFailed, run.Status)
		require.Equal(t, StepStatusFailed, run.Steps[0].Status)
		var jobState string
		require.NoError(t, env.pool.QueryRow(ctx, "SELECT state FROM river_job WHERE id = $1", run.JobID).Scan(&jobState))
		require.Equal(t, "discarded", jobState)
	})

	t.Run("LastAttemptMarksRunFailed", func(t *testing.T) {
		t.Parallel()

		var calls atomic.Int32
		def := Define("always_fails", func(ctx Context, _ struct{}) (int, error) {
			return Step(ctx, "boom", func(context.Context) (int, error) {
				calls.Add(1)
				return 0, errors.New("still broken")
			})
		}, &DefineOpts{MaxAttempts: 3})
		env := newTestEnv(t, def)
		ctx := ctxT(t)

		h, err := def.Start(ctx, env.client, struct{}{}, nil)
		require.NoError(t, err)
		_, err = h.Result(ctx)
		var runErr *RunError
		require.ErrorAs(t, err, &runErr)
		require.Equal(t, ErrorKindError, runErr.Kind)
		require.Equal(t, 3, runErr.Attempt)
		require.Equal(t, int32(3), calls.Load())
	})

	t.Run("RetryAfterSnoozes", func(t *testing.T) {
		t.Parallel()

		var calls, firsts atomic.Int32
		def := Define("rate_limited", func(ctx Context, _ struct{}) (int32, error) {
			// The snoozed job is fetched again with attempt 1: its replay
			// must still load the memo of "first" (see worker.begin).
			if _, err := Step(ctx, "first", func(context.Context) (int32, error) { return firsts.Add(1), nil }); err != nil {
				return 0, err
			}
			return Step(ctx, "call", func(context.Context) (int32, error) {
				if n := calls.Add(1); n == 1 {
					return 0, RetryAfter(errors.New("429 too many requests"), 10*time.Millisecond)
				}
				return calls.Load(), nil
			})
		}, &DefineOpts{MaxAttempts: 1})
		env := newTestEnv(t, def)
		ctx := ctxT(t)

		h, err := def.Start(ctx, env.client, struct{}{}, nil)
		require.NoError(t, err)
		out, err := h.Result(ctx)
		require.NoError(t, err, "a snooze must not use up the only attempt")
		require.Equal(t, int32(2), out)
		require.Equal(t, int32(1), firsts.Load(), "step first ran again after the snooze")
	})

	t.Run("PanicInStepIsAnError", func(t *testing.T) {
		t.Parallel()

		def := Define("panics", func(ctx Context, _ struct{}) (int, error) {
			return Step(ctx, "bad", func(context.Context) (int, error) { panic("nil map") })
		}, &DefineOpts{MaxAttempts: 1})
		env := newTestEnv(t, def)
		ctx := ctxT(t)

		h, err := def.Start(ctx, env.client, struct{}{}, nil)
		require.NoError(t, err)
		_, err = h.Result(ctx)
		var runErr *RunError
		require.ErrorAs(t, err, &runErr)
		require.Equal(t, ErrorKindPanic, runErr.Kind)
		require.Contains(t, runErr.Message, "nil map")
		// Where it panicked, file:line, kept with the run.
		require.Regexp(t, `workflow_test\.go:\d+`, runErr.Stack)
		run, err := env.client.GetRun(ctx, h.ID)
		require.NoError(t, err)
		require.Equal(t, runErr.Stack, run.Error.Stack)
	})

	t.Run("DuplicateStepNameFailsRun", func(t *testing.T) {
		t.Parallel()

		def := Define("dup_steps", func(ctx Context, _ struct{}) (int, error) {
			if _, err := Step(ctx, "same", func(context.Context) (int, error) { return 1, nil }); err != nil {
				return 0, err
			}
			return Step(ctx, "same", func(context.Context) (int, error) { return 2, nil })
		}, nil)
		env := newTestEnv(t, def)
		ctx := ctxT(t)

		h, err := def.Start(ctx, env.client, struct{}{}, nil)
		require.NoError(t, err)
		_, err = h.Result(ctx)
		var runErr *RunError
		require.ErrorAs(t, err, &runErr)
		require.Equal(t, ErrorKindNonRetryable, runErr.Kind)
		require.Contains(t, runErr.Message, `"same" is used twice`)
		require.Equal(t, 1, runErr.Attempt)
	})

	t.Run("RunInfoIsVisibleToTheWorkflow", func(t *testing.T) {
		t.Parallel()

		def := Define("who_am_i", func(ctx Context, _ struct{}) (RunInfo, error) {
			return ctx.Run(), nil
		}, nil)
		env := newTestEnv(t, def)
		ctx := ctxT(t)

		h, err := def.Start(ctx, env.client, struct{}{}, &StartOpts{Metadata: map[string]any{"tenant": "acme"}})
		require.NoError(t, err)
		info, err := h.Result(ctx)
		require.NoError(t, err)
		require.Equal(t, h.ID, info.ID)
		require.Equal(t, "who_am_i", info.Type)
		require.Equal(t, 1, info.Attempt)
		require.NotZero(t, info.JobID)
		require.JSONEq(t, `{"tenant":"acme"}`, string(info.Metadata))
	})
}

func TestStepTx(t *testing.T) {
	t.Parallel()

	t.Run("WritesOnceAcrossRetries", func(t *testing.T) {
		t.Parallel()

		var fails, insertCalls atomic.Int32
		def := Define("order_tx", func(ctx Context, _ struct{}) (int64, error) {
			runID := ctx.Run().ID
			id, err := StepTx(ctx, "insert_order", func(ctx context.Context, tx pgx.Tx) (int64, error) {
				insertCalls.Add(1)
				var id int64
				err := tx.QueryRow(ctx, "INSERT INTO orders (run_id) VALUES ($1) RETURNING id", runID).Scan(&id)
				return id, err
			})
			if err != nil {
				return 0, err
			}
			// Fail the attempt after the step committed: the replay must
			// not insert a second order.
			_, err = Step(ctx, "after", func(context.Context) (int, error) {
				if fails.Add(1) == 1 {
					return 0, errors.New("transient")
				}
				return 1, nil
			})
			return id, err
		}, nil)
		env := newTestEnv(t, def)
		ctx := ctxT(t)
		_, err := env.pool.Exec(ctx, "CREATE TABLE orders (id bigserial PRIMARY KEY, run_id uuid NOT NULL)")
		require.NoError(t, err)

		h, err := def.Start(ctx, env.client, struct{}{}, nil)
		require.NoError(t, err)
		id, err := h.Result(ctx)
		require.NoError(t, err)
		require.NotZero(t, id)
		require.Equal(t, int32(1), insertCalls.Load())
		require.Equal(t, 1, countRows(t, env.pool, "SELECT count(*) FROM orders WHERE run_id = $1", h.ID))
	})

	t.Run("FailedStepRollsBackItsWrites", func(t *testing.T) {
		t.Parallel()

		var calls atomic.Int32
		def := Define("order_tx_fail", func(ctx Context, _ struct{}) (int, error) {
			runID := ctx.Run().ID
			return StepTx(ctx, "insert_then_fail", func(ctx context.Context, tx pgx.Tx) (int, error) {
				if _, err := tx.Exec(ctx, "INSERT INTO orders (run_id) VALUES ($1)", runID); err != nil {
					return 0, err
				}
				if calls.Add(1) == 1 {
					return 0, errors.New("validation failed after insert")
				}
				return 7, nil
			})
		}, nil)
		env := newTestEnv(t, def)
		ctx := ctxT(t)
		_, err := env.pool.Exec(ctx, "CREATE TABLE orders (id bigserial PRIMARY KEY, run_id uuid NOT NULL)")
		require.NoError(t, err)

		h, err := def.Start(ctx, env.client, struct{}{}, nil)
		require.NoError(t, err)
		out, err := h.Result(ctx)
		require.NoError(t, err)
		require.Equal(t, 7, out)
		require.Equal(t, 1, countRows(t, env.pool, "SELECT count(*) FROM orders WHERE run_id = $1", h.ID))
	})
}
