package cli

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/riverui"
	"github.com/tributary-go/tributary/schedule"
	"github.com/tributary-go/tributary/workflow"
)

// TestJSONIsTheAPIs: the CLI's --json prints what the API answers about
// the same object (internal/wire): a run, a schedule, a grant, a calendar
// and the listings of each.
func TestJSONIsTheAPIs(t *testing.T) {
	t.Parallel()

	db, vars := migratedDB(t)
	wf, err := workflow.NewClient(db.Pool, &workflow.Config{Schema: db.Schema, Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	sc, err := schedule.New(wf, nil)
	require.NoError(t, err)
	h, err := riverui.New(wf, sc, nil)
	require.NoError(t, err)
	server := httptest.NewServer(h)
	t.Cleanup(server.Close)

	api := func(path string) string {
		t.Helper()
		status, body := httpGet(t, server.URL+path, "")
		require.Equal(t, http.StatusOK, status, body)
		return body
	}
	cli := func(args ...string) string {
		t.Helper()
		res := runCLI(t, vars, append(args, "--json")...)
		require.Equal(t, ExitOK, res.code, res.stderr)
		return res.stdout
	}
	idOf := func(out string) string {
		t.Helper()
		var v struct{ ID string }
		require.NoError(t, json.Unmarshal([]byte(out), &v))
		return v.ID
	}

	run := idOf(cli("workflow", "start", "send_report", "--input", `{"to": "ops"}`, "--tenant", "acme"))
	require.JSONEq(t, api("/api/runs/"+run), cli("workflow", "get", run))
	require.JSONEq(t, api("/api/runs?limit=10"), cli("workflow", "list", "--limit", "10"))
	require.JSONEq(t, api("/api/tenants"), cli("tenants"))

	sched := idOf(cli("schedule", "create", "--name", "nightly", "--cron", "30 2 * * *", "--tz", "Europe/Paris", "--workflow", "send_report",
		"--owner", "acme", "--key", "nightly", "--catchup", "90m", "--timeout", "10m"))
	get := cli("schedule", "get", sched)
	require.JSONEq(t, api("/api/schedules/"+sched), get)
	require.Contains(t, get, `"catch_up_window": "1h30m0s"`) // durations as Go duration strings
	require.JSONEq(t, api("/api/schedules?owner=acme&limit=5"), cli("schedule", "list", "--owner", "acme", "--limit", "5"))
	trigger := runCLI(t, vars, "schedule", "trigger", sched)
	require.Equal(t, ExitOK, trigger.code, trigger.stderr)
	require.JSONEq(t, api("/api/schedules/"+sched+"/history"), cli("schedule", "history", sched))

	grant := idOf(cli("grant", "create", "--subject", "user-42", "--scope", "workflow:execute:send_report", "--expires-in", "720h"))
	require.JSONEq(t, api("/api/grants/"+grant), cli("grant", "get", grant))
	require.JSONEq(t, api("/api/grants"), cli("grant", "list"))

	res := runCLI(t, vars, "calendar", "create", "holidays", "--dates", "2027-12-24", "--note", "Christmas Eve")
	require.Equal(t, ExitOK, res.code, res.stderr)
	require.JSONEq(t, api("/api/calendars/holidays"), cli("calendar", "get", "holidays"))
	require.JSONEq(t, api("/api/calendars"), cli("calendar", "list"))

	// None of the Go types' own names is left.
	for _, old := range []string{`"workflow_type"`, `"parent_run_id"`, `"catchup_window"`, `"overlap_policy"`, `"catchup_policy"`} {
		require.False(t, strings.Contains(get, old), old)
	}
}
