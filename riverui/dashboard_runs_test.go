package riverui_test

import (
	"context"
	"fmt"
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

func TestDashboardRuns(t *testing.T) {
	t.Parallel()

	d := newDash(t, nil, true)
	// Paused, so that its only run is the one triggered: a test that ran
	// across midnight UTC saw its @daily slot fire too.
	s := d.createSchedule(t, &schedule.Params{Name: "s", Cron: "@daily", Input: flowInput{User: "sched"}, Paused: true})
	completed := d.start(t, flowInput{User: "ada"})
	failed := d.start(t, flowInput{User: "bob", Mode: "fail"})
	triggered, err := d.sc.Trigger(t.Context(), schedule.ByID(s.ID), nil)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	parent, err := parentFlow.Start(ctx, d.wf, "kid", nil)
	require.NoError(t, err)
	_, err = parent.Result(ctx)
	require.NoError(t, err)

	resp := d.send(t, http.MethodGet, "/runs", nil, nil)
	require.Equal(t, http.StatusOK, resp.status)
	requireNav(t, resp.body, "")
	requireCSP(t, resp)
	require.Contains(t, resp.body, `<table data-testid="runs">`)
	links := attrs(resp.body, "run-link", "href")
	require.Len(t, links, 5) // the parent and its child too
	require.Equal(t, 5, strings.Count(resp.body, `<tr data-testid="run-row"`))
	// The failed run's error shows under its row.
	require.Equal(t, 1, strings.Count(resp.body, `<tr data-testid="run-row" class="has-error">`))
	require.Len(t, texts(resp.body, "run-error"), 0) // it holds markup
	require.Regexp(t, `<td colspan="9" data-testid="run-error"><span class="status status-failed">[a-z_]+</span> in step <code>explode</code>, attempt 1: [^<]*boom &lt;script&gt;`, resp.body)
	require.Contains(t, links, "/runs/"+completed.ID.String())
	require.Contains(t, resp.body, fmt.Sprintf(`<a href="/riverui/jobs/%d">`, completed.JobID))

	hrefs := func(query string) []string { return attrs(d.page(t, "/runs?"+query, nil), "run-link", "href") }
	require.Equal(t, []string{"/runs/" + failed.ID.String()}, hrefs("status=failed"))
	require.Equal(t, []string{"/runs/" + triggered.String()}, hrefs("schedule="+s.ID.String()))
	require.Len(t, hrefs("type="+parentFlow.Name()), 1)
	require.Len(t, hrefs("type="+flow.Name()+"&status=completed"), 3)
	require.Contains(t, d.page(t, "/runs?status=failed", nil), `<option value="failed" selected>failed</option>`)

	for _, query := range []string{"status=bogus", "schedule=nope", "limit=0", "after=x"} {
		resp := d.send(t, http.MethodGet, "/runs?"+query, nil, nil)
		require.Equal(t, http.StatusBadRequest, resp.status, query)
		require.Len(t, texts(resp.body, "error"), 1, query)
	}

	// Pages of two, newest first, with the filters kept.
	var seen []string
	next := "/runs?limit=2&type=" + flow.Name()
	for next != "" {
		body := d.page(t, next, nil)
		seen = append(seen, attrs(body, "run-link", "href")...)
		next = ""
		if n := attrs(body, "next-page", "href"); len(n) == 1 {
			next = unescape(n[0])
			require.Contains(t, next, "type="+flow.Name())
		}
	}
	require.Len(t, seen, 4)
	require.NotContains(t, seen, "/runs/"+parent.ID.String())
}

func TestDashboardRunPage(t *testing.T) {
	t.Parallel()

	d := newDash(t, nil, true)

	t.Run("Completed", func(t *testing.T) {
		run := d.start(t, flowInput{User: hostile})
		resp := d.send(t, http.MethodGet, "/runs/"+run.ID.String(), nil, nil)
		require.Equal(t, http.StatusOK, resp.status, resp.body)
		body := resp.body
		requireNav(t, body, "")
		requireCSP(t, resp)
		require.NotContains(t, body, "<script>") // no inline script; a live page loads refresh.js
		require.Equal(t, []string{"completed"}, texts(body, "run-status"))
		require.Contains(t, body, `<table data-testid="steps">`)
		require.Equal(t, []string{"fetch", "send"}, attrs(body, "step", "data-name"))
		require.Equal(t, []string{fmt.Sprintf("/riverui/jobs/%d", run.JobID)}, attrs(body, "river-job", "href"))
		require.Contains(t, body, "&lt;script&gt;") // the input and the output
		require.Contains(t, body, `data-testid="run-output"`)
		for _, absent := range []string{`data-testid="cancel"`, `data-testid="retry"`, `data-testid="signal"`} {
			require.NotContains(t, body, absent)
		}

		// Cancelling a finished run is a conflict, shown on the run's page.
		resp = d.send(t, http.MethodPost, "/runs/"+run.ID.String()+"/cancel", url.Values{}, nil)
		require.Equal(t, http.StatusConflict, resp.status)
		require.Contains(t, texts(resp.body, "error")[0], "workflow: run already finished")
		require.Equal(t, []string{"completed"}, texts(resp.body, "run-status"))
	})

	t.Run("WaitSignalCancel", func(t *testing.T) {
		run := d.start(t, flowInput{User: "ada", Mode: "wait"})
		path := "/runs/" + run.ID.String()
		body := d.page(t, path, nil)
		require.Equal(t, []string{"waiting"}, texts(body, "run-status"))
		require.Equal(t, []string{"fetch", "signal:approve"}, attrs(body, "step", "data-name"))
		require.Contains(t, body, `<button class="danger" data-testid="cancel">`)
		require.NotContains(t, body, `data-testid="retry"`)
		require.Contains(t, body, `<form class="stack" data-testid="signal" method="post" action="`+path+`/signal">`)
		// The form names the signal the run waits for.
		require.Contains(t, body, `<input name="name" value="approve" required>`)
		require.Equal(t, []string{"approve"}, texts(body, "waits-for"))
		require.Contains(t, body, `<textarea name="payload" spellcheck="false"></textarea>`)
		require.Contains(t, body, `<button data-testid="send-signal">`)

		// A payload that is not JSON is refused, and the form keeps it.
		resp := d.send(t, http.MethodPost, path+"/signal", url.Values{"name": {"approve"}, "payload": {"{by: <ops>"}}, nil)
		require.Equal(t, http.StatusBadRequest, resp.status)
		require.Contains(t, texts(resp.body, "error")[0], "not valid JSON")
		require.Contains(t, resp.body, `<input name="name" value="approve" required>`)
		require.Contains(t, resp.body, `<textarea name="payload" spellcheck="false">{by: &lt;ops&gt;</textarea>`)
		resp = d.send(t, http.MethodPost, path+"/signal", url.Values{"payload": {"1"}}, nil)
		require.Equal(t, http.StatusBadRequest, resp.status)

		to := d.post(t, path+"/signal", url.Values{"name": {"approve"}, "payload": {`{"by": "ops"}`}})
		require.Equal(t, path+"?notice=signalled", to)
		require.Equal(t, []string{"Signal sent."}, texts(d.page(t, to, nil), "flash"))
		done := d.waitStatus(t, run.ID, workflow.StatusCompleted)
		require.JSONEq(t, `"fetched ada approved by ops sent"`, string(done.Output))

		// Cancel another waiting run.
		other := d.start(t, flowInput{User: "bob", Mode: "wait"})
		to = d.post(t, "/runs/"+other.ID.String()+"/cancel", url.Values{})
		require.Equal(t, "/runs/"+other.ID.String()+"?notice=cancelled", to)
		body = d.page(t, to, nil)
		require.Equal(t, []string{"cancelled"}, texts(body, "run-status"))
		require.Contains(t, body, `data-testid="retry"`)

		// Cross-site is refused.
		resp = d.send(t, http.MethodPost, "/runs/"+other.ID.String()+"/retry", url.Values{}, map[string]string{"Sec-Fetch-Site": "cross-site"})
		require.Equal(t, http.StatusForbidden, resp.status)
	})

	t.Run("FailRetry", func(t *testing.T) {
		run := d.start(t, flowInput{User: "bob", Mode: "fail"})
		path := "/runs/" + run.ID.String()
		body := d.page(t, path, nil)
		require.Equal(t, []string{"failed"}, texts(body, "run-status"))
		require.Contains(t, body, `data-testid="run-error"`)
		require.Contains(t, body, "boom &lt;script&gt;")
		require.Contains(t, body, `<button class="primary" data-testid="retry">`)
		require.NotContains(t, body, `data-testid="cancel"`)
		require.Equal(t, []string{"fetch", "explode"}, attrs(body, "step", "data-name"))

		to := d.post(t, path+"/retry", url.Values{})
		require.Equal(t, path+"?notice=retried", to)
		require.Equal(t, []string{"Run retried: it runs again from the step that failed."}, texts(d.page(t, to, nil), "flash"))
		d.waitStatus(t, run.ID, workflow.StatusFailed) // it fails again, on its second attempt
		got, err := d.wf.GetRun(t.Context(), run.ID)
		require.NoError(t, err)
		require.Equal(t, 2, got.Attempt)

		resp := d.send(t, http.MethodPost, "/runs/"+uuid.NewString()+"/retry", url.Values{}, nil)
		require.Equal(t, http.StatusNotFound, resp.status)
		require.Equal(t, []string{"workflow: run not found"}, texts(resp.body, "error"))
	})

	t.Run("Sleep", func(t *testing.T) {
		run := d.start(t, flowInput{User: "cy", Mode: "sleep"})
		body := d.page(t, "/runs/"+run.ID.String(), nil)
		require.Equal(t, []string{"sleeping"}, texts(body, "run-status"))
		require.Equal(t, []string{"fetch", "nap"}, attrs(body, "step", "data-name"))
		require.Regexp(t, `<tr data-testid="step" data-name="nap">(?s:.*?)<time datetime="[^"]+">[^<]+UTC</time> <span class="rel">\(in (59m|1h)\)</span>`, body)
	})

	t.Run("ParentChild", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
		defer cancel()
		parent, err := parentFlow.Start(ctx, d.wf, "kid", nil)
		require.NoError(t, err)
		_, err = parent.Result(ctx)
		require.NoError(t, err)
		got, err := d.wf.GetRun(ctx, parent.ID)
		require.NoError(t, err)
		require.Len(t, got.Steps, 1)
		childID := got.Steps[0].ChildRunID
		require.NotNil(t, childID)

		body := d.page(t, "/runs/"+parent.ID.String(), nil)
		require.Equal(t, []string{"/runs/" + childID.String()}, attrs(body, "child-run", "href"))
		body = d.page(t, "/runs/"+childID.String(), nil)
		require.Equal(t, []string{"/runs/" + parent.ID.String()}, attrs(body, "parent-run", "href"))
	})

	t.Run("Scheduled", func(t *testing.T) {
		s := d.createSchedule(t, &schedule.Params{Name: "tokyo", Cron: "0 9 * * *", TimeZone: "Asia/Tokyo", Input: flowInput{User: "jo"}})
		runID, err := d.sc.Trigger(t.Context(), schedule.ByID(s.ID), nil)
		require.NoError(t, err)
		body := d.page(t, "/runs/"+runID.String(), nil)
		require.Contains(t, body, `<a href="/schedules/`+s.ID.String()+`">tokyo</a>`)
		require.Regexp(t, `<dt>Triggered</dt><dd><time datetime="[^"]+&#43;09:00">[^<]+JST</time>`, body)
	})

	t.Run("Errors", func(t *testing.T) {
		resp := d.send(t, http.MethodGet, "/runs/"+uuid.NewString(), nil, nil)
		require.Equal(t, http.StatusNotFound, resp.status)
		resp = d.send(t, http.MethodGet, "/runs/nope", nil, nil)
		require.Equal(t, http.StatusBadRequest, resp.status)
		resp = d.send(t, http.MethodGet, "/runs/"+uuid.NewString()+"/cancel", nil, nil)
		require.Equal(t, http.StatusMethodNotAllowed, resp.status)

		huge := url.Values{"name": {"approve"}, "payload": {`"` + strings.Repeat("x", workflow.DefaultMaxInputBytes+100<<10) + `"`}}
		resp = d.send(t, http.MethodPost, "/runs/"+uuid.NewString()+"/signal", huge, nil)
		require.Equal(t, http.StatusRequestEntityTooLarge, resp.status)
		require.Contains(t, texts(resp.body, "error")[0], "request body is larger than")
	})
}
