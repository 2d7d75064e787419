package engine

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/internal/testdb"
)

// TestCompleteRunsPlanReadsTheBatchOnce: the completion statement's
// generic plan, as a workflow client's batch pool makes it (generic plans,
// no sequential scans), reads its batch (the CTE v) once per use, not once
// per job: a plan that looks each job up and then scans the whole batch
// for it costs the square of the batch (in a burst of 100,000 slots, 14 of
// the 31 ms of a batch of 140 runs).
func TestCompleteRunsPlanReadsTheBatchOnce(t *testing.T) {
	t.Parallel()

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	db := testdb.New(t)
	const n = 300
	_, err := db.Pool.Exec(ctx, `INSERT INTO river_job (args, kind, max_attempts, queue, state, attempt, attempted_at)
		SELECT '{}', 'workflow:a', 5, 'default', 'running', 1, now() FROM generate_series(1, 20000)`)
	require.NoError(t, err)
	// A run for each of the newest n jobs, as the batch completes them.
	rows, err := db.Pool.Query(ctx, `INSERT INTO workflow_runs (id, workflow_type, input, max_attempts, queue, job_id, status)
		SELECT gen_random_uuid(), 'a', 'null', 5, 'default', id, 'pending' FROM river_job ORDER BY id DESC LIMIT $1
		RETURNING job_id::text, id::text`, n)
	require.NoError(t, err)
	var jobs, runs, outputs, attempts, starts []string
	var job, run string
	_, err = pgx.ForEachRow(rows, []any{&job, &run}, func() error {
		jobs, runs = append(jobs, job), append(runs, run)
		outputs, attempts, starts = append(outputs, "null"), append(attempts, "1"), append(starts, "NULL")
		return nil
	})
	require.NoError(t, err)
	lit := func(typ string, xs []string) string { return "'{" + strings.Join(xs, ",") + "}'::" + typ }
	args := strings.Join([]string{
		lit("bigint[]", jobs), lit("uuid[]", runs), lit("text[]", outputs), lit("int[]", attempts), lit("timestamptz[]", starts),
		"false", "'{}'::uuid[]", "'{}'::text[]", "'{}'::text[]", "'{}'::text[]", "'{}'::text[]", "'{}'::text[]",
		"'{}'::timestamptz[]", "'{}'::timestamptz[]", "'{}'::int[]", "NULL",
	}, ", ")

	// The batch pool's settings, for this transaction.
	var settings []string
	for name, value := range BatchPoolSettings {
		settings = append(settings, "set_config('"+name+"', '"+value+"', true)")
	}
	plan := explainPlan(ctx, t, db, "SELECT "+strings.Join(settings, ", "), "EXPLAIN (ANALYZE, FORMAT JSON)", NewQueries(db.Schema).sql(completeRunsStmt), args)
	var root []struct{ Plan planNode }
	require.NoError(t, json.Unmarshal([]byte(plan), &root))
	scans := 0
	var walk func(n planNode)
	walk = func(n planNode) {
		if n.NodeType == "CTE Scan" && n.CTEName == "v" {
			scans++
			require.LessOrEqual(t, n.ActualLoops, 1, "a scan of the batch v run once per row of another node, in:\n%s", plan)
		}
		for _, c := range n.Plans {
			walk(c)
		}
	}
	walk(root[0].Plan)
	require.Positive(t, scans)
}
