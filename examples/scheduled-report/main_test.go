package main

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/internal/testdb"
)

func TestMain(m *testing.M) { testdb.Main(m) }

func TestScheduledReport(t *testing.T) {
	t.Parallel()

	db, got := testdb.RunExample(t, run)
	ctx := context.Background()

	require.Contains(t, got, "Grant for reporting-bot, scopes [workflow:execute:report]\n")
	require.Regexp(t, `Report #\d+ for slot \d\d:\d\d:\d\d: 3 orders, revenue 6000; subject=reporting-bot, from the report schedule: true\n`, got)
	require.Contains(t, got, `purge_orders under the same grant is refused: schedule: invalid GrantID: grant `)
	require.Contains(t, got, `would skip every slot ("grant out of scope"); use a grant that is live and has scope "workflow:execute:purge_orders" or "*"`)
	require.Contains(t, got, "Revoked the grant: reporting moved to the data warehouse\n")
	require.Regexp(t, `Report ledger: slot \d\d:\d\d:\d\d skipped, reason "grant revoked"\n`, got)
	require.Regexp(t, `The chain goes on: next slot \d\d:\d\d:\d\d, \d+ runs so far\n`, got)

	// Reports were recorded under the grant's subject, the purge never ran,
	// and the example left no schedule behind.
	var reports, subjects, orders, schedules, revokedSkips, purges int
	require.NoError(t, db.Pool.QueryRow(ctx, `SELECT count(*), count(DISTINCT subject) FROM reports`).Scan(&reports, &subjects))
	require.NoError(t, db.Pool.QueryRow(ctx, `SELECT count(*) FROM report_orders`).Scan(&orders))
	require.NoError(t, db.Pool.QueryRow(ctx, `SELECT count(*) FROM schedules`).Scan(&schedules))
	require.NoError(t, db.Pool.QueryRow(ctx, `SELECT count(*) FILTER (WHERE skip_reason = 'grant revoked'),
		count(*) FILTER (WHERE workflow_type = 'purge_orders' AND status <> 'skipped') FROM workflow_runs`).Scan(&revokedSkips, &purges))
	require.GreaterOrEqual(t, reports, 1)
	require.Equal(t, 1, subjects)
	require.Equal(t, 3, orders)
	require.Zero(t, schedules)
	require.GreaterOrEqual(t, revokedSkips, 1)
	require.Zero(t, purges)
}
