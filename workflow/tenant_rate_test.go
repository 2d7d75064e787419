package workflow

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/internal/testdb"
)

// TestTenantRate starts 60 runs of tenant acme under a rate of 20 a second
// across two working clients, and 20 of tenant globex and 20 without a
// tenant beside them: acme's attempts start at about 20 a second, never
// more than 20 plus the bucket (2) in any one-second window, from the
// attempts' fetch times; the others are not held to acme's rate; every
// run completes, none fails.
func TestTenantRate(t *testing.T) {
	t.Parallel()

	db := testdb.New(t)
	var (
		mu     sync.Mutex
		starts = map[string][]time.Time{}
	)
	rated := Define("tenant_rated", func(ctx Context, n int) (int, error) {
		return Step(ctx, "call", func(context.Context) (int, error) {
			mu.Lock()
			starts[ctx.Run().Tenant] = append(starts[ctx.Run().Tenant], time.Now())
			mu.Unlock()
			return n, nil
		})
	}, &DefineOpts{TenantRate: Rate{Limit: 20, Per: time.Second}})
	a := startClient(t, db, rated)
	startClient(t, db, rated)
	ctx := ctxT(t)

	var handles []*Handle[int]
	for i := range 100 {
		tenant := "acme"
		switch {
		case i%5 == 3:
			tenant = "globex"
		case i%5 == 4:
			tenant = ""
		}
		h, err := rated.Start(ctx, a, i, &StartOpts{Tenant: tenant})
		require.NoError(t, err)
		handles = append(handles, h)
	}
	for i, h := range handles {
		out, err := h.Result(ctx)
		require.NoError(t, err)
		require.Equal(t, i, out)
	}

	mu.Lock()
	defer mu.Unlock()
	require.Len(t, starts["acme"], 60)
	// The rate governs when attempts are fetched (River's attempted_at, the
	// database's clock); a step's own start comes a moment after, by a
	// varying delay that would blur the windows.
	rows, err := db.Pool.Query(ctx, `SELECT attempted_at FROM river_job WHERE kind = 'workflow:tenant_rated' AND args->>'tenant' = 'acme' ORDER BY attempted_at`)
	require.NoError(t, err)
	acme, err := pgx.CollectRows(rows, pgx.RowTo[time.Time])
	require.NoError(t, err)
	require.Len(t, acme, 60)
	for i := range acme {
		inWindow := 0
		for j := i; j < len(acme) && acme[j].Sub(acme[i]) < time.Second; j++ {
			inWindow++
		}
		require.LessOrEqual(t, inWindow, 20+2, "attempts of acme in the second from its %d-th", i)
	}
	span := acme[len(acme)-1].Sub(acme[0])
	require.Greater(t, span, 2*time.Second, "60 attempts at 20 a second, the first 2 of the bucket at once, take over 2 s")
	t.Logf("acme: 60 attempts over %s (%.1f a second); globex's 20 over %s", span.Round(time.Millisecond),
		59/span.Seconds(), spanOf(starts["globex"]).Round(time.Millisecond))
	require.Len(t, starts["globex"], 20)
	require.Len(t, starts[""], 20)
}

func spanOf(ts []time.Time) time.Duration {
	if len(ts) == 0 {
		return 0
	}
	lo, hi := ts[0], ts[0]
	for _, t := range ts {
		if t.Before(lo) {
			lo = t
		}
		if t.After(hi) {
			hi = t
		}
	}
	return hi.Sub(lo)
}

// TestTenantRateOverride gives acme a rate of its own, 1 an hour, where
// the type allows every tenant 1,000 a second: of acme's 5 runs exactly
// one starts (its new bucket's one token) and the 4 others stay ready,
// reported waiting for the rate by Tenants, GetRun and ListRuns, while
// globex's 20, started after them, all complete at the type's rate. A
// tenant's rate on a type without a TenantRate is kept, listed, and
// applies to nothing. Removing acme's rate lets its 4 runs complete at
// the type's rate.
func TestTenantRateOverride(t *testing.T) {
	t.Parallel()

	db := testdb.New(t)
	var (
		mu      sync.Mutex
		started = map[string]int{}
	)
	work := func(ctx Context, n int) (int, error) {
		mu.Lock()
		started[ctx.Run().Type+"/"+ctx.Run().Tenant]++
		mu.Unlock()
		return n, nil
	}
	rated := Define("tenant_overridden", work, &DefineOpts{TenantRate: Rate{Limit: 1000, Per: time.Second}})
	unrated := Define("tenant_unrated", work, nil)
	c := startClient(t, db, rated, unrated)
	ctx := ctxT(t)
	startedOf := func(key string) int {
		mu.Lock()
		defer mu.Unlock()
		return started[key]
	}

	hourly := Rate{Limit: 1, Per: time.Hour}
	require.NoError(t, c.SetTenantRate(ctx, "tenant_overridden", "acme", hourly))
	require.NoError(t, c.SetTenantRate(ctx, "tenant_unrated", "acme", hourly))
	rates, err := c.TenantRates(ctx)
	require.NoError(t, err)
	require.Len(t, rates, 2)
	require.Equal(t, TenantRate{Type: "tenant_overridden", Tenant: "acme", Rate: hourly, UpdatedAt: rates[0].UpdatedAt}, *rates[0])
	require.Equal(t, "tenant_unrated", rates[1].Type)

	var acme, globex, free []*Handle[int]
	for i := range 5 {
		h, err := rated.Start(ctx, c, i, &StartOpts{Tenant: "acme"})
		require.NoError(t, err)
		acme = append(acme, h)
	}
	for i := range 20 {
		h, err := rated.Start(ctx, c, i, &StartOpts{Tenant: "globex"})
		require.NoError(t, err)
		globex = append(globex, h)
		h, err = unrated.Start(ctx, c, i, &StartOpts{Tenant: "acme"})
		require.NoError(t, err)
		free = append(free, h)
	}
	for _, h := range append(globex, free...) {
		_, err := h.Result(ctx)
		require.NoError(t, err, "globex's runs keep the type's rate; acme's own rate on an unrated type applies to nothing")
	}
	waitCond(t, "acme's first run to start", nil, func(context.Context) (bool, error) {
		return startedOf("tenant_overridden/acme") == 1, nil
	})
	// globex's runs, started after acme's, were all fetched: acme's line
	// was looked at since, and its 4 other runs left for want of a token.
	var waiting []uuid.UUID
	for _, h := range acme {
		run, err := h.Get(ctx)
		require.NoError(t, err)
		if run.Status == StatusCompleted {
			continue
		}
		require.Equal(t, StatusPending, run.Status)
		require.Equal(t, HeldTenantRate, run.Held, "a ready run beyond its tenant's tokens waits for its rate")
		waiting = append(waiting, run.ID)
	}
	require.Len(t, waiting, 4, "one token, one start")
	require.Equal(t, 1, startedOf("tenant_overridden/acme"))

	tenants, err := c.Tenants(ctx, &TenantParams{Tenant: "acme"})
	require.NoError(t, err)
	require.Len(t, tenants, 2)
	got := *tenants[0]
	require.Greater(t, got.NextToken, 59*time.Minute, "an hour's token, less the test's time")
	require.LessOrEqual(t, got.NextToken, time.Hour)
	got.NextToken = 0
	require.Equal(t, Tenant{Type: "tenant_overridden", Tenant: "acme", RateLimited: 4, Rate: hourly, RateSource: "tenant"}, got)
	require.Regexp(t, `^acme is at its rate, 1 per 1h0m0s; next token in (59m\d+(\.\d)?s|1h0m0s)$`, tenants[0].RateWhy())
	require.Equal(t, Tenant{Type: "tenant_unrated", Tenant: "acme", Rate: hourly, RateSource: "tenant"}, *tenants[1],
		"listed with its own rate, which applies to nothing")

	runs, err := c.ListRuns(ctx, &ListParams{Type: "tenant_overridden", Tenant: "acme", Status: StatusPending})
	require.NoError(t, err)
	require.Len(t, runs, 4)
	for _, run := range runs {
		require.Equal(t, HeldTenantRate, run.Held)
	}

	// Back to the type's rate: acme's 4 runs start.
	require.NoError(t, c.SetTenantRate(ctx, "tenant_overridden", "acme", Rate{}))
	for _, h := range acme {
		_, err := h.Result(ctx)
		require.NoError(t, err)
	}
	require.Equal(t, 5, startedOf("tenant_overridden/acme"))
	tenants, err = c.Tenants(ctx, &TenantParams{Type: "tenant_overridden"})
	require.NoError(t, err)
	require.Empty(t, tenants, "nothing working or waiting, no rate of its own")
	rates, err = c.TenantRates(ctx)
	require.NoError(t, err)
	require.Len(t, rates, 1)
}

// TestTenantRateLine: under its type's rate of 1 a minute, a tenant's
// first run takes its new bucket's token and the 3 after it in its line
// wait for the rate: Tenants counts them apart from Ready, with the type's
// rate, and each says why. A run of a type without a rate is Ready and
// not held.
func TestTenantRateLine(t *testing.T) {
	t.Parallel()

	db := testdb.New(t)
	slow := Define("tenant_slow", func(ctx Context, n int) (int, error) { return n, nil },
		&DefineOpts{TenantRate: Rate{Limit: 1, Per: time.Minute}})
	c := startClient(t, db, slow)
	ctx := ctxT(t)

	var handles []*Handle[int]
	for i := range 4 {
		h, err := slow.Start(ctx, c, i, &StartOpts{Tenant: "initech"})
		require.NoError(t, err)
		handles = append(handles, h)
	}
	_, err := handles[0].Result(ctx)
	require.NoError(t, err, "the first in line takes the one token")
	for _, h := range handles[1:] {
		run := waitRun(t, c, h.ID, "the run to wait for its rate", func(r *Run) bool { return r.Held == HeldTenantRate })
		require.Equal(t, StatusPending, run.Status)
	}
	tenants, err := c.Tenants(ctx, nil)
	require.NoError(t, err)
	require.Len(t, tenants, 1)
	require.Equal(t, 3, tenants[0].RateLimited)
	require.Zero(t, tenants[0].Ready)
	require.Equal(t, Rate{Limit: 1, Per: time.Minute}, tenants[0].Rate)
	require.Equal(t, "type", tenants[0].RateSource)
	require.Regexp(t, `^initech is at its rate, 1 per 1m0s; next token in (\d+(\.\d)?s|1m0s)$`, tenants[0].RateWhy())

	// A run of the tenant of a type no worker rates (nor serves) is ready,
	// waiting for nothing the tenant's standing explains.
	starter, err := NewClient(db.Pool, &Config{Schema: db.Schema})
	require.NoError(t, err)
	h, err := starter.StartByName(ctx, "tenant_unserved", nil, &StartOpts{Tenant: "initech"})
	require.NoError(t, err)
	run, err := c.GetRun(ctx, h.ID)
	require.NoError(t, err)
	require.Equal(t, StatusPending, run.Status)
	require.Empty(t, run.Held)
	tenants, err = c.Tenants(ctx, &TenantParams{Type: "tenant_unserved"})
	require.NoError(t, err)
	require.Equal(t, []*Tenant{{Type: "tenant_unserved", Tenant: "initech", Ready: 1}}, tenants)
}

// TestTenantRateRefused: a bad type, tenant or rate for SetTenantRate is a
// *ValidationError naming the argument and saying what to do, and nothing
// is written.
func TestTenantRateRefused(t *testing.T) {
	t.Parallel()

	db := testdb.New(t)
	c, err := NewClient(db.Pool, &Config{Schema: db.Schema})
	require.NoError(t, err)
	ctx := ctxT(t)
	for _, tc := range []struct {
		typ, tenant string
		rate        Rate
		field, says string
	}{
		{"report", "acme", Rate{Limit: 0, Per: time.Minute}, "rate.Limit", "is 0; use 1 or more, or the zero Rate to remove the tenant's own rate"},
		{"report", "acme", Rate{Limit: -3, Per: time.Minute}, "rate.Limit", "is -3"},
		{"report", "acme", Rate{Limit: 1 << 31, Per: time.Minute}, "rate.Limit", "use at most 2147483647"},
		{"report", "acme", Rate{Limit: 10}, "rate.Per", "give a positive duration"},
		{"report", "acme", Rate{Limit: 10, Per: -time.Second}, "rate.Per", "give a positive duration"},
		{"report", "acme", Rate{Limit: 10, Per: time.Nanosecond}, "rate.Per", "give 1µs or more"},
		{"report", "", Rate{Limit: 10, Per: time.Minute}, "tenant", ""},
		{"report", "acme\n", Rate{Limit: 10, Per: time.Minute}, "tenant", ""},
		{"no spaces", "acme", Rate{Limit: 10, Per: time.Minute}, "name", ""},
	} {
		err := c.SetTenantRate(ctx, tc.typ, tc.tenant, tc.rate)
		var verr *ValidationError
		require.ErrorAs(t, err, &verr, "%+v", tc)
		require.ErrorIs(t, err, ErrInvalid)
		require.Equal(t, tc.field, verr.Field, "%+v", tc)
		require.Contains(t, verr.Problem, tc.says, "%+v", tc)
	}
	require.Zero(t, countRows(t, db.Pool, "SELECT count(*) FROM tributary_tenant_rate_overrides"))
}
