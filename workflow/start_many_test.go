package workflow

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestStartMany(t *testing.T) {
	t.Parallel()

	t.Run("PlainAndKeyedRunsInOrder", func(t *testing.T) {
		t.Parallel()

		env := newTestEnv(t, echo)
		ctx := ctxT(t)

		first, err := echo.Start(ctx, env.client, greetIn{Name: "first"}, &StartOpts{IdempotencyKey: "k1"})
		require.NoError(t, err)

		params := make([]StartManyParams[greetIn], 0, 60)
		for i := range 50 {
			params = append(params, StartManyParams[greetIn]{Input: greetIn{Name: fmt.Sprint(i)},
				Opts: &StartOpts{Tenant: fmt.Sprintf("t%d", i%5), Tags: []string{"batch"}, Priority: 1 + i%4}})
		}
		params = append(params,
			StartManyParams[greetIn]{Input: greetIn{Name: "again"}, Opts: &StartOpts{IdempotencyKey: "k1"}},
			StartManyParams[greetIn]{Input: greetIn{Name: "keyed"}, Opts: &StartOpts{IdempotencyKey: "k2"}},
			StartManyParams[greetIn]{Input: greetIn{Name: "later"}, Opts: &StartOpts{ScheduledAt: time.Now().Add(time.Hour)}},
		)
		handles, err := echo.StartMany(ctx, env.client, params)
		require.NoError(t, err)
		require.Len(t, handles, len(params))

		for i := range 50 {
			require.False(t, handles[i].Existing)
			run, err := env.client.GetRun(ctx, handles[i].ID)
			require.NoError(t, err)
			require.JSONEq(t, fmt.Sprintf(`{"name": "%d"}`, i), string(run.Input))
			require.Equal(t, fmt.Sprintf("t%d", i%5), run.Tenant)
			require.Equal(t, 1+i%4, run.Priority)
			require.Equal(t, []string{"batch"}, run.Tags)
		}
		require.True(t, handles[50].Existing)
		require.Equal(t, first.ID, handles[50].ID)
		require.False(t, handles[51].Existing)
		later, err := env.client.GetRun(ctx, handles[52].ID)
		require.NoError(t, err)
		require.Equal(t, StatusPending, later.Status)
		require.Equal(t, 1, countRows(t, env.pool, "SELECT count(*) FROM river_job WHERE id = $1 AND state = 'scheduled'", later.JobID))

		require.Equal(t, 53, countRows(t, env.pool, "SELECT count(*) FROM workflow_runs"))
		require.Equal(t, 53, countRows(t, env.pool, "SELECT count(*) FROM river_job WHERE kind LIKE 'workflow:%'"))
		for _, h := range handles[:52] {
			out, err := h.Result(ctx)
			require.NoError(t, err)
			require.Contains(t, out.Greeting, "hi ")
		}
	})

	t.Run("BadInputWritesNothing", func(t *testing.T) {
		t.Parallel()

		env := newTestEnv(t, echo)
		ctx := ctxT(t)

		_, err := echo.StartMany(ctx, env.client, []StartManyParams[greetIn]{
			{Input: greetIn{Name: "ok"}},
			{Input: greetIn{Name: "ok"}},
			{Input: greetIn{Name: "bad"}, Opts: &StartOpts{Priority: 9}},
		})
		var verr *ValidationError
		require.ErrorAs(t, err, &verr)
		require.Equal(t, "params[2].StartOpts.Priority", verr.Field)
		require.Equal(t, 0, countRows(t, env.pool, "SELECT count(*) FROM workflow_runs"))
		require.Equal(t, 0, countRows(t, env.pool, "SELECT count(*) FROM river_job WHERE kind LIKE 'workflow:%'"))
	})

	t.Run("TxRolledBackLeavesNothing", func(t *testing.T) {
		t.Parallel()

		env := newTestEnv(t, echo)
		ctx := ctxT(t)

		tx, err := env.pool.Begin(ctx)
		require.NoError(t, err)
		handles, err := echo.StartManyTx(ctx, env.client, tx, []StartManyParams[greetIn]{{Input: greetIn{Name: "a"}}, {Input: greetIn{Name: "b"}}})
		require.NoError(t, err)
		require.Len(t, handles, 2)
		require.NoError(t, tx.Rollback(ctx))
		require.Equal(t, 0, countRows(t, env.pool, "SELECT count(*) FROM workflow_runs"))

		handles, err = echo.StartMany(ctx, env.client, nil)
		require.NoError(t, err)
		require.Empty(t, handles)
	})
}
