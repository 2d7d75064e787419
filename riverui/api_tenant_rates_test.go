package riverui_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/internal/testdb"
	"github.com/tributary-go/tributary/riverui"
	"github.com/tributary-go/tributary/schedule"
	"github.com/tributary-go/tributary/workflow"
)

// newRatedFixture is a fixture whose client works tenant_rated, a
// workflow type rated to 1 attempt an hour per tenant, with three runs of
// tenant acme: the first (running) took acme's one token and completed;
// the two others (held) wait for its rate.
func newRatedFixture(t *testing.T) *heldFixture {
	t.Helper()

	db := testdb.New(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	def := workflow.Define("tenant_rated", func(workflow.Context, struct{}) (struct{}, error) { return struct{}{}, nil },
		&workflow.DefineOpts{TenantRate: workflow.Rate{Limit: 1, Per: time.Hour}})
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

	h, err := riverui.New(wf, sc, nil)
	require.NoError(t, err)
	uiCtx, stopUI := context.WithCancel(context.Background())
	require.NoError(t, h.Start(uiCtx))
	server := httptest.NewServer(h)
	t.Cleanup(func() {
		server.Close()
		stopUI()
	})

	f := &heldFixture{fixture: &fixture{sc: sc, server: server, wf: wf}}
	for i := range 3 {
		h, err := def.Start(ctx, wf, struct{}{}, &workflow.StartOpts{Tenant: "acme"})
		require.NoError(t, err)
		if i == 0 {
			f.running = h.ID
			_, err := h.Result(ctx)
			require.NoError(t, err, "the first takes acme's one token")
			continue
		}
		f.held = append(f.held, h.ID)
	}
	for waiting := 0; waiting < 2; {
		runs, err := wf.ListRuns(ctx, &workflow.ListParams{Tenant: "acme", Status: workflow.StatusPending})
		require.NoError(t, err)
		waiting = 0
		for _, r := range runs {
			if r.Held == workflow.HeldTenantRate {
				waiting++
			}
		}
		select {
		case <-ctx.Done():
			t.Fatal("the runs beyond acme's token were not reported waiting for its rate")
		case <-time.After(10 * time.Millisecond):
		}
	}
	return f
}

// nextToken matches the wait for a token of a rate of 1 an hour, as the
// API and the pages say it.
const nextToken = `(59m\d+(\.\d)?s|1h0m0s)`

// TestAPITenantRates: GET /api/tenants counts a rated tenant's runs
// waiting for its rate apart from its ready ones, with its rate and next
// token; a waiting run answers held "tenant_rate" and why; PUT and DELETE
// of a tenant's rate set and remove its own rate and answer the tenant.
func TestAPITenantRates(t *testing.T) {
	t.Parallel()

	f := newRatedFixture(t)
	var list struct {
		Tenants []map[string]any `json:"tenants"`
	}
	f.getJSON(t, "/api/tenants", http.StatusOK, &list)
	require.Len(t, list.Tenants, 1)
	got := list.Tenants[0]
	require.Regexp(t, `^(59m\d+(\.\d{1,3})?s|1h0m0s)$`, got["next_token"], "to the millisecond")
	delete(got, "next_token")
	require.Equal(t, map[string]any{"type": "tenant_rated", "tenant": "acme", "running": 0.0, "ready": 0.0, "held": 0.0, "rate_limited": 2.0,
		"limit": 0.0, "limit_source": "", "rate": map[string]any{"limit": 1.0, "per": "1h0m0s"}, "rate_source": "type"}, got)

	var run struct {
		Status     string `json:"status"`
		Held       string `json:"held"`
		HeldReason string `json:"held_reason"`
	}
	f.getJSON(t, "/api/runs/"+f.held[0].String(), http.StatusOK, &run)
	require.Equal(t, "pending", run.Status)
	require.Equal(t, "tenant_rate", run.Held)
	require.Regexp(t, "^acme is at its rate, 1 per 1h0m0s; next token in "+nextToken+"$", run.HeldReason)
	f.getJSON(t, "/api/runs/"+f.running.String(), http.StatusOK, &run)
	require.Equal(t, "completed", run.Status)
	require.Empty(t, run.Held)
	var page struct {
		Runs []map[string]any `json:"runs"`
	}
	f.getJSON(t, "/api/runs?tenant=acme&status=pending", http.StatusOK, &page)
	require.Len(t, page.Runs, 2)
	for _, r := range page.Runs {
		require.Equal(t, "tenant_rate", r["held"])
	}

	tokenless := regexp.MustCompile(`"next_token": ?"[^"]*"`)
	status, body := f.do(t, http.MethodPut, "/api/tenants/tenant_rated/acme/rate", `{"limit": 2, "per": "1h"}`, nil)
	require.Equal(t, http.StatusOK, status, body)
	require.JSONEq(t, `{"type": "tenant_rated", "tenant": "acme", "running": 0, "ready": 0, "held": 0, "rate_limited": 2, "limit": 0, "limit_source": "",
		"rate": {"limit": 2, "per": "1h0m0s"}, "rate_source": "tenant", "next_token": ""}`, tokenless.ReplaceAllString(body, `"next_token": ""`))
	// A tenant with / in its name, on a type without a rate: kept.
	status, body = f.do(t, http.MethodPut, "/api/tenants/other_type/"+url.PathEscape("customer/42")+"/rate", `{"limit": 5, "per": "1s"}`, nil)
	require.Equal(t, http.StatusOK, status, body)
	require.JSONEq(t, `{"type": "other_type", "tenant": "customer/42", "running": 0, "ready": 0, "held": 0, "rate_limited": 0, "limit": 0, "limit_source": "",
		"rate": {"limit": 5, "per": "1s"}, "rate_source": "tenant", "next_token": ""}`, body)
	rates, err := f.wf.TenantRates(t.Context())
	require.NoError(t, err)
	require.Len(t, rates, 2)

	status, body = f.do(t, http.MethodPut, "/api/tenants/other_type/"+url.PathEscape("customer/42")+"/rate", `{"limit": 0}`, nil)
	require.Equal(t, http.StatusOK, status, body)
	require.JSONEq(t, `{"type": "other_type", "tenant": "customer/42", "running": 0, "ready": 0, "held": 0, "rate_limited": 0, "limit": 0, "limit_source": "",
		"rate": null, "rate_source": "", "next_token": ""}`, body)
	status, body = f.do(t, http.MethodDelete, "/api/tenants/tenant_rated/acme/rate", "", nil)
	require.Equal(t, http.StatusOK, status, body)
	require.Contains(t, body, `"rate_source":"type"`)
	rates, err = f.wf.TenantRates(t.Context())
	require.NoError(t, err)
	require.Empty(t, rates)
}

// TestAPITenantRatesRefused: what is wrong with a tenant's rate is a 400
// about its field, and nothing is written.
func TestAPITenantRatesRefused(t *testing.T) {
	t.Parallel()

	f := newFixture(t, nil)
	const path = "/api/tenants/send_report/acme/rate"
	for _, tc := range []struct {
		method, path, body string
		want               errorBody
	}{
		{http.MethodPut, path, "", errorBody{Error: "request body is empty; send a rate as a JSON object"}},
		{http.MethodPut, path, `{"per": "1m"}`, errorBody{Field: "limit",
			Error: `limit: is missing; send the most attempts of the tenant's runs that start per period: {"limit": 100, "per": "1m"}, or {"limit": 0} to remove the tenant's own rate`}},
		{http.MethodPut, path, `{"limit": -1, "per": "1m"}`, errorBody{Field: "limit", Error: "limit: is -1; use 1 or more, or 0 to remove the tenant's own rate"}},
		{http.MethodPut, path, `{"limit": 100}`, errorBody{Field: "per",
			Error: `per: is missing or 0s; send the rate's period, a Go duration such as "1m": {"limit": 100, "per": "1m"}`}},
		{http.MethodPut, path, `{"limit": 100, "per": "a minute"}`, errorBody{Field: "per", Error: `per: "a minute" is not a Go duration such as "90s", "15m" or "1h30m"`}},
		{http.MethodPut, path, `{"limit": 100, "per": 60}`, errorBody{Field: "per", Error: `per: 60 is not a Go duration such as "90s", "15m" or "1h30m"`}},
		{http.MethodPut, path, `{"limit": 100, "per": "1ns"}`, errorBody{Field: "per", Error: "invalid per: is 1ns; give 1µs or more (a tenant's rate is kept to the microsecond)"}},
		{http.MethodPut, path, `{"limit": 3000000000, "per": "1h"}`, errorBody{Field: "limit", Error: "invalid limit: is 3000000000; use at most 2147483647, over a shorter period if need be"}},
		{http.MethodPut, path, `{"limit": 100, "per": "1m", "burst": 5}`, errorBody{Field: "burst", Error: "burst: unknown field in a rate; the fields are limit, per"}},
		{http.MethodPut, "/api/tenants/send%20report/acme/rate", `{"limit": 100, "per": "1m"}`,
			errorBody{Field: "type", Error: `type: workflow name "send report" has characters other than letters, digits and _ . : -; use a name such as "send_invoice"`}},
		{http.MethodPut, "/api/tenants/send_report/acme%20/rate", `{"limit": 100, "per": "1m"}`,
			errorBody{Field: "tenant", Error: `invalid tenant: "acme " has a space at an end; trim it`}},
		{http.MethodDelete, "/api/tenants/send_report/acme%20/rate", "",
			errorBody{Field: "tenant", Error: `invalid tenant: "acme " has a space at an end; trim it`}},
	} {
		status, body := f.do(t, tc.method, tc.path, tc.body, nil)
		require.Equal(t, http.StatusBadRequest, status, "%s %s %s: %s", tc.method, tc.path, tc.body, body)
		require.Equal(t, tc.want, decodeError(t, body), "%s %s %s", tc.method, tc.path, tc.body)
	}
	rates, err := f.wf.TenantRates(t.Context())
	require.NoError(t, err)
	require.Empty(t, rates, "nothing was written")
}

// TestDashboardTenantRates: the tenants page counts a rated tenant's runs
// waiting for its rate and shows its rate, and its form sets and clears
// the tenant's own rate; a waiting run's page says why, and the runs page
// marks it rate-limited.
func TestDashboardTenantRates(t *testing.T) {
	t.Parallel()

	f := newRatedFixture(t)
	d := f.dash()

	body := d.page(t, "/tenants", nil)
	require.Equal(t, []string{"tenant_rated"}, attrs(body, "tenant-row", "data-type"))
	require.Equal(t, []string{"0"}, texts(body, "tenant-ready"))
	require.Regexp(t, `<td class="num" data-testid="tenant-rate-limited"><a href="/runs\?status=pending&amp;tenant=acme&amp;type=tenant_rated" title="next token in `+
		nextToken+`"><span class="status status-held">2</span></a> <span class="muted small">next in `+nextToken+`</span></td>`, body)
	require.Contains(t, body, `<td data-testid="tenant-rate">1 per 1h0m0s <span class="muted small">(the workflow type&#39;s rate)</span></td>`)
	require.Empty(t, attrs(body, "clear-rate", "name"), "no rate of its own to clear")

	body = d.page(t, "/runs/"+f.held[0].String(), nil)
	require.Contains(t, body, `<span class="badge status-held" data-testid="run-held-badge">rate-limited</span>`)
	require.Regexp(t, `<strong>Waiting for its rate: acme is at its rate, 1 per 1h0m0s; next token in `+nextToken+
		` \(the workflow type&#39;s rate\)\.</strong> The run starts in its tenant's turn once a token of its rate is there for it\.`, body)
	body = d.page(t, "/runs", nil)
	require.Len(t, attrs(body, "run-held", "title"), 2)
	require.Equal(t, 2, strings.Count(body, `>rate-limited</span>`))

	// Set the tenant's own rate, then clear it.
	to := d.post(t, "/tenants/rate", url.Values{"type": {"tenant_rated"}, "tenant": {"acme"}, "limit": {"2"}, "per": {"1h"}})
	require.Equal(t, "/tenants?notice=rate-set&tenant=acme&type=tenant_rated", to)
	body = d.page(t, to, nil)
	require.Equal(t, []string{"Tenant rate set. It applies from the next fetch: the tenant&#39;s bucket keeps its tokens and refills at the new rate."}, texts(body, "flash"))
	require.Contains(t, body, `<td data-testid="tenant-rate">2 per 1h0m0s <span class="muted small">(rate set for the tenant)</span></td>`)
	require.Equal(t, []string{"tenant_rated"}, attrs(body, "rate-type", "value"), "the form names the tenant filtered on")
	require.Equal(t, []string{"acme"}, attrs(body, "rate-tenant", "value"))
	require.Contains(t, d.page(t, "/runs/"+f.held[1].String(), nil), "(rate set for the tenant).")

	to = d.post(t, "/tenants/rate", url.Values{"type": {"tenant_rated"}, "tenant": {"acme"}, "clear": {"1"}})
	require.Equal(t, "/tenants?notice=rate-cleared&tenant=acme&type=tenant_rated", to)
	body = d.page(t, to, nil)
	require.Contains(t, body, `<td data-testid="tenant-rate">1 per 1h0m0s <span class="muted small">(the workflow type&#39;s rate)</span></td>`)

	// What is wrong: the page again, with the error and the form as typed.
	for _, tc := range []struct {
		form url.Values
		want string
	}{
		{url.Values{"type": {"tenant_rated"}, "tenant": {"acme"}, "limit": {"many"}, "per": {"1m"}},
			`limit: &#34;many&#34; is not a number of starts; use 1 or more, or clear the tenant&#39;s own rate`},
		{url.Values{"type": {"tenant_rated"}, "tenant": {"acme"}, "limit": {"5"}, "per": {"a minute"}},
			`per: &#34;a minute&#34; is not a period; use a Go duration such as 1s, 1m or 1h`},
		{url.Values{"type": {"tenant rated"}, "tenant": {"acme"}, "limit": {"5"}, "per": {"1m"}},
			`type: workflow name &#34;tenant rated&#34; has characters other than letters, digits and _ . : -; use a name such as &#34;send_invoice&#34;`},
		{url.Values{"type": {"tenant_rated"}, "tenant": {"acme "}, "limit": {"5"}, "per": {"1m"}},
			`workflow: invalid tenant: &#34;acme &#34; has a space at an end; trim it`},
	} {
		resp := d.send(t, http.MethodPost, "/tenants/rate", tc.form, map[string]string{"Sec-Fetch-Site": "same-origin"})
		require.Equal(t, http.StatusBadRequest, resp.status, resp.body)
		require.Equal(t, []string{tc.want}, texts(resp.body, "error"))
		require.Equal(t, []string{tc.form.Get("limit")}, attrs(resp.body, "rate-limit", "value"))
		require.Equal(t, []string{tc.form.Get("per")}, attrs(resp.body, "rate-per", "value"))
	}
	rates, err := f.wf.TenantRates(t.Context())
	require.NoError(t, err)
	require.Empty(t, rates, "nothing was written")
}
