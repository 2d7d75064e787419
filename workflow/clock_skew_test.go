package workflow_test

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/internal/testdb"
	"github.com/tributary-go/tributary/schedule"
	"github.com/tributary-go/tributary/workflow"
)

var skewTick = workflow.Define("skew_tick", func(ctx workflow.Context, _ struct{}) (string, error) {
	return "tick", nil
}, nil)

// skewNap is the sleep the skew test parks, and how long it is.
const skewNap = 3 * time.Second

var skewNapper = workflow.Define("skew_napper", func(ctx workflow.Context, _ struct{}) (string, error) {
	if err := workflow.Sleep(ctx, "nap", skewNap); err != nil {
		return "", err
	}
	return "rested", nil
}, nil)

// TestClocksThatDisagree runs two working clients on machines whose clocks
// disagree with the database's, one 30 s fast and one 30 s slow, serving an
// every-second schedule and sleeping runs. The database's clock decides:
// no slot's run starts before its slot (by the database's clock), none is
// skipped as missed or doubled, and a sleep parked by either client wakes
// after its duration, not at once (the slow client's wake time in the
// past) nor 30 s late (the fast one's).
func TestClocksThatDisagree(t *testing.T) {
	t.Parallel()

	db := testdb.New(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	fast := startSkewed(t, db, "fast", 30*time.Second)
	slow := startSkewed(t, db, "slow", -30*time.Second)

	s, err := fast.schedules.Create(ctx, &schedule.Params{Name: "every second", Workflow: skewTick.Name(), Cron: "* * * * * *", Overlap: schedule.OverlapAllow})
	require.NoError(t, err)
	var dbNow time.Time
	require.NoError(t, db.Pool.QueryRow(ctx, "SELECT clock_timestamp()").Scan(&dbNow))
	require.WithinDuration(t, dbNow, *s.NextFireAt, 2*time.Second, "the first slot follows the database's clock, not the fast machine's")

	// Sleeps parked by each client (each works its own in a queue of its
	// own), from the database's now.
	require.NoError(t, db.Pool.QueryRow(ctx, "SELECT clock_timestamp()").Scan(&dbNow))
	var naps []*workflow.Handle[string]
	for _, c := range []*skewedClient{fast, slow} {
		h, err := skewNapper.Start(ctx, c.wf, struct{}{}, &workflow.StartOpts{Queue: c.queue})
		require.NoError(t, err)
		naps = append(naps, h)
	}
	for i, h := range naps {
		id := h.ID
		out, err := h.Result(ctx)
		require.NoError(t, err, "nap %d", i)
		require.Equal(t, "rested", out)
		var woke time.Time // the resumed attempt's fetch, by the database's clock
		require.NoError(t, db.Pool.QueryRow(ctx, `SELECT j.attempted_at FROM workflow_runs r JOIN river_job j ON j.id = r.job_id WHERE r.id = $1`, id).Scan(&woke))
		require.False(t, woke.Before(dbNow.Add(skewNap)), "nap %d woke %s after its start, before its %s", i, woke.Sub(dbNow), skewNap)
		require.Less(t, woke.Sub(dbNow), skewNap+20*time.Second, "nap %d woke %s after its start, for a %s sleep", i, woke.Sub(dbNow), skewNap)
	}

	// Ten slots, fired by whichever client: each run started after its
	// slot, one per second, none skipped.
	const slots = 10
	waitFor(t, ctx, func() bool {
		var n int
		return db.Pool.QueryRow(ctx, "SELECT count(*) FROM workflow_runs WHERE schedule_id = $1 AND status = 'completed'", s.ID).Scan(&n) == nil && n >= slots
	})
	_, err = slow.schedules.Pause(ctx, schedule.ByID(s.ID), "test over")
	require.NoError(t, err)
	rows, err := db.Pool.Query(ctx, `SELECT r.fire_at, r.status, j.attempted_at FROM workflow_runs r LEFT JOIN river_job j ON j.id = r.job_id
		WHERE r.schedule_id = $1 ORDER BY r.fire_at`, s.ID)
	require.NoError(t, err)
	defer rows.Close()
	var fired []time.Time
	for rows.Next() {
		var fireAt time.Time
		var status string
		var attempted *time.Time
		require.NoError(t, rows.Scan(&fireAt, &status, &attempted))
		require.NotEqual(t, "skipped", status, "slot %s skipped", fireAt)
		if attempted != nil {
			require.False(t, attempted.Before(fireAt), "slot %s ran %s early by the database's clock", fireAt, fireAt.Sub(*attempted))
		}
		fired = append(fired, fireAt)
	}
	require.NoError(t, rows.Err())
	require.GreaterOrEqual(t, len(fired), slots)
	for i := 1; i < len(fired); i++ {
		require.Equal(t, time.Second, fired[i].Sub(fired[i-1]), "slots %s and %s: a gap or a duplicate", fired[i-1], fired[i])
	}
}

type skewedClient struct {
	wf        *workflow.Client
	schedules *schedule.Client
	queue     string // a queue only this client works
}

// startSkewed starts a working client whose machine's clock is off the
// real one by skew, working the default queue and queue.
func startSkewed(t *testing.T, db *testdb.DB, queue string, skew time.Duration) *skewedClient {
	t.Helper()
	discard := slog.New(slog.NewTextHandler(io.Discard, nil))
	config := workflow.WithLocalClock(&workflow.Config{
		Logger: discard,
		River: &river.Config{
			Logger:   discard,
			Queues:   map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 10}, queue: {MaxWorkers: 2}},
			TestOnly: true,
		},
		Schema:    db.Schema,
		Workflows: []workflow.Registrable{skewTick, skewNapper},
	}, func() time.Time { return time.Now().Add(skew) })
	wf, err := workflow.NewClient(db.Pool, config)
	require.NoError(t, err)
	sc, err := schedule.New(wf, nil)
	require.NoError(t, err)
	require.NoError(t, wf.Start(context.Background()))
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		require.NoError(t, wf.Stop(ctx))
	})
	return &skewedClient{wf: wf, schedules: sc, queue: queue}
}

// waitFor waits until cond holds, looking every 100 ms, or fails when ctx
// ends.
func waitFor(t *testing.T, ctx context.Context, cond func() bool) {
	t.Helper()
	for !cond() {
		select {
		case <-ctx.Done():
			t.Fatal("the condition did not hold before the deadline")
		case <-time.After(100 * time.Millisecond):
		}
	}
}
