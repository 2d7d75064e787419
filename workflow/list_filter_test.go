package workflow

import (
	"context"
	"crypto/rand"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/internal/testdb"
)

// idAt is a UUIDv7 of time t, as uuid.NewV7 makes one at t.
func idAt(t time.Time) uuid.UUID {
	id := firstIDAt(t)
	var tail [10]byte
	_, _ = rand.Read(tail[:])
	id[6] |= tail[0] & 0x0f
	id[7] = tail[1]
	id[8] |= tail[2] & 0x3f
	copy(id[9:], tail[3:])
	return id
}

func TestFirstIDAt(t *testing.T) {
	t.Parallel()

	at := time.Date(2026, 3, 29, 1, 30, 0, 123_456_789, time.UTC)
	first := firstIDAt(at)
	require.Equal(t, uuid.Version(7), first.Version())
	require.Equal(t, uuid.RFC4122, first.Variant())
	sec, nsec := first.Time().UnixTime()
	require.Equal(t, at.Truncate(time.Millisecond), time.Unix(sec, nsec).UTC())

	// Every id made in that millisecond sorts at or after it; every id of
	// the millisecond before sorts before it.
	for range 100 {
		require.GreaterOrEqual(t, strings.Compare(idAt(at).String(), first.String()), 0)
		require.Negative(t, strings.Compare(idAt(at.Add(-time.Millisecond)).String(), first.String()))
	}
	made, err := uuid.NewV7()
	require.NoError(t, err)
	require.GreaterOrEqual(t, strings.Compare(made.String(), firstIDAt(time.Now().Add(-time.Second)).String()), 0)
	require.Negative(t, strings.Compare(made.String(), firstIDAt(time.Now().Add(time.Second)).String()))

	require.Equal(t, firstIDAt(time.Unix(0, 0)), firstIDAt(time.Date(1900, 1, 1, 0, 0, 0, 0, time.UTC)))
}

// TestListRunsFilters lists runs by idempotency key, metadata and creation
// time, alone and together with the other filters.
func TestListRunsFilters(t *testing.T) {
	t.Parallel()

	db := testdb.New(t)
	c, err := NewClient(db.Pool, &Config{Schema: db.Schema})
	require.NoError(t, err)
	ctx := ctxT(t)

	t0 := time.Now().Add(-4 * time.Hour).Truncate(time.Millisecond)
	ids := map[string]uuid.UUID{}
	for _, r := range []struct {
		name, typ, key, status, metadata, tenant string
		at                                       time.Time
	}{
		{"a1", "alpha", "k1", "completed", `{"tenant": "acme", "n": 42}`, "acme", t0},
		{"b1", "beta", "k1", "completed", `{"tenant": "acme"}`, "acme", t0.Add(time.Hour)},
		{"a2", "alpha", "", "pending", `{}`, "", t0.Add(2 * time.Hour)},
		{"a3", "alpha", "k2", "failed", `{"tenant": "other", "n": "42"}`, "other", t0.Add(3 * time.Hour)},
	} {
		ids[r.name] = idAt(r.at)
		_, err := db.Pool.Exec(ctx, `INSERT INTO workflow_runs (id, workflow_type, idempotency_key, max_attempts, queue, status, metadata, tenant,
			created_at, finished_at)
			VALUES ($1, $2, nullif($3, ''), 1, 'default', $4::text, $5, nullif($6, ''), $7, CASE WHEN $4::text <> 'pending' THEN now() END)`,
			ids[r.name], r.typ, r.key, r.status, r.metadata, r.tenant, r.at)
		require.NoError(t, err)
	}

	list := func(p *ListParams) []string {
		t.Helper()
		runs, err := c.ListRuns(ctx, p)
		require.NoError(t, err)
		var names []string
		for _, run := range runs {
			for name, id := range ids {
				if id == run.ID {
					names = append(names, name)
				}
			}
		}
		return names
	}
	require.Equal(t, []string{"b1", "a1"}, list(&ListParams{IdempotencyKey: "k1"}))
	require.Equal(t, []string{"a1"}, list(&ListParams{IdempotencyKey: "k1", Type: "alpha"}))
	require.Empty(t, list(&ListParams{IdempotencyKey: "k3"}))

	require.Equal(t, []string{"b1", "a1"}, list(&ListParams{Metadata: map[string]any{"tenant": "acme"}}))
	require.Equal(t, []string{"a1"}, list(&ListParams{Metadata: map[string]any{"tenant": "acme", "n": 42}}))
	require.Equal(t, []string{"a3"}, list(&ListParams{Metadata: map[string]any{"n": "42"}}))
	require.Empty(t, list(&ListParams{Metadata: map[string]any{"tenant": "nobody"}}))

	require.Equal(t, []string{"b1", "a1"}, list(&ListParams{Tenant: "acme"}))
	require.Equal(t, []string{"a1"}, list(&ListParams{Tenant: "acme", Type: "alpha"}))
	require.Equal(t, []string{"a3"}, list(&ListParams{Tenant: "other", Status: StatusFailed}))
	require.Empty(t, list(&ListParams{Tenant: "other", Status: StatusCompleted}))

	require.Equal(t, []string{"a3", "a2", "b1"}, list(&ListParams{CreatedAfter: t0.Add(time.Hour)}))
	require.Equal(t, []string{"b1", "a1"}, list(&ListParams{CreatedBefore: t0.Add(2 * time.Hour)}))
	require.Equal(t, []string{"a2", "b1"}, list(&ListParams{CreatedAfter: t0.Add(30 * time.Minute), CreatedBefore: t0.Add(150 * time.Minute)}))

	// With the other filters and paging.
	require.Equal(t, []string{"a3"}, list(&ListParams{Status: StatusFailed, Metadata: map[string]any{"tenant": "other"}}))
	require.Equal(t, []string{"a2"}, list(&ListParams{Status: StatusPending, CreatedAfter: t0}))
	require.Equal(t, []string{"a2", "a1"}, list(&ListParams{Type: "alpha", CreatedBefore: t0.Add(3 * time.Hour)}))
	after := ids["b1"]
	require.Equal(t, []string{"a1"}, list(&ListParams{Metadata: map[string]any{"tenant": "acme"}, After: &after}))
	require.Equal(t, []string{"a3"}, list(&ListParams{CreatedAfter: t0, Limit: 1}))

	_, err = c.ListRuns(ctx, &ListParams{Metadata: map[string]any{"f": func() {}}})
	require.ErrorIs(t, err, ErrInvalid)

	t.Run("CountAndFailures", func(t *testing.T) {
		ctx := ctxT(t) // not parallel: the runs above are its data

		counts, err := c.CountRuns(ctx, t0.Add(90*time.Minute))
		require.NoError(t, err)
		require.Equal(t, int64(1), counts.InFlight[StatusPending])
		require.Equal(t, map[Status]int64{StatusPending: 1, StatusFailed: 1}, counts.Recent)
		require.False(t, counts.RecentCapped)
		require.Equal(t, int64(1), counts.Failed)

		failed, err := c.ListFailures(ctx, time.Now().Add(-time.Hour), 10)
		require.NoError(t, err)
		require.Len(t, failed, 1)
		require.Equal(t, ids["a3"], failed[0].ID)
		failed, err = c.ListFailures(ctx, time.Now().Add(time.Minute), 10)
		require.NoError(t, err)
		require.Empty(t, failed)
		_, err = c.ListFailures(ctx, time.Now(), 0)
		require.ErrorIs(t, err, ErrInvalid)
	})
}

// TestListRunsFilterPlans checks that the run search and the overview read
// through indexes on a table of 120,000 runs: an idempotency key of any
// type, a rare metadata value, a creation time window, the failures of the
// last hour and the counts. Their cost must follow what they find, not the
// table.
func TestListRunsFilterPlans(t *testing.T) {
	t.Parallel()

	db := testdb.New(t)
	c, rec := newRecordingClient(t, db)
	ctx := ctxT(t)

	// Two runs a second over the last 16 hours and a half, of 8 types; a
	// third with an idempotency key, half with metadata (2,000 tenants), the
	// other half with a tenant (500 of them), one in 50 failed.
	_, err := db.Pool.Exec(ctx, `
INSERT INTO workflow_runs (id, workflow_type, idempotency_key, max_attempts, queue, status, metadata, tenant, created_at, finished_at)
SELECT (lpad(to_hex(floor(extract(epoch FROM ts) * 1000)::bigint), 12, '0') || '7' || substr(md5(i::text), 1, 3)
		|| '8' || substr(md5(i::text), 4, 15))::uuid,
	'type_' || (i % 8), CASE WHEN i % 3 = 0 THEN 'key-' || i END, 1, 'default',
	CASE WHEN i % 50 = 0 THEN 'failed' WHEN i % 1000 = 1 THEN 'pending' ELSE 'completed' END,
	CASE WHEN i % 2 = 0 THEN jsonb_build_object('tenant', 't' || (i % 2000), 'schedule_zone', 'UTC') ELSE '{}' END,
	CASE WHEN i % 2 = 1 THEN 'tenant-' || (i % 1000) END,
	ts, ts + interval '1 second'
FROM (SELECT i, now() - make_interval(secs => (120000 - i) / 2.0) AS ts FROM generate_series(1, 120000) i) s`)
	require.NoError(t, err)
	_, err = db.Pool.Exec(ctx, "ANALYZE workflow_runs")
	require.NoError(t, err)

	hourAgo := time.Now().Add(-time.Hour)
	for _, tc := range []struct {
		name   string
		params *ListParams
		index  string // the index the plan reads, or one of them, separated by |
		found  int
	}{
		{"KeyOfAnyType", &ListParams{IdempotencyKey: "key-3000"}, "workflow_runs_idempotency_key", 1},
		{"RareMetadata", &ListParams{Metadata: map[string]any{"tenant": "t42"}}, "workflow_runs_metadata", 60},
		{"RareMetadataFailed", &ListParams{Metadata: map[string]any{"tenant": "t100"}, Status: StatusFailed}, "workflow_runs_metadata|workflow_runs_failed", 60},
		{"Tenant", &ListParams{Tenant: "tenant-7"}, "workflow_runs_tenant", 100},
		{"TenantOfType", &ListParams{Tenant: "tenant-7", Type: "type_7"}, "workflow_runs_tenant", 100}, // tenant-7 runs only type_7
		{"TimeWindow", &ListParams{CreatedAfter: time.Now().Add(-10 * time.Hour), CreatedBefore: time.Now().Add(-9 * time.Hour)}, "workflow_runs_pkey", 100},
		{"TimeWindowOfType", &ListParams{Type: "type_3", CreatedBefore: time.Now().Add(-12 * time.Hour)}, "workflow_runs_", 100},
	} {
		rec.Take()
		runs, err := c.ListRuns(ctx, tc.params)
		require.NoError(t, err, tc.name)
		require.Len(t, runs, tc.found, tc.name)

		sent := rec.Take()
		require.Len(t, sent, 1, tc.name)
		plan := explain(ctx, t, c, sent[0].SQL, sent[0].Args...)
		require.Regexp(t, tc.index, plan, "plan of %s", tc.name)
		require.NotContains(t, plan, "Seq Scan on workflow_runs", "plan of %s:\n%s", tc.name, plan)
		if tc.name != "TimeWindow" && tc.name != "TimeWindowOfType" {
			require.NotContains(t, plan, "workflow_runs_pkey", "plan of %s:\n%s", tc.name, plan)
		}
	}

	// The time window is a range of the primary key.
	plan := explain(ctx, t, c, "SELECT id FROM workflow_runs r WHERE r.id >= $1 ORDER BY r.id DESC LIMIT 100", firstIDAt(hourAgo))
	require.Contains(t, plan, "Index Cond: (id >= ", plan)

	// The statements of ListFailures and CountRuns (in the order it runs
	// them), as sent.
	rec.Take()
	_, err = c.ListFailures(ctx, hourAgo, 20)
	require.NoError(t, err)
	failures := rec.Take()
	require.Len(t, failures, 1)
	counts, err := c.CountRuns(ctx, hourAgo)
	require.NoError(t, err)
	overview := rec.Take()
	require.Len(t, overview, 4)
	for name, q := range map[string]struct {
		sent  testdb.SentSQL
		index string
	}{
		"ListFailures":    {failures[0], "workflow_runs_failed"},
		"countInFlight":   {overview[0], "workflow_runs_unfinished"},
		"countRunningJob": {overview[1], "river_job"},
		"countRecent":     {overview[2], "workflow_runs_pkey"},
		"countFailed":     {overview[3], "workflow_runs_failed"},
	} {
		plan := explain(ctx, t, c, q.sent.SQL, q.sent.Args...)
		require.Contains(t, plan, q.index, "plan of %s:\n%s", name, plan)
		require.NotContains(t, plan, "Seq Scan on workflow_runs", "plan of %s:\n%s", name, plan)
	}

	recent := countRows(t, db.Pool, "SELECT count(*) FROM workflow_runs WHERE created_at >= $1", hourAgo.Truncate(time.Millisecond))
	require.InDelta(t, 7200, recent, 200)
	require.Equal(t, int64(recent), counts.Recent[StatusCompleted]+counts.Recent[StatusFailed]+counts.Recent[StatusPending])
	require.Equal(t, int64(120), counts.InFlight[StatusPending])
}

// explain EXPLAINs sql with args, planned for their values.
func explain(ctx context.Context, t *testing.T, c *Client, sql string, args ...any) string {
	t.Helper()
	if len(args) > 0 {
		if _, ok := args[0].(pgx.QueryExecMode); ok {
			args = args[1:]
		}
	}
	rows, err := c.pool.Query(ctx, "EXPLAIN "+sql, append([]any{pgx.QueryExecModeExec}, args...)...)
	require.NoError(t, err)
	lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	return strings.Join(lines, "\n")
}

// newRecordingClient is a client of db on a pool of its own whose
// statements the recorder returned records.
func newRecordingClient(t *testing.T, db *testdb.DB) (*Client, *testdb.SQLRecorder) {
	t.Helper()
	pool, rec := db.RecordingPool(t)
	c, err := NewClient(pool, &Config{Schema: db.Schema})
	require.NoError(t, err)
	return c, rec
}
