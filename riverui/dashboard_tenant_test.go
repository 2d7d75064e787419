package riverui_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/schedule"
	"github.com/tributary-go/tributary/workflow"
)

// TestDashboardTenants: the runs page shows each run's tenant and filters
// on one; a run's page shows its tenant; a schedule's page shows its runs'
// tenant, saying when it is the owner's; the edit form changes it.
func TestDashboardTenants(t *testing.T) {
	t.Parallel()

	d := newDash(t, nil, true)
	acme, err := flow.Start(t.Context(), d.wf, flowInput{User: "ada", Mode: "wait"}, &workflow.StartOpts{Tenant: "acme & co"})
	require.NoError(t, err)
	d.waitStatus(t, acme.ID, workflow.StatusWaiting)
	none := d.start(t, flowInput{User: "bob"})

	// The runs page: a Tenant column, linking the tenant's runs.
	body := d.page(t, "/runs", nil)
	require.Contains(t, body, `<th>Workflow</th><th>Tenant</th><th>Status</th>`)
	require.Equal(t, 1, strings.Count(body, `<td data-testid="run-tenant"><span class="muted">—</span></td>`), "the run without one")
	require.Contains(t, body, `<td data-testid="run-tenant"><a href="/runs?tenant=acme%20%26%20co">acme &amp; co</a></td>`)
	require.Equal(t, []string{""}, attrs(body, "tenant-filter", "value"))

	// The filter.
	hrefs := func(query url.Values) []string {
		return attrs(d.page(t, "/runs?"+query.Encode(), nil), "run-link", "href")
	}
	require.Equal(t, []string{"/runs/" + acme.ID.String()}, hrefs(url.Values{"tenant": {"acme & co"}}))
	require.Equal(t, []string{"/runs/" + acme.ID.String()}, hrefs(url.Values{"tenant": {" acme & co "}}), "spaces typed at the ends are dropped")
	require.Empty(t, hrefs(url.Values{"tenant": {"globex"}}))
	require.Len(t, hrefs(url.Values{"tenant": {""}}), 2)
	filtered := d.page(t, "/runs?tenant=acme+%26+co", nil)
	require.Equal(t, []string{"acme &amp; co"}, attrs(filtered, "tenant-filter", "value"))
	require.Equal(t, []string{"/runs"}, attrs(filtered, "clear-filters", "href"))
	resp := d.send(t, http.MethodGet, "/runs?tenant=acme%00", nil, nil)
	require.Equal(t, http.StatusBadRequest, resp.status)
	require.Equal(t, []string{`workflow: invalid tenant: &#34;acme\x00&#34; holds U&#43;0000, which cannot be shown; use printable characters`}, texts(resp.body, "error"))

	// A run's page.
	body = d.page(t, "/runs/"+acme.ID.String(), nil)
	require.Contains(t, body, `<dt>Tenant</dt><dd data-testid="run-tenant"><a href="/runs?tenant=acme%20%26%20co">acme &amp; co</a></dd>`)
	require.NotContains(t, d.page(t, "/runs/"+none.ID.String(), nil), `<dt>Tenant</dt>`)

	// A schedule's page: its runs' tenant, the owner's unless set.
	tenantOf := func(s *schedule.Schedule) string {
		t.Helper()
		body := d.page(t, "/schedules/"+s.ID.String(), nil)
		start := strings.Index(body, `<dd data-testid="schedule-tenant">`)
		require.GreaterOrEqual(t, start, 0)
		return body[start : start+strings.Index(body[start:], "</dd>")+len("</dd>")]
	}
	owners := d.createSchedule(t, &schedule.Params{Name: "owner's", Owner: "user-42", Cron: "0 8 * * *"})
	require.Equal(t, `<dd data-testid="schedule-tenant"><a href="/tenants/user-42">user-42</a> <span class="muted">(the owner)</span></dd>`, tenantOf(owners))
	set := d.createSchedule(t, &schedule.Params{Name: "set", Owner: "user-42", Tenant: "acme-eu", Cron: "0 8 * * *"})
	require.Equal(t, `<dd data-testid="schedule-tenant"><a href="/tenants/acme-eu">acme-eu</a></dd>`, tenantOf(set))
	noOwner := d.createSchedule(t, &schedule.Params{Name: "no owner", Cron: "0 8 * * *"})
	require.Equal(t, `<dd data-testid="schedule-tenant"><span class="muted">none</span></dd>`, tenantOf(noOwner))
	longOwner := d.createSchedule(t, &schedule.Params{Name: "long owner", Owner: strings.Repeat("o", 101), Cron: "0 8 * * *"})
	require.Equal(t, `<dd data-testid="schedule-tenant"><span class="muted">none (the owner is not a valid tenant name: set one)</span></dd>`, tenantOf(longOwner))

	// The edit form: filled with the tenant as set, it sets and clears it.
	path := "/schedules/" + set.ID.String()
	form := formFields(t, d.page(t, path+"/edit", nil), "edit-form")
	require.Equal(t, "acme-eu", form.Get("tenant"))
	require.Equal(t, path+"?notice=updated", d.post(t, path+"/edit", with(form, map[string]string{"tenant": "globex"})))
	got, err := d.sc.Get(t.Context(), schedule.ByID(set.ID))
	require.NoError(t, err)
	require.Equal(t, "globex", got.Tenant)
	require.Equal(t, path+"?notice=updated", d.post(t, path+"/edit", with(form, map[string]string{"tenant": ""})))
	got, err = d.sc.Get(t.Context(), schedule.ByID(set.ID))
	require.NoError(t, err)
	require.Empty(t, got.Tenant)
	require.Contains(t, tenantOf(set), "(the owner)")

	// A bad one: shown beside the field, nothing written.
	resp = d.send(t, http.MethodPost, path+"/edit", with(form, map[string]string{"tenant": strings.Repeat("t", 101)}), map[string]string{"Sec-Fetch-Site": "same-origin"})
	require.Equal(t, http.StatusBadRequest, resp.status, resp.body)
	require.Equal(t, []string{"schedule: invalid Tenant: is 101 bytes, the limit is 100; use a shorter name, such as an id"}, texts(resp.body, "field-error"))
	require.Regexp(t, `name="tenant"[^>]* aria-invalid="true"`, resp.body)
	got, err = d.sc.Get(t.Context(), schedule.ByID(set.ID))
	require.NoError(t, err)
	require.Empty(t, got.Tenant)
}

// TestDashboardRunDebounceKey: a run's page shows the key of the debounce
// window it was started with, beside its tenant; a run without one shows
// none.
func TestDashboardRunDebounceKey(t *testing.T) {
	t.Parallel()

	d := newDash(t, nil, false)
	debounced := d.startWith(t, flowInput{User: "ada"}, &workflow.StartOpts{Debounce: &workflow.Debounce{Key: "doc <1>", Period: time.Hour}})
	none := d.start(t, flowInput{User: "bob"})

	body := d.page(t, "/runs/"+debounced.ID.String(), nil)
	require.Contains(t, body, `<dt>Debounce key</dt><dd data-testid="run-debounce-key"><code>doc &lt;1&gt;</code></dd>`)
	require.NotContains(t, d.page(t, "/runs/"+none.ID.String(), nil), `<dt>Debounce key</dt>`)
}
