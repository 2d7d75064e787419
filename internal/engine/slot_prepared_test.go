package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/internal/testdb"
)

// TestPassedOverReadsRunsByID: the reconciler's look-up of passed-over
// prepared slots (passedOverStmt) finds each overdue job's run by its id,
// never by reading workflow_runs whole, on tables shaped as years of use
// shape them: many finished jobs dated in the past and many slots prepared
// for tomorrow, which make the planner expect thousands of pending jobs to
// be overdue, and many runs. As a join, its
// plan hashed the overdue jobs and scanned every run.
func TestPassedOverReadsRunsByID(t *testing.T) {
	t.Parallel()

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	db := testdb.New(t)
	for _, stmt := range []string{
		`INSERT INTO river_job (args, kind, max_attempts, queue, state, scheduled_at, finalized_at, priority)
		SELECT '{}', 'workflow:a', 5, 'default', 'completed', now() - g * interval '1 second', now(), 1
		FROM generate_series(1, 30000) g`,
		`INSERT INTO workflow_runs (id, workflow_type, input, status, queue, max_attempts, priority)
		SELECT gen_random_uuid(), 'a', 'null', 'completed', 'default', 5, 1 FROM generate_series(1, 30000)`,
		prepared(300, "now() - interval '1 hour'"),  // passed over
		prepared(20000, "now() + interval '1 day'"), // tomorrow's
		`ANALYZE river_job, workflow_runs`,
	} {
		_, err := db.Pool.Exec(ctx, stmt)
		require.NoError(t, err)
	}

	var plan string
	require.NoError(t, db.Pool.QueryRow(ctx, "EXPLAIN (FORMAT JSON) "+NewQueries(db.Schema).sql(passedOverStmt),
		time.Now().Add(-time.Minute)).Scan(&plan))
	requireNoSeqScan(t, plan, "workflow_runs")

	var found int
	require.NoError(t, db.Pool.QueryRow(ctx, "SELECT count(*) FROM ("+NewQueries(db.Schema).sql(passedOverStmt)+") x",
		time.Now().Add(-time.Minute)).Scan(&found))
	require.Equal(t, 300, found, "every overdue prepared slot of a schedule that is gone is found")
}

// TestRepairLeavesPreparedSlotsOut: the run repair's pass (brokenRunsStmt)
// reads the unfinished runs created until now, not the runs of slots
// prepared for later, dated at their slots: every schedule has one, and a
// pass read them all with their jobs (78 ms over 100,000).
func TestRepairLeavesPreparedSlotsOut(t *testing.T) {
	t.Parallel()

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	db := testdb.New(t)
	for _, stmt := range []string{
		`INSERT INTO workflow_runs (id, workflow_type, input, status, queue, max_attempts, priority)
		SELECT gen_random_uuid(), 'a', 'null', 'completed', 'default', 5, 1 FROM generate_series(1, 30000)`,
		prepared(20000, "now() + interval '1 day'"),
		`UPDATE workflow_runs SET id = ` + testdb.UUIDv7SQL("fire_at") + ` WHERE fire_at IS NOT NULL`,
		`ANALYZE river_job, workflow_runs`,
	} {
		_, err := db.Pool.Exec(ctx, stmt)
		require.NoError(t, err)
	}
	var plan string
	require.NoError(t, db.Pool.QueryRow(ctx, "EXPLAIN (FORMAT JSON) "+NewQueries(db.Schema).sql(brokenRunsStmt), 60.0, nil).Scan(&plan))
	requireNoSeqScan(t, plan, "workflow_runs")
	require.Contains(t, plan, `"Index Cond": "(id < `, "the runs are read below the present:\n%s", plan)
}

// TestPromotionKeepsToThePrimaryKey: the promotion of a batch of prepared
// jobs (promotePreparedStmt) finds them by id, in a generic plan, when the
// planner believes no job is pending (statistics taken before a CreateMany
// prepared the slots): it hashed every pending job through
// river_job_tributary_pending instead, 69 ms for a batch of 1,000 among
// 100,000.
func TestPromotionKeepsToThePrimaryKey(t *testing.T) {
	t.Parallel()

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	db := testdb.New(t)
	for _, stmt := range []string{
		`ALTER TABLE river_job SET (autovacuum_enabled = false)`,
		`ANALYZE river_job`, // no job pending
		prepared(5000, "now() + interval '1 hour'"),
	} {
		_, err := db.Pool.Exec(ctx, stmt)
		require.NoError(t, err)
	}

	tx, err := db.Pool.Begin(ctx)
	require.NoError(t, err)
	defer tx.Rollback(context.WithoutCancel(ctx)) //nolint:errcheck // the plan is all it is for
	_, err = tx.Exec(ctx, "SET LOCAL plan_cache_mode = force_generic_plan")
	require.NoError(t, err)
	_, err = tx.Exec(ctx, "PREPARE promote(bigint[], text, text, text[]) AS "+NewQueries(db.Schema).sql(promotePreparedStmt))
	require.NoError(t, err)
	var ids string
	require.NoError(t, tx.QueryRow(ctx, `SELECT array_agg(id)::text FROM (SELECT id FROM river_job ORDER BY id LIMIT 1000) x`).Scan(&ids))
	var plan string
	require.NoError(t, tx.QueryRow(ctx, `EXPLAIN (FORMAT JSON) EXECUTE promote('`+ids+`', '', 'river_insert', '{}')`).Scan(&plan))
	require.NotContains(t, plan, "river_job_tributary_pending", "the promotion reads every pending job:\n%s", plan)
	require.Contains(t, plan, "river_job_pkey", plan)
}

// TestPromotionAddsTheTrace: a prepared job promoted under a decision span
// gets the span's trace context in the metadata its inline start carries,
// in either form of args (the text "start", or "input" and "metadata" in a
// job written before it), and so does its run; the job's "prepared" note
// goes. A job without an inline start, or promoted without a trace, keeps
// its args.
func TestPromotionAddsTheTrace(t *testing.T) {
	t.Parallel()

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	db := testdb.New(t)
	q := NewQueries(db.Schema)

	args := map[string]string{
		"text":     `{"start": "{\"input\": 1, \"metadata\": {\"k\": \"v\"}}"}`,
		"nested":   `{"input": 1, "metadata": {"k": "v"}, "workflow": "a"}`,
		"none":     `{}`,
		"untraced": `{"start": "{\"input\": 1}"}`,
	}
	ids := map[string]int64{}
	for name, a := range args {
		var id int64
		require.NoError(t, db.Pool.QueryRow(ctx, `WITH job AS (
			INSERT INTO river_job (args, kind, max_attempts, queue, state, scheduled_at, priority, metadata)
			VALUES (jsonb_build_object('run_id', gen_random_uuid()) || $1::jsonb, 'workflow:a', 5, 'default', 'pending', now(), 1,
				'{"tributary_prepared_slot": "note"}')
			RETURNING id, (args->>'run_id')::uuid AS run_id
		), run AS (
			INSERT INTO workflow_runs (id, workflow_type, input, status, queue, max_attempts, priority, job_id, metadata)
			SELECT run_id, 'a', '1', 'pending', 'default', 5, 1, id, '{"k": "v"}' FROM job
		)
		SELECT id FROM job`, a).Scan(&id))
		ids[name] = id
	}

	const trace = `{"traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}`
	tx, err := db.Pool.Begin(ctx)
	require.NoError(t, err)
	promoted, err := q.PromotePreparedTx(ctx, tx, []int64{ids["text"], ids["nested"], ids["none"], ids["untraced"]}, []string{trace, trace, trace, ""})
	require.NoError(t, err)
	require.NoError(t, tx.Commit(ctx))
	require.Len(t, promoted, 4)

	read := func(name string) (args, jobMeta, runMeta map[string]any) {
		var a, jm, rm []byte
		require.NoError(t, db.Pool.QueryRow(ctx, `SELECT j.args, j.metadata, r.metadata FROM river_job j
			JOIN workflow_runs r ON r.job_id = j.id WHERE j.id = $1 AND j.state = 'available'`, ids[name]).Scan(&a, &jm, &rm))
		require.NoError(t, json.Unmarshal(a, &args))
		require.NoError(t, json.Unmarshal(jm, &jobMeta))
		require.NoError(t, json.Unmarshal(rm, &runMeta))
		return args, jobMeta, runMeta
	}
	wantOtel := map[string]any{"traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}
	for _, name := range []string{"text", "nested", "none", "untraced"} {
		a, jm, rm := read(name)
		require.NotContains(t, jm, "tributary_prepared_slot", name)
		if name == "untraced" {
			require.NotContains(t, rm, "otel", name)
		} else {
			require.Equal(t, wantOtel, rm["otel"], name)
		}
		switch name {
		case "text":
			var start map[string]any
			require.NoError(t, json.Unmarshal([]byte(a["start"].(string)), &start))
			require.Equal(t, map[string]any{"k": "v", "otel": wantOtel}, start["metadata"])
			require.EqualValues(t, 1, start["input"])
		case "nested":
			require.Equal(t, map[string]any{"k": "v", "otel": wantOtel}, a["metadata"])
		case "none":
			require.NotContains(t, a, "start", name)
			require.NotContains(t, a, "metadata", name)
		case "untraced":
			require.JSONEq(t, `{"input": 1}`, a["start"].(string))
		}
	}
}

// requireNoSeqScan fails unless the JSON plan reads relation through an
// index only.
func requireNoSeqScan(t *testing.T, plan, relation string) {
	t.Helper()
	var root []struct{ Plan relationNode }
	require.NoError(t, json.Unmarshal([]byte(plan), &root))
	var walk func(n relationNode)
	walk = func(n relationNode) {
		require.False(t, n.NodeType == "Seq Scan" && n.RelationName == relation, "the statement reads all of %s:\n%s", relation, plan)
		for _, c := range n.Plans {
			walk(c)
		}
	}
	walk(root[0].Plan)
}

// prepared is a statement that inserts n prepared slots due at (an SQL
// expression), of schedules that are gone: their runs, pending, and their
// jobs, in River's pending state.
func prepared(n int, at string) string {
	return fmt.Sprintf(`WITH jobs AS (
		INSERT INTO river_job (args, kind, max_attempts, queue, state, scheduled_at, priority)
		SELECT jsonb_build_object('run_id', gen_random_uuid()), 'workflow:a', 5, 'default', 'pending', %[2]s, 1
		FROM generate_series(1, %[1]d)
		RETURNING id, (args->>'run_id')::uuid AS run_id, scheduled_at
	)
	INSERT INTO workflow_runs (id, workflow_type, input, status, job_id, queue, max_attempts, priority, fire_at)
	SELECT run_id, 'a', 'null', 'pending', id, 'default', 5, 1, scheduled_at FROM jobs`, n, at)
}

// relationNode is a node of a JSON plan, with the relation it reads.
type relationNode struct {
	NodeType     string         `json:"Node Type"`
	RelationName string         `json:"Relation Name"`
	Plans        []relationNode `json:"Plans"`
}
