package workflow

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/internal/testdb"
)

type approval struct {
	By string `json:"by"`
}

func TestSleep(t *testing.T) {
	t.Parallel()

	t.Run("ParksAndContinues", func(t *testing.T) {
		t.Parallel()

		var before, after atomic.Int32
		def := Define("sleeper", func(ctx Context, _ struct{}) (string, error) {
			if _, err := Step(ctx, "before", func(context.Context) (int, error) { before.Add(1); return 1, nil }); err != nil {
				return "", err
			}
			if err := Sleep(ctx, "nap", 300*time.Millisecond); err != nil {
				return "", err
			}
			_, err := Step(ctx, "after", func(context.Context) (int, error) { after.Add(1); return 1, nil })
			return "rested", err
		}, &DefineOpts{MaxAttempts: 1})
		env := newTestEnv(t, def)
		ctx := ctxT(t)

		h, err := def.Start(ctx, env.client, struct{}{}, nil)
		require.NoError(t, err)
		out, err := h.Result(ctx)
		require.NoError(t, err)
		require.Equal(t, "rested", out)
		require.Equal(t, int32(1), before.Load())
		require.Equal(t, int32(1), after.Load())

		run, err := env.client.GetRun(ctx, h.ID)
		require.NoError(t, err)
		require.Len(t, run.Steps, 3)
		nap := run.Steps[1]
		require.Equal(t, StepKindSleep, nap.Kind)
		require.Equal(t, StepStatusCompleted, nap.Status)
		require.NotNil(t, nap.WakeAt)
		require.GreaterOrEqual(t, nap.Duration(), 300*time.Millisecond)
	})

	t.Run("SurvivesClientRestartAndCancel", func(t *testing.T) {
		t.Parallel()

		def := Define("long_sleeper", func(ctx Context, _ struct{}) (string, error) {
			if err := Sleep(ctx, "a-long-time", time.Hour); err != nil {
				return "", err
			}
			return "woke", nil
		}, nil)
		db := testdb.New(t)
		first, err := NewClient(db.Pool, testConfig(t, db, def))
		require.NoError(t, err)
		require.NoError(t, first.Start(context.Background()))
		ctx := ctxT(t)

		h, err := def.Start(ctx, first, struct{}{}, nil)
		require.NoError(t, err)
		run := waitStatus(t, first, h, StatusSleeping)
		stopClient(t, first)

		var state string
		require.NoError(t, db.Pool.QueryRow(ctx, "SELECT state FROM river_job WHERE id = $1", run.JobID).Scan(&state))
		require.Equal(t, "scheduled", state, "a sleeping run holds no worker")

		second := startClient(t, db, def)
		require.NoError(t, second.Cancel(ctx, h.ID))
		_, err = (&Handle[string]{ID: h.ID, client: second}).Result(ctx)
		require.ErrorIs(t, err, ErrCancelled)
		require.NoError(t, db.Pool.QueryRow(ctx, "SELECT state FROM river_job WHERE id = $1", run.JobID).Scan(&state))
		require.Equal(t, "cancelled", state)
		require.ErrorIs(t, second.Cancel(ctx, h.ID), ErrRunFinished)

		// The sleep no longer shows as sleeping until a wake time.
		got, err := second.GetRun(ctx, h.ID)
		require.NoError(t, err)
		require.Len(t, got.Steps, 1)
		require.Equal(t, StepStatusInterrupted, got.Steps[0].Status)
		require.Nil(t, got.Steps[0].WakeAt)
	})
}

var approvalFlow = Define("approval_flow", func(ctx Context, _ struct{}) (string, error) {
	a, err := WaitSignal[approval](ctx, "approve", &WaitOpts{Timeout: time.Hour})
	if err != nil {
		return "", err
	}
	return "approved by " + a.By, nil
}, nil)

func TestSignal(t *testing.T) {
	t.Parallel()

	t.Run("WakesAWaitingRun", func(t *testing.T) {
		t.Parallel()

		env := newTestEnv(t, approvalFlow)
		ctx := ctxT(t)

		h, err := approvalFlow.Start(ctx, env.client, struct{}{}, nil)
		require.NoError(t, err)
		run := waitStatus(t, env.client, h, StatusWaiting)
		require.Equal(t, StepStatusWaiting, run.Steps[0].Status)
		require.NoError(t, env.client.Signal(ctx, h.ID, "approve", approval{By: "grace"}))
		out, err := h.Result(ctx)
		require.NoError(t, err)
		require.Equal(t, "approved by grace", out)
	})

	t.Run("SentBeforeTheWaitIsKept", func(t *testing.T) {
		t.Parallel()

		def := Define("late_waiter", func(ctx Context, _ struct{}) (string, error) {
			if err := Sleep(ctx, "first", 200*time.Millisecond); err != nil {
				return "", err
			}
			a, err := WaitSignal[approval](ctx, "approve", nil)
			return a.By, err
		}, nil)
		env := newTestEnv(t, def)
		ctx := ctxT(t)

		h, err := def.Start(ctx, env.client, struct{}{}, nil)
		require.NoError(t, err)
		require.NoError(t, env.client.Signal(ctx, h.ID, "approve", approval{By: "early bird"}))
		out, err := h.Result(ctx)
		require.NoError(t, err)
		require.Equal(t, "early bird", out)
	})

	t.Run("ManyWakeUpsInARow", func(t *testing.T) {
		t.Parallel()

		// Each signal wakes the run right after it parked: the wake-up must
		// never be lost to River applying a parked attempt's outcome late.
		const rounds = 15
		def := Define("ticker", func(ctx Context, _ struct{}) (int, error) {
			sum := 0
			for i := range rounds {
				n, err := WaitSignal[int](ctx, "tick", &WaitOpts{Step: fmt.Sprintf("tick-%d", i)})
				if err != nil {
					return 0, err
				}
				sum += n
			}
			return sum, nil
		}, nil)
		env := newTestEnv(t, def)
		ctx := ctxT(t)

		h, err := def.Start(ctx, env.client, struct{}{}, nil)
		require.NoError(t, err)
		for i := 1; i <= rounds; i++ {
			waitStatus(t, env.client, h, StatusWaiting)
			require.NoError(t, env.client.Signal(ctx, h.ID, "tick", i))
		}
		sum, err := h.Result(ctx)
		require.NoError(t, err)
		require.Equal(t, rounds*(rounds+1)/2, sum)
		run, err := env.client.GetRun(ctx, h.ID)
		require.NoError(t, err)
		require.Equal(t, 1, run.Attempt, "waiting does not use up attempts")
	})

	t.Run("SurvivesClientRestart", func(t *testing.T) {
		t.Parallel()

		db := testdb.New(t)
		first, err := NewClient(db.Pool, testConfig(t, db, approvalFlow))
		require.NoError(t, err)
		require.NoError(t, first.Start(context.Background()))
		ctx := ctxT(t)
		h, err := approvalFlow.Start(ctx, first, struct{}{}, nil)
		require.NoError(t, err)
		waitStatus(t, first, h, StatusWaiting)
		stopClient(t, first)

		second := startClient(t, db, approvalFlow)
		require.NoError(t, second.Signal(ctx, h.ID, "approve", approval{By: "after restart"}))
		out, err := (&Handle[string]{ID: h.ID, client: second}).Result(ctx)
		require.NoError(t, err)
		require.Equal(t, "approved by after restart", out)
	})

	t.Run("Timeout", func(t *testing.T) {
		t.Parallel()

		def := Define("impatient", func(ctx Context, _ struct{}) (string, error) {
			_, err := WaitSignal[approval](ctx, "approve", &WaitOpts{Timeout: 200 * time.Millisecond})
			if errors.Is(err, ErrSignalTimeout) {
				return "timed out", nil
			}
			return "signalled", err
		}, nil)
		env := newTestEnv(t, def)
		ctx := ctxT(t)

		h, err := def.Start(ctx, env.client, struct{}{}, nil)
		require.NoError(t, err)
		out, err := h.Result(ctx)
		require.NoError(t, err)
		require.Equal(t, "timed out", out)
		require.ErrorIs(t, env.client.Signal(ctx, h.ID, "approve", approval{}), ErrRunFinished)
	})
}

var childDouble = Define("child_double", func(ctx Context, n int) (int, error) {
	if n < 0 {
		return 0, NonRetryable(errors.New("negative input"))
	}
	return Step(ctx, "double", func(context.Context) (int, error) { return n * 2, nil })
}, nil)

func TestRunChild(t *testing.T) {
	t.Parallel()

	parent := Define("parent_sum", func(ctx Context, n int) (int, error) {
		a, err := RunChild(ctx, "first", childDouble, n, nil)
		if err != nil {
			return 0, err
		}
		b, err := RunChild(ctx, "second", childDouble, a, nil)
		if err != nil {
			return 0, err
		}
		_, childErr := RunChild(ctx, "failing", childDouble, -1, nil)
		var runErr *RunError
		if !errors.As(childErr, &runErr) || runErr.Kind != ErrorKindNonRetryable {
			return 0, NonRetryable(errors.New("want the child's failure"))
		}
		return a + b, nil
	}, nil)
	env := newTestEnv(t, parent, childDouble)
	ctx := ctxT(t)

	h, err := parent.Start(ctx, env.client, 5, nil)
	require.NoError(t, err)
	out, err := h.Result(ctx)
	require.NoError(t, err)
	require.Equal(t, 30, out)

	children, err := env.client.ListRuns(ctx, &ListParams{Type: "child_double"})
	require.NoError(t, err)
	require.Len(t, children, 3)
	for _, child := range children {
		require.Equal(t, h.ID, *child.ParentID)
	}
	run, err := env.client.GetRun(ctx, h.ID)
	require.NoError(t, err)
	require.Equal(t, StepKindChild, run.Steps[0].Kind)
	require.NotNil(t, run.Steps[0].ChildRunID)
}
