package schedule

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/internal/testdb"
	"github.com/tributary-go/tributary/workflow"
)

// TestFiringAcrossDSTWithInjectedClock replays 2026's DST days in New York
// through real firing: the workflow client's clock is set to 7 March 2026,
// so the schedules' first slots are then; the clock then moves to 3
// November, the day after the fall-back day, and River, following the
// clock, fires the chains' jobs, now in the clock's past. Each schedule's
// catch-up window spans the replay, so no slot is missed: the chain walks
// the calendar slot by slot, one pass firing slot after slot. The ledger
// must hold the DST rule: once, right after the jump, on the spring-forward
// day; once, at the first occurrence, on the fall-back day; and, for the
// schedules with DST policies, a skipped slot on the first and two runs on
// the second.
func TestFiringAcrossDSTWithInjectedClock(t *testing.T) {
	t.Parallel()

	start := time.Date(2026, 3, 7, 0, 0, 0, 0, time.UTC)
	db, sc, setNow := clockedClients(t, start, 20)
	ctx := ctxT(t, 120*time.Second)

	replay := 365 * 24 * time.Hour // the catch-up window: every slot of the replay runs
	spring, err := sc.Create(ctx, &Params{Name: "spring", Workflow: "tick", Cron: "30 2 * * *", TimeZone: "America/New_York",
		Overlap: OverlapAllow, CatchUpWindow: replay})
	require.NoError(t, err)
	fall, err := sc.Create(ctx, &Params{Name: "fall", Workflow: "tick", Cron: "30 1 * * *", TimeZone: "America/New_York",
		Overlap: OverlapAllow, CatchUpWindow: replay})
	require.NoError(t, err)
	// The same with DST policies: the gap skipped, the fold run twice.
	springSkip, err := sc.Create(ctx, &Params{Name: "spring skip", Workflow: "tick", Cron: "30 2 * * *", TimeZone: "America/New_York",
		Overlap: OverlapAllow, CatchUpWindow: replay, DSTGap: DSTGapSkip})
	require.NoError(t, err)
	fallBoth, err := sc.Create(ctx, &Params{Name: "fall both", Workflow: "tick", Cron: "30 1 * * *", TimeZone: "America/New_York",
		Overlap: OverlapAllow, CatchUpWindow: replay, DSTFold: DSTFoldBoth})
	require.NoError(t, err)
	end := time.Date(2026, 11, 3, 0, 0, 0, 0, time.UTC)
	setNow(end)

	fired := func(id any, from, to time.Time) []time.Time {
		rows, err := db.Pool.Query(ctx, "SELECT fire_at FROM workflow_runs WHERE schedule_id = $1 AND fire_at >= $2 AND fire_at < $3 ORDER BY fire_at", id, from, to)
		require.NoError(t, err)
		var out []time.Time
		for rows.Next() {
			var at time.Time
			require.NoError(t, rows.Scan(&at))
			out = append(out, at.UTC())
		}
		return out
	}
	waitDB(t, db, 30*time.Second, func(context.Context) error {
		if len(fired(fall.ID, time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC), time.Date(2026, 11, 3, 0, 0, 0, 0, time.UTC))) != 1 ||
			len(fired(spring.ID, time.Date(2026, 3, 9, 0, 0, 0, 0, time.UTC), time.Date(2026, 3, 10, 0, 0, 0, 0, time.UTC))) != 1 ||
			len(fired(fallBoth.ID, time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC), time.Date(2026, 11, 3, 0, 0, 0, 0, time.UTC))) != 1 ||
			len(fired(springSkip.ID, time.Date(2026, 3, 9, 0, 0, 0, 0, time.UTC), time.Date(2026, 3, 10, 0, 0, 0, 0, time.UTC))) != 1 {
			return errors.New("the chains have not fired the day after each DST change")
		}
		return nil
	})

	require.Equal(t, []time.Time{
		time.Date(2026, 3, 7, 7, 30, 0, 0, time.UTC), // 02:30 EST
		time.Date(2026, 3, 8, 7, 0, 0, 0, time.UTC),  // 02:30 does not exist: 03:00 EDT, right after the jump
		time.Date(2026, 3, 9, 6, 30, 0, 0, time.UTC), // 02:30 EDT
	}, fired(spring.ID, start, time.Date(2026, 3, 10, 0, 0, 0, 0, time.UTC)))
	require.Equal(t, []time.Time{
		time.Date(2026, 10, 31, 5, 30, 0, 0, time.UTC), // 01:30 EDT
		time.Date(2026, 11, 1, 5, 30, 0, 0, time.UTC),  // 01:30 occurs twice: once, at the first (EDT)
		time.Date(2026, 11, 2, 6, 30, 0, 0, time.UTC),  // 01:30 EST
	}, fired(fall.ID, time.Date(2026, 10, 31, 0, 0, 0, 0, time.UTC), time.Date(2026, 11, 3, 0, 0, 0, 0, time.UTC)))

	require.Equal(t, []time.Time{
		time.Date(2026, 3, 7, 7, 30, 0, 0, time.UTC),
		time.Date(2026, 3, 8, 7, 0, 0, 0, time.UTC), // recorded as skipped (below)
		time.Date(2026, 3, 9, 6, 30, 0, 0, time.UTC),
	}, fired(springSkip.ID, start, time.Date(2026, 3, 10, 0, 0, 0, 0, time.UTC)))
	var status, reason string
	require.NoError(t, db.Pool.QueryRow(ctx, "SELECT status, skip_reason FROM workflow_runs WHERE schedule_id = $1 AND fire_at = $2",
		springSkip.ID, time.Date(2026, 3, 8, 7, 0, 0, 0, time.UTC)).Scan(&status, &reason))
	require.Equal(t, "skipped", status)
	require.Equal(t, SkipReasonDSTGap, reason)
	require.Equal(t, []time.Time{
		time.Date(2026, 10, 31, 5, 30, 0, 0, time.UTC), // 01:30 EDT
		time.Date(2026, 11, 1, 5, 30, 0, 0, time.UTC),  // 01:30 occurs twice: both, EDT
		time.Date(2026, 11, 1, 6, 30, 0, 0, time.UTC),  // and EST
		time.Date(2026, 11, 2, 6, 30, 0, 0, time.UTC),  // 01:30 EST
	}, fired(fallBoth.ID, time.Date(2026, 10, 31, 0, 0, 0, 0, time.UTC), time.Date(2026, 11, 3, 0, 0, 0, 0, time.UTC)))

	history, err := sc.History(ctx, ByID(spring.ID), &workflow.ListParams{Limit: 1000})
	require.NoError(t, err)
	for _, run := range history {
		if run.FireAt.UTC().Equal(time.Date(2026, 3, 8, 7, 0, 0, 0, time.UTC)) {
			require.Contains(t, metaField(t, run.Metadata, "schedule_dst_note"), "does not exist")
		}
	}
}

// TestScheduleTimesAreTheClocks: with workflow.Config.Clock set years from
// real time, a schedule's recorded times are the clock's (its creation, a
// pause, a resume), and its slot fires when the clock reaches it, not when
// real time does: River follows the clock, and the run the slot starts is
// created and finished at the clock's time.
func TestScheduleTimesAreTheClocks(t *testing.T) {
	t.Parallel()

	start := time.Date(2031, 1, 1, 0, 0, 0, 0, time.UTC)
	db, sc, setNow := clockedClients(t, start, 5)
	ctx := ctxT(t, 60*time.Second)

	s, err := sc.Create(ctx, &Params{Name: "hourly", Workflow: "tick", Cron: "0 * * * *"})
	require.NoError(t, err)
	require.Equal(t, start, s.CreatedAt.UTC())
	require.Equal(t, start, s.UpdatedAt.UTC())
	slot := start.Add(time.Hour)
	require.Equal(t, slot, s.NextFireAt.UTC())

	pausedAt := setNow(start.Add(10 * time.Minute))
	s, err = sc.Pause(ctx, ByID(s.ID), "a while")
	require.NoError(t, err)
	require.Equal(t, pausedAt, s.PausedAt.UTC())
	require.Equal(t, pausedAt, s.UpdatedAt.UTC())
	resumedAt := setNow(start.Add(20 * time.Minute))
	s, err = sc.Resume(ctx, ByID(s.ID), nil)
	require.NoError(t, err)
	require.Nil(t, s.PausedAt)
	require.Equal(t, resumedAt, s.UpdatedAt.UTC())
	require.Equal(t, slot, s.NextFireAt.UTC())

	// The slot fires once the clock reaches it, years before real time
	// would.
	setNow(slot)
	var created, finished time.Time
	waitDB(t, db, 30*time.Second, func(ctx context.Context) error {
		return db.Pool.QueryRow(ctx, "SELECT created_at, finished_at FROM workflow_runs WHERE schedule_id = $1 AND fire_at = $2 AND status = 'completed'",
			s.ID, slot).Scan(&created, &finished)
	})
	require.Equal(t, slot, created.UTC())
	require.Equal(t, slot, finished.UTC())
}

// clockedClients starts, on a schema of its own (db), a working workflow
// client and its schedule client, whose Config.Clock reads start until setNow moves it; setNow
// returns the time it set.
func clockedClients(t *testing.T, start time.Time, workers int) (db *testdb.DB, sc *Client, setNow func(time.Time) time.Time) {
	t.Helper()
	db = testdb.New(t)
	var now atomic.Pointer[time.Time]
	setNow = func(at time.Time) time.Time { now.Store(&at); return at }
	setNow(start)
	wf, err := workflow.NewClient(db.Pool, &workflow.Config{
		Clock:  func() time.Time { return *now.Load() },
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		River: &river.Config{
			Logger:   slog.New(slog.NewTextHandler(io.Discard, nil)),
			Queues:   map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: workers}},
			TestOnly: true,
		},
		Schema:    db.Schema,
		Workflows: []workflow.Registrable{tick},
	})
	require.NoError(t, err)
	sc, err = New(wf, nil)
	require.NoError(t, err)
	require.NoError(t, wf.Start(ctxT(t, 10*time.Second)))
	track(t, db, wf)
	t.Cleanup(func() { require.NoError(t, wf.Stop(context.Background())) })
	return db, sc, setNow
}
