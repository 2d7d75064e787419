package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/internal/wire"
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
	var run wire.Run
	require.NoError(t, json.Unmarshal([]byte(res.stdout), &run))
	require.Equal(t, "send_report", run.Type)
	require.Equal(t, workflow.StatusPending, run.Status)
	require.JSONEq(t, `{"to": "ops"}`, string(run.Input))

	// The same key twice: one run.
	first := runCLI(t, vars, "workflow", "start", "import_users", "--idempotency-key", "import-1", "--json")
	require.Equal(t, ExitOK, first.code, first.stderr)
	again := runCLI(t, vars, "workflow", "start", "import_users", "--idempotency-key", "import-1", "--input", `{"other": true}`, "--json")
	require.Equal(t, ExitOK, again.code, again.stderr)
	var a, b wire.Run
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

// TestWorkflowStartDebounce: starts with the same --debounce key collapse
// into one run, which the second start prints, saying it joined it, with
// its input; workflow get shows the key; a debounce flag given wrong is a
// usage error naming it, and nothing is written.
func TestWorkflowStartDebounce(t *testing.T) {
	t.Parallel()

	db, vars := migratedDB(t)
	res := runCLI(t, vars, "workflow", "start", "index_doc", "--input", `{"v": 1}`, "--debounce", "doc-1", "--debounce-period", "1h")
	require.Equal(t, ExitOK, res.code, res.stderr)
	require.NotContains(t, res.stderr, "joined")
	first, err := uuid.Parse(strings.TrimSpace(res.stdout))
	require.NoError(t, err)

	res = runCLI(t, vars, "workflow", "start", "index_doc", "--input", `{"v": 2}`, "--debounce", "doc-1", "--debounce-period", "1h", "--debounce-max", "2h")
	require.Equal(t, ExitOK, res.code, res.stderr)
	require.Equal(t, first.String()+"\n", res.stdout)
	require.Equal(t, "note: joined run "+first.String()+" (debounce window doc-1 open); nothing was started, and the run takes this start's input\n",
		withoutNoWorkerWarning(res.stderr))

	res = runCLI(t, vars, "workflow", "start", "index_doc", "--input", `{"v": 3}`, "--debounce", "doc-1", "--debounce-period", "1h", "--json")
	require.Equal(t, ExitOK, res.code, res.stderr)
	require.Contains(t, res.stderr, "note: joined run "+first.String())
	var run map[string]any
	require.NoError(t, json.Unmarshal([]byte(res.stdout), &run))
	require.Equal(t, first.String(), run["id"])
	require.Equal(t, "doc-1", run["debounce_key"])
	require.Equal(t, map[string]any{"v": float64(3)}, run["input"], "the last start's input")

	res = runCLI(t, vars, "workflow", "get", first.String())
	require.Equal(t, ExitOK, res.code, res.stderr)
	require.Regexp(t, `(?m)^Debounce key: +doc-1$`, res.stdout)

	// Another key: another run.
	res = runCLI(t, vars, "workflow", "start", "index_doc", "--debounce", "doc-2", "--debounce-period", "1h")
	require.Equal(t, ExitOK, res.code, res.stderr)
	require.NotContains(t, res.stderr, "joined")
	require.NotEqual(t, first.String(), strings.TrimSpace(res.stdout))

	for _, tc := range []struct {
		args   []string
		stderr string
	}{
		{[]string{"--debounce", "doc-3"}, "tributary: --debounce needs --debounce-period; pass how long after the last start with the key the run starts, such as --debounce-period 30s"},
		{[]string{"--debounce", "doc-3", "--debounce-period", "0s"}, "tributary: --debounce-period is 0s; pass a positive duration, how long after the last start with the key the run starts, such as 30s"},
		{[]string{"--debounce", "doc-3", "--debounce-period", "-1s"}, "tributary: --debounce-period is -1s; pass a positive duration, how long after the last start with the key the run starts, such as 30s"},
		{[]string{"--debounce", "doc-3", "--debounce-period", "1m", "--debounce-max", "30s"}, "tributary: --debounce-max 30s is shorter than --debounce-period 1m0s; pass a --debounce-max of at least 1m0s, or 0 for no bound"},
		{[]string{"--debounce-period", "1m"}, "tributary: --debounce-period is for a debounced start, and --debounce is not given; pass --debounce <key> too, or leave --debounce-period out"},
		{[]string{"--debounce-max", "1m"}, "tributary: --debounce-max is for a debounced start, and --debounce is not given; pass --debounce <key> too, or leave --debounce-max out"},
		{[]string{"--debounce", "", "--debounce-period", "1m"}, "re:^tributary: --debounce .+"},
		{[]string{"--debounce", "doc-3", "--debounce-period", "1m", "--idempotency-key", "k"}, "re:^tributary: --debounce cannot be combined with --idempotency-key: .+"},
	} {
		res := runCLI(t, vars, append([]string{"workflow", "start", "index_doc"}, tc.args...)...)
		requireFailed(t, res, ExitUsage, tc.stderr)
	}

	wf, err := workflow.NewClient(db.Pool, &workflow.Config{Schema: db.Schema})
	require.NoError(t, err)
	runs, err := wf.ListRuns(t.Context(), nil)
	require.NoError(t, err)
	require.Len(t, runs, 2, "doc-1's run and doc-2's; nothing more was written")
}
