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

// TestDashboardScheduleKeys: a keyed schedule is linked, shown and acted
// on under its key URL, /schedules/{key}?owner=…, and its page says where
// it comes from.
func TestDashboardScheduleKeys(t *testing.T) {
	t.Parallel()

	d := newDash(t, nil, true)
	keyed := d.createSchedule(t, &schedule.Params{Name: "digest for 42", Owner: "acme", Key: "digest:user@42", Cron: "0 8 * * *", TimeZone: "Europe/Paris"})
	plain := d.createSchedule(t, &schedule.Params{Name: "plain", Owner: "acme", Cron: "@daily"})
	d.createSchedule(t, &schedule.Params{Name: "odd", Key: "report?daily#1%", Cron: "@daily"})
	newKey := d.createSchedule(t, &schedule.Params{Name: "named new", Key: "new", Cron: "@daily"})
	_, err := d.sc.Declare(t.Context(), &schedule.Declaration{Service: "billing", Schedules: []*schedule.Params{
		{Key: "invoices", Owner: "globex", Name: "invoices", Workflow: flow.Name(), Cron: "0 6 * * *"},
	}})
	require.NoError(t, err)
	const path = "/schedules/digest:user@42"
	const query = "?owner=acme"

	// Not parallel: it runs to its end before the parallel subtests start,
	// and Actions creates a schedule of its own.
	t.Run("List", func(t *testing.T) {
		body := d.page(t, "/schedules", nil)
		require.ElementsMatch(t, []string{"digest:user@42", "report?daily#1%", "new", "invoices"}, texts(body, "schedule-key"))
		require.ElementsMatch(t, []string{
			path + query, "/schedules/" + plain.ID.String(), "/schedules/report%3Fdaily%231%25", "/schedules/invoices?owner=globex",
			"/schedules/" + newKey.ID.String(), // /schedules/new is the new schedule form
		}, attrs(body, "schedule-link", "href"))
		require.Contains(t, body, "<th>Key</th>")

		// The filters still work.
		body = d.page(t, "/schedules?owner=acme", nil)
		require.ElementsMatch(t, []string{"digest for 42", "plain"}, attrs(body, "schedule-row", "data-name"))
		require.Equal(t, []string{"digest:user@42"}, texts(body, "schedule-key"))
	})

	t.Run("Page", func(t *testing.T) {
		resp := d.send(t, http.MethodGet, path+query, nil, nil)
		require.Equal(t, http.StatusOK, resp.status, resp.body)
		requireCSP(t, resp)
		body := resp.body
		require.Equal(t, []string{"digest for 42"}, texts(body, "schedule-name"))
		require.Equal(t, []string{"digest:user@42"}, texts(body, "schedule-key"))
		require.Equal(t, []string{"created by application code"}, texts(body, "schedule-origin"))
		require.Empty(t, texts(body, "declared"))
		require.Contains(t, body, "<dt>Id</dt><dd><code class=\"id\">"+keyed.ID.String()+"</code></dd>")
		for _, action := range []string{"pause", "trigger", "backfill"} {
			require.Contains(t, body, `action="`+path+"/"+action+query+`"`)
		}
		require.Equal(t, []string{path + "/edit" + query}, attrs(body, "edit", "href"))
		require.Equal(t, []string{path + "/delete" + query}, attrs(body, "delete", "href"))

		// By id, it is the same page, with the same links.
		byID := d.page(t, "/schedules/"+keyed.ID.String(), nil)
		require.Equal(t, []string{path + "/edit" + query}, attrs(byID, "edit", "href"))

		// The key escaped in a path.
		body = d.page(t, "/schedules/report%3Fdaily%231%25", nil)
		require.Equal(t, []string{"odd"}, texts(body, "schedule-name"))
		require.Contains(t, body, `action="/schedules/report%3Fdaily%231%25/pause"`)

		// The key "new" by id; /schedules/new is the form.
		require.Equal(t, []string{"named new"}, texts(d.page(t, "/schedules/"+newKey.ID.String(), nil), "schedule-name"))
		require.Contains(t, d.page(t, "/schedules/new", nil), `data-testid="new-schedule-form"`)
		require.Equal(t, []string{"/schedules/" + newKey.ID.String() + "/edit"}, attrs(d.page(t, "/schedules/"+newKey.ID.String(), nil), "edit", "href"))
	})

	t.Run("Errors", func(t *testing.T) {
		resp := d.send(t, http.MethodGet, path+"?owner=globex", nil, nil)
		require.Equal(t, http.StatusNotFound, resp.status)
		require.Equal(t, []string{`schedule not found: no schedule has key &#34;digest:user@42&#34; under owner &#34;globex&#34;`}, texts(resp.body, "error"))
		resp = d.send(t, http.MethodGet, path, nil, nil) // owner ""
		require.Equal(t, http.StatusNotFound, resp.status)
		resp = d.send(t, http.MethodGet, path+"/edit?owner=globex", nil, nil)
		require.Equal(t, http.StatusNotFound, resp.status)
		resp = d.send(t, http.MethodPost, path+"/pause?owner=globex", url.Values{}, map[string]string{"Sec-Fetch-Site": "same-origin"})
		require.Equal(t, http.StatusNotFound, resp.status)
		require.Len(t, texts(resp.body, "error"), 1)

		resp = d.send(t, http.MethodGet, "/schedules/"+keyed.ID.String()+query, nil, nil)
		require.Equal(t, http.StatusBadRequest, resp.status)
		require.Contains(t, texts(resp.body, "error")[0], "an id names the schedule alone")
	})

	t.Run("Actions", func(t *testing.T) {
		s := d.createSchedule(t, &schedule.Params{Name: "acted on", Owner: "team a", Key: "act@1", Cron: "0 3 * * *"})
		path, query := "/schedules/act@1", "?owner=team+a"

		to := d.post(t, path+"/pause"+query, url.Values{"note": {"by key"}})
		require.Equal(t, path+"?notice=paused&owner=team+a", to)
		body := d.page(t, to, nil)
		require.Equal(t, []string{"paused"}, texts(body, "schedule-state"))
		require.Equal(t, []string{"Schedule paused: no slot fires until it is resumed."}, texts(body, "flash"))
		to = d.post(t, path+"/resume"+query, url.Values{"missed": {"skip"}})
		require.Equal(t, path+"?notice=resumed&owner=team+a", to)

		// A refused action shows the page again, by its key.
		resp := d.send(t, http.MethodPost, path+"/backfill"+query, url.Values{"from": {"2026-01-02T00:00"}, "to": {"2026-01-01T00:00"}}, map[string]string{"Sec-Fetch-Site": "same-origin"})
		require.Equal(t, http.StatusBadRequest, resp.status)
		require.Equal(t, []string{"acted on"}, texts(resp.body, "schedule-name"))

		to = d.post(t, path+"/trigger"+query, url.Values{})
		u, err := url.Parse(to)
		require.NoError(t, err)
		require.Equal(t, path, u.Path)
		require.Equal(t, "team a", u.Query().Get("owner"))
		runID, err := uuid.Parse(u.Query().Get("run"))
		require.NoError(t, err)
		d.waitStatus(t, runID, workflow.StatusCompleted)
		to = d.post(t, path+"/trigger"+query, url.Values{})
		u, err = url.Parse(to)
		require.NoError(t, err)
		second, err := uuid.Parse(u.Query().Get("run"))
		require.NoError(t, err)
		d.waitStatus(t, second, workflow.StatusCompleted)

		// The run's page links its schedule by key; the ledger's pages
		// keep the key and the owner.
		require.Contains(t, d.page(t, "/runs/"+runID.String(), nil), `href="`+path+`?owner=team&#43;a">acted on</a>`)
		body = d.page(t, path+query+"&limit=1", nil)
		require.Equal(t, []string{"/runs/" + second.String()}, attrs(body, "run-link", "href"))
		require.Equal(t, []string{path + "?after=" + second.String() + "&amp;limit=1&amp;owner=team&#43;a"}, attrs(body, "next-page", "href"))

		// The edit form: the owner of a keyed schedule does not change.
		body = d.page(t, path+"/edit"+query, nil)
		require.Contains(t, body, `action="`+path+"/edit"+"?owner=team&#43;a"+`"`)
		require.Equal(t, []string{"act@1"}, texts(body, "form-key"))
		require.Contains(t, body, `<input name="owner" value="team a" readonly>`)
		form := formFields(t, body, "edit-form")
		to = d.post(t, path+"/edit"+query, with(form, map[string]string{"cron": "0 4 * * *"}))
		require.Equal(t, path+"?notice=updated&owner=team+a", to)
		got, err := d.sc.Get(t.Context(), schedule.ByID(s.ID))
		require.NoError(t, err)
		require.Equal(t, "0 4 * * *", got.Cron)
		resp = d.send(t, http.MethodPost, path+"/edit"+query, with(form, map[string]string{"owner": "team b"}), map[string]string{"Sec-Fetch-Site": "same-origin"})
		require.Equal(t, http.StatusBadRequest, resp.status)
		require.Len(t, texts(resp.body, "field-error"), 1)

		// Delete asks first, by key.
		body = d.page(t, path+"/delete"+query, nil)
		require.Contains(t, body, `action="`+path+"/delete"+"?owner=team&#43;a"+`"`)
		require.Equal(t, "/schedules?notice=deleted", d.post(t, path+"/delete"+query, url.Values{}))
		_, err = d.sc.Get(t.Context(), schedule.ByID(s.ID))
		require.ErrorIs(t, err, schedule.ErrNotFound)
	})

	t.Run("Declared", func(t *testing.T) {
		body := d.page(t, "/schedules/invoices?owner=globex", nil)
		require.Equal(t, []string{"declared by service billing"}, texts(body, "schedule-origin"))
		require.Equal(t, []string{"Declared in the code of service billing: an edit here lasts only until the service's next declaration (when it next starts) puts the code's spec back, and a deleted schedule is declared again. Change the code to change it for good. Pausing, resuming, triggering and backfilling are yours: a declaration does not undo them."}, texts(body, "declared"))
		require.Contains(t, texts(d.page(t, "/schedules/invoices/edit?owner=globex", nil), "declared")[0], "these changes last only until its next declaration")
		require.Contains(t, texts(d.page(t, "/schedules/invoices/delete?owner=globex", nil), "declared")[0], "its next declaration creates it again")
		require.Contains(t, d.page(t, "/schedules?owner=globex", nil), `<span class="badge" title="declared by service billing">declared</span>`)
	})
}

// TestDashboardNewScheduleKey: the new schedule form takes a key; the
// schedule records that it was made in the dashboard, and creating it
// again with its key makes nothing.
func TestDashboardNewScheduleKey(t *testing.T) {
	t.Parallel()

	d := newDash(t, nil, true)
	body := d.page(t, "/schedules/new", nil)
	form := formFields(t, body, "new-schedule-form")
	require.Contains(t, form, "key")
	filled := with(form, map[string]string{"name": "digest", "owner": "acme", "key": "digest:user@42", "workflow": flow.Name(), "cron": "0 8 * * *"})

	to := d.post(t, "/schedules/new", filled)
	require.Equal(t, "/schedules/digest:user@42?notice=created&owner=acme", to)
	body = d.page(t, to, nil)
	require.Equal(t, []string{"digest:user@42"}, texts(body, "schedule-key"))
	require.Equal(t, []string{"created by hand in the dashboard"}, texts(body, "schedule-origin"))
	s, err := d.sc.Get(t.Context(), schedule.ByKey("acme", "digest:user@42"))
	require.NoError(t, err)
	require.Equal(t, "dashboard", s.CreatedBy)

	// The same form again opens the schedule, creating nothing.
	to = d.post(t, "/schedules/new", filled)
	require.Equal(t, "/schedules/digest:user@42?notice=existing&owner=acme", to)
	require.Equal(t, []string{"Nothing created: this schedule has the key and the spec of the form already."}, texts(d.page(t, to, nil), "flash"))

	// Another spec under the key is refused, beside the key, with a link
	// to the schedule that has it.
	resp := d.send(t, http.MethodPost, "/schedules/new", with(filled, map[string]string{"cron": "0 9 * * *"}), map[string]string{"Sec-Fetch-Site": "same-origin"})
	require.Equal(t, http.StatusConflict, resp.status, resp.body)
	want := `Owner &#34;acme&#34; has a schedule with the key &#34;digest:user@42&#34; already, whose spec differs from this form&#39;s (stored → given): Cron &#34;0 8 * * *&#34; → &#34;0 9 * * *&#34;. Nothing was created. Edit that schedule, or give this one another key.`
	require.Equal(t, []string{want}, texts(resp.body, "error"))
	require.Equal(t, []string{want}, texts(resp.body, "field-error"))
	require.Contains(t, resp.body, `<input name="key" value="digest:user@42" maxlength="200" spellcheck="false" autocomplete="off" aria-invalid="true">`)
	require.Equal(t, []string{"/schedules/digest:user@42?owner=acme"}, attrs(resp.body, "conflict", "href"))

	// A key the schedule package refuses is refused beside the field.
	resp = d.send(t, http.MethodPost, "/schedules/new", with(filled, map[string]string{"key": "two words"}), map[string]string{"Sec-Fetch-Site": "same-origin"})
	require.Equal(t, http.StatusBadRequest, resp.status, resp.body)
	require.Len(t, texts(resp.body, "field-error"), 1)
	require.Contains(t, texts(resp.body, "field-error")[0], "invalid Key")

	list, err := d.sc.List(t.Context(), nil)
	require.NoError(t, err)
	require.Len(t, list, 1)
}
