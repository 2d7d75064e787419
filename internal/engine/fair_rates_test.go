package engine

import (
	"context"
	"testing"
	"time"

	"github.com/riverqueue/river/riverdriver"
	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/internal/testdb"
)

// TestRatedFetchNextToken: a rated fetch that leaves a tenant's runs out
// for want of tokens says when the soonest of their next tokens comes, at
// the tenant's own rate where an operator set one, so that the pilot
// fetches again then: a tenant whose own rate (50 a second) is faster than
// its type's (1 a minute) is fetched again within a fiftieth of a second,
// not a minute later.
func TestRatedFetchNextToken(t *testing.T) {
	t.Parallel()

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	db := testdb.New(t)
	d := NewDriver(db.Pool, nil)
	d.SetTenantRates(map[string]TenantRate{"workflow:rated": {Limit: 1, Per: time.Minute, PerSecond: 1.0 / 60, Burst: 1}})
	_, err := db.Pool.Exec(ctx, `INSERT INTO tributary_tenant_rate_overrides (workflow_type, tenant, rate_limit, per, per_second, burst)
		VALUES ('rated', 'fast', 50, interval '1 second', 50, 5)`)
	require.NoError(t, err)
	for _, tenant := range []string{"fast", "fast", "slow", "slow"} {
		_, err := db.Pool.Exec(ctx, `INSERT INTO river_job (args, kind, max_attempts, queue, state, priority)
			VALUES (jsonb_build_object('tenant', $1::text), 'workflow:rated', 5, 'default', 'available', 1)`, tenant)
		require.NoError(t, err)
	}

	p := d.pilot
	fetch := func() *fetched {
		t.Helper()
		got, err := p.fetchFair(ctx, p.fairTexts(db.Schema), &riverdriver.JobGetAvailableParams{
			ClientID: "c", Kind: []string{"workflow:rated"}, MaxAttemptedBy: 100, MaxToLock: 10, Queue: "default", Schema: db.Schema,
		}, "")
		require.NoError(t, err)
		return got
	}

	// A new bucket holds one token: one run of each tenant starts.
	got := fetch()
	require.Len(t, got.jobs, 2)
	require.NotNil(t, got.nextToken, "runs were left out for want of tokens")
	require.Positive(t, *got.nextToken)
	require.LessOrEqual(t, *got.nextToken, time.Second/50, "fast's next token comes at its own rate")

	// With only slow's run left out, its next token is about a minute away.
	_, err = db.Pool.Exec(ctx, `DELETE FROM river_job WHERE state = 'available' AND args->>'tenant' = 'fast'`)
	require.NoError(t, err)
	got = fetch()
	require.Empty(t, got.jobs)
	require.NotNil(t, got.nextToken)
	require.Greater(t, *got.nextToken, 50*time.Second)
	require.LessOrEqual(t, *got.nextToken, time.Minute)

	// Nothing left out for want of tokens: nothing to wait for.
	_, err = db.Pool.Exec(ctx, `DELETE FROM river_job WHERE state = 'available'`)
	require.NoError(t, err)
	require.Nil(t, fetch().nextToken)
}
