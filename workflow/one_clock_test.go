package workflow

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/internal/testdb"
)

// TestOneClock: with Config.Clock set to an instant years from real time,
// every time a run records is the clock's (its start, its steps', its
// River jobs', a signal's, a cancellation's, its finish), a sleep parked
// under the clock wakes once the clock passes its wake time (River's
// scheduler and fetch follow the clock, through river.Config.Test.Time),
// and retention deletes by the clock's cutoff.
func TestOneClock(t *testing.T) {
	t.Parallel()

	start := time.Date(2031, 1, 1, 0, 0, 0, 0, time.UTC)

	type testBundle struct {
		client *Client
		db     *testdb.DB
		clock  *atomic.Pointer[time.Time]
	}

	setup := func(t *testing.T, defs ...Registrable) *testBundle {
		t.Helper()
		db := testdb.New(t)
		clock := &atomic.Pointer[time.Time]{}
		clock.Store(&start)
		config := testConfig(t, db, defs...)
		config.Clock = func() time.Time { return *clock.Load() }
		c, err := NewClient(db.Pool, config)
		require.NoError(t, err)
		require.NoError(t, c.Start(context.Background()))
		t.Cleanup(func() { stopClient(t, c) })
		return &testBundle{client: c, db: db, clock: clock}
	}

	// jobTimes are the times River recorded for the run's jobs, oldest
	// first.
	type jobTimes struct {
		state                  string
		createdAt, scheduledAt time.Time
		finalizedAt            *time.Time
	}
	readJobs := func(t *testing.T, bundle *testBundle) []jobTimes {
		t.Helper()
		rows, err := bundle.db.Pool.Query(ctxT(t), "SELECT state::text, created_at, scheduled_at, finalized_at FROM river_job WHERE kind LIKE 'workflow:%' ORDER BY id")
		require.NoError(t, err)
		defer rows.Close()
		var out []jobTimes
		for rows.Next() {
			var j jobTimes
			require.NoError(t, rows.Scan(&j.state, &j.createdAt, &j.scheduledAt, &j.finalizedAt))
			j.createdAt, j.scheduledAt, j.finalizedAt = j.createdAt.UTC(), j.scheduledAt.UTC(), utc(j.finalizedAt)
			out = append(out, j)
		}
		require.NoError(t, rows.Err())
		return out
	}
	at := func(v time.Time) *time.Time { return &v }

	t.Run("ARunRecordsAndSleepsByTheClock", func(t *testing.T) {
		t.Parallel()

		def := Define("clock_sleeper", func(ctx Context, _ struct{}) (string, error) {
			if _, err := Step(ctx, "one", func(context.Context) (int, error) { return 1, nil }); err != nil {
				return "", err
			}
			if err := Sleep(ctx, "nap", time.Hour); err != nil {
				return "", err
			}
			return "done", nil
		}, nil)
		bundle := setup(t, def)
		h, err := def.Start(ctxT(t), bundle.client, struct{}{}, nil)
		require.NoError(t, err)

		run := waitStatus(t, bundle.client, h, StatusSleeping)
		require.Equal(t, start, run.CreatedAt.UTC())
		require.Equal(t, start, run.UpdatedAt.UTC())
		require.Equal(t, at(start), utc(run.StartedAt))
		require.Len(t, run.Steps, 2)
		require.Equal(t, start, run.Steps[0].StartedAt.UTC())
		require.Equal(t, at(start), utc(run.Steps[0].FinishedAt))
		require.Equal(t, start, run.Steps[1].StartedAt.UTC(), "the sleep's record")
		require.Equal(t, at(start.Add(time.Hour)), utc(run.Steps[1].WakeAt))
		require.Equal(t, []jobTimes{
			{state: "completed", createdAt: start, scheduledAt: start, finalizedAt: at(start)},
			{state: "scheduled", createdAt: start, scheduledAt: start.Add(time.Hour)},
		}, readJobs(t, bundle), "River's times are the clock's too")

		// Past the wake time by the clock: River's scheduler, following
		// the clock, makes the job available and its fetch takes it.
		later := start.Add(time.Hour + time.Second)
		bundle.clock.Store(&later)
		run = waitStatus(t, bundle.client, h, StatusCompleted)
		require.Equal(t, at(later), utc(run.FinishedAt))
		require.Equal(t, later, run.UpdatedAt.UTC())
		require.Equal(t, at(start), utc(run.StartedAt), "the first attempt's start")
		require.Equal(t, at(later), utc(run.Steps[1].FinishedAt), "the sleep ended when the clock passed it")
		jobs := readJobs(t, bundle)
		require.Len(t, jobs, 2)
		require.Equal(t, "completed", jobs[1].state)
		require.Equal(t, at(later), utc(jobs[1].finalizedAt))
	})

	t.Run("SignalsCancellationAndRetentionByTheClock", func(t *testing.T) {
		t.Parallel()

		def := Define("clock_waiter", func(ctx Context, _ struct{}) (string, error) {
			return WaitSignal[string](ctx, "go", nil)
		}, nil)
		bundle := setup(t, def)
		ctx := ctxT(t)
		signalled, err := def.Start(ctx, bundle.client, struct{}{}, nil)
		require.NoError(t, err)
		cancelled, err := def.Start(ctx, bundle.client, struct{}{}, nil)
		require.NoError(t, err)
		waitStatus(t, bundle.client, signalled, StatusWaiting)
		waitStatus(t, bundle.client, cancelled, StatusWaiting)

		require.NoError(t, bundle.client.Signal(ctx, signalled.ID, "go", "now"))
		run := waitStatus(t, bundle.client, signalled, StatusCompleted)
		require.Equal(t, at(start), utc(run.FinishedAt))
		var sentAt, consumedAt time.Time
		require.NoError(t, bundle.db.Pool.QueryRow(ctx, "SELECT created_at, consumed_at FROM workflow_signals WHERE run_id = $1",
			signalled.ID).Scan(&sentAt, &consumedAt))
		require.Equal(t, start, sentAt.UTC())
		require.Equal(t, start, consumedAt.UTC())

		cancelAt := start.Add(time.Minute)
		bundle.clock.Store(&cancelAt)
		require.NoError(t, bundle.client.Cancel(ctx, cancelled.ID))
		run = waitStatus(t, bundle.client, cancelled, StatusCancelled)
		require.Equal(t, at(cancelAt), utc(run.CancelRequestedAt))
		require.Equal(t, at(cancelAt), utc(run.FinishedAt))

		// Retention compares the clock's cutoffs with the clock's finish
		// times: a completed run is kept a day, a cancelled one a week.
		deleteAt := func(now time.Time) int {
			t.Helper()
			bundle.clock.Store(&now)
			n, err := bundle.client.DeleteExpiredRuns(ctx)
			require.NoError(t, err)
			return n
		}
		require.Zero(t, deleteAt(start.Add(24*time.Hour-time.Second)))
		require.Equal(t, 1, deleteAt(start.Add(24*time.Hour+time.Second)), "the completed run, a day after it finished by the clock")
		require.Zero(t, deleteAt(cancelAt.Add(7*24*time.Hour-time.Second)))
		require.Equal(t, 1, deleteAt(cancelAt.Add(7*24*time.Hour+time.Second)), "the cancelled run, a week after it finished by the clock")
	})
}

// utc is t in UTC, nil for nil: times read back from Postgres are in the
// local zone.
func utc(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}
