package main

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/internal/testdb"
)

func TestMain(m *testing.M) { testdb.Main(m) }

func TestScheduledReport(t *testing.T) {
	t.Parallel()

	db, got := testdb.RunExample(t, run)
	ctx := context.Background()

	require.Regexp(t, `^Issued a grant: \S+ for reporting-bot, scopes \[workflow:execute:report\]\n`, got)
	require.Contains(t, got, "Declared the schedules of service reports, version 1: created finance/revenue-report\n")
	require.Regexp(t, `Next revenue report: \w{3} \d+ \w{3} 06:00 (GMT|BST)\n`, got)
	require.Regexp(t, `Triggered the report: report #\d+, 3 orders, revenue 6000; subject=reporting-bot, from the revenue-report schedule: true\n`, got)
	require.Contains(t, got, `purge_orders under the same grant is refused: schedule: invalid GrantID: grant `)
	require.Contains(t, got, `would skip every slot ("grant out of scope"); use a grant that is live and has scope "workflow:execute:purge_orders" or "*"`)
	require.Contains(t, got, "Revoked the grant: rotated: the next grant replaces it\n")
	require.Contains(t, got, "Triggered the report again: skipped, reason \"grant revoked\"\n")
	require.Regexp(t, `Declared under the next grant: updated finance/revenue-report: GrantID \S+ → \S+\n$`, got)

	// Reports were recorded under the grant's subject, the purge never ran,
	// and the one schedule is the declared one, under the next grant.
	var reports, subjects, orders, revokedSkips, purges int
	require.NoError(t, db.Pool.QueryRow(ctx, `SELECT count(*), count(DISTINCT subject) FROM reports`).Scan(&reports, &subjects))
	require.NoError(t, db.Pool.QueryRow(ctx, `SELECT count(*) FROM report_orders`).Scan(&orders))
	require.NoError(t, db.Pool.QueryRow(ctx, `SELECT count(*) FILTER (WHERE skip_reason = 'grant revoked'),
		count(*) FILTER (WHERE workflow_type = 'purge_orders') FROM workflow_runs`).Scan(&revokedSkips, &purges))
	require.Equal(t, 1, reports)
	require.Equal(t, 1, subjects)
	require.Equal(t, 3, orders)
	require.Equal(t, 1, revokedSkips)
	require.Zero(t, purges)
	require.Equal(t, []declared{{"finance", "revenue-report", "reports", "0 6 * * *", true}}, schedulesIn(t, db))
}

// TestScheduledReportRestarts starts the service three times on one
// database, as restarts and a deploy do: the second start finds its
// schedule unchanged, the deploy of a new cron updates it, and there is
// one schedule throughout.
func TestScheduledReportRestarts(t *testing.T) {
	t.Parallel()

	db := testdb.New(t)
	ctx := context.Background()

	first := startOn(t, db, thisRelease)
	require.Contains(t, first, ": created finance/revenue-report\n")

	again := startOn(t, db, thisRelease)
	require.Regexp(t, `^The service's grant: \S+ for reporting-bot`, again) // the one the first start rotated to
	require.Contains(t, again, "Declared the schedules of service reports, version 1: 1 unchanged\n")
	require.Regexp(t, `Triggered the report: report #\d+, 3 orders, revenue 6000; subject=reporting-bot, from the revenue-report schedule: true\n`, again)
	require.Equal(t, []declared{{"finance", "revenue-report", "reports", "0 6 * * *", true}}, schedulesIn(t, db))

	deploy := startOn(t, db, release{Version: 2, Cron: "0 7 * * *"})
	require.Contains(t, deploy, `Declared the schedules of service reports, version 2: updated finance/revenue-report: Cron "0 6 * * *" → "0 7 * * *"`+"\n")
	require.Regexp(t, `Next revenue report: \w{3} \d+ \w{3} 07:00 (GMT|BST)\n`, deploy)
	require.Equal(t, []declared{{"finance", "revenue-report", "reports", "0 7 * * *", true}}, schedulesIn(t, db))

	var version int64
	require.NoError(t, db.Pool.QueryRow(ctx, `SELECT version FROM schedule_declarations WHERE service = 'reports'`).Scan(&version))
	require.Equal(t, int64(2), version)
}

// declared is a row of the schedules table, as far as these tests care.
type declared struct {
	Owner, Key, DeclaredBy, Cron string
	// LiveGrant: its grant is the one report_settings names, not revoked.
	LiveGrant bool
}

// schedulesIn reads every schedule of db.
func schedulesIn(t *testing.T, db *testdb.DB) []declared {
	t.Helper()
	rows, err := db.Pool.Query(context.Background(), `
		SELECT s.owner, coalesce(s.key, ''), coalesce(s.declared_by, ''), s.cron,
			coalesce(g.revoked_at IS NULL AND g.id = (SELECT grant_id FROM report_settings), false)
		FROM schedules s LEFT JOIN execution_grants g ON g.id = s.grant_id
		ORDER BY s.id`)
	require.NoError(t, err)
	defer rows.Close()
	var out []declared
	for rows.Next() {
		var d declared
		require.NoError(t, rows.Scan(&d.Owner, &d.Key, &d.DeclaredBy, &d.Cron, &d.LiveGrant))
		out = append(out, d)
	}
	require.NoError(t, rows.Err())
	return out
}

// startOn starts the service as rel against db, which stays from one call
// to the next as a DATABASE_URL's does, with RunExample's deadline, and
// returns what it printed.
func startOn(t *testing.T, db *testdb.DB, rel release) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var out bytes.Buffer
	err := start(ctx, db.Pool, &out, rel)
	t.Log("\n" + out.String())
	require.NoError(t, err)
	return out.String()
}
