package riverui_test

import (
	"html"
	"net/http"
	"net/url"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/schedule"
	"github.com/tributary-go/tributary/workflow"
)

// TestDashboardBulkRuns: the runs page's bulk form counts the runs its
// filters match, then, confirmed, forks or retries them and says what it
// did.
func TestDashboardBulkRuns(t *testing.T) {
	t.Parallel()

	d := newDash(t, nil, true)
	var failed []*workflow.Run
	for range 3 {
		failed = append(failed, d.start(t, flowInput{User: "ada", Mode: "fail"}))
	}
	for range 2 {
		d.start(t, flowInput{User: "bo"})
	}
	sameOrigin := map[string]string{"Sec-Fetch-Site": "same-origin"}
	bulk := func(t *testing.T, form url.Values, want int) string {
		t.Helper()
		resp := d.send(t, http.MethodPost, "/runs/bulk", form, sameOrigin)
		require.Equal(t, want, resp.status, resp.body)
		return html.UnescapeString(resp.body)
	}

	page := d.page(t, "/runs?type=dash_flow", nil)
	require.Contains(t, page, `data-testid="bulk-form"`)
	require.NotContains(t, d.page(t, "/runs", nil), `data-testid="bulk-form"`, "not on the unfiltered list")

	// Fork from "send": the completed runs reached it, the failed did not.
	body := bulk(t, url.Values{"type": {"dash_flow"}, "action": {"fork"}, "from_step": {"send"}}, http.StatusOK)
	require.Contains(t, body, `This will fork 2 of 5 runs matching type "dash_flow", from step "send"; 3 left as they are (never reached the step 3).`)
	require.Contains(t, body, `data-testid="bulk-confirm"`)
	run, err := d.wf.GetRun(t.Context(), failed[0].ID)
	require.NoError(t, err)
	require.Equal(t, workflow.StatusFailed, run.Status, "counting writes nothing")
	forks, err := d.wf.ListRuns(t.Context(), &workflow.ListParams{Type: "dash_flow", Status: workflow.StatusPending})
	require.NoError(t, err)
	require.Empty(t, forks)

	body = bulk(t, url.Values{"type": {"dash_flow"}, "action": {"fork"}, "from_step": {"send"}, "confirm": {"yes"}}, http.StatusOK)
	require.Contains(t, body, `Forked 2 runs from step "send"; 3 left as they were:`)
	require.Contains(t, body, `<li>never reached the step: 3</li>`)

	// Retry the failed ones.
	body = bulk(t, url.Values{"type": {"dash_flow"}, "status": {"failed"}, "action": {"retry"}}, http.StatusOK)
	require.Contains(t, body, `This will retry 3 of 3 runs matching type "dash_flow", status failed.`)
	body = bulk(t, url.Values{"type": {"dash_flow"}, "status": {"failed"}, "action": {"retry"}, "confirm": {"yes"}}, http.StatusOK)
	require.Contains(t, body, `Retried 3 runs.`)

	// Refusals, shown on the page.
	body = bulk(t, url.Values{"type": {"dash_flow"}, "action": {"fork"}}, http.StatusBadRequest)
	require.Contains(t, body, "from_step: is missing")
	body = bulk(t, url.Values{"type": {"nope"}, "action": {"cancel"}, "confirm": {"yes"}}, http.StatusNotFound)
	require.Contains(t, body, "no run matches the filter, so nothing to cancel")
	body = bulk(t, url.Values{"q": {failed[0].ID.String()}, "action": {"cancel"}}, http.StatusBadRequest)
	require.Contains(t, body, "the search names one run")
	require.Equal(t, http.StatusForbidden, d.send(t, http.MethodPost, "/runs/bulk", url.Values{"action": {"cancel"}},
		map[string]string{"Sec-Fetch-Site": "cross-site"}).status, "cross-site is refused as every form is")
}

// TestDashboardBulkOwner: the owner page pauses and resumes all the
// owner's schedules.
func TestDashboardBulkOwner(t *testing.T) {
	t.Parallel()

	d := newDash(t, nil, true)
	a := d.createSchedule(t, &schedule.Params{Name: "a", Owner: "acme", Cron: "0 9 * * *"})
	d.createSchedule(t, &schedule.Params{Name: "b", Owner: "acme", Cron: "0 9 * * *"})
	sameOrigin := map[string]string{"Sec-Fetch-Site": "same-origin"}

	page := d.page(t, "/tenants/acme", nil)
	require.Contains(t, page, `data-testid="owner-pause-all"`)

	// A first POST changes nothing: it asks to confirm, saying how many.
	resp := d.send(t, http.MethodPost, "/tenants/acme/bulk", url.Values{"action": {"pause"}, "note": {"incident 42"}}, sameOrigin)
	require.Equal(t, http.StatusOK, resp.status, resp.body)
	require.Contains(t, html.UnescapeString(resp.body), `Pause 2 of acme's 2 schedules (0 paused already)? Their slots are skipped while they are paused. Note: "incident 42".`)
	require.Contains(t, resp.body, `data-testid="owner-bulk-confirm-form"`)
	require.Contains(t, resp.body, `name="confirm" value="yes"`)
	s, err := d.sc.Get(t.Context(), schedule.ByID(a.ID))
	require.NoError(t, err)
	require.False(t, s.Paused, "the first POST only counts")

	resp = d.send(t, http.MethodPost, "/tenants/acme/bulk", url.Values{"action": {"pause"}, "note": {"incident 42"}, "confirm": {"yes"}}, sameOrigin)
	require.Equal(t, http.StatusOK, resp.status, resp.body)
	require.Contains(t, resp.body, "Paused 2 schedules of acme; 0 left as they were (paused already).")
	s, err = d.sc.Get(t.Context(), schedule.ByID(a.ID))
	require.NoError(t, err)
	require.True(t, s.Paused)
	require.Equal(t, "incident 42", s.PauseNote)

	resp = d.send(t, http.MethodPost, "/tenants/acme/bulk", url.Values{"action": {"pause"}}, sameOrigin)
	require.Equal(t, http.StatusOK, resp.status, resp.body)
	require.Contains(t, html.UnescapeString(resp.body), "Nothing to pause: all 2 of acme's schedules are paused already.")
	require.NotContains(t, resp.body, `data-testid="owner-bulk-confirm-form"`, "nothing to confirm")

	resp = d.send(t, http.MethodPost, "/tenants/acme/bulk", url.Values{"action": {"resume"}}, sameOrigin)
	require.Equal(t, http.StatusOK, resp.status, resp.body)
	require.Contains(t, html.UnescapeString(resp.body), "Resume 2 of acme's 2 schedules (0 not paused)? The slots they missed while paused are skipped.")
	resp = d.send(t, http.MethodPost, "/tenants/acme/bulk", url.Values{"action": {"resume"}, "confirm": {"yes"}}, sameOrigin)
	require.Equal(t, http.StatusOK, resp.status, resp.body)
	require.Contains(t, resp.body, "Resumed 2 schedules of acme; 0 left as they were (not paused).")

	resp = d.send(t, http.MethodPost, "/tenants/nobody/bulk", url.Values{"action": {"pause"}}, sameOrigin)
	require.Equal(t, http.StatusNotFound, resp.status)
	require.Contains(t, html.UnescapeString(resp.body), `owner "nobody" has no schedules`)
}
