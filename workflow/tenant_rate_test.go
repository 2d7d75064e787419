package workflow

import (
	"context"
	"sync"
	"testing"
	"time"

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
