package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/workflow"
)

// TestWorkflowStart: the CLI, which registers no workflow code, starts a
// run of any type for the service that works it, idempotently with a key,
// and refuses a bad type name or input.
func TestWorkflowStart(t *testing.T) {
	t.Parallel()

	_, vars := migratedDB(t)
	res := runCLI(t, vars, "workflow", "start", "send_report", "--input", `{"to": "ops"}`)
	require.Equal(t, ExitOK, res.code, res.stderr)
	id, err := uuid.Parse(strings.TrimSpace(res.stdout))
	require.NoError(t, err)

	res = runCLI(t, vars, "workflow", "get", id.String(), "--json")
	require.Equal(t, ExitOK, res.code, res.stderr)
	var run workflow.Run
	require.NoError(t, json.Unmarshal([]byte(res.stdout), &run))
	require.Equal(t, "send_report", run.Type)
	require.Equal(t, workflow.StatusPending, run.Status)
	require.JSONEq(t, `{"to": "ops"}`, string(run.Input))

	// The same key twice: one run.
	first := runCLI(t, vars, "workflow", "start", "import_users", "--idempotency-key", "import-1", "--json")
	require.Equal(t, ExitOK, first.code, first.stderr)
	again := runCLI(t, vars, "workflow", "start", "import_users", "--idempotency-key", "import-1", "--input", `{"other": true}`, "--json")
	require.Equal(t, ExitOK, again.code, again.stderr)
	var a, b workflow.Run
	require.NoError(t, json.Unmarshal([]byte(first.stdout), &a))
	require.NoError(t, json.Unmarshal([]byte(again.stdout), &b))
	require.Equal(t, a.ID, b.ID)
	require.JSONEq(t, `null`, string(b.Input), "the first run's input wins")

	res = runCLI(t, vars, "workflow", "start")
	requireFailed(t, res, ExitUsage, `tributary: workflow start needs one workflow type, not 0 arguments; e.g. tributary workflow start send_report --input '{"to": "ops"}'`)
	res = runCLI(t, vars, "workflow", "start", "bad name!")
	require.Equal(t, ExitUsage, res.code, res.stderr)
	require.Contains(t, res.stderr, "bad name!")
	res = runCLI(t, vars, "workflow", "start", "send_report", "--input", "{to: ops}")
	require.Equal(t, ExitUsage, res.code, res.stderr)
	require.Contains(t, res.stderr, "--input is not valid JSON")
}
