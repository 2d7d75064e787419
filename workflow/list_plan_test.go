package workflow

import (
	"context"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/internal/testdb"
)

// TestScheduleHistoryPlan checks that listing a schedule's runs (History)
// reads that schedule's runs through workflow_runs_schedule_history, with a
// custom plan and with the generic plan a prepared statement switches to,
// on a table where the schedule's runs are a few among many: its cost must
// follow the schedule's history, not the table's.
func TestScheduleHistoryPlan(t *testing.T) {
	t.Parallel()

	db := testdb.New(t)
	c, rec := newRecordingClient(t, db)
	ctx := ctxT(t)

	// 60,000 runs of 3,000 schedules (20 each), 20,000 without one, and the
	// two runs of the schedule listed.
	scheduleID := uuid.New()
	_, err := db.Pool.Exec(ctx, `INSERT INTO schedules (id, name, workflow_type, cron)
		SELECT md5(i::text)::uuid, 'history', 'report', '@daily' FROM generate_series(0, 2999) i
		UNION ALL SELECT $1, 'listed', 'report', '@daily'`, scheduleID)
	require.NoError(t, err)
	_, err = db.Pool.Exec(ctx, `
INSERT INTO workflow_runs (id, workflow_type, max_attempts, queue, status, schedule_id, fire_at)
SELECT gen_random_uuid(), 'report', 1, 'default', 'completed',
	CASE WHEN i % 4 = 0 THEN NULL ELSE md5((i % 3000)::text)::uuid END, now() - make_interval(secs => i)
FROM generate_series(1, 80000) i`)
	require.NoError(t, err)
	for i := range 2 {
		_, err = db.Pool.Exec(ctx, `INSERT INTO workflow_runs (id, workflow_type, max_attempts, queue, status, schedule_id, fire_at)
			VALUES ($1, 'report', 1, 'default', 'completed', $2, now() + make_interval(secs => $3))`, uuid.Must(uuid.NewV7()), scheduleID, i)
		require.NoError(t, err)
	}
	_, err = db.Pool.Exec(ctx, "ANALYZE workflow_runs")
	require.NoError(t, err)

	rec.Take()
	runs, err := c.ListRuns(ctx, &ListParams{ScheduleID: &scheduleID})
	require.NoError(t, err)
	require.Len(t, runs, 2)
	sent := rec.Take()
	require.Len(t, sent, 1)

	for _, mode := range []string{"auto", "force_generic_plan", "force_custom_plan"} {
		for _, params := range []*ListParams{
			{ScheduleID: &scheduleID},
			{ScheduleID: &scheduleID, Status: StatusCompleted, After: &runs[0].ID},
		} {
			plan := explainListRuns(ctx, t, c, sent[0].SQL, mode, params)
			require.Contains(t, plan, "workflow_runs_schedule_history", "plan (%s) of %+v:\n%s", mode, params, plan)
			require.NotContains(t, plan, "Seq Scan on workflow_runs", "plan (%s):\n%s", mode, plan)
			require.NotContains(t, plan, "workflow_runs_pkey", "plan (%s):\n%s", mode, plan)
		}
	}
}

// explainListRuns EXPLAINs ListRuns' query listing (as sent for a
// schedule's runs) for params as a prepared statement under
// plan_cache_mode mode.
func explainListRuns(ctx context.Context, t *testing.T, c *Client, listing, mode string, p *ListParams) string {
	t.Helper()
	after := p.After
	if after == nil { // as ListRuns sends it
		ceiling := c.listCeiling()
		after = &ceiling
	}
	var plan []string
	err := pgx.BeginFunc(ctx, c.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SET LOCAL plan_cache_mode = "+mode); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, "PREPARE list_runs_plan(text, text, uuid, uuid, int) AS "+listing); err != nil {
			return err
		}
		defer func() { _, _ = tx.Exec(ctx, "DEALLOCATE list_runs_plan") }()
		rows, err := tx.Query(ctx, "EXPLAIN EXECUTE list_runs_plan($1, $2, $3, $4, $5)", pgx.QueryExecModeSimpleProtocol, p.Type, string(p.Status), p.ScheduleID, after, 100)
		if err != nil {
			return err
		}
		plan, err = pgx.CollectRows(rows, pgx.RowTo[string])
		return err
	})
	require.NoError(t, err)
	return strings.Join(plan, "\n")
}

// TestListRunsStartBelowPreparedSlots: a listing of runs starts below its
// ceiling (listCeiling) in every plan, generic ones included, so that it
// does not walk the runs of prepared slots, dated at their slots: with a
// daily schedule per user, one per schedule above every other run. Over
// 100,000 of them, a page read them all (310 ms) before the ceiling.
func TestListRunsStartBelowPreparedSlots(t *testing.T) {
	t.Parallel()

	db := testdb.New(t)
	c, rec := newRecordingClient(t, db)
	ctx := ctxT(t)

	// 200 runs of the last minutes, and 5,000 slots prepared for tomorrow:
	// their runs pending, dated at the slot, with pending jobs.
	_, err := db.Pool.Exec(ctx, `
INSERT INTO workflow_runs (id, workflow_type, max_attempts, queue, status)
SELECT `+testdb.UUIDv7SQL("now() - make_interval(secs => i)")+`,
	'report', 1, 'default', 'completed'
FROM generate_series(1, 200) i`)
	require.NoError(t, err)
	_, err = db.Pool.Exec(ctx, `
WITH jobs AS (
	INSERT INTO river_job (args, kind, max_attempts, queue, state, scheduled_at, priority)
	SELECT jsonb_build_object('run_id', `+testdb.UUIDv7SQL("now() + interval '1 day'")+`),
		'workflow:report', 1, 'default', 'pending', now() + interval '1 day', 1
	FROM generate_series(1, 5000)
	RETURNING id, (args->>'run_id')::uuid AS run_id
)
INSERT INTO workflow_runs (id, workflow_type, max_attempts, queue, status, job_id)
SELECT run_id, 'report', 1, 'default', 'pending', id FROM jobs`)
	require.NoError(t, err)
	_, err = db.Pool.Exec(ctx, "ANALYZE workflow_runs, river_job")
	require.NoError(t, err)

	rec.Take()
	runs, err := c.ListRuns(ctx, &ListParams{Limit: 50})
	require.NoError(t, err)
	require.Len(t, runs, 50)
	for _, r := range runs {
		require.Equal(t, StatusCompleted, r.Status, "a prepared slot's run is not listed")
	}
	sent := rec.Take()
	require.Len(t, sent, 1)

	for _, mode := range []string{"force_generic_plan", "force_custom_plan"} {
		plan := explainListRuns(ctx, t, c, sent[0].SQL, mode, &ListParams{})
		require.Contains(t, plan, "Index Cond: (id < ", "plan (%s) starts below the ceiling:\n%s", mode, plan)
	}
}
