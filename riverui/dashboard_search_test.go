package riverui_test

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/schedule"
	"github.com/tributary-go/tributary/workflow"
)

func TestDashboardSearch(t *testing.T) {
	t.Parallel()

	d := newDash(t, nil, true)
	nightly := d.createSchedule(t, &schedule.Params{Name: "nightly", Owner: "globex", Key: "nightly-report", Cron: "0 3 * * *"})
	unowned := d.createSchedule(t, &schedule.Params{Name: "cleanup", Key: "cleanup", Cron: "0 4 * * *"})
	handle, err := flow.Start(t.Context(), d.wf, flowInput{User: "ada"}, &workflow.StartOpts{IdempotencyKey: "order-42", Tenant: "globex"})
	require.NoError(t, err)
	run := d.waitStatus(t, handle.ID, workflow.StatusCompleted)
	other := d.start(t, flowInput{User: "bob"})

	search := func(t *testing.T, q string) *response {
		t.Helper()
		return d.send(t, http.MethodGet, "/search?"+url.Values{"q": {q}}.Encode(), nil, nil)
	}

	t.Run("Layout", func(t *testing.T) {
		// Every page has the search box.
		for _, path := range []string{"/", "/schedules", "/runs", "/schedules/" + nightly.ID.String()} {
			require.Contains(t, d.page(t, path, nil), `<form class="search" method="get" action="/search" role="search" data-testid="search"><input type="search" name="q"`, path)
		}
		body := d.page(t, "/search", nil)
		require.Contains(t, body, `<input name="q" value=""`)
		require.Empty(t, texts(body, "no-match"))
	})

	t.Run("ExactIDJumps", func(t *testing.T) {
		resp := search(t, run.ID.String())
		require.Equal(t, http.StatusSeeOther, resp.status)
		require.Equal(t, "/runs/"+run.ID.String(), resp.location(t))

		resp = search(t, " "+unowned.ID.String()+" ")
		require.Equal(t, http.StatusSeeOther, resp.status)
		require.Equal(t, "/schedules/cleanup", resp.location(t))

		// owner/key names a keyed schedule.
		require.Equal(t, "/schedules/nightly-report?owner=globex", search(t, "globex/nightly-report").location(t))

		// An id nothing has.
		resp = search(t, uuid.NewString())
		require.Equal(t, http.StatusOK, resp.status)
		require.Len(t, texts(resp.body, "no-match"), 1)
	})

	t.Run("IDPrefix", func(t *testing.T) {
		body := search(t, run.ID.String()[:23]).body
		require.Equal(t, []string{"/runs/" + run.ID.String()}, attrs(body, "run-link", "href"))
		require.NotContains(t, body, other.ID.String())
	})

	t.Run("IdempotencyKey", func(t *testing.T) {
		body := search(t, "order-42").body
		require.Equal(t, []string{"/runs/" + run.ID.String()}, attrs(body, "run-link", "href"))
		require.Empty(t, attrs(body, "schedule-link", "href"))
	})

	t.Run("OwnerAndTenant", func(t *testing.T) {
		// An owner lists its schedules and its runs, and links its page.
		body := search(t, "globex").body
		require.Equal(t, []string{"/schedules/nightly-report?owner=globex"}, attrs(body, "schedule-link", "href"))
		require.Equal(t, []string{"/runs/" + run.ID.String()}, attrs(body, "run-link", "href"))
		require.Equal(t, []string{"/tenants/globex"}, attrs(body, "owner-link", "href"))
	})

	t.Run("KeyWithoutOwner", func(t *testing.T) {
		body := search(t, "cleanup").body
		require.Equal(t, []string{"/schedules/cleanup"}, attrs(body, "schedule-link", "href"))
		require.Empty(t, attrs(body, "owner-link", "href"))
	})

	t.Run("NameLinksTheSchedulesPage", func(t *testing.T) {
		// Names are not indexed: the search links the schedules page's
		// name filter, which finds a part of a name in any case.
		link := attrs(search(t, "NIGHT").body, "name-link", "href")
		require.Equal(t, []string{"/schedules?name=NIGHT"}, link)
		body := d.page(t, link[0], nil)
		require.Equal(t, []string{"/schedules/nightly-report?owner=globex"}, attrs(body, "schedule-link", "href"))
		require.Equal(t, []string{"NIGHT"}, attrs(body, "name-filter", "value"))

		// The API's name= is the same filter.
		resp := d.send(t, http.MethodGet, "/api/schedules?name=lean", nil, nil)
		require.Equal(t, http.StatusOK, resp.status, resp.body)
		require.Contains(t, resp.body, unowned.ID.String())
		require.NotContains(t, resp.body, nightly.ID.String())
	})

	t.Run("NothingAndEscaped", func(t *testing.T) {
		resp := search(t, hostile)
		require.Equal(t, http.StatusOK, resp.status, texts(resp.body, "error"))
		require.Len(t, texts(resp.body, "no-match"), 1)
		require.NotContains(t, resp.body, "<script>")
	})
}

func TestDashboardOwner(t *testing.T) {
	t.Parallel()

	d := newDash(t, nil, true)
	owned := d.createSchedule(t, &schedule.Params{Name: "acme report", Owner: "acme & co", Cron: "0 3 * * *"})
	d.createSchedule(t, &schedule.Params{Name: "someone else's", Owner: "globex", Cron: "0 3 * * *"})
	handle, err := flow.Start(t.Context(), d.wf, flowInput{User: "ada"}, &workflow.StartOpts{Tenant: "acme & co"})
	require.NoError(t, err)
	run := d.waitStatus(t, handle.ID, workflow.StatusCompleted)
	d.start(t, flowInput{User: "no tenant"})

	resp := d.send(t, http.MethodGet, "/tenants/acme%20&%20co", nil, nil)
	require.Equal(t, http.StatusOK, resp.status, resp.body)
	requireNav(t, resp.body, "")
	requireCSP(t, resp)
	body := resp.body
	require.Equal(t, []string{"acme &amp; co"}, texts(body, "owner-name"))
	require.Equal(t, []string{"/schedules/" + owned.ID.String()}, attrs(body, "schedule-link", "href"))
	require.Equal(t, []string{"/runs/" + run.ID.String()}, attrs(body, "run-link", "href"))
	require.Equal(t, []string{"/tenants?tenant=acme+%26+co"}, unescapeAll(attrs(body, "owner-tenants", "href")))

	// A schedule's page links its owner's page, and so does its runs'
	// tenant.
	page := d.page(t, "/schedules/"+owned.ID.String(), nil)
	require.Equal(t, []string{"/tenants/acme%20&amp;%20co"}, attrs(page, "schedule-owner", "href"))
	require.Contains(t, page, `<dd data-testid="schedule-tenant"><a href="/tenants/acme%20&amp;%20co">`)

	// An owner with nothing.
	body = d.page(t, "/tenants/nobody", nil)
	require.Len(t, texts(body, "no-schedules"), 1)
	require.Len(t, texts(body, "no-runs"), 1)
}
