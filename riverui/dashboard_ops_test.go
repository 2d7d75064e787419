package riverui_test

import (
	"context"
	"html"
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

// startWith starts a run of flow with opts and waits for it to finish (or
// to wait or sleep, per in.Mode).
func (d *dash) startWith(t *testing.T, in flowInput, opts *workflow.StartOpts) *workflow.Run {
	t.Helper()

	handle, err := flow.Start(t.Context(), d.wf, in, opts)
	require.NoError(t, err)
	switch in.Mode {
	case "wait":
		return d.waitStatus(t, handle.ID, workflow.StatusWaiting)
	case "sleep":
		return d.waitStatus(t, handle.ID, workflow.StatusSleeping)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	_, _ = handle.Result(ctx)
	run, err := handle.Get(t.Context())
	require.NoError(t, err)
	return run
}

func TestDashboardRunSearch(t *testing.T) {
	t.Parallel()

	d := newDash(t, nil, true)
	acme := d.startWith(t, flowInput{User: "ada"}, &workflow.StartOpts{IdempotencyKey: "order-42", Metadata: map[string]any{"tenant": "acme", "n": 42}})
	other := d.startWith(t, flowInput{User: "bob", Mode: "fail"}, &workflow.StartOpts{IdempotencyKey: "order=43", Metadata: map[string]any{"tenant": "on call", "n": "42"}})
	plain := d.start(t, flowInput{User: "cy"})

	hrefs := func(query url.Values) []string {
		t.Helper()
		return attrs(d.page(t, "/runs?"+query.Encode(), nil), "run-link", "href")
	}
	link := func(run *workflow.Run) string { return "/runs/" + run.ID.String() }

	// A run id, an idempotency key, metadata.
	require.Equal(t, []string{link(plain)}, hrefs(url.Values{"q": {plain.ID.String()}}))
	require.Equal(t, []string{link(acme)}, hrefs(url.Values{"q": {"order-42"}}))
	require.Equal(t, []string{link(other)}, hrefs(url.Values{"q": {"key:order=43"}}))
	require.Equal(t, []string{link(acme)}, hrefs(url.Values{"q": {"tenant=acme"}}))
	require.Equal(t, []string{link(acme)}, hrefs(url.Values{"q": {"n=42"}}))
	require.Equal(t, []string{link(other)}, hrefs(url.Values{"q": {`n="42"`}}))
	require.Equal(t, []string{link(other)}, hrefs(url.Values{"q": {`tenant="on call" n="42"`}}))
	require.Empty(t, hrefs(url.Values{"q": {"tenant=acme n=43"}}))
	require.Empty(t, hrefs(url.Values{"q": {"order-44"}}))

	// With the other filters.
	require.Equal(t, []string{link(other)}, hrefs(url.Values{"q": {`tenant="on call"`}, "status": {"failed"}}))
	require.Empty(t, hrefs(url.Values{"q": {"tenant=acme"}, "status": {"failed"}}))
	require.Equal(t, []string{link(acme)}, hrefs(url.Values{"q": {"order-42"}, "type": {flow.Name()}}))

	// The page says what it searched for and keeps the search.
	body := d.page(t, "/runs?"+url.Values{"q": {`tenant="on call"`}}.Encode(), nil)
	require.Equal(t, []string{"Searching for metadata tenant=&#34;on call&#34;."}, texts(body, "searched"))
	require.Contains(t, body, `name="q" value="tenant=&#34;on call&#34;"`)
	require.Contains(t, body, "How to search")
	body = d.page(t, "/runs?q="+uuid.NewString(), nil)
	require.Equal(t, []string{"No run matches this search and these filters."}, texts(body, "no-runs"))

	// The creation time range, in UTC.
	now := time.Now().UTC()
	require.ElementsMatch(t, []string{link(acme), link(other), link(plain)}, hrefs(url.Values{"from": {now.Add(-time.Hour).Format("2006-01-02T15:04")}}))
	require.Empty(t, hrefs(url.Values{"from": {now.Add(time.Hour).Format(time.RFC3339)}}))
	require.Empty(t, hrefs(url.Values{"to": {now.Add(-time.Hour).Format("2006-01-02T15:04")}}))
	// The range is on the time a run's id records (UUIDv7, taken when the
	// start was prepared), which may be some milliseconds before the
	// row's created_at (the database's, at its insert) on a loaded
	// machine: from is a millisecond before the id's.
	idSec, idNsec := plain.ID.Time().UnixTime()
	idTime := time.Unix(idSec, idNsec).UTC()
	require.Equal(t, []string{link(plain)}, hrefs(url.Values{"from": {idTime.Add(-time.Millisecond).Format(time.RFC3339Nano)}, "to": {now.Add(time.Minute).Format(time.RFC3339)}}))
	body = d.page(t, "/runs?from="+now.Add(-time.Hour).Format("2006-01-02T15:04"), nil)
	require.Contains(t, body, `<input type="datetime-local" name="from" value="`+now.Add(-time.Hour).Format("2006-01-02T15:04")+`" data-testid="from">`)

	// Bad searches say what is wrong, and keep the form.
	for query, want := range map[string]string{
		"from=yesterday": `from &#34;yesterday&#34; is not a time; write it like 2026-11-01T09:00 (in UTC)`,
		"from=2026-02-01T10:00&to=2026-02-01T09:00": "the time range is empty",
		"q=" + url.QueryEscape(`tenant="acme`):      "unclosed quote",
		"q=" + url.QueryEscape("tenant=acme oops"):  `search term &#34;oops&#34; is not key=value`,
		"q=" + url.QueryEscape("=acme"):             `search term &#34;=acme&#34; is not key=value`,
		"q=key:":                                    `write the idempotency key after &#34;key:&#34;`,
	} {
		resp := d.send(t, http.MethodGet, "/runs?"+query, nil, nil)
		require.Equal(t, http.StatusBadRequest, resp.status, query)
		errs := texts(resp.body, "error")
		require.Len(t, errs, 1, query)
		require.Contains(t, errs[0], want, query)
		require.Contains(t, resp.body, `data-testid="filters"`, query)
	}
}

func TestDashboardOverview(t *testing.T) {
	t.Parallel()

	d := newDash(t, nil, true)
	d.start(t, flowInput{User: "ada"})
	failed := d.start(t, flowInput{User: "bob", Mode: "fail"})
	waiting := d.start(t, flowInput{User: "cy", Mode: "wait"})

	resp := d.send(t, http.MethodGet, "/", nil, nil)
	require.Equal(t, http.StatusOK, resp.status, resp.body)
	requireNav(t, resp.body, "")
	requireCSP(t, resp)
	body := resp.body
	require.Equal(t, []string{"/"}, attrs(body, "nav-overview", "href"))

	counts := func(section string) map[string]string {
		t.Helper()
		i := strings.Index(body, `data-testid="`+section+`"`)
		require.Positive(t, i, section)
		part := body[i:]
		part = part[:strings.Index(part, "</ul>")]
		out := map[string]string{}
		for _, status := range attrs(part, "count", "data-status") {
			j := strings.Index(part, `data-status="`+status+`"`)
			rest := part[j:]
			rest = rest[strings.Index(rest, `<span class="count">`)+len(`<span class="count">`):]
			out[status] = rest[:strings.Index(rest, "<")]
		}
		return out
	}
	require.Equal(t, map[string]string{"pending": "0", "running": "0", "sleeping": "0", "waiting": "1"}, counts("in-flight"))
	recent := counts("recent")
	require.Equal(t, "1", recent["completed"])
	require.Equal(t, "1", recent["failed"])
	require.Equal(t, "1", recent["waiting"])
	require.Equal(t, []string{"(1)"}, texts(body, "failed-count"))
	require.Equal(t, []string{"/runs/" + failed.ID.String()}, attrs(body, "run-link", "href"))
	require.Contains(t, body, "boom &lt;script&gt;")
	require.Contains(t, body, `href="/runs?status=waiting"`)

	// A run in flight makes the page live; refresh.js does the reloading.
	require.Contains(t, body, `<meta name="tributary-refresh" content="5">`)
	require.Contains(t, body, `<script src="/assets/refresh.js" defer></script>`)
	require.Len(t, texts(body, "live"), 1)
	script := d.send(t, http.MethodGet, "/assets/refresh.js", nil, nil)
	require.Equal(t, http.StatusOK, script.status)
	require.Equal(t, "text/javascript; charset=utf-8", script.header.Get("Content-Type"))
	require.Contains(t, script.body, `meta[name="tributary-refresh"]`)

	// Without a run in flight, it is not.
	require.NoError(t, d.wf.Cancel(t.Context(), waiting.ID))
	body = d.page(t, "/", nil)
	require.NotContains(t, body, "tributary-refresh")
	require.NotContains(t, body, "<script")
}

func TestDashboardRunLive(t *testing.T) {
	t.Parallel()

	d := newDash(t, nil, true)

	t.Run("Sleeping", func(t *testing.T) {
		run := d.start(t, flowInput{User: "cy", Mode: "sleep"})
		resp := d.send(t, http.MethodGet, "/runs/"+run.ID.String(), nil, nil)
		require.Equal(t, http.StatusOK, resp.status)
		requireCSP(t, resp)
		body := resp.body
		require.Contains(t, body, `<meta name="tributary-refresh" content="5">`)

		// The timeline has a bar for the run and one per step, on one axis
		// that ends now: the hour's sleep does not stretch it, its bar is
		// open-ended and its label says when it wakes.
		require.Contains(t, body, `<figure class="timeline" data-testid="timeline">`)
		require.Equal(t, []string{"run", "fetch", "nap"}, attrs(body, "timeline-row", "data-name"))
		require.Equal(t, []string{"sleeping", "completed", "sleeping"}, attrs(body, "timeline-row", "data-status"))
		require.Equal(t, []string{"true", "true"}, attrs(body, "timeline-row", "data-open"))
		require.Regexp(t, `data-name="nap"(?s:.*?)<polygon class="tl-open"`, body)
		span := texts(body, "timeline-span")
		require.Len(t, span, 1)
		require.Regexp(t, `^[0-9.]+(µs|ms|s) \(now\)$`, span[0]) // not an hour
		require.Regexp(t, `sleeping [0-9.]+(µs|ms|s), wakes in (59m|1h)`, body)
		require.NotContains(t, body, `data-testid="waits-for"`)
	})

	t.Run("Completed", func(t *testing.T) {
		run := d.start(t, flowInput{User: "ada"})
		body := d.page(t, "/runs/"+run.ID.String(), nil)
		require.NotContains(t, body, "tributary-refresh")
		require.Equal(t, []string{"run", "fetch", "send"}, attrs(body, "timeline-row", "data-name"))
		require.Regexp(t, `<rect class="tl-bar bar-completed" x="[0-9.]+" y="1" width="[0-9.]+" height="8"/>`, body)
		require.NotContains(t, body, `class="tl-open"`)
		require.Regexp(t, `^[0-9.]+(µs|ms|s)$`, texts(body, "timeline-span")[0])
	})

	t.Run("Waiting", func(t *testing.T) {
		// A wait for a signal is open-ended on an axis that ends now, and
		// says what it waits for.
		run := d.start(t, flowInput{User: "cy", Mode: "wait"})
		body := d.page(t, "/runs/"+run.ID.String(), nil)
		require.Equal(t, []string{"run", "fetch", "signal:approve"}, attrs(body, "timeline-row", "data-name"))
		require.Regexp(t, `data-name="signal:approve"[^>]*data-open="true"`, body)
		require.Regexp(t, `waiting [0-9.]+(µs|ms|s) for signal approve`, body)
		require.Regexp(t, `^[0-9.]+(µs|ms|s) \(now\)$`, texts(body, "timeline-span")[0])
	})

	t.Run("SignalFormNotRefreshedAfterPost", func(t *testing.T) {
		run := d.start(t, flowInput{User: "ada", Mode: "wait"})
		path := "/runs/" + run.ID.String()
		require.Contains(t, d.page(t, path, nil), "tributary-refresh")
		// The form shown again with its error keeps what was typed: no
		// reload.
		resp := d.send(t, http.MethodPost, path+"/signal", url.Values{"name": {"approve"}, "payload": {"{oops"}}, nil)
		require.Equal(t, http.StatusBadRequest, resp.status)
		require.NotContains(t, resp.body, "tributary-refresh")
		require.Contains(t, resp.body, `<textarea name="payload" spellcheck="false">{oops</textarea>`)
	})
}

func TestDashboardNewSchedule(t *testing.T) {
	t.Parallel()

	d := newDash(t, nil, true)

	resp := d.send(t, http.MethodGet, "/schedules/new", nil, nil)
	require.Equal(t, http.StatusOK, resp.status, resp.body)
	requireCSP(t, resp)
	requireNav(t, resp.body, "")
	form := formFields(t, resp.body, "new-schedule-form")
	require.Contains(t, resp.body, `<input type="checkbox" name="paused" value="1">`)
	require.Equal(t, "skip", form.Get("overlap"))
	require.Equal(t, "window", form.Get("catch_up"))
	require.Equal(t, "jump", form.Get("dst_gap"))
	require.Equal(t, "first", form.Get("dst_fold"))
	require.Contains(t, resp.body, `<option value="`+flow.Name()+`">`)
	require.Equal(t, []string{"/schedules/new"}, attrs(d.page(t, "/schedules", nil), "new-schedule", "href"))

	post := func(change map[string]string) *response {
		return d.send(t, http.MethodPost, "/schedules/new", with(form, change), map[string]string{"Sec-Fetch-Site": "same-origin"})
	}
	good := map[string]string{
		"name": "nightly " + hostile, "workflow": flow.Name(), "cron": "30 2 * * *", "time_zone": "Europe/Paris",
		"start_at": "2030-01-01T00:00", "input": `{"user": "ada"}`, "owner": "team-a", "max_attempts": "3", "catch_up_window": "0s",
		"keep_runs": "12", "tenant": "acme-eu",
	}
	merged := func(change map[string]string) map[string]string {
		out := map[string]string{}
		for k, v := range good {
			out[k] = v
		}
		for k, v := range change {
			out[k] = v
		}
		return out
	}

	// What the API refuses, the form refuses with the same message, beside
	// the field, keeping what was typed; nothing is created.
	for field, c := range map[string]struct {
		change map[string]string
		want   string
		status int
	}{
		"cron":            {map[string]string{"cron": "0 25 * * *"}, "schedule: bad cron expression &#34;0 25 * * *&#34;", http.StatusBadRequest},
		"time_zone":       {map[string]string{"time_zone": "Mars/Olympus"}, "Mars/Olympus", http.StatusBadRequest},
		"workflow":        {map[string]string{"workflow": "nope"}, "schedule: invalid Workflow: &#34;nope&#34; is not a workflow type of this client", http.StatusBadRequest},
		"name":            {map[string]string{"name": ""}, "schedule: invalid Name: is empty", http.StatusBadRequest},
		"end_at":          {map[string]string{"end_at": "2029-01-01T00:00"}, "schedule: invalid EndAt", http.StatusBadRequest},
		"input":           {map[string]string{"input": "{user: ada"}, "the input is not valid JSON", http.StatusBadRequest},
		"max_attempts":    {map[string]string{"max_attempts": "three"}, "max attempts &#34;three&#34; is not a whole number", http.StatusBadRequest},
		"priority":        {map[string]string{"priority": "9"}, "schedule: invalid Priority: is 9", http.StatusBadRequest},
		"keep_runs":       {map[string]string{"keep_runs": "-1"}, "schedule: invalid KeepRuns: is -1", http.StatusBadRequest},
		"catch_up_window": {map[string]string{"catch_up_window": "soon"}, "catch-up window &#34;soon&#34; is not a duration", http.StatusBadRequest},
		"start_at":        {map[string]string{"start_at": "tomorrow"}, "start &#34;tomorrow&#34; is not a time", http.StatusBadRequest},
		"grant_id":        {map[string]string{"grant_id": uuid.NewString()}, "schedule: invalid GrantID", http.StatusBadRequest},
		"tenant":          {map[string]string{"tenant": "acme\teu"}, `schedule: invalid Tenant: &#34;acme\teu&#34; holds U&#43;0009, which cannot be shown`, http.StatusBadRequest},
	} {
		resp := post(merged(c.change))
		require.Equal(t, c.status, resp.status, field)
		errs := texts(resp.body, "error")
		require.Len(t, errs, 1, field)
		require.Contains(t, errs[0], c.want, field)
		require.Equal(t, errs, texts(resp.body, "field-error"), field)
		require.Regexp(t, `name="`+field+`"[^>]* aria-invalid="true"`, resp.body, field)
		kept := formFields(t, resp.body, "new-schedule-form")
		for k, v := range merged(c.change) {
			require.Equal(t, v, kept.Get(k), "%s: field %s", field, k)
		}
	}
	list, err := d.sc.List(t.Context(), nil)
	require.NoError(t, err)
	require.Empty(t, list, "a refused form created a schedule")

	// The same schedule the API would create; its page opens.
	to := d.post(t, "/schedules/new", with(form, good))
	list, err = d.sc.List(t.Context(), nil)
	require.NoError(t, err)
	require.Len(t, list, 1)
	s := list[0]
	require.Equal(t, "/schedules/"+s.ID.String()+"?notice=created", to)
	require.Equal(t, "nightly "+hostile, s.Name)
	require.Equal(t, flow.Name(), s.Workflow)
	require.Equal(t, "30 2 * * *", s.Cron)
	require.Equal(t, "Europe/Paris", s.TimeZone)
	require.Equal(t, "team-a", s.Owner)
	require.Equal(t, 3, s.MaxAttempts)
	require.Equal(t, 12, s.KeepRuns)
	require.Equal(t, "acme-eu", s.Tenant)
	require.Zero(t, s.CatchUpWindow)
	require.JSONEq(t, `{"user": "ada"}`, string(s.Input))
	require.Equal(t, time.Date(2030, 1, 1, 0, 0, 0, 0, mustZone(t, "Europe/Paris")), s.StartAt.In(mustZone(t, "Europe/Paris")))
	require.False(t, s.Paused)
	body := d.page(t, to, nil)
	require.Equal(t, []string{"Schedule created. Its first slot fires at the next fire time below."}, texts(body, "flash"))
	require.Equal(t, []string{"nightly " + html.EscapeString(hostile)}, texts(body, "schedule-name"))

	// Paused, with a note.
	to = d.post(t, "/schedules/new", with(form, merged(map[string]string{"name": "later", "paused": "1", "pause_note": "not yet"})))
	id, err := uuid.Parse(strings.TrimSuffix(strings.TrimPrefix(to, "/schedules/"), "?notice=created"))
	require.NoError(t, err)
	paused, err := d.sc.Get(t.Context(), schedule.ByID(id))
	require.NoError(t, err)
	require.True(t, paused.Paused)
	require.Equal(t, "not yet", paused.PauseNote)

	// Cross-site posts are refused.
	resp = d.send(t, http.MethodPost, "/schedules/new", with(form, good), map[string]string{"Sec-Fetch-Site": "cross-site"})
	require.Equal(t, http.StatusForbidden, resp.status)
}

func TestDashboardEditFieldErrors(t *testing.T) {
	t.Parallel()

	d := newDash(t, nil, true)
	s := d.createSchedule(t, &schedule.Params{Name: "edit me", Cron: "@daily"})
	path := "/schedules/" + s.ID.String() + "/edit"
	form := formFields(t, d.page(t, path, nil), "edit-form")

	for field, change := range map[string]map[string]string{
		"cron":         {"cron": "every day"},
		"time_zone":    {"time_zone": "Nowhere/City"},
		"timeout":      {"timeout": "long"},
		"grant_id":     {"grant_id": "not-an-id"},
		"max_attempts": {"max_attempts": "-1"},
		"dst_gap":      {"dst_gap": "later"},
		"dst_fold":     {"dst_fold": "twice"},
	} {
		resp := d.send(t, http.MethodPost, path, with(form, change), nil)
		require.Equal(t, http.StatusBadRequest, resp.status, field)
		errs := texts(resp.body, "error")
		require.Len(t, errs, 1, field)
		require.Equal(t, errs, texts(resp.body, "field-error"), field)
		require.Regexp(t, `name="`+field+`"[^>]* aria-invalid="true"`, resp.body, field)
	}
	got, err := d.sc.Get(t.Context(), schedule.ByID(s.ID))
	require.NoError(t, err)
	require.Equal(t, "@daily", got.Cron)
}
