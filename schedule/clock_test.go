package schedule

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/internal/testdb"
	"github.com/tributary-go/tributary/workflow"
)

// TestFiringAcrossDSTWithInjectedClock replays 2026's DST days in New York
// through real firing: the schedule client's clock is set to 7 March 2026,
// so its first slot is then; each slot is in River's past and fires at
// once, and the chain walks the calendar slot by slot to today. The ledger
// must hold the DST rule: once, right after the jump, on the spring-forward
// day; once, at the first occurrence, on the fall-back day.
func TestFiringAcrossDSTWithInjectedClock(t *testing.T) {
	t.Parallel()

	db := testdb.New(t)
	start := time.Date(2026, 3, 7, 0, 0, 0, 0, time.UTC)
	require.True(t, time.Now().After(time.Date(2026, 11, 3, 0, 0, 0, 0, time.UTC)),
		"the replay walks the calendar up to today, which must be after the 2026 fall-back day: check this machine's clock")
	wf, err := workflow.NewClient(db.Pool, &workflow.Config{
		Clock:  func() time.Time { return start },
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		River: &river.Config{
			Logger:   slog.New(slog.NewTextHandler(io.Discard, nil)),
			Queues:   map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 20}},
			TestOnly: true,
		},
		Schema:    db.Schema,
		Workflows: []workflow.Registrable{tick},
	})
	require.NoError(t, err)
	sc, err := New(wf, nil)
	require.NoError(t, err)
	ctx := ctxT(t, 120*time.Second)
	require.NoError(t, wf.Start(ctx))
	track(t, db, wf)
	t.Cleanup(func() { require.NoError(t, wf.Stop(context.Background())) })

	spring, err := sc.Create(ctx, &Params{Name: "spring", Workflow: "tick", Cron: "30 2 * * *", TimeZone: "America/New_York", Overlap: OverlapAllow})
	require.NoError(t, err)
	fall, err := sc.Create(ctx, &Params{Name: "fall", Workflow: "tick", Cron: "30 1 * * *", TimeZone: "America/New_York", Overlap: OverlapAllow})
	require.NoError(t, err)

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
			len(fired(spring.ID, time.Date(2026, 3, 9, 0, 0, 0, 0, time.UTC), time.Date(2026, 3, 10, 0, 0, 0, 0, time.UTC))) != 1 {
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

	history, err := sc.History(ctx, ByID(spring.ID), &workflow.ListParams{Limit: 1000})
	require.NoError(t, err)
	for _, run := range history {
		if run.FireAt.UTC().Equal(time.Date(2026, 3, 8, 7, 0, 0, 0, time.UTC)) {
			require.Contains(t, metaField(t, run.Metadata, "schedule_dst_note"), "does not exist")
		}
	}
}
