package schedule

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/internal/testdb"
	"github.com/tributary-go/tributary/workflow"
)

func TestOverlapSkip(t *testing.T) {
	t.Parallel()

	db := testdb.New(t)
	sc := startClients(t, db, 1)[0]
	ctx := ctxT(t, 60*time.Second)
	s, err := sc.Create(ctx, &Params{Name: "slow", Workflow: "stuck", Cron: "* * * * * *"})
	require.NoError(t, err)
	waitRuns(t, db, s.ID, 3, 30*time.Second)
	_, err = sc.Pause(ctx, ByID(s.ID), "")
	require.NoError(t, err)

	var waiting, skipped int
	require.NoError(t, db.Pool.QueryRow(ctx, `SELECT count(*) FILTER (WHERE status <> 'skipped'),
		count(*) FILTER (WHERE status = 'skipped' AND skip_reason = 'overlap')
		FROM workflow_runs WHERE schedule_id = $1`, s.ID).Scan(&waiting, &skipped))
	require.Equal(t, 1, waiting, "one run at a time")
	require.GreaterOrEqual(t, skipped, 2)
}

func TestOverlapQueueAndReplace(t *testing.T) {
	t.Parallel()

	t.Run("Queue", func(t *testing.T) {
		t.Parallel()

		db := testdb.New(t)
		sc := startClients(t, db, 1)[0]
		ctx := ctxT(t, 60*time.Second)
		s, err := sc.Create(ctx, &Params{Name: "q", Workflow: "stuck", Cron: "* * * * * *", Overlap: OverlapQueue})
		require.NoError(t, err)
		waitRuns(t, db, s.ID, 4, 30*time.Second)
		_, err = sc.Pause(ctx, ByID(s.ID), "")
		require.NoError(t, err)

		history, err := sc.History(ctx, ByID(s.ID), nil)
		require.NoError(t, err)
		var first, queued *workflow.Run
		skipped := 0
		for _, run := range history { // newest first
			switch {
			case run.Status == workflow.StatusSkipped:
				require.Equal(t, SkipReasonOverlap, run.SkipReason)
				skipped++
			case jsonHas(t, run.Metadata, "schedule_queued"):
				require.Nil(t, queued, "at most one run waits")
				queued = run
			default:
				first = run
			}
		}
		require.NotNil(t, first)
		require.NotNil(t, queued, "the second slot waits for the first run")
		require.GreaterOrEqual(t, skipped, 2)

		// The first run finishing releases the queued one.
		wf := sc.wf
		require.NoError(t, wf.Signal(ctx, first.ID, "never", "done"))
		waitDB(t, db, 30*time.Second, func(ctx context.Context) error {
			run, err := wf.GetRun(ctx, queued.ID)
			require.NoError(t, err)
			if run.Status != workflow.StatusWaiting {
				return fmt.Errorf("the queued run is %s, want waiting", run.Status)
			}
			return nil
		})
	})

	t.Run("Replace", func(t *testing.T) {
		t.Parallel()

		db := testdb.New(t)
		sc := startClients(t, db, 1)[0]
		ctx := ctxT(t, 60*time.Second)
		s, err := sc.Create(ctx, &Params{Name: "r", Workflow: "stuck", Cron: "* * * * * *", Overlap: OverlapReplace})
		require.NoError(t, err)
		waitRuns(t, db, s.ID, 3, 30*time.Second)
		_, err = sc.Pause(ctx, ByID(s.ID), "")
		require.NoError(t, err)

		var unfinished, cancelled int
		require.NoError(t, db.Pool.QueryRow(ctx, `SELECT count(*) FILTER (WHERE status IN ('pending', 'running', 'sleeping', 'waiting')),
			count(*) FILTER (WHERE status = 'cancelled') FROM workflow_runs WHERE schedule_id = $1`, s.ID).Scan(&unfinished, &cancelled))
		require.Equal(t, 1, unfinished, "only the newest run is left")
		require.GreaterOrEqual(t, cancelled, 2)
	})
}
