package riverui_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/riverqueue/river"
	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/internal/testdb"
	"github.com/tributary-go/tributary/riverui"
	"github.com/tributary-go/tributary/schedule"
	"github.com/tributary-go/tributary/workflow"
)

// heldFixture is a fixture whose client works tenant_report, a workflow
// type limited to 1 run of a tenant at once, with three runs of tenant
// acme: running works (until the test ends), held are held back.
type heldFixture struct {
	*fixture
	running uuid.UUID
	held    []uuid.UUID
}

func newHeldFixture(t *testing.T, config *riverui.Config) *heldFixture {
	t.Helper()

	db := testdb.New(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	working, release := make(chan uuid.UUID, 3), make(chan struct{})
	def := workflow.Define("tenant_report", func(ctx workflow.Context, _ struct{}) (struct{}, error) {
		working <- ctx.Run().ID
		select {
		case <-release:
		case <-ctx.Done():
		}
		return struct{}{}, nil
	}, &workflow.DefineOpts{TenantLimit: 1})
	wf, err := workflow.NewClient(db.Pool, &workflow.Config{
		Schema:    db.Schema,
		River:     &river.Config{Queues: map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 3}}, TestOnly: true},
		Workflows: []workflow.Registrable{def},
	})
	require.NoError(t, err)
	sc, err := schedule.New(wf, nil)
	require.NoError(t, err)
	require.NoError(t, wf.Start(context.Background()))
	t.Cleanup(func() { require.NoError(t, wf.Stop(context.Background())) })
	t.Cleanup(func() { close(release) })

	h, err := riverui.New(wf, sc, config)
	require.NoError(t, err)
	uiCtx, stopUI := context.WithCancel(context.Background())
	require.NoError(t, h.Start(uiCtx))
	server := httptest.NewServer(h)
	t.Cleanup(func() {
		server.Close()
		stopUI()
	})

	var ids []uuid.UUID
	for range 3 {
		h, err := def.Start(ctx, wf, struct{}{}, &workflow.StartOpts{Tenant: "acme"})
		require.NoError(t, err)
		ids = append(ids, h.ID)
	}
	f := &heldFixture{fixture: &fixture{sc: sc, server: server, wf: wf}}
	select {
	case f.running = <-working:
	case <-ctx.Done():
		t.Fatal("no run of tenant acme began")
	}
	// The two others wait, held: their jobs stay ready while acme has 1
	// of 1 running.
	for held := 0; held < 2; {
		runs, err := wf.ListRuns(ctx, &workflow.ListParams{Tenant: "acme", Status: workflow.StatusPending})
		require.NoError(t, err)
		held = 0
		for _, r := range runs {
			if r.Held == workflow.HeldTenantLimit {
				held++
			}
		}
		select {
		case <-ctx.Done():
			t.Fatal("the runs over the limit were not held back")
		case <-time.After(10 * time.Millisecond):
		}
	}
	for _, id := range ids {
		if id != f.running {
			f.held = append(f.held, id)
		}
	}
	if config != nil {
		f.token = config.Token
		f.prefix = config.Prefix
	}
	return f
}

// tenantAnswer is a tenant as the API answers it.
type tenantAnswer struct {
	Type        string `json:"type"`
	Tenant      string `json:"tenant"`
	Running     int    `json:"running"`
	Held        int    `json:"held"`
	Limit       int    `json:"limit"`
	LimitSource string `json:"limit_source"`
}

// TestAPITenants: GET /api/tenants lists a limited tenant's running and
// held runs and its limit; a held run answers held and why; PUT and
// DELETE of a tenant's limit set and remove its own limit and answer the
// tenant.
func TestAPITenants(t *testing.T) {
	t.Parallel()

	f := newHeldFixture(t, nil)
	var list struct {
		Tenants []tenantAnswer `json:"tenants"`
	}
	f.getJSON(t, "/api/tenants", http.StatusOK, &list)
	require.Equal(t, []tenantAnswer{{Type: "tenant_report", Tenant: "acme", Running: 1, Held: 2, Limit: 1, LimitSource: "type"}}, list.Tenants)
	f.getJSON(t, "/api/tenants?type=tenant_report&tenant=globex&limit=5", http.StatusOK, &list)
	require.Empty(t, list.Tenants)

	var run struct {
		Status     string `json:"status"`
		Held       string `json:"held"`
		HeldReason string `json:"held_reason"`
	}
	f.getJSON(t, "/api/runs/"+f.held[0].String(), http.StatusOK, &run)
	require.Equal(t, "pending", run.Status)
	require.Equal(t, "tenant_limit", run.Held)
	require.Equal(t, "acme has 1 of 1 running", run.HeldReason)
	f.getJSON(t, "/api/runs/"+f.running.String(), http.StatusOK, &run)
	require.Equal(t, "running", run.Status)
	require.Empty(t, run.Held)
	require.Empty(t, run.HeldReason)
	var page struct {
		Runs []map[string]any `json:"runs"`
	}
	f.getJSON(t, "/api/runs?tenant=acme&status=pending", http.StatusOK, &page)
	require.Len(t, page.Runs, 2)
	for _, r := range page.Runs {
		require.Equal(t, "tenant_limit", r["held"])
		require.Equal(t, "acme has 1 of 1 running", r["held_reason"])
	}

	status, body := f.do(t, http.MethodPut, "/api/tenants/tenant_report/acme/limit", `{"max_running": 1}`, nil)
	require.Equal(t, http.StatusOK, status, body)
	require.JSONEq(t, `{"type": "tenant_report", "tenant": "acme", "running": 1, "ready": 0, "held": 2, "rate_limited": 0, "limit": 1, "limit_source": "tenant", "rate": null, "rate_source": "", "next_token": ""}`, body)
	// A tenant with / in its name, on a type without a limit: kept.
	status, body = f.do(t, http.MethodPut, "/api/tenants/other_type/"+url.PathEscape("customer/42")+"/limit", `{"max_running": 5}`, nil)
	require.Equal(t, http.StatusOK, status, body)
	require.JSONEq(t, `{"type": "other_type", "tenant": "customer/42", "running": 0, "ready": 0, "held": 0, "rate_limited": 0, "limit": 5, "limit_source": "tenant", "rate": null, "rate_source": "", "next_token": ""}`, body)
	limits, err := f.wf.TenantLimits(t.Context())
	require.NoError(t, err)
	require.Len(t, limits, 2)

	status, body = f.do(t, http.MethodPut, "/api/tenants/other_type/"+url.PathEscape("customer/42")+"/limit", `{"max_running": 0}`, nil)
	require.Equal(t, http.StatusOK, status, body)
	require.JSONEq(t, `{"type": "other_type", "tenant": "customer/42", "running": 0, "ready": 0, "held": 0, "rate_limited": 0, "limit": 0, "limit_source": "", "rate": null, "rate_source": "", "next_token": ""}`, body)
	status, body = f.do(t, http.MethodDelete, "/api/tenants/tenant_report/acme/limit", "", nil)
	require.Equal(t, http.StatusOK, status, body)
	require.JSONEq(t, `{"type": "tenant_report", "tenant": "acme", "running": 1, "ready": 0, "held": 2, "rate_limited": 0, "limit": 1, "limit_source": "type", "rate": null, "rate_source": "", "next_token": ""}`, body)
	limits, err = f.wf.TenantLimits(t.Context())
	require.NoError(t, err)
	require.Empty(t, limits)
}

// TestAPITenantsRefused: what is wrong is a 400 about its field, and
// nothing is written.
func TestAPITenantsRefused(t *testing.T) {
	t.Parallel()

	f := newFixture(t, nil)
	for _, tc := range []struct {
		method, path, body string
		want               errorBody
	}{
		{http.MethodGet, "/api/tenants?tenant=" + url.QueryEscape("acme\x00"), "",
			errorBody{Field: "tenant", Error: `invalid tenant: "acme\x00" holds U+0000, which cannot be shown; use printable characters`}},
		{http.MethodGet, "/api/tenants?limit=0", "", errorBody{Field: "limit", Error: `limit="0" is not a number from 1 to 1000`}},
		{http.MethodGet, "/api/tenants?status=held", "", errorBody{Field: "status", Error: "status= is not a query parameter of this listing; it takes type, tenant, limit"}},
		{http.MethodPut, "/api/tenants/send_report/acme/limit", "", errorBody{Error: "request body is empty; send a limit as a JSON object"}},
		{http.MethodPut, "/api/tenants/send_report/acme/limit", `{}`,
			errorBody{Field: "max_running", Error: `max_running: is missing; send the most runs of the tenant that may work at once: {"max_running": 5}, or 0 to remove the tenant's own limit`}},
		{http.MethodPut, "/api/tenants/send_report/acme/limit", `{"max_running": -1}`,
			errorBody{Field: "max_running", Error: "invalid max_running: is -1; use 1 or more, or 0 to remove the tenant's own limit"}},
		{http.MethodPut, "/api/tenants/send_report/acme/limit", `{"max_running": "5"}`,
			errorBody{Field: "max_running", Error: `max_running: "5" is not a whole number`}},
		{http.MethodPut, "/api/tenants/send_report/acme/limit", `{"max": 5}`,
			errorBody{Field: "max", Error: "max: unknown field in a limit; the fields are max_running"}},
		{http.MethodPut, "/api/tenants/send%20report/acme/limit", `{"max_running": 5}`,
			errorBody{Field: "type", Error: `type: workflow name "send report" has characters other than letters, digits and _ . : -; use a name such as "send_invoice"`}},
		{http.MethodPut, "/api/tenants/send_report/acme%20/limit", `{"max_running": 5}`,
			errorBody{Field: "tenant", Error: `invalid tenant: "acme " has a space at an end; trim it`}},
		{http.MethodDelete, "/api/tenants/send_report/acme%20/limit", "",
			errorBody{Field: "tenant", Error: `invalid tenant: "acme " has a space at an end; trim it`}},
	} {
		status, body := f.do(t, tc.method, tc.path, tc.body, nil)
		require.Equal(t, http.StatusBadRequest, status, "%s %s: %s", tc.method, tc.path, body)
		require.Equal(t, tc.want, decodeError(t, body), "%s %s", tc.method, tc.path)
	}
	limits, err := f.wf.TenantLimits(t.Context())
	require.NoError(t, err)
	require.Empty(t, limits, "nothing was written")
}
