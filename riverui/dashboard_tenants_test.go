package riverui_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/schedule"
	"github.com/tributary-go/tributary/workflow"
)

// dash is the dashboard of f, with a client that does not follow
// redirects.
func (f *heldFixture) dash() *dash {
	client := *f.server.Client()
	client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &dash{client: &client, prefix: f.prefix, sc: f.sc, server: f.server, wf: f.wf}
}

// TestDashboardHeldRuns: the tenants page lists a limited tenant's running
// and held runs and its limit, and its forms set and clear the tenant's
// own limit; a held run's page says why it waits, and the runs page marks
// it.
func TestDashboardHeldRuns(t *testing.T) {
	t.Parallel()

	f := newHeldFixture(t, nil)
	d := f.dash()

	body := d.page(t, "/tenants", nil)
	requireNav(t, body, "")
	require.Contains(t, body, `<a data-testid="nav-tenants" href="/tenants" aria-current="page">Tenants</a>`)
	require.Equal(t, []string{"tenant_report"}, attrs(body, "tenant-row", "data-type"))
	require.Equal(t, []string{"1"}, texts(body, "tenant-running"))
	require.Contains(t, body, `<td class="num" data-testid="tenant-held"><a href="/runs?status=pending&amp;tenant=acme&amp;type=tenant_report"><span class="status status-held">2</span></a></td>`)
	require.Contains(t, body, `<td data-testid="tenant-limit">1 <span class="muted small">(the workflow type&#39;s limit)</span></td>`)
	require.Empty(t, attrs(body, "clear-limit", "name"), "no limit of its own to clear")

	// A held run's page, and the runs page.
	body = d.page(t, "/runs/"+f.held[0].String(), nil)
	require.Contains(t, body, `<p class="held" role="status" data-testid="run-held"><strong>Waiting: acme has 1 of 1 running (the workflow type&#39;s limit).</strong>`)
	require.Contains(t, body, `<a href="/tenants?tenant=acme&amp;type=tenant_report">See the tenant</a>`)
	require.NotContains(t, d.page(t, "/runs/"+f.running.String(), nil), `data-testid="run-held"`)
	body = d.page(t, "/runs", nil)
	require.Equal(t, []string{"Waiting: acme has 1 of 1 running", "Waiting: acme has 1 of 1 running"}, attrs(body, "run-held", "title"))

	// A schedule's run of the tenant, triggered, is held too: its ledger
	// marks it.
	s, err := f.sc.Create(t.Context(), &schedule.Params{Name: "acme reports", Workflow: "tenant_report", Tenant: "acme", Cron: "0 3 * * *"})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	_, err = f.sc.Trigger(ctx, schedule.ByID(s.ID), &schedule.TriggerOpts{Overlap: schedule.OverlapAllow})
	require.NoError(t, err)
	for held := false; !held; {
		runs, err := f.wf.ListRuns(ctx, &workflow.ListParams{ScheduleID: &s.ID})
		require.NoError(t, err)
		held = len(runs) == 1 && runs[0].Held == workflow.HeldTenantLimit
		select {
		case <-ctx.Done():
			t.Fatal("the triggered run was not held back")
		case <-time.After(10 * time.Millisecond):
		}
	}
	require.Equal(t, []string{"Waiting: acme has 1 of 1 running"}, attrs(d.page(t, "/schedules/"+s.ID.String(), nil), "run-held", "title"))

	// Set the tenant's own limit, then clear it.
	to := d.post(t, "/tenants/limit", url.Values{"type": {"tenant_report"}, "tenant": {"acme"}, "max_running": {"1"}})
	require.Equal(t, "/tenants?notice=limit-set&tenant=acme&type=tenant_report", to)
	body = d.page(t, to, nil)
	require.Equal(t, []string{"Tenant limit set. A limit raised starts held runs at once; one lowered holds back the next attempts until enough running ones end."}, texts(body, "flash"))
	require.Contains(t, body, `<td data-testid="tenant-limit">1 <span class="muted small">(limit set for the tenant)</span></td>`)
	require.Equal(t, []string{"tenant_report"}, attrs(body, "limit-type", "value"), "the form names the tenant filtered on")
	require.Equal(t, []string{"acme"}, attrs(body, "limit-tenant", "value"))
	require.Contains(t, d.page(t, "/runs/"+f.held[1].String(), nil), "Waiting: acme has 1 of 1 running (limit set for the tenant).")

	to = d.post(t, "/tenants/limit", url.Values{"type": {"tenant_report"}, "tenant": {"acme"}, "clear": {"1"}})
	require.Equal(t, "/tenants?notice=limit-cleared&tenant=acme&type=tenant_report", to)
	body = d.page(t, to, nil)
	require.Contains(t, body, `<td data-testid="tenant-limit">1 <span class="muted small">(the workflow type&#39;s limit)</span></td>`)
	limits, err := f.wf.TenantLimits(t.Context())
	require.NoError(t, err)
	require.Empty(t, limits)

	// What is wrong: the page again, with the error and the form as typed.
	for _, tc := range []struct {
		form url.Values
		want string
	}{
		{url.Values{"type": {"tenant_report"}, "tenant": {"acme"}, "max_running": {"many"}},
			`max_running: &#34;many&#34; is not a number of runs; use 1 or more, or clear the tenant&#39;s own limit`},
		{url.Values{"type": {"tenant report"}, "tenant": {"acme"}, "max_running": {"2"}},
			`type: workflow name &#34;tenant report&#34; has characters other than letters, digits and _ . : -; use a name such as &#34;send_invoice&#34;`},
		{url.Values{"type": {"tenant_report"}, "tenant": {"acme "}, "max_running": {"2"}},
			`workflow: invalid tenant: &#34;acme &#34; has a space at an end; trim it`},
	} {
		resp := d.send(t, http.MethodPost, "/tenants/limit", tc.form, map[string]string{"Sec-Fetch-Site": "same-origin"})
		require.Equal(t, http.StatusBadRequest, resp.status, resp.body)
		require.Equal(t, []string{tc.want}, texts(resp.body, "error"))
		require.Equal(t, []string{tc.form.Get("max_running")}, attrs(resp.body, "limit-max", "value"))
		require.True(t, strings.Contains(resp.body, `data-testid="tenant-row"`), "the tenants are listed below")
	}
	limits, err = f.wf.TenantLimits(t.Context())
	require.NoError(t, err)
	require.Empty(t, limits, "nothing was written")
}
