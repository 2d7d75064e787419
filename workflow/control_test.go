package workflow

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/internal/testdb"
)

func TestCancelRunning(t *testing.T) {
	t.Parallel()

	var afterCalls atomic.Int32
	started := make(chan struct{})
	def := Define("blocker", func(ctx Context, _ struct{}) (int, error) {
		if _, err := Step(ctx, "block", func(ctx context.Context) (int, error) {
			close(started)
			<-ctx.Done() // a step sees the cancellation through its context
			return 0, ctx.Err()
		}); err != nil {
			return 0, err
		}
		return Step(ctx, "after", func(context.Context) (int, error) { afterCalls.Add(1); return 1, nil })
	}, &DefineOpts{Timeout: -1})
	env := newTestEnv(t, def)
	ctx := ctxT(t)

	h, err := def.Start(ctx, env.client, struct{}{}, nil)
	require.NoError(t, err)
	select {
	case <-started:
	case <-ctx.Done():
		t.Fatal("step never started")
	}
	require.NoError(t, env.client.Cancel(ctx, h.ID))
	_, err = h.Result(ctx)
	require.ErrorIs(t, err, ErrCancelled)
	require.Zero(t, afterCalls.Load())
}

func TestOperatorRetry(t *testing.T) {
	t.Parallel()

	var firstCalls, brokenCalls atomic.Int32
	def := Define("fix_and_retry", func(ctx Context, _ struct{}) (int32, error) {
		if _, err := Step(ctx, "first", func(context.Context) (int, error) { firstCalls.Add(1); return 1, nil }); err != nil {
			return 0, err
		}
		return Step(ctx, "broken", func(context.Context) (int32, error) {
			if brokenCalls.Add(1) == 1 {
				return 0, NonRetryable(errors.New("bad config"))
			}
			return brokenCalls.Load(), nil
		})
	}, nil)
	env := newTestEnv(t, def)
	ctx := ctxT(t)

	h, err := def.Start(ctx, env.client, struct{}{}, nil)
	require.NoError(t, err)
	_, err = h.Result(ctx)
	require.Error(t, err)
	require.ErrorIs(t, env.client.Retry(ctx, [16]byte{9}), ErrNotFound)

	require.NoError(t, env.client.Retry(ctx, h.ID))
	out, err := h.Result(ctx)
	require.NoError(t, err)
	require.Equal(t, int32(2), out)
	require.Equal(t, int32(1), firstCalls.Load())
	require.ErrorIs(t, env.client.Retry(ctx, h.ID), ErrRunNotRetryable)
}

func TestDivergence(t *testing.T) {
	t.Parallel()

	// Version 1 records step "a" as an int, then waits for a signal.
	v1 := Define("evolving", func(ctx Context, _ struct{}) (string, error) {
		if _, err := Step(ctx, "a", func(context.Context) (int, error) { return 1, nil }); err != nil {
			return "", err
		}
		_, err := WaitSignal[string](ctx, "go", nil)
		return "v1", err
	}, nil)
	// Version 2 of the same workflow expects a string from step "a".
	v2 := Define("evolving", func(ctx Context, _ struct{}) (string, error) {
		if _, err := Step(ctx, "a", func(context.Context) (string, error) { return "one", nil }); err != nil {
			return "", err
		}
		_, err := WaitSignal[string](ctx, "go", nil)
		return "v2", err
	}, nil)

	ctx := ctxT(t)
	deployed, h, err := redeployWhileWaiting(t, v1, v2)
	require.ErrorIs(t, err, ErrDivergence)
	var runErr *RunError
	require.ErrorAs(t, err, &runErr)
	require.Contains(t, runErr.Message, `step "a"`)
	require.Contains(t, runErr.Message, "step returning int")
	require.Contains(t, runErr.Message, "step returning string")

	run, err := deployed.GetRun(ctx, h.ID)
	require.NoError(t, err)
	require.Equal(t, StatusFailed, run.Status)
	require.Equal(t, 1, run.Attempt, "a divergence is not retried")
}

func TestDivergenceSleepWhereStepWas(t *testing.T) {
	t.Parallel()

	// Version 1 ran a step named "pause", then waited.
	v1 := Define("reshaped", func(ctx Context, _ struct{}) (string, error) {
		if _, err := Step(ctx, "pause", func(context.Context) (bool, error) { return true, nil }); err != nil {
			return "", err
		}
		_, err := WaitSignal[string](ctx, "go", nil)
		return "v1", err
	}, nil)
	// Version 2 made "pause" a durable sleep.
	v2 := Define("reshaped", func(ctx Context, _ struct{}) (string, error) {
		if err := Sleep(ctx, "pause", time.Millisecond); err != nil {
			return "", err
		}
		_, err := WaitSignal[string](ctx, "go", nil)
		return "v2", err
	}, nil)

	_, _, err := redeployWhileWaiting(t, v1, v2)
	require.ErrorIs(t, err, ErrDivergence)
	require.Contains(t, err.Error(), `history has step returning bool, code now asks for sleep`)
}

func TestStartScheduledAt(t *testing.T) {
	t.Parallel()

	env := newTestEnv(t, echo)
	ctx := ctxT(t)
	at := time.Now().Add(time.Hour)
	h, err := echo.Start(ctx, env.client, greetIn{Name: "later"}, &StartOpts{ScheduledAt: at})
	require.NoError(t, err)
	run, err := h.Get(ctx)
	require.NoError(t, err)
	var state string
	var scheduledAt time.Time
	require.NoError(t, env.pool.QueryRow(ctx, "SELECT state, scheduled_at FROM river_job WHERE id = $1", run.JobID).Scan(&state, &scheduledAt))
	require.Equal(t, "scheduled", state)
	require.WithinDuration(t, at, scheduledAt, time.Second)
	require.Equal(t, StatusPending, run.Status)
}

// redeployWhileWaiting starts a run of v1 and lets it park in a wait for the
// signal "go"; then it "deploys" v2 (same name, new code) on a new client,
// sends the signal and returns the new client, the run and its result.
func redeployWhileWaiting(t *testing.T, v1, v2 *Definition[struct{}, string]) (*Client, *Handle[string], error) {
	t.Helper()
	db := testdb.New(t)
	old, err := NewClient(db.Pool, testConfig(t, db, v1))
	require.NoError(t, err)
	require.NoError(t, old.Start(context.Background()))
	ctx := ctxT(t)
	h, err := v1.Start(ctx, old, struct{}{}, nil)
	require.NoError(t, err)
	waitStatus(t, old, h, StatusWaiting)
	stopClient(t, old)

	deployed := startClient(t, db, v2)
	require.NoError(t, deployed.Signal(ctx, h.ID, "go", "now"))
	h = &Handle[string]{ID: h.ID, client: deployed}
	_, err = h.Result(ctx)
	return deployed, h, err
}
