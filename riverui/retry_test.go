package riverui_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/schedule"
	"github.com/tributary-go/tributary/workflow"
)

// TestAPIRetryPolicy: a "retry" object sets a run's retry policy (its job
// carries it) and a schedule's (its answer shows it; a GET's body PATCHed
// back changes nothing; null removes it); an invalid one is a 400 naming
// the member.
func TestAPIRetryPolicy(t *testing.T) {
	t.Parallel()

	f := newFixture(t, nil)

	t.Run("Run", func(t *testing.T) {
		status, body := f.do(t, http.MethodPost, "/api/runs", `{"type": "send_report", "retry": {"base": "1s", "factor": 3, "max": "5m", "jitter": 0.1}}`, nil)
		require.Equal(t, http.StatusCreated, status, body)
		var run struct {
			JobID int64 `json:"job_id"`
		}
		require.NoError(t, json.Unmarshal([]byte(body), &run))
		job, err := f.wf.River().JobGet(t.Context(), run.JobID)
		require.NoError(t, err)
		var args struct {
			Retry *workflow.RetryPolicy `json:"retry"`
		}
		require.NoError(t, json.Unmarshal(job.EncodedArgs, &args))
		require.Equal(t, &workflow.RetryPolicy{Base: time.Second, Factor: 3, Max: 5 * time.Minute, Jitter: 0.1}, args.Retry)

		// Without one, the job carries none: the type's applies.
		status, body = f.do(t, http.MethodPost, "/api/runs", `{"type": "send_report"}`, nil)
		require.Equal(t, http.StatusCreated, status, body)
		require.NoError(t, json.Unmarshal([]byte(body), &run))
		job, err = f.wf.River().JobGet(t.Context(), run.JobID)
		require.NoError(t, err)
		args.Retry = nil
		require.NoError(t, json.Unmarshal(job.EncodedArgs, &args))
		require.Nil(t, args.Retry)
	})

	t.Run("Schedule", func(t *testing.T) {
		status, body := f.do(t, http.MethodPost, "/api/schedules", `{"name": "retrying", "workflow": "digest", "cron": "0 9 * * *",
			"retry": {"delay": "30s", "jitter": 0.1}}`, nil)
		require.Equal(t, http.StatusCreated, status, body)
		created := object(t, body)
		require.Equal(t, map[string]any{"delay": "30s", "jitter": 0.1}, created["retry"])
		path := "/api/schedules/" + created["id"].(string)

		status, before := f.do(t, http.MethodGet, path, "", nil)
		require.Equal(t, http.StatusOK, status, before)
		status, body = f.do(t, http.MethodPatch, path, before, nil)
		require.Equal(t, http.StatusOK, status, body)
		require.JSONEq(t, before, body, "a GET's body PATCHed back changes nothing")

		status, body = f.do(t, http.MethodPatch, path, `{"retry": {"base": "1s", "max": "90m"}}`, nil)
		require.Equal(t, http.StatusOK, status, body)
		require.Equal(t, map[string]any{"base": "1s", "max": "1h30m0s"}, object(t, body)["retry"])
		got, err := f.sc.Get(t.Context(), schedule.ByID(uuid.MustParse(created["id"].(string))))
		require.NoError(t, err)
		require.Equal(t, &workflow.RetryPolicy{Base: time.Second, Max: 90 * time.Minute}, got.Retry)

		status, again := f.do(t, http.MethodGet, path, "", nil)
		require.Equal(t, http.StatusOK, status, again)
		status, body = f.do(t, http.MethodPatch, path, again, nil)
		require.Equal(t, http.StatusOK, status, body)
		require.JSONEq(t, again, body)

		status, body = f.do(t, http.MethodPatch, path, `{"retry": null}`, nil)
		require.Equal(t, http.StatusOK, status, body)
		require.Nil(t, object(t, body)["retry"])
		require.Contains(t, body, `"retry":null`)
		got, err = f.sc.Get(t.Context(), schedule.ByID(got.ID))
		require.NoError(t, err)
		require.Nil(t, got.Retry)

		// A schedule without a policy answers null, and takes it back.
		status, body = f.do(t, http.MethodPost, "/api/schedules", `{"name": "plain", "workflow": "digest", "cron": "0 9 * * *", "retry": null}`, nil)
		require.Equal(t, http.StatusCreated, status, body)
		require.Contains(t, body, `"retry":null`)
	})

	t.Run("Invalid", func(t *testing.T) {
		s := f.createSchedule(t, "invalid retry", "")
		for _, c := range []struct {
			method, path, body, field, says string
		}{
			{http.MethodPost, "/api/runs", `{"type": "send_report", "retry": {"base": "1s", "factor": 0.5}}`, "retry.factor", "use 1 or more"},
			{http.MethodPost, "/api/runs", `{"type": "send_report", "retry": {"delay": "30s", "base": "1s"}}`, "retry.base", "fixed (delay) or exponential (base, factor, max)"},
			{http.MethodPost, "/api/runs", `{"type": "send_report", "retry": {"delay": "soon"}}`, "retry.delay", "not a Go duration"},
			{http.MethodPost, "/api/runs", `{"type": "send_report", "retry": {"delays": "30s"}}`, "retry.delays", "the fields are delay, base, factor, max and jitter"},
			{http.MethodPost, "/api/runs", `{"type": "send_report", "retry": {"jitter": "10%"}}`, "retry.jitter", "is not a number"},
			{http.MethodPost, "/api/runs", `{"type": "send_report", "retry": "30s"}`, "retry", `such as {"delay": "30s"}`},
			{http.MethodPost, "/api/runs", `{"type": "send_report", "retry": null}`, "retry", "cannot be null"},
			{http.MethodPost, "/api/schedules", `{"name": "x", "workflow": "digest", "cron": "0 9 * * *", "retry": {"delay": "30s", "jitter": 2}}`, "retry.jitter", "from 0 (none) to 1"},
			{http.MethodPatch, "/api/schedules/" + s.ID.String(), `{"retry": {"base": "1m", "max": "30s"}}`, "retry.max", "less than base (1m0s)"},
			{http.MethodPatch, "/api/schedules/" + s.ID.String(), `{"retry": {"factor": 2}}`, "retry.factor", "without base"},
		} {
			status, body := f.do(t, c.method, c.path, c.body, nil)
			require.Equal(t, http.StatusBadRequest, status, "%s: %s", c.body, body)
			var e errorBody
			require.NoError(t, json.Unmarshal([]byte(body), &e))
			require.Equal(t, c.field, e.Field, c.body)
			require.True(t, strings.HasPrefix(e.Error, c.field+": "), e.Error)
			require.Contains(t, e.Error, c.says, c.body)
		}
		got, err := f.sc.Get(t.Context(), schedule.ByID(s.ID))
		require.NoError(t, err)
		require.Nil(t, got.Retry, "nothing written")
		require.Equal(t, s.UpdatedAt, got.UpdatedAt)
	})
}

// TestDashboardRetryPolicy: the new and edit forms set, change and remove
// a schedule's retry policy, refuse an invalid one beside its field, and
// the schedule's page says the policy in words.
func TestDashboardRetryPolicy(t *testing.T) {
	t.Parallel()

	d := newDash(t, nil, true)

	form := formFields(t, d.page(t, "/schedules/new", nil), "new-schedule-form")
	require.Equal(t, "1", form.Get("retry_field"))
	to := d.post(t, "/schedules/new", with(form, map[string]string{
		"name": "with retries", "workflow": flow.Name(), "cron": "0 3 * * *", "retry_base": "1s", "retry_max": "5m", "retry_jitter": "10",
	}))
	path, _, _ := strings.Cut(to, "?")
	body := d.page(t, path, nil)
	require.Equal(t, []string{"retries after 1s, ×2 each time, at most 5m, less up to 10 %"}, unescapeAll(texts(body, "schedule-retry")))
	schedules, err := d.sc.List(t.Context(), nil)
	require.NoError(t, err)
	require.Len(t, schedules, 1)
	s := schedules[0]
	require.Equal(t, &workflow.RetryPolicy{Base: time.Second, Max: 5 * time.Minute, Jitter: 0.1}, s.Retry)

	// The edit form shows the policy; sent back, it changes nothing.
	edit := formFields(t, d.page(t, path+"/edit", nil), "edit-form")
	require.Equal(t, url.Values{"retry_field": {"1"}, "retry_delay": {""}, "retry_base": {"1s"}, "retry_factor": {""}, "retry_max": {"5m"}, "retry_jitter": {"10"}},
		retryOnly(edit))
	require.Equal(t, path+"?notice=unchanged", d.post(t, path+"/edit", edit))

	// A fixed delay in its place.
	require.Equal(t, path+"?notice=updated", d.post(t, path+"/edit", with(edit, map[string]string{
		"retry_delay": "30s", "retry_base": "", "retry_max": "", "retry_jitter": "",
	})))
	require.Equal(t, []string{"retries after 30s"}, texts(d.page(t, path, nil), "schedule-retry"))
	got, err := d.sc.Get(t.Context(), schedule.ByID(s.ID))
	require.NoError(t, err)
	require.Equal(t, &workflow.RetryPolicy{Delay: 30 * time.Second}, got.Retry)

	// An invalid one is refused beside its field; nothing is written.
	edit = formFields(t, d.page(t, path+"/edit", nil), "edit-form")
	resp := d.send(t, http.MethodPost, path+"/edit", with(edit, map[string]string{"retry_delay": "", "retry_base": "1m", "retry_factor": "0.5"}),
		map[string]string{"Sec-Fetch-Site": "same-origin"})
	require.Equal(t, http.StatusBadRequest, resp.status, resp.body)
	require.Contains(t, unescapeAll(texts(resp.body, "field-error"))[0], "retry factor is 0.5; use 1 or more")
	require.Contains(t, resp.body, `name="retry_factor" value="0.5" aria-invalid="true"`)
	resp = d.send(t, http.MethodPost, path+"/edit", with(edit, map[string]string{"retry_jitter": "150"}),
		map[string]string{"Sec-Fetch-Site": "same-origin"})
	require.Equal(t, http.StatusBadRequest, resp.status, resp.body)
	require.Contains(t, unescapeAll(texts(resp.body, "field-error"))[0], "retry jitter is 150 %; give a percentage from 0 (none) to 100")
	got, err = d.sc.Get(t.Context(), schedule.ByID(s.ID))
	require.NoError(t, err)
	require.Equal(t, &workflow.RetryPolicy{Delay: 30 * time.Second}, got.Retry)

	// Emptied, the policy is removed: the workflow type's applies.
	require.Equal(t, path+"?notice=updated", d.post(t, path+"/edit", with(edit, map[string]string{"retry_delay": ""})))
	require.Empty(t, texts(d.page(t, path, nil), "schedule-retry"))
	got, err = d.sc.Get(t.Context(), schedule.ByID(s.ID))
	require.NoError(t, err)
	require.Nil(t, got.Retry)

	// A form loaded before the retry fields existed leaves the policy.
	_, err = d.sc.Update(t.Context(), schedule.ByID(s.ID), &schedule.UpdateParams{Retry: &workflow.RetryPolicy{Delay: time.Minute}})
	require.NoError(t, err)
	old := formFields(t, d.page(t, path+"/edit", nil), "edit-form")
	for name := range retryOnly(old) {
		old.Del(name)
	}
	require.Equal(t, path+"?notice=updated", d.post(t, path+"/edit", with(old, map[string]string{"description": "older form"})))
	got, err = d.sc.Get(t.Context(), schedule.ByID(s.ID))
	require.NoError(t, err)
	require.Equal(t, &workflow.RetryPolicy{Delay: time.Minute}, got.Retry)
}

// retryOnly is the retry fields of a form.
func retryOnly(form url.Values) url.Values {
	out := url.Values{}
	for k, v := range form {
		if strings.HasPrefix(k, "retry_") {
			out[k] = v
		}
	}
	return out
}
