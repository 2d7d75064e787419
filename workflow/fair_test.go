package workflow

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/internal/testdb"
)

// TestFairTurns queues 40 runs of tenant acme, then 4 of tenant zeta and 4
// without a tenant, before a client of 2 workers starts: acme and zeta
// take turns, where River's order would run every acme run first. Within
// each tenant, runs start in the order they were started. The runs without
// a tenant, queued behind acme's 40, keep River's order: they start once
// the acme runs older than them are fetched (engine's fair_fetch.go: a
// fetch looks for them only among River's first few ready jobs).
func TestFairTurns(t *testing.T) {
	t.Parallel()

	db := testdb.New(t)
	seen := newConcurrency()
	work := Define("fair_work", func(ctx Context, n int) (int, error) {
		return Step(ctx, "work", func(context.Context) (int, error) {
			seen.enter(ctx.Run().Tenant, fmt.Sprintf("%s/%d", ctx.Run().Tenant, n))
			defer seen.leave(ctx.Run().Tenant)
			time.Sleep(5 * time.Millisecond)
			return n, nil
		})
	}, nil)
	config := testConfig(t, db, work)
	config.River.Queues = map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 2}}
	c, err := NewClient(db.Pool, config)
	require.NoError(t, err)
	ctx := ctxT(t)

	var handles []*Handle[int]
	start := func(n int, tenant string) {
		h, err := work.Start(ctx, c, n, &StartOpts{Tenant: tenant})
		require.NoError(t, err)
		handles = append(handles, h)
	}
	for i := range 40 {
		start(i, "acme")
	}
	for i := range 4 {
		start(i, "zeta")
	}
	for i := range 4 {
		start(i, "")
	}
	require.NoError(t, c.Start(context.Background()))
	t.Cleanup(func() { stopClient(t, c) })
	for _, h := range handles {
		_, err := h.Result(ctx)
		require.NoError(t, err)
	}

	order := seen.order()
	require.Len(t, order, 48)
	last := map[string]int{}
	count := map[string]int{}
	for i, what := range order {
		tenant, n, _ := strings.Cut(what, "/")
		// Two workers: two runs fetched together may begin either way round.
		require.InDelta(t, count[tenant], atoi(t, n), 1, "a tenant's runs start in the order they were started: %v", order)
		count[tenant]++
		last[tenant] = i
	}
	// Two in turn: zeta's fourth run starts within the first four rounds
	// (a fetch of two may take a tenant's next run before the rotation
	// comes round).
	require.Less(t, last["zeta"], 4*2+2, "zeta's runs took their turns: %v", order)
	require.True(t, slices.Contains(order[:3], "zeta/0"), "zeta's first run goes in the first round: %v", order)
	require.Greater(t, last[""], 40, "the runs without a tenant keep River's order behind acme's backlog: %v", order)
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	require.NoError(t, err)
	return n
}
