package demo

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/internal/testdb"
	"github.com/tributary-go/tributary/riverui"
	"github.com/tributary-go/tributary/schedule"
	"github.com/tributary-go/tributary/workflow"
)

func TestMain(m *testing.M) { testdb.Main(m) }

// startDemo starts a Demo on db, stopped when the test ends.
func startDemo(ctx context.Context, t *testing.T, db *testdb.DB) *Demo {
	t.Helper()

	d, err := New(db.Pool, &Config{Schema: db.Schema})
	require.NoError(t, err)
	require.NoError(t, d.Start(ctx))
	t.Cleanup(func() { require.NoError(t, d.Stop(context.Background())) })
	return d
}

// get fetches url and returns its status code and body.
func get(ctx context.Context, t *testing.T, url string) (int, string) {
	t.Helper()

	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(body)
}

func scheduleIDs(schedules []*schedule.Schedule) []uuid.UUID {
	ids := make([]uuid.UUID, len(schedules))
	for i, s := range schedules {
		ids[i] = s.ID
	}
	return ids
}

func TestDemo(t *testing.T) {
	t.Parallel()

	db := testdb.New(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	d := startDemo(ctx, t, db)

	// The script: completed, sleeping and waiting runs, and schedules.
	var out bytes.Buffer
	scripted, err := d.Script(ctx, &out)
	require.NoError(t, err)
	t.Logf("script:\n%s", out.String())
	require.Contains(t, out.String(), "Welcome aboard, Ada")
	require.Regexp(t, `(?m)^     create_account +step +completed `, out.String())
	require.Equal(t, workflow.StatusSleeping, scripted.Sleeping.Status)
	require.Equal(t, workflow.StatusWaiting, scripted.Waiting.Status)
	require.Len(t, scripted.Schedules, 3)
	require.Equal(t, "demo-heartbeat", scripted.Heartbeat.Name)
	require.Equal(t, "*/10 * * * * *", scripted.Heartbeat.Cron)
	require.True(t, scripted.Schedules[2].Paused)
	require.Regexp(t, `(?m)^   demo-daily-report +0 9 \* \* \* +Asia/Tokyo +next \d{4}-\d\d-\d\d 09:00:00 JST +owner finance-tokyo$`, out.String())

	// Three exports of one tenant: one works, two are held by its limit.
	require.Len(t, scripted.Exports, 3)
	held := 0
	for _, run := range scripted.Exports {
		require.Equal(t, ExportTenant, run.Tenant)
		if run.Held != "" {
			held++
		}
	}
	require.Equal(t, 2, held)
	require.Equal(t, 2, strings.Count(out.String(), ": pending, held: demo-tenant has 1 of 1 running\n"))
	tenants, err := d.Workflows.Tenants(ctx, &workflow.TenantParams{Tenant: ExportTenant})
	require.NoError(t, err)
	require.Len(t, tenants, 1)
	require.Equal(t, workflow.Tenant{Type: Export.Name(), Tenant: ExportTenant, Running: 1, Held: 2, Limit: 1, LimitSource: "type"}, *tenants[0])

	// The UI serves the demo's clients.
	handler, err := riverui.New(d.Workflows, d.Schedules, nil)
	require.NoError(t, err)
	uiCtx, stopUI := context.WithCancel(ctx)
	defer stopUI()
	require.NoError(t, handler.Start(uiCtx))
	server := httptest.NewServer(handler)
	defer server.Close()
	status, body := get(ctx, t, server.URL+"/schedules")
	require.Equal(t, http.StatusOK, status, body)
	require.Contains(t, body, "demo-heartbeat")
	// The daily report's page shows the grant it runs under.
	status, body = get(ctx, t, server.URL+"/schedules/"+scripted.Schedules[1].ID.String())
	require.Equal(t, http.StatusOK, status, body)
	require.Contains(t, body, scripted.Grant.ID.String())
	// The fork links to Ada's first run; the bulk retry retried the charge.
	require.NotNil(t, scripted.Fork.ForkedFrom)
	require.Equal(t, "render_welcome", scripted.Fork.ForkedFromStep)
	require.NotEmpty(t, scripted.BulkRetry.Changed)
	status, body = get(ctx, t, server.URL+"/api/runs")
	require.Equal(t, http.StatusOK, status, body)
	require.Contains(t, body, scripted.Waiting.ID.String())

	// A heartbeat fires and runs; the live log says so.
	var live bytes.Buffer
	require.NoError(t, d.Follow(ctx, &live, d.HeartbeatRan))
	t.Logf("live log:\n%s", live.String())
	require.Regexp(t, `(?m)^\d\d:\d\d:\d\d  run \S+  demo-heartbeat fired its \d\d:\d\d:\d0 slot$`, live.String())
	require.Regexp(t, `(?m)^\d\d:\d\d:\d\d  run \S+  demo_heartbeat completed in \d+m?s: "accounts-db healthy, 3 accounts"$`, live.String())
	require.NotContains(t, live.String(), "demo_onboard") // the script reported those

	// The waiting run finishes on its signal, and the live log says so.
	require.NoError(t, d.Workflows.Signal(ctx, scripted.Waiting.ID, "decision", Decision{Approved: true, By: "finance"}))
	live.Reset()
	require.NoError(t, d.Follow(ctx, &live, func(run *workflow.Run) bool { return run.ID == scripted.Waiting.ID }))
	require.Contains(t, live.String(), "  run "+scripted.Waiting.ID.String()+`  demo_approval completed in `)
	require.Contains(t, live.String(), `: "laptop (1200) approved by finance and ordered"`)

	// On the same database again, the script finds its schedules and the
	// onboarding and sleeping runs, and starts a new approval to wait.
	again := startDemo(ctx, t, db)
	out.Reset()
	scriptedAgain, err := again.Script(ctx, &out)
	require.NoError(t, err)
	require.Equal(t, scheduleIDs(scripted.Schedules), scheduleIDs(scriptedAgain.Schedules))
	require.Equal(t, scripted.Sleeping.ID, scriptedAgain.Sleeping.ID)
	require.NotEqual(t, scripted.Waiting.ID, scriptedAgain.Waiting.ID)
	require.Equal(t, workflow.StatusWaiting, scriptedAgain.Waiting.Status)
	all, err := again.Schedules.List(ctx, nil)
	require.NoError(t, err)
	require.Len(t, all, 3)
	require.Equal(t, scripted.Fork.ID, scriptedAgain.Fork.ID, "the fork made before is shown again")
	onboards, err := again.Workflows.ListRuns(ctx, &workflow.ListParams{Type: Onboard.Name()})
	require.NoError(t, err)
	require.Len(t, onboards, 4, "three signups and one fork")
}
