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

// TestRiverUIActionsReachTheRun is issue 12's trap 3: River UI's Cancel,
// Delete and Retry act on a run's River job, not on the run. Cancel and
// Delete used to reach the run at the next repair pass (a minute), Retry of
// a failed run's job cancelled the job again. Now migration 006's triggers
// announce the job's end and the working clients repair the run at once,
// and a retried job retries its run. The waits below are 30 s at most,
// under the repair interval: before the fix the runs stayed as they were.
func TestRiverUIActionsReachTheRun(t *testing.T) {
	t.Parallel()

	db := testdb.New(t)
	blocked := make(chan struct{}, 1)
	var failOnce atomic.Bool
	failOnce.Store(true)
	def := Define("ui_actions", func(ctx Context, in greetIn) (greetOut, error) {
		switch in.Name {
		case "sleep":
			if err := Sleep(ctx, "nap", time.Hour); err != nil {
				return greetOut{}, err
			}
		case "block":
			_, err := Step(ctx, "block", func(ctx context.Context) (int, error) {
				blocked <- struct{}{}
				<-ctx.Done()
				return 0, ctx.Err()
			})
			return greetOut{}, err
		case "fail once":
			if failOnce.Swap(false) {
				return greetOut{}, errors.New("first attempt fails")
			}
		}
		return greetOut{Greeting: "done " + in.Name}, nil
	}, &DefineOpts{MaxAttempts: 1})
	c := startClient(t, db, def)
	ctx := ctxT(t)

	t.Run("CancelASleepingRun", func(t *testing.T) {
		h, err := def.Start(ctx, c, greetIn{Name: "sleep"}, nil)
		require.NoError(t, err)
		run := waitStatus(t, c, h, StatusSleeping)
		_, err = c.River().JobCancel(ctx, run.JobID)
		require.NoError(t, err)
		run = waitStatus(t, c, h, StatusCancelled)
		require.Equal(t, "River job cancelled", run.Error.Message)
	})

	t.Run("DeleteAScheduledRunsJob", func(t *testing.T) {
		h, err := def.Start(ctx, c, greetIn{Name: "later"}, &StartOpts{ScheduledAt: time.Now().Add(time.Hour)})
		require.NoError(t, err)
		run, err := h.Get(ctx)
		require.NoError(t, err)
		_, err = c.River().JobDelete(ctx, run.JobID)
		require.NoError(t, err)
		run = waitStatus(t, c, h, StatusCancelled)
		require.Contains(t, run.Error.Message, "was deleted")
	})

	t.Run("CancelARunningRun", func(t *testing.T) {
		h, err := def.Start(ctx, c, greetIn{Name: "block"}, nil)
		require.NoError(t, err)
		<-blocked
		run, err := h.Get(ctx)
		require.NoError(t, err)
		_, err = c.River().JobCancel(ctx, run.JobID)
		require.NoError(t, err)
		waitStatus(t, c, h, StatusCancelled)
	})

	t.Run("RetryAFailedRunsJob", func(t *testing.T) {
		h, err := def.Start(ctx, c, greetIn{Name: "fail once"}, nil)
		require.NoError(t, err)
		run := waitStatus(t, c, h, StatusFailed)
		_, err = c.River().JobRetry(ctx, run.JobID)
		require.NoError(t, err)
		run = waitStatus(t, c, h, StatusCompleted)
		require.Equal(t, 2, run.Attempt, "the retry is the run's second attempt")
		out, err := h.Result(ctx)
		require.NoError(t, err)
		require.Equal(t, "done fail once", out.Greeting)
	})
}
