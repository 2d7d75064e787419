package engine_test

import (
	"fmt"
	"sort"
	"testing"

	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/rivershared/riverpilot"
	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/internal/engine"
	"github.com/tributary-go/tributary/internal/testdb"
)

// fairFetcher fetches from db's default queue as one River producer
// would, through the engine's pilot.
type fairFetcher struct {
	t      testing.TB
	db     *testdb.DB
	driver *engine.Driver
	pilot  riverpilot.Pilot
	state  riverpilot.ProducerState
}

func newFairFetcher(t testing.TB, db *testdb.DB) *fairFetcher {
	t.Helper()
	d := engine.NewDriver(db.Pool, nil)
	f := &fairFetcher{t: t, db: db, driver: d, pilot: d.PluginPilot()}
	_, state, err := f.pilot.ProducerInit(ctx(t), d.GetExecutor(), &riverpilot.ProducerInitParams{
		ClientID: "fetcher", Queue: "default", Schema: db.Schema,
	})
	require.NoError(t, err)
	f.state = state
	return f
}

// fetch fetches up to n jobs of kinds and returns "tenant/n" of each, n
// being the job's args' n, sorted.
func (f *fairFetcher) fetch(n int, kinds ...string) []string {
	f.t.Helper()
	var got []string
	for _, j := range f.fetchJobs(n, kinds...) {
		got = append(got, string(j.EncodedArgs))
	}
	sort.Strings(got)
	return got
}

// fetchJobs fetches up to n jobs of kinds and returns them as the fetch
// did.
func (f *fairFetcher) fetchJobs(n int, kinds ...string) []*rivertype.JobRow {
	f.t.Helper()
	res, err := f.pilot.JobGetAvailable(ctx(f.t), f.driver.GetExecutor(), f.state, &riverdriver.JobGetAvailableParams{
		ClientID: "fetcher", Kind: kinds, MaxAttemptedBy: 100, MaxToLock: n, Queue: "default", Schema: f.db.Schema,
	})
	require.NoError(f.t, err)
	return res.Jobs
}

// insertKeyed inserts an available job of kind for tenant, its args
// {"tenant": tenant, "n": n}, ready since n seconds after a fixed time, so
// that n orders a tenant's jobs.
func insertKeyed(t *testing.T, db *testdb.DB, kind, tenant string, n int) {
	t.Helper()
	_, err := db.Pool.Exec(ctx(t), `INSERT INTO river_job (args, kind, max_attempts, queue, state, scheduled_at, priority)
		VALUES (jsonb_build_object('tenant', $2::text, 'n', $3::int), $1, 5, 'default', 'available',
			'2026-01-01'::timestamptz + $3 * interval '1 second', 1)`, kind, tenant, n)
	require.NoError(t, err)
}

func tenantsOf(t *testing.T, fetched []string) []string {
	t.Helper()
	var tenants []string
	for _, args := range fetched {
		var tenant string
		var n int
		_, err := fmt.Sscanf(args, `{"n": %d, "tenant": %q}`, &n, &tenant)
		require.NoError(t, err, "args %s", args)
		tenants = append(tenants, tenant)
	}
	return tenants
}

// TestFairFetchRotation pins the fair fetch's turns when more tenants have
// jobs ready than a fetch takes: each fetch takes one job of each of the
// next tenants in the rotation, each tenant's oldest of the kinds asked
// for (a tenant whose oldest job is of another kind offers its oldest of
// the kinds asked for), and the next fetch goes on after the last.
func TestFairFetchRotation(t *testing.T) {
	t.Parallel()

	db := testdb.New(t)
	for i := range 12 {
		tenant := fmt.Sprintf("t%02d", i)
		insertKeyed(t, db, "workflow:a", tenant, 10+i)
		insertKeyed(t, db, "workflow:a", tenant, 100+i)
	}
	// t03's oldest job is of a kind this fetcher does not take.
	insertKeyed(t, db, "workflow:other", "t03", 1)

	f := newFairFetcher(t, db)
	got := f.fetch(4, "workflow:a")
	require.Equal(t, []string{"t00", "t01", "t02", "t03"}, tenantsOf(t, got), "one job of each of the first four tenants: %v", got)
	require.Contains(t, got, `{"n": 13, "tenant": "t03"}`, "t03 offers its oldest job of the kinds asked for")
	require.Equal(t, []string{"t04", "t05", "t06", "t07"}, tenantsOf(t, f.fetch(4, "workflow:a")))
	require.Equal(t, []string{"t08", "t09", "t10", "t11"}, tenantsOf(t, f.fetch(4, "workflow:a")))
	// Round two: every tenant's second job, from the start again.
	got = f.fetch(4, "workflow:a")
	require.Equal(t, []string{"t00", "t01", "t02", "t03"}, tenantsOf(t, got))
	require.Contains(t, got, `{"n": 100, "tenant": "t00"}`)
}

// TestFairFetchFewTenants pins the fair fetch's turns when fewer tenants
// have jobs ready than a fetch takes: the fetch shares itself among them,
// each tenant's oldest first.
func TestFairFetchFewTenants(t *testing.T) {
	t.Parallel()

	db := testdb.New(t)
	for i := range 10 {
		insertKeyed(t, db, "workflow:a", "big", i)
	}
	insertKeyed(t, db, "workflow:a", "small", 50)
	insertKeyed(t, db, "workflow:a", "small", 51)

	f := newFairFetcher(t, db)
	got := f.fetch(4, "workflow:a")
	require.ElementsMatch(t, []string{
		`{"n": 0, "tenant": "big"}`, `{"n": 1, "tenant": "big"}`,
		`{"n": 50, "tenant": "small"}`, `{"n": 51, "tenant": "small"}`,
	}, got)
}

// TestFairFetchRowsAsRiverReadsThem: the jobs a fair fetch returns are
// the rows River's own read by id gives for the same jobs, field for
// field, errors, tags, unique states and metadata included, so that River
// works them as it works the jobs of its own fetch.
func TestFairFetchRowsAsRiverReadsThem(t *testing.T) {
	t.Parallel()

	db := testdb.New(t)
	for i, tenant := range []string{"a", "b", "c"} {
		_, err := db.Pool.Exec(ctx(t), `INSERT INTO river_job (args, kind, max_attempts, queue, state, scheduled_at, priority,
				attempt, attempted_by, errors, metadata, tags, unique_key, unique_states)
			VALUES (jsonb_build_object('tenant', $1::text, 'n', $2::int), 'workflow:a', 7, 'default', 'available',
				'2026-01-01T00:00:00Z'::timestamptz + $2 * interval '1 second', 2, 1, ARRAY['earlier'],
				ARRAY['{"at": "2026-01-01T00:00:00Z", "attempt": 1, "error": "boom", "trace": "here"}'::jsonb],
				'{"note": "kept"}', ARRAY['x', 'y'], convert_to($1::text, 'UTF8'), B'11110101')`, tenant, i)
		require.NoError(t, err)
	}

	f := newFairFetcher(t, db)
	res, err := f.pilot.JobGetAvailable(ctx(t), f.driver.GetExecutor(), f.state, &riverdriver.JobGetAvailableParams{
		ClientID: "fetcher", Kind: []string{"workflow:a"}, MaxAttemptedBy: 100, MaxToLock: 10, Queue: "default", Schema: db.Schema,
	})
	require.NoError(t, err)
	require.Len(t, res.Jobs, 3)
	ids := make([]int64, len(res.Jobs))
	for i, j := range res.Jobs {
		ids[i] = j.ID
	}
	read, err := f.driver.GetExecutor().JobGetByIDMany(ctx(t), &riverdriver.JobGetByIDManyParams{ID: ids, Schema: db.Schema})
	require.NoError(t, err)
	byID := map[int64]any{}
	for _, j := range read {
		byID[j.ID] = j
	}
	for _, j := range res.Jobs {
		require.Equal(t, byID[j.ID], j)
		require.Equal(t, rivertype.JobStateRunning, j.State)
		require.Equal(t, 2, j.Attempt)
		require.Equal(t, []string{"earlier", "fetcher"}, j.AttemptedBy)
		require.Len(t, j.Errors, 1)
		require.NotEmpty(t, j.UniqueStates)
	}
}

// TestFairFetchPlainTakesItsPlace pins the turn of the jobs without a
// tenant when more tenants have jobs ready than a fetch takes: they are
// fetched when the rotation reaches their place (after the last tenant),
// not before, even when one of them is the oldest ready job of the queue,
// and then in the fetch that holds their place.
func TestFairFetchPlainTakesItsPlace(t *testing.T) {
	t.Parallel()

	db := testdb.New(t)
	for i := range 6 {
		insertKeyed(t, db, "workflow:a", fmt.Sprintf("t%02d", i), 10+i)
	}
	_, err := db.Pool.Exec(ctx(t), `INSERT INTO river_job (args, kind, max_attempts, queue, state, scheduled_at, priority)
		VALUES ('{"n": 1}', 'workflow:a', 5, 'default', 'available', '2026-01-01'::timestamptz, 1)`)
	require.NoError(t, err)

	f := newFairFetcher(t, db)
	require.Equal(t, []string{"t00", "t01"}, tenantsOf(t, f.fetch(2, "workflow:a")), "the oldest job, without a tenant, waits for its place")
	require.Equal(t, []string{"t02", "t03"}, tenantsOf(t, f.fetch(2, "workflow:a")))
	require.Equal(t, []string{"t04", "t05"}, tenantsOf(t, f.fetch(2, "workflow:a")))
	require.Equal(t, []string{`{"n": 1}`}, f.fetch(2, "workflow:a"), "the next fetch holds the place of the jobs without a tenant")
}
