package workflow

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
)

func TestFork(t *testing.T) {
	t.Parallel()

	type input struct {
		N int `json:"n"`
	}
	var (
		oneCalls, twoCalls, threeCalls atomic.Int32
		fixed                          atomic.Bool // the "new code": steps 2 and 3 return other values
		broken                         atomic.Bool // step 2 fails, without retry
	)
	def := Define("forkable", func(ctx Context, in input) (string, error) {
		one, err := Step(ctx, "one", func(context.Context) (int, error) { return int(oneCalls.Add(1)) * 100, nil })
		if err != nil {
			return "", err
		}
		two, err := Step(ctx, "two", func(context.Context) (string, error) {
			twoCalls.Add(1)
			if broken.Load() {
				return "", NonRetryable(errors.New("bad config"))
			}
			if fixed.Load() {
				return "fixed", nil
			}
			return "old", nil
		})
		if err != nil {
			return "", err
		}
		three, err := Step(ctx, "three", func(context.Context) (int, error) {
			threeCalls.Add(1)
			if fixed.Load() {
				return in.N * 2, nil
			}
			return in.N, nil
		})
		if err != nil {
			return "", err
		}
		out, _ := json.Marshal([]any{one, two, three})
		return string(out), nil
	}, nil)
	env := newTestEnv(t, def)
	c := env.client

	result := func(t *testing.T, id uuid.UUID) string {
		t.Helper()
		raw, err := c.Result(ctxT(t), id)
		require.NoError(t, err)
		var out string
		require.NoError(t, json.Unmarshal(raw, &out))
		return out
	}

	// The subtests run one after the other: they share the step counters
	// and the flags that stand for deployed code.
	t.Run("FromAMiddleStep", func(t *testing.T) {
		ctx := ctxT(t)
		h, err := def.Start(ctx, c, input{N: 7}, &StartOpts{Tenant: "acme", Tags: []string{"fork-me"}, Metadata: map[string]any{"who": "ops"}, IdempotencyKey: "fork-origin"})
		require.NoError(t, err)
		require.Equal(t, `[100,"old",7]`, result(t, h.ID))
		require.Equal(t, int32(1), oneCalls.Load())

		fixed.Store(true)
		defer fixed.Store(false)
		fork, err := c.Fork(ctx, h.ID, "two")
		require.NoError(t, err)
		require.NotEqual(t, h.ID, fork.ID)
		require.Equal(t, StatusPending, fork.Status)
		require.Equal(t, &h.ID, fork.ForkedFrom)
		require.Equal(t, "two", fork.ForkedFromStep)

		// Step one's memo is copied (its function is not called again);
		// steps two and three run with today's code.
		require.Equal(t, `[100,"fixed",14]`, result(t, fork.ID))
		require.Equal(t, int32(1), oneCalls.Load())
		require.Equal(t, int32(2), twoCalls.Load())
		require.Equal(t, int32(2), threeCalls.Load())

		got, err := c.GetRun(ctx, fork.ID)
		require.NoError(t, err)
		require.Equal(t, "forkable", got.Type)
		require.JSONEq(t, `{"n":7}`, string(got.Input))
		require.Equal(t, "acme", got.Tenant)
		require.Equal(t, []string{"fork-me"}, got.Tags)
		require.JSONEq(t, `{"who":"ops"}`, string(got.Metadata))
		require.Empty(t, got.IdempotencyKey, "the key stays with the original")
		require.Equal(t, &h.ID, got.ForkedFrom)
		require.Equal(t, "two", got.ForkedFromStep)
		require.Len(t, got.Steps, 3)
		require.Equal(t, []string{"one", "two", "three"}, []string{got.Steps[0].Name, got.Steps[1].Name, got.Steps[2].Name})

		// The original is untouched and lists its fork.
		orig, err := c.GetRun(ctx, h.ID)
		require.NoError(t, err)
		require.Nil(t, orig.ForkedFrom)
		require.JSONEq(t, `"[100,\"old\",7]"`, string(orig.Output))
		forks, err := c.ListRuns(ctx, &ListParams{ForkedFrom: &h.ID})
		require.NoError(t, err)
		require.Len(t, forks, 1)
		require.Equal(t, fork.ID, forks[0].ID)

		// A fork from the first step copies nothing and runs every step.
		again, err := c.Fork(ctx, h.ID, "one")
		require.NoError(t, err)
		require.Equal(t, `[200,"fixed",14]`, result(t, again.ID))
		forks, err = c.ListRuns(ctx, &ListParams{ForkedFrom: &h.ID})
		require.NoError(t, err)
		require.Equal(t, []uuid.UUID{again.ID, fork.ID}, []uuid.UUID{forks[0].ID, forks[1].ID})
	})

	t.Run("FailedRunFromItsFailedStep", func(t *testing.T) {
		ctx := ctxT(t)
		broken.Store(true)
		h, err := def.Start(ctx, c, input{N: 1}, nil)
		require.NoError(t, err)
		_, err = c.Result(ctx, h.ID)
		require.Error(t, err)
		calls := oneCalls.Load()

		broken.Store(false) // the fix
		fork, err := c.Fork(ctx, h.ID, "two")
		require.NoError(t, err)
		require.Equal(t, fmt.Sprintf(`[%d,"old",1]`, calls*100), result(t, fork.ID))
		require.Equal(t, calls, oneCalls.Load())
		orig, err := c.GetRun(ctx, h.ID)
		require.NoError(t, err)
		require.Equal(t, StatusFailed, orig.Status)
	})
}

func TestForkBadInput(t *testing.T) {
	t.Parallel()

	inB, release := make(chan struct{}), make(chan struct{})
	def := Define("fork_bad_input", func(ctx Context, _ struct{}) (int, error) {
		if _, err := Step(ctx, "a", func(context.Context) (int, error) { return 1, nil }); err != nil {
			return 0, err
		}
		return Step(ctx, "b", func(ctx context.Context) (int, error) {
			close(inB)
			select {
			case <-release:
			case <-ctx.Done():
			}
			return 2, nil
		})
	}, &DefineOpts{Timeout: -1})
	env := newTestEnv(t, def)
	c := env.client
	ctx := ctxT(t)

	countRuns := func() int {
		var n int
		require.NoError(t, env.pool.QueryRow(ctx, `SELECT count(*) FROM `+env.db.Schema+`.workflow_runs`).Scan(&n))
		return n
	}

	h, err := def.Start(ctx, c, struct{}{}, nil)
	require.NoError(t, err)
	select {
	case <-inB:
	case <-ctx.Done():
		t.Fatal("step b never started")
	}

	_, err = c.Fork(ctx, h.ID, "a")
	require.ErrorIs(t, err, ErrRunNotFinished)
	require.ErrorContains(t, err, "cancel it first")

	close(release)
	_, err = h.Result(ctx)
	require.NoError(t, err)
	before := countRuns()

	_, err = c.Fork(ctx, uuid.Must(uuid.NewV7()), "a")
	require.ErrorIs(t, err, ErrNotFound)

	_, err = c.Fork(ctx, h.ID, "")
	var verr *ValidationError
	require.ErrorAs(t, err, &verr)
	require.Equal(t, "fromStep", verr.Field)

	_, err = c.Fork(ctx, h.ID, "c")
	require.ErrorIs(t, err, ErrStepNotRecorded)
	var serr *StepNotRecordedError
	require.ErrorAs(t, err, &serr)
	require.Equal(t, []string{"a", "b"}, serr.Recorded)
	require.Equal(t, `workflow: run `+h.ID.String()+` has no record of step "c"; it recorded ["a" "b"]: fork from one of them`, err.Error())

	require.Equal(t, before, countRuns(), "a refused fork writes nothing")
	forks, err := c.ListRuns(ctx, &ListParams{ForkedFrom: &h.ID})
	require.NoError(t, err)
	require.Empty(t, forks)
}
