package cli

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/riverqueue/river"
	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/workflow"
)

// TestUnservedTypeIsFlagged is issue 12's trap 2: a schedule or run of a
// workflow type that no process works used to look healthy and never run.
func TestUnservedTypeIsFlagged(t *testing.T) {
	t.Parallel()

	db, vars := migratedDB(t)
	createArgs := []string{"schedule", "create", "--name", "ghost", "--cron", "*/5 * * * * *", "--workflow", "no_such_type"}

	// Refused on request, with nothing written.
	res := runCLI(t, vars, append(createArgs, "--require-worker")...)
	require.Equal(t, ExitError, res.code, res.stderr)
	require.Contains(t, res.stderr, `no live worker serves workflow type "no_such_type"`)
	require.Empty(t, res.stdout)
	var n int
	require.NoError(t, db.Pool.QueryRow(t.Context(), "SELECT count(*) FROM schedules").Scan(&n))
	require.Zero(t, n, "a refused create writes nothing")

	// Created, with a warning.
	res = runCLI(t, vars, createArgs...)
	require.Equal(t, ExitOK, res.code, res.stderr)
	require.Contains(t, res.stderr, `tributary: warning: no live worker serves workflow type "no_such_type"`)
	id := strings.TrimSpace(res.stdout)

	// schedule get flags it, as text and as JSON.
	res = runCLI(t, vars, "schedule", "get", id)
	require.Equal(t, ExitOK, res.code, res.stderr)
	require.Contains(t, res.stdout, `(warning: no live worker serves workflow type "no_such_type"`)
	res = runCLI(t, vars, "schedule", "get", id, "--json")
	require.Equal(t, ExitOK, res.code, res.stderr)
	var got map[string]any
	require.NoError(t, json.Unmarshal([]byte(res.stdout), &got))
	require.Equal(t, false, got["worker_live"])

	// workflow start warns and refuses the same way.
	res = runCLI(t, vars, "workflow", "start", "no_such_type", "--require-worker")
	require.Equal(t, ExitError, res.code, res.stderr)
	require.Contains(t, res.stderr, `no live worker serves workflow type "no_such_type"`)
	res = runCLI(t, vars, "workflow", "start", "no_such_type")
	require.Equal(t, ExitOK, res.code, res.stderr)
	require.Contains(t, res.stderr, "tributary: warning: no live worker serves")

	// No client yet: workers says so.
	res = runCLI(t, vars, "workers")
	require.Equal(t, ExitOK, res.code, res.stderr)
	require.Contains(t, res.stdout, "No working client is registered")

	// Once a client serves the type, nothing warns and workers lists it.
	def := workflow.Define("no_such_type", func(ctx workflow.Context, in any) (any, error) { return nil, nil }, nil)
	wf, err := workflow.NewClient(db.Pool, &workflow.Config{
		Schema:    db.Schema,
		River:     &river.Config{Queues: map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 2}}, TestOnly: true},
		Workflows: []workflow.Registrable{def},
	})
	require.NoError(t, err)
	require.NoError(t, wf.Start(t.Context()))
	t.Cleanup(func() { require.NoError(t, wf.Stop(context.Background())) })

	res = runCLI(t, vars, "schedule", "get", id)
	require.Equal(t, ExitOK, res.code, res.stderr)
	require.NotContains(t, res.stdout, "warning:")
	res = runCLI(t, vars, "workflow", "start", "no_such_type", "--require-worker")
	require.Equal(t, ExitOK, res.code, res.stderr)
	require.Empty(t, res.stderr)
	res = runCLI(t, vars, "workers")
	require.Equal(t, ExitOK, res.code, res.stderr)
	require.Contains(t, res.stdout, wf.River().ID())
	require.Contains(t, res.stdout, "no_such_type")
	res = runCLI(t, vars, "workers", "--json")
	require.Equal(t, ExitOK, res.code, res.stderr)
	var workers []map[string]any
	require.NoError(t, json.Unmarshal([]byte(res.stdout), &workers))
	require.Len(t, workers, 1)
	require.Equal(t, true, workers[0]["live"])
}
