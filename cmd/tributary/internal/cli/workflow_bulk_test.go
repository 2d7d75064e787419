package cli

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/internal/testdb"
	"github.com/tributary-go/tributary/internal/wire"
	"github.com/tributary-go/tributary/workflow"
)

// TestWorkflowBulk counts, refuses and runs bulk retries and cancels from
// the command line.
func TestWorkflowBulk(t *testing.T) {
	t.Parallel()

	db, vars := migratedDB(t)
	ctx := t.Context()
	_, err := db.Pool.Exec(ctx, `INSERT INTO workflow_runs (id, workflow_type, max_attempts, queue, status, error, finished_at)
		SELECT `+testdb.UUIDv7SQL("clock_timestamp()")+`, 'cli_bulk', 3, 'default', s, CASE WHEN s = 'failed' THEN '{"kind": "error", "message": "partner timed out"}'::jsonb END, now()
		FROM unnest(array_fill('failed'::text, ARRAY[12]) || ARRAY['completed', 'completed']) s`)
	require.NoError(t, err)

	res := runCLI(t, vars, "workflow", "bulk", "retry", "--type", "cli_bulk", "--dry-run")
	require.Equal(t, ExitOK, res.code, res.stderr)
	require.Equal(t, "would retry 12 of 14 runs matching (2 left as they are: completed 2); nothing was changed (dry run)\n", res.stdout)

	requireFailed(t, runCLI(t, vars, "workflow", "bulk", "retry", "--type", "cli_bulk"), ExitUsage,
		"tributary: this would retry 12 of 14 runs matching (2 left as they are: completed 2); nothing was changed: pass --yes to confirm, or run it at a terminal to be asked")
	requireFailed(t, runCLI(t, vars, "workflow", "bulk", "retry", "--type", "cli_bulk", "--max-runs", "5", "--yes"), ExitError,
		"tributary: the filter matches 14 runs, more than --max-runs 5, so nothing was retried; narrow the filter, or pass --max-runs 14")
	requireFailed(t, runCLI(t, vars, "workflow", "bulk", "cancel", "--type", "cli_nothing", "--yes"), ExitError,
		"tributary: no run matches the filter, so nothing to cancel; check the filter with 'tributary workflow list' and the same flags")
	requireFailed(t, runCLI(t, vars, "workflow", "bulk", "cancel", "--finished-after", "yesterday"), ExitUsage,
		`tributary: --finished-after "yesterday" is not an RFC 3339 time; use a time like 2026-03-08T00:00:00Z or 2026-03-08T09:00:00+01:00`)

	res = runCLI(t, vars, "workflow", "bulk", "retry", "--type", "cli_bulk", "--error", "TIMED OUT", "--batch-size", "5", "--yes")
	require.Equal(t, ExitOK, res.code, res.stderr)
	require.Equal(t, "retried 12 runs\n", res.stdout)
	require.Equal(t, "batch 1: 5 changed, 0 skipped so far (of 12 matched)\nbatch 2: 10 changed, 0 skipped so far (of 12 matched)\nbatch 3: 12 changed, 0 skipped so far (of 12 matched)\n", res.stderr)

	res = runCLI(t, vars, "workflow", "bulk", "cancel", "--type", "cli_bulk", "--yes", "--json")
	require.Equal(t, ExitOK, res.code, res.stderr)
	var got workflow.BulkResult
	require.NoError(t, json.Unmarshal([]byte(res.stdout), &got))
	require.Equal(t, workflow.BulkCancel, got.Action)
	require.Len(t, got.Changed, 12)
	require.Len(t, got.Skipped, 2)
	require.Equal(t, workflow.SkipFinished, got.Skipped[0].Reason)

	res = runCLI(t, vars, "workflow", "bulk", "cancel", "--type", "cli_bulk", "--yes")
	require.Equal(t, ExitOK, res.code, res.stderr)
	require.Equal(t, "cancelled 0 runs; skipped 14 (already finished 14)\n", res.stdout)
}

// TestScheduleBulk pauses and resumes an owner's schedules from the
// command line.
func TestScheduleBulk(t *testing.T) {
	t.Parallel()

	_, vars := migratedDB(t)
	for i := range 12 {
		res := runCLI(t, vars, "schedule", "create", "--name", fmt.Sprintf("s%d", i), "--owner", "acme", "--workflow", "tick", "--cron", "0 8 * * *")
		require.Equal(t, ExitOK, res.code, res.stderr)
	}

	res := runCLI(t, vars, "schedule", "bulk", "pause", "--owner", "acme", "--dry-run")
	require.Equal(t, ExitOK, res.code, res.stderr)
	require.Equal(t, "would pause 12 schedules of owner \"acme\"; nothing was changed (dry run)\n", res.stdout)
	requireFailed(t, runCLI(t, vars, "schedule", "bulk", "pause", "--owner", "acme"), ExitUsage,
		`tributary: this would pause 12 schedules of owner "acme"; nothing was changed: pass --yes to confirm, or run it at a terminal to be asked`)
	requireFailed(t, runCLI(t, vars, "schedule", "bulk", "pause"), ExitUsage,
		"tributary: --owner is required; name the owner whose schedules to pause")
	requireFailed(t, runCLI(t, vars, "schedule", "bulk", "resume", "--owner", "nobody", "--yes"), ExitError,
		`tributary: owner "nobody" has no schedules; see 'tributary schedule list --owner'`)

	res = runCLI(t, vars, "schedule", "bulk", "pause", "--owner", "acme", "--note", "incident 42", "--yes")
	require.Equal(t, ExitOK, res.code, res.stderr)
	require.Equal(t, "paused 12 schedules of owner \"acme\"; 0 left as they were (paused already)\n", res.stdout)

	res = runCLI(t, vars, "schedule", "bulk", "resume", "--owner", "acme", "--yes", "--json")
	require.Equal(t, ExitOK, res.code, res.stderr)
	var got wire.OwnerBulk
	require.NoError(t, json.Unmarshal([]byte(res.stdout), &got))
	require.Len(t, got.Changed, 12)
	require.False(t, got.Changed[0].Paused)
}

// TestWorkflowBulkFork forks from the command line the finished runs that
// reached a step; the others are counted and skipped with the reason.
func TestWorkflowBulkFork(t *testing.T) {
	t.Parallel()

	db, vars := migratedDB(t)
	ctx := t.Context()
	// Four failed runs that reached step "charge", one that failed before
	// it, one pending.
	_, err := db.Pool.Exec(ctx, `WITH runs AS (
			INSERT INTO workflow_runs (id, workflow_type, max_attempts, queue, status, error, finished_at)
			SELECT `+testdb.UUIDv7SQL("clock_timestamp()")+`, 'cli_fork', 3, 'default', s, CASE WHEN s = 'failed' THEN '{"kind": "error", "message": "card declined"}'::jsonb END,
				CASE WHEN s = 'failed' THEN now() END
			FROM unnest(array_fill('failed'::text, ARRAY[5]) || ARRAY['pending']) s
			RETURNING id, status)
		INSERT INTO step_runs (run_id, name, kind, status, output, seq)
		SELECT id, 'reserve', 'step', 'completed', '"ok"'::jsonb, 1 FROM runs WHERE status = 'failed'
		UNION ALL SELECT id, 'charge', 'step', 'failed', NULL, 2 FROM (SELECT id FROM runs WHERE status = 'failed' LIMIT 4) r`)
	require.NoError(t, err)

	requireFailed(t, runCLI(t, vars, "workflow", "bulk", "fork", "--type", "cli_fork"), ExitUsage,
		"tributary: workflow bulk fork needs --from-step; name the step to fork each run from, as 'tributary workflow get RUN' lists a run's steps")

	res := runCLI(t, vars, "workflow", "bulk", "fork", "--from-step", "charge", "--type", "cli_fork", "--dry-run")
	require.Equal(t, ExitOK, res.code, res.stderr)
	require.Equal(t, "would fork 4 of 6 runs matching from step \"charge\" (2 left as they are: not finished 1, never reached the step 1); nothing was changed (dry run)\n", res.stdout)

	res = runCLI(t, vars, "workflow", "bulk", "fork", "--from-step", "charge", "--type", "cli_fork", "--json")
	require.Equal(t, ExitOK, res.code, res.stderr)
	var got workflow.BulkResult
	require.NoError(t, json.Unmarshal([]byte(res.stdout), &got))
	require.Equal(t, workflow.BulkFork, got.Action)
	require.Equal(t, "charge", got.FromStep)
	require.Len(t, got.Changed, 4)
	require.Len(t, got.Forks, 4)
	require.Len(t, got.Skipped, 2)

	res = runCLI(t, vars, "workflow", "bulk", "fork", "--from-step", "charge", "--type", "cli_fork", "--status", "failed")
	require.Equal(t, ExitOK, res.code, res.stderr)
	require.Equal(t, "forked 4 runs from step \"charge\"; skipped 1 (never reached the step 1)\n", res.stdout)
}
