package main

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/internal/testdb"
)

func TestMain(m *testing.M) { testdb.Main(m) }

func TestApproval(t *testing.T) {
	t.Parallel()

	db, got := testdb.RunExample(t, run)
	ctx := context.Background()

	require.Contains(t, got, "Outcome: laptop (1200): approved by finance, order placed\n")
	require.Contains(t, got, "Outcome: yacht (900000): rejected by finance (over budget)\n")
	require.Contains(t, got, "Outcome: coffee machine (300): no decision within 500ms, request expired\n")
	clock := `\d\d:\d\d:\d\d\.\d{3} UTC`
	require.Regexp(t, `cooling_off\s+sleep\s+completed\s+wake: `+clock, got)
	require.Regexp(t, `signal:approval\s+signal\s+completed\s+wake: `+clock+`\n`, got)
	require.Regexp(t, `signal:approval\s+signal\s+completed\s+wake: `+clock+`, timeout\n`, got)
	require.Regexp(t, `act\s+step\s+completed\s+wake: -`, got)
	require.Regexp(t, `expire\s+step\s+completed\s+wake: -`, got)

	// The timed-out run recorded the timeout on its wait step and took the
	// expiry path; the others received their decisions.
	rows, err := db.Pool.Query(ctx, `
		SELECT r.input->>'item', s.error IS NOT NULL, s.wake_at - s.started_at
		FROM workflow_runs r JOIN step_runs s ON s.run_id = r.id
		WHERE s.name = 'signal:approval' ORDER BY r.id`)
	require.NoError(t, err)
	type wait struct {
		item     string
		timedOut bool
		timeout  time.Duration
	}
	var waits []wait
	for rows.Next() {
		var w wait
		require.NoError(t, rows.Scan(&w.item, &w.timedOut, &w.timeout))
		w.timeout = w.timeout.Round(100 * time.Millisecond)
		waits = append(waits, w)
	}
	require.NoError(t, rows.Err())
	require.Equal(t, []wait{
		{"laptop", false, time.Minute},
		{"yacht", false, time.Minute},
		{"coffee machine", true, 500 * time.Millisecond},
	}, waits)
}
