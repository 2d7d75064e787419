package riverui_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/schedule"
	"github.com/tributary-go/tributary/workflow"
)

// TestAPIRunTenants: POST /api/runs takes a tenant, which a run's answer
// holds ("" for none) and GET /api/runs?tenant= filters on; a tenant that
// is not a tenant name is a 400 about the field "tenant", and nothing is
// written.
func TestAPIRunTenants(t *testing.T) {
	t.Parallel()

	f := newFixture(t, nil)
	status, body := f.do(t, http.MethodPost, "/api/runs", `{"type": "send_report", "tenant": "acme"}`, nil)
	require.Equal(t, http.StatusCreated, status, body)
	acme := object(t, body)
	require.Equal(t, "acme", acme["tenant"])
	status, body = f.do(t, http.MethodPost, "/api/runs", `{"type": "send_report"}`, nil)
	require.Equal(t, http.StatusCreated, status, body)
	require.Equal(t, "", object(t, body)["tenant"], "present, empty, for none")

	var page struct {
		Runs []map[string]any `json:"runs"`
	}
	f.getJSON(t, "/api/runs?tenant=acme", http.StatusOK, &page)
	require.Len(t, page.Runs, 1)
	require.Equal(t, acme["id"], page.Runs[0]["id"])
	f.getJSON(t, "/api/runs?tenant=globex", http.StatusOK, &page)
	require.Empty(t, page.Runs)
	f.getJSON(t, "/api/runs", http.StatusOK, &page)
	require.Len(t, page.Runs, 2)

	var e errorBody
	f.getJSON(t, "/api/runs?tenant="+url.QueryEscape("acme\x00"), http.StatusBadRequest, &e)
	require.Equal(t, "tenant", e.Field)
	require.Equal(t, `invalid tenant: "acme\x00" holds U+0000, which cannot be shown; use printable characters`, e.Error)

	status, body = f.do(t, http.MethodPost, "/api/runs", `{"type": "send_report", "tenant": "acme "}`, nil)
	require.Equal(t, http.StatusBadRequest, status, body)
	require.Equal(t, errorBody{Field: "tenant", Error: `invalid tenant: "acme " has a space at an end; trim it`}, decodeError(t, body))
	runs, err := f.wf.ListRuns(t.Context(), nil)
	require.NoError(t, err)
	require.Len(t, runs, 2, "nothing was started")
}

// TestAPIScheduleTenants: a schedule's tenant is written by POST and PATCH
// /api/schedules as the Go API's Params.Tenant ("" for the owner's), and
// answered with run_tenant, the tenant its runs carry; a trigger's run
// carries it.
func TestAPIScheduleTenants(t *testing.T) {
	t.Parallel()

	f := newFixture(t, nil)
	status, body := f.do(t, http.MethodPost, "/api/schedules", `{"name": "digest", "owner": "user-42", "workflow": "digest", "cron": "0 8 * * *"}`, nil)
	require.Equal(t, http.StatusCreated, status, body)
	s := object(t, body)
	require.Equal(t, "", s["tenant"])
	require.Equal(t, "user-42", s["run_tenant"])
	path := "/api/schedules/" + s["id"].(string)

	status, body = f.do(t, http.MethodPatch, path, `{"tenant": "team-7"}`, nil)
	require.Equal(t, http.StatusOK, status, body)
	require.Equal(t, "team-7", object(t, body)["tenant"])
	require.Equal(t, "team-7", object(t, body)["run_tenant"])
	status, body = f.do(t, http.MethodPost, path+"/trigger", `{"overlap": "allow"}`, nil)
	require.Equal(t, http.StatusOK, status, body)
	runID := object(t, body)["run_id"].(string)
	status, body = f.do(t, http.MethodGet, "/api/runs/"+runID, "", nil)
	require.Equal(t, http.StatusOK, status, body)
	require.Equal(t, "team-7", object(t, body)["tenant"])

	status, body = f.do(t, http.MethodPatch, path, `{"tenant": ""}`, nil)
	require.Equal(t, http.StatusOK, status, body)
	require.Equal(t, "", object(t, body)["tenant"])
	require.Equal(t, "user-42", object(t, body)["run_tenant"], "the owner's again")

	// A bad tenant: a 400 about the field, nothing written.
	status, body = f.do(t, http.MethodPatch, path, `{"tenant": " team-7"}`, nil)
	require.Equal(t, http.StatusBadRequest, status, body)
	require.Equal(t, errorBody{Field: "tenant", Error: `invalid tenant: " team-7" has a space at an end; trim it`}, decodeError(t, body))
	status, body = f.do(t, http.MethodPost, "/api/schedules", `{"name": "bad", "owner": "bad-tenant", "tenant": "a\tb", "workflow": "digest", "cron": "0 8 * * *"}`, nil)
	require.Equal(t, http.StatusBadRequest, status, body)
	require.Equal(t, errorBody{Field: "tenant", Error: `invalid tenant: "a\tb" holds U+0009, which cannot be shown; use printable characters`}, decodeError(t, body))
	list, err := f.sc.List(t.Context(), &schedule.ListParams{Owner: "bad-tenant"})
	require.NoError(t, err)
	require.Empty(t, list)

	// run_tenant is read-only: a create refuses it, a PATCH ignores it.
	status, body = f.do(t, http.MethodPost, "/api/schedules", `{"name": "x", "workflow": "digest", "cron": "@daily", "run_tenant": "acme"}`, nil)
	require.Equal(t, http.StatusBadRequest, status, body)
	require.Equal(t, "run_tenant", decodeError(t, body).Field)
	status, body = f.do(t, http.MethodPatch, path, `{"run_tenant": "acme"}`, nil)
	require.Equal(t, http.StatusOK, status, body)
	require.Equal(t, "user-42", object(t, body)["run_tenant"])

	runs, err := f.wf.ListRuns(t.Context(), &workflow.ListParams{Tenant: "team-7"})
	require.NoError(t, err)
	require.Len(t, runs, 1)
}

// decodeError decodes an error answer.
func decodeError(t *testing.T, body string) errorBody {
	t.Helper()
	var e errorBody
	require.NoError(t, json.Unmarshal([]byte(body), &e), body)
	return e
}
