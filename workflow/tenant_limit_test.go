package workflow

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/internal/testdb"
)

// concurrency records, per tenant, how many steps run at once and the most
// that ever did, and the order in which steps began.
type concurrency struct {
	mu      sync.Mutex
	now     map[string]int
	most    map[string]int
	started []string
}

func newConcurrency() *concurrency {
	return &concurrency{now: map[string]int{}, most: map[string]int{}}
}

func (c *concurrency) enter(tenant, what string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now[tenant]++
	c.most[tenant] = max(c.most[tenant], c.now[tenant])
	c.started = append(c.started, what)
}

func (c *concurrency) leave(tenant string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now[tenant]--
}

// order returns the steps in the order they began.
func (c *concurrency) order() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.started)
}

// wait blocks until n steps of tenant work at once, or a while has passed.
func (c *concurrency) wait(tenant string, n int) {
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		c.mu.Lock()
		now := c.now[tenant]
		c.mu.Unlock()
		if now >= n {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func (c *concurrency) mostOf(tenant string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.most[tenant]
}

// TestTenantLimitHolds races 60 runs of two tenants and 10 without one
// across two working clients of 10 workers each, under a limit of 2 per
// tenant: never more than 2 of a tenant work at once, while the runs
// without a tenant are not limited, and every run completes.
func TestTenantLimitHolds(t *testing.T) {
	t.Parallel()

	db := testdb.New(t)
	seen := newConcurrency()
	limited := Define("tenant_limited", func(ctx Context, n int) (int, error) {
		return Step(ctx, "work", func(context.Context) (int, error) {
			tenant := ctx.Run().Tenant
			seen.enter(tenant, fmt.Sprint(n))
			defer seen.leave(tenant)
			if tenant == "" {
				seen.wait("", 3) // those without a tenant meet, to show they are not limited
			}
			time.Sleep(20 * time.Millisecond)
			return n, nil
		})
	}, &DefineOpts{TenantLimit: 2})
	a := startClient(t, db, limited)
	startClient(t, db, limited)
	ctx := ctxT(t)

	var handles []*Handle[int]
	for i := range 70 {
		var opts *StartOpts
		switch {
		case i < 30:
			opts = &StartOpts{Tenant: "acme"}
		case i < 60:
			opts = &StartOpts{Tenant: "globex"}
		}
		h, err := limited.Start(ctx, a, i, opts)
		require.NoError(t, err)
		handles = append(handles, h)
	}
	for i, h := range handles {
		out, err := h.Result(ctx)
		require.NoError(t, err)
		require.Equal(t, i, out)
	}
	require.Equal(t, 2, seen.mostOf("acme"), "the limit holds, and is reached")
	require.Equal(t, 2, seen.mostOf("globex"))
	require.Greater(t, seen.mostOf(""), 2, "runs without a tenant are not limited")
	require.Zero(t, countRows(t, db.Pool, "SELECT count(*) FROM river_job WHERE metadata ? 'tributary_held'"), "a fetched job carries no hold")
}

// TestTenantLimitHoldsBack follows held runs: a run over its tenant's limit
// is pending and held (its job ready, in its place, with why in its
// metadata), starts when a run of its tenant ends, and held runs start in
// the order they were started. Raising the tenant's limit starts held runs
// at once; a run that sleeps gives its slot back while it sleeps.
func TestTenantLimitHoldsBack(t *testing.T) {
	t.Parallel()

	db := testdb.New(t)
	seen := newConcurrency()
	release := make(chan struct{})
	var releaseOnce sync.Once
	blocking := Define("tenant_blocking", func(ctx Context, n int) (int, error) {
		return Step(ctx, "work", func(ctx context.Context) (int, error) {
			seen.enter("acme", fmt.Sprint(n))
			defer seen.leave("acme")
			select {
			case <-release:
			case <-ctx.Done():
				return 0, ctx.Err()
			}
			return n, nil
		})
	}, &DefineOpts{TenantLimit: 3})
	c := startClient(t, db, blocking)
	ctx := ctxT(t)

	first, err := blocking.Start(ctx, c, 0, &StartOpts{Tenant: "acme"})
	require.NoError(t, err)
	waitCond(t, "the first run to work", nil, func(context.Context) (bool, error) { return len(seen.order()) == 1, nil })
	tenants, err := c.Tenants(ctx, nil)
	require.NoError(t, err)
	require.Equal(t, []*Tenant{{Type: "tenant_blocking", Tenant: "acme", Running: 1, Limit: 3, LimitSource: "type"}}, tenants)
	require.NoError(t, c.SetTenantLimit(ctx, "tenant_blocking", "acme", 1), "acme gets 1 where the rest get 3")
	var held []*Handle[int]
	for i := 1; i <= 4; i++ {
		h, err := blocking.Start(ctx, c, i, &StartOpts{Tenant: "acme"})
		require.NoError(t, err)
		held = append(held, h)
	}
	for _, h := range held {
		run := waitRun(t, c, h.ID, "the run to be held back", func(r *Run) bool { return r.Held == HeldTenantLimit })
		require.Equal(t, StatusPending, run.Status)
		var state string
		var why map[string]any
		waitCond(t, "the held run's job to say why it waits", nil, func(ctx context.Context) (bool, error) {
			err := db.Pool.QueryRow(ctx, "SELECT state, metadata->'tributary_held' FROM river_job WHERE id = $1", run.JobID).Scan(&state, &why)
			return why != nil, err
		})
		require.Equal(t, "available", state, "a held run's job stays ready, in its place")
		require.Equal(t, map[string]any{"reason": HeldTenantLimit, "tenant": "acme", "limit": float64(1)}, why)
	}
	tenants, err = c.Tenants(ctx, &TenantParams{Type: "tenant_blocking"})
	require.NoError(t, err)
	require.Len(t, tenants, 1)
	require.Equal(t, Tenant{Type: "tenant_blocking", Tenant: "acme", Running: 1, Held: 4, Limit: 1, LimitSource: "tenant"}, *tenants[0])
	require.Equal(t, "acme has 1 of 1 running", tenants[0].Why())
	limits, err := c.TenantLimits(ctx)
	require.NoError(t, err)
	require.Len(t, limits, 1)
	require.Equal(t, "acme", limits[0].Tenant)
	require.Equal(t, 1, limits[0].MaxRunning)

	// Raised to 3: two more start at once, the oldest held first.
	require.NoError(t, c.SetTenantLimit(ctx, "tenant_blocking", "acme", 3))
	waitCond(t, "two held runs to start", nil, func(context.Context) (bool, error) { return len(seen.order()) == 3, nil })
	run, err := held[2].Get(ctx)
	require.NoError(t, err)
	require.Equal(t, HeldTenantLimit, run.Held, "the youngest stay held")

	releaseOnce.Do(func() { close(release) })
	for i, h := range append([]*Handle[int]{first}, held...) {
		out, err := h.Result(ctx)
		require.NoError(t, err)
		require.Equal(t, i, out)
		run, err := h.Get(ctx)
		require.NoError(t, err)
		require.Empty(t, run.Held)
	}
	// Held runs start in the order they were started; those woken together
	// (1 and 2 by the raised limit, 3 and 4 by the slots given back) begin
	// their steps on two workers at once, in either order.
	order := seen.order()
	require.Len(t, order, 5)
	require.Equal(t, "0", order[0])
	require.ElementsMatch(t, []string{"1", "2"}, order[1:3], "held runs start in the order they were started: %v", order)
	require.ElementsMatch(t, []string{"3", "4"}, order[3:5], "held runs start in the order they were started: %v", order)
	require.Equal(t, 3, seen.mostOf("acme"))

	// Back to the type's limit.
	require.NoError(t, c.SetTenantLimit(ctx, "tenant_blocking", "acme", 0))
	limits, err = c.TenantLimits(ctx)
	require.NoError(t, err)
	require.Empty(t, limits)

}

// TestTenantLimitTurnsMovePastFullTenants: a fetch whose turns reach only
// tenants at their limit starts nothing, and the next fetch's turns begin
// after them, so a tenant further on is not starved. Three workers, a limit
// of 1: a's and b's first runs work until released, and a run without a
// tenant ends at once, so the first fetch's turns end on the runs without
// a tenant (the last place) and the one free worker's fetches look at two
// places: a and b, both full. c's run must start while they still work.
func TestTenantLimitTurnsMovePastFullTenants(t *testing.T) {
	t.Parallel()

	db := testdb.New(t)
	seen := newConcurrency()
	release := make(chan struct{})
	var releaseOnce sync.Once
	t.Cleanup(func() { releaseOnce.Do(func() { close(release) }) })
	turns := Define("tenant_turns", func(ctx Context, n string) (string, error) {
		tenant := ctx.Run().Tenant
		return Step(ctx, "work", func(ctx context.Context) (string, error) {
			seen.enter(tenant, n)
			defer seen.leave(tenant)
			if tenant == "" || tenant == "c" {
				return n, nil
			}
			select {
			case <-release:
			case <-ctx.Done():
				return "", ctx.Err()
			}
			return n, nil
		})
	}, &DefineOpts{TenantLimit: 1})
	config := testConfig(t, db, turns)
	config.River.Queues = map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 3}}
	c, err := NewClient(db.Pool, config)
	require.NoError(t, err)
	ctx := ctxT(t)

	start := func(n, tenant string) *Handle[string] {
		h, err := turns.Start(ctx, c, n, &StartOpts{Tenant: tenant})
		require.NoError(t, err)
		return h
	}
	start("a1", "a")
	start("b1", "b")
	start("u1", "")
	require.NoError(t, c.Start(context.Background()))
	t.Cleanup(func() { stopClient(t, c) })
	waitCond(t, "a1 and b1 to work, and u1 to end", nil, func(context.Context) (bool, error) {
		return len(seen.order()) == 3 && seen.mostOf("") == 1, nil
	})

	start("a2", "a")
	start("b2", "b")
	c1 := start("c1", "c")
	_, err = c1.Result(ctx)
	require.NoError(t, err, "c's run starts while a and b are full")
	require.ElementsMatch(t, []string{"a1", "b1", "u1", "c1"}, seen.order(), "a2 and b2 wait for a1 and b1")

	releaseOnce.Do(func() { close(release) })
	waitCond(t, "every run to work", nil, func(context.Context) (bool, error) { return len(seen.order()) == 6, nil })
}

// TestTenantLimitWaitingHoldsNoSlot: under a limit of 1, a run that waits
// for a signal gives its slot back: a second run works, start to end,
// while the first one waits.
func TestTenantLimitWaitingHoldsNoSlot(t *testing.T) {
	t.Parallel()

	db := testdb.New(t)
	seen := newConcurrency()
	waiting := Define("tenant_waiting", func(ctx Context, n int) (int, error) {
		if _, err := Step(ctx, "before", func(context.Context) (int, error) {
			seen.enter("", fmt.Sprintf("%d before", n))
			seen.leave("")
			return 0, nil
		}); err != nil {
			return 0, err
		}
		if n == 0 {
			if _, err := WaitSignal[int](ctx, "go", nil); err != nil {
				return 0, err
			}
		}
		return Step(ctx, "after", func(context.Context) (int, error) {
			seen.enter("", fmt.Sprintf("%d after", n))
			seen.leave("")
			return n, nil
		})
	}, &DefineOpts{TenantLimit: 1})
	c := startClient(t, db, waiting)
	ctx := ctxT(t)

	waiter, err := waiting.Start(ctx, c, 0, &StartOpts{Tenant: "acme"})
	require.NoError(t, err)
	waitRun(t, c, waiter.ID, "the first run to wait", func(r *Run) bool { return r.Status == StatusWaiting })
	other, err := waiting.Start(ctx, c, 1, &StartOpts{Tenant: "acme"})
	require.NoError(t, err)
	_, err = other.Result(ctx)
	require.NoError(t, err, "the second run works while the first waits")
	require.NoError(t, c.Signal(ctx, waiter.ID, "go", 1))
	_, err = waiter.Result(ctx)
	require.NoError(t, err)
	require.Equal(t, []string{"0 before", "1 before", "1 after", "0 after"}, seen.order())
}

// TestTenantLimitRefused: a negative limit, in DefineOpts or for a tenant,
// and a bad tenant are *ValidationErrors naming the field, and nothing is
// written.
func TestTenantLimitRefused(t *testing.T) {
	t.Parallel()

	db := testdb.New(t)
	bad := Define("tenant_bad", func(Context, int) (int, error) { return 0, nil }, &DefineOpts{TenantLimit: -1})
	_, err := NewClient(db.Pool, &Config{Schema: db.Schema, Workflows: []Registrable{bad}})
	var verr *ValidationError
	require.ErrorAs(t, err, &verr)
	require.Equal(t, "DefineOpts.TenantLimit", verr.Field)

	c, err := NewClient(db.Pool, &Config{Schema: db.Schema})
	require.NoError(t, err)
	ctx := ctxT(t)
	for _, tc := range []struct {
		typ, tenant string
		limit       int
		field       string
	}{
		{"report", "acme", -1, "maxRunning"},
		{"report", "", 5, "tenant"},
		{"report", "acme\n", 5, "tenant"},
		{"no spaces", "acme", 5, "name"},
	} {
		err := c.SetTenantLimit(ctx, tc.typ, tc.tenant, tc.limit)
		require.ErrorAs(t, err, &verr, "%+v", tc)
		require.ErrorIs(t, err, ErrInvalid)
	}
	require.Zero(t, countRows(t, db.Pool, "SELECT count(*) FROM tributary_tenant_limits"))
}
