package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/rivershared/riverpilot"
	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/internal/testdb"
)

// TestFairFetchPlanKeepsToTheTenantIndex: under the fair fetch's planner
// settings (fairPlanSQL), the generic plans of the probe and of the three
// fetches find each tenant's jobs through river_job_tributary_tenant_ready,
// never by reading River's fetching index and filtering on the tenant,
// however little the planner knows of the table. A new schema's river_job,
// never analyzed, with 20,000 ready jobs over 1,000 tenants named as
// customers often are (32 hexadecimal digits, which make the tenant index
// a level taller than River's): with sorts
// allowed, the rotation's probes took River's index and a sort (rows=1
// estimated for both indexes), and each probe read every ready job of the
// queue. And JIT, which a plan costed over 10^10 by a disallowed sort
// would compile at every fetch, is off.
func TestFairFetchPlanKeepsToTheTenantIndex(t *testing.T) {
	t.Parallel()

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	db := testdb.New(t)
	_, err := db.Pool.Exec(ctx, `ALTER TABLE river_job SET (autovacuum_enabled = false)`)
	require.NoError(t, err)
	_, err = db.Pool.Exec(ctx, `INSERT INTO river_job (args, kind, max_attempts, queue, state, scheduled_at, priority)
		SELECT jsonb_build_object('tenant', md5((g % 1000)::text), 'n', g),
			'workflow:a', 5, 'default', 'available', now(), 1
		FROM generate_series(1, 20000) g`)
	require.NoError(t, err)

	texts := NewDriver(db.Pool, nil).pilot.fairTexts(db.Schema)
	const fetchArgs = `'default', '8', 20, NULL, 'c', 100, 80, '{workflow:a}'`
	for _, tc := range []struct{ name, stmt, args string }{
		{"probe", texts.probe, `'default'`},
		{"fetch", texts.fetch, fetchArgs},
		{"limited", texts.fetchLimited, fetchArgs + `, '{workflow:a}', '{a}', '{5}'`},
		{"rated", texts.fetchRated, fetchArgs + `, '{workflow:a}', '{10}', '{10}', '{workflow:a}', '{a}', '{5}'`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			plan := explainGeneric(ctx, t, db, tc.stmt, tc.args)
			require.NotContains(t, plan, "JIT", "JIT is off")
			var root []struct{ Plan planNode }
			require.NoError(t, json.Unmarshal([]byte(plan), &root))
			var walk func(n planNode)
			seen := 0
			walk = func(n planNode) {
				if n.IndexName == "river_job_tributary_tenant_ready" {
					seen++
				}
				if n.IndexName == "river_job_prioritized_fetching_index" {
					require.NotContains(t, n.Filter, "'tenant'", "River's fetching index read and filtered on the tenant:\n%s", plan)
				}
				for _, c := range n.Plans {
					walk(c)
				}
			}
			walk(root[0].Plan)
			require.Positive(t, seen, "the tenant index is used:\n%s", plan)
		})
	}
}

type planNode struct {
	NodeType    string     `json:"Node Type"`
	IndexName   string     `json:"Index Name"`
	CTEName     string     `json:"CTE Name"`
	Filter      string     `json:"Filter"`
	ActualLoops int        `json:"Actual Loops"`
	Plans       []planNode `json:"Plans"`
}

// explainGeneric returns the JSON of the generic plan the fair fetch's
// settings give stmt, with args (SQL literals) for its parameters, in a
// transaction that is rolled back.
func explainGeneric(ctx context.Context, t *testing.T, db *testdb.DB, stmt, args string) string {
	t.Helper()
	return explainPlan(ctx, t, db, fairPlanSQL, "EXPLAIN (FORMAT JSON)", stmt, args)
}

// explainPlan returns the JSON of explain (an EXPLAIN with its options)
// of the plan stmt gets under settings (a statement that sets them for the
// transaction), with args (SQL literals) for its parameters, in a
// transaction that is rolled back: with ANALYZE, stmt runs, and what it
// writes is undone.
func explainPlan(ctx context.Context, t *testing.T, db *testdb.DB, settings, explain, stmt, args string) string {
	t.Helper()
	tx, err := db.Pool.Begin(ctx)
	require.NoError(t, err)
	defer tx.Rollback(context.WithoutCancel(ctx)) //nolint:errcheck // the plan is all it is for
	_, err = tx.Exec(ctx, settings)
	require.NoError(t, err)
	name := fmt.Sprintf("plan_%d", time.Now().UnixNano())
	_, err = tx.Exec(ctx, "PREPARE "+name+" AS "+stmt)
	require.NoError(t, err)
	var plan string
	require.NoError(t, tx.QueryRow(ctx, explain+" EXECUTE "+name+"("+args+")").Scan(&plan))
	_, err = tx.Exec(ctx, "DEALLOCATE "+name)
	require.NoError(t, err)
	return strings.TrimSpace(plan)
}

// TestFairTurnsSkipTheProbe: a producer whose fair fetch found two tenants
// or more with jobs ready fetches in turns again with no probe, and goes
// back to probing once a fair fetch finds fewer than two.
func TestFairTurnsSkipTheProbe(t *testing.T) {
	t.Parallel()

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	db := testdb.New(t)
	insert := func(tenant string, n int) {
		t.Helper()
		_, err := db.Pool.Exec(ctx, `INSERT INTO river_job (args, kind, max_attempts, queue, state, priority)
			SELECT jsonb_build_object('tenant', $1::text), 'workflow:a', 5, 'default', 'available', 1
			FROM generate_series(1, $2)`, tenant, n)
		require.NoError(t, err)
	}
	insert("a", 3)
	insert("b", 1)

	d := NewDriver(db.Pool, nil)
	_, state, err := d.pilot.ProducerInit(ctx, d.GetExecutor(), &riverpilot.ProducerInitParams{
		ClientID: "c", Queue: "default", Schema: db.Schema,
	})
	require.NoError(t, err)
	fs := state.(*fairState)
	fetch := func() []string {
		t.Helper()
		res, err := d.pilot.JobGetAvailable(ctx, d.GetExecutor(), state, &riverdriver.JobGetAvailableParams{
			ClientID: "c", Kind: []string{"workflow:a"}, MaxAttemptedBy: 100, MaxToLock: 2, Queue: "default", Schema: db.Schema,
		})
		require.NoError(t, err)
		var tenants []string
		for _, j := range res.Jobs {
			var args struct{ Tenant string }
			require.NoError(t, json.Unmarshal(j.EncodedArgs, &args))
			tenants = append(tenants, args.Tenant)
		}
		return tenants
	}

	require.ElementsMatch(t, []string{"a", "b"}, fetch(), "the probe found two tenants: one job of each")
	require.True(t, fs.turns, "two tenants were in the rotation")
	require.Equal(t, []string{"a", "a"}, fetch(), "in turns with no probe, a's jobs are all there is")
	require.False(t, fs.turns, "one tenant was in the rotation: the next fetch probes")
	insert("c", 1)
	insert("d", 1)
	require.ElementsMatch(t, []string{"c", "d"}, fetch(), "the probe found two tenants again")
	require.True(t, fs.turns)
}
