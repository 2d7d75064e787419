package riverui_test

import (
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/schedule"
	"github.com/tributary-go/tributary/workflow"
)

func TestDashboardSchedules(t *testing.T) {
	t.Parallel()

	d := newDash(t, nil, true)
	weekdays := d.createSchedule(t, &schedule.Params{Name: "weekday report", Owner: "team-a", Cron: "0 9 * * 1-5", TimeZone: "Europe/Paris"})
	ticker := d.createSchedule(t, &schedule.Params{Name: "ticker", Owner: "team-b", Cron: "*/10 * * * * *", TimeZone: "America/New_York", Paused: true, PauseNote: "too chatty"})
	evil := d.createSchedule(t, &schedule.Params{Name: hostile, Owner: hostile, Cron: "0 3 * * *", Input: flowInput{User: hostile}})

	t.Run("List", func(t *testing.T) {
		resp := d.send(t, http.MethodGet, "/schedules", nil, nil)
		require.Equal(t, http.StatusOK, resp.status)
		body := resp.body
		requireNav(t, body, "")
		require.Contains(t, body, `<table data-testid="schedules">`)
		require.ElementsMatch(t, []string{"weekday report", "ticker", hostile}, unescapeAll(attrs(body, "schedule-row", "data-name")))
		require.ElementsMatch(t, []string{
			"/schedules/" + weekdays.ID.String(), "/schedules/" + ticker.ID.String(), "/schedules/" + evil.ID.String(),
		}, attrs(body, "schedule-link", "href"))
		require.ElementsMatch(t, []string{"active", "paused", "active"}, texts(body, "schedule-state"))

		require.Contains(t, body, "at 09:00 on Monday through Friday")
		require.Contains(t, body, "every 10 seconds")
		require.Contains(t, body, "America/New_York")
		require.Contains(t, body, "Europe/Paris")
		require.Regexp(t, `CES?T</time> <span class="rel">\(in \d+(s|m|h|d)\)</span>`, body)

		// Every value is escaped; no page has script.
		require.NotContains(t, body, "<script>") // no inline script; a live page loads refresh.js
		require.Contains(t, body, "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;")
		requireCSP(t, resp)
	})

	t.Run("Filters", func(t *testing.T) {
		names := func(query string) []string {
			return unescapeAll(attrs(d.page(t, "/schedules?"+query, nil), "schedule-row", "data-name"))
		}
		require.Equal(t, []string{"weekday report"}, names("owner=team-a"))
		require.Equal(t, []string{"ticker"}, names("paused=yes"))
		require.ElementsMatch(t, []string{"weekday report", hostile}, names("paused=no"))
		require.Len(t, names("paused=&owner=&workflow="+flow.Name()), 3)
		require.Empty(t, names("workflow=other"))
		require.Contains(t, d.page(t, "/schedules?workflow=other", nil), "No schedule matches these filters.")

		// The form shows the filters.
		body := d.page(t, "/schedules?owner=team-a&paused=no", nil)
		require.Contains(t, body, `<input name="owner" value="team-a">`)
		require.Contains(t, body, `<option value="no" selected>no</option>`)

		resp := d.send(t, http.MethodGet, "/schedules?paused=maybe", nil, nil)
		require.Equal(t, http.StatusBadRequest, resp.status)
		require.Equal(t, []string{`paused=&#34;maybe&#34; is not true or false`}, texts(resp.body, "error"))

	})

	t.Run("Pagination", func(t *testing.T) {
		body := d.page(t, "/schedules?limit=2&owner=", nil)
		first := attrs(body, "schedule-row", "data-name")
		require.Len(t, first, 2)
		require.Empty(t, attrs(body, "first-page", "href"))
		next := attrs(body, "next-page", "href")
		require.Len(t, next, 1)
		u, err := url.Parse(unescape(next[0]))
		require.NoError(t, err)
		require.Equal(t, "/schedules", u.Path)
		require.Equal(t, "2", u.Query().Get("limit"))
		require.NotEmpty(t, u.Query().Get("after"))

		body = d.page(t, u.RequestURI(), nil)
		second := attrs(body, "schedule-row", "data-name")
		require.Len(t, second, 1)
		require.NotContains(t, first, second[0])
		require.Empty(t, attrs(body, "next-page", "href"))
		require.Equal(t, []string{"/schedules?limit=2&amp;owner="}, attrs(body, "first-page", "href"))
	})
}

func TestDashboardSchedulePage(t *testing.T) {
	t.Parallel()

	d := newDash(t, nil, true)
	grant, err := d.sc.CreateGrant(t.Context(), &schedule.GrantParams{Subject: "user-42", Scopes: []string{schedule.ScopeExecute(flow.Name())}})
	require.NoError(t, err)
	s := d.createSchedule(t, &schedule.Params{
		Name: "approvals " + hostile, Owner: "team-a", Cron: "0 9 * * 1-5", TimeZone: "Europe/Paris",
		Input: flowInput{User: hostile, Mode: "wait"}, Overlap: schedule.OverlapSkip, GrantID: &grant.ID,
		Description: "approves the day's expenses",
	})

	// Two triggers while the first run waits: the second slot is skipped.
	first, err := d.sc.Trigger(t.Context(), schedule.ByID(s.ID), nil)
	require.NoError(t, err)
	d.waitStatus(t, first, workflow.StatusWaiting)
	second, err := d.sc.Trigger(t.Context(), schedule.ByID(s.ID), nil)
	require.NoError(t, err)

	resp := d.send(t, http.MethodGet, "/schedules/"+s.ID.String(), nil, nil)
	require.Equal(t, http.StatusOK, resp.status, resp.body)
	body := resp.body
	requireNav(t, body, "")
	requireCSP(t, resp)
	require.NotContains(t, body, "<script>") // no inline script; a live page loads refresh.js
	require.Equal(t, []string{"approvals &lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;"}, texts(body, "schedule-name"))
	require.Equal(t, []string{"active"}, texts(body, "schedule-state"))
	require.Empty(t, texts(body, "no-worker"), "this test's client serves the schedule's workflow type")
	for _, want := range []string{
		"<code>0 9 * * 1-5</code> — at 09:00 on Monday through Friday",
		"<dt>Time zone</dt><dd>Europe/Paris</dd>",
		"<dt>Workflow type</dt><dd>" + flow.Name() + "</dd>",
		`<dt>Owner</dt><dd><a data-testid="schedule-owner" href="/tenants/team-a">team-a</a></dd>`,
		"<dt>Overlap policy</dt><dd>skip</dd>",
		`<dt>Catch-up</dt><dd data-testid="schedule-catch-up">a slot found late still runs if it is at most 1m past its time (each such slot once, oldest first); a later one is recorded as skipped (missed)</dd>`,
		"user-42",
		`&#34;user&#34;: &#34;&lt;script&gt;alert(\&#34;x\&#34;)&lt;/script&gt;&#34;`,
	} {
		require.Contains(t, body, want)
	}

	// The description is a sentence of its own, not the end of the
	// state's.
	require.Contains(t, body, `is <span data-testid="schedule-state" class="status status-active">active</span>.</p>`)
	require.Equal(t, []string{"approves the day&#39;s expenses"}, texts(body, "schedule-description"))

	// What an operator comes for first: a summary, the ledger, then the
	// spec, the next fire times and the backfill form (folded).
	order := []string{`data-testid="schedule-summary"`, `data-testid="ledger"`, `<h2>Spec</h2>`, `data-testid="next-fires"`, `data-testid="backfill"`}
	for i := 1; i < len(order); i++ {
		require.Less(t, strings.Index(body, order[i-1]), strings.Index(body, order[i]), "%s comes before %s", order[i-1], order[i])
	}
	require.Contains(t, body, `<details class="backfill">`)

	// The next ten fire times, in the schedule's zone: weekdays at 09:00.
	fires := regexp.MustCompile(`(?s)<ol class="fires" data-testid="next-fires">(.*?)</ol>`).FindStringSubmatch(body)
	require.NotNil(t, fires)
	items := regexp.MustCompile(`<li>.*?(Mon|Tue|Wed|Thu|Fri) \d{4}-\d\d-\d\d 09:00:00 CES?T`).FindAllString(fires[1], -1)
	require.Len(t, items, 10)
	require.Equal(t, 10, strings.Count(fires[1], "<li>"))

	// The ledger links both runs; the skipped one says why.
	require.Contains(t, body, `<table data-testid="ledger">`)
	require.Equal(t, []string{"/runs/" + second.String(), "/runs/" + first.String()}, attrs(body, "run-link", "href"))
	require.Regexp(t, `status-skipped">skipped</span></td>\s*<td>overlap</td>`, body)
	require.Contains(t, body, `<span class="badge">triggered</span>`)

	// The buttons.
	for _, testid := range []string{"pause", "trigger"} {
		require.Contains(t, body, `<button data-testid="`+testid+`"`)
	}
	require.NotContains(t, body, `data-testid="resume"`)
	require.Equal(t, []string{"/schedules/" + s.ID.String() + "/delete"}, attrs(body, "delete", "href"))

	t.Run("LedgerPages", func(t *testing.T) {
		body := d.page(t, "/schedules/"+s.ID.String()+"?limit=1", nil)
		require.Equal(t, []string{"/runs/" + second.String()}, attrs(body, "run-link", "href"))
		next := attrs(body, "next-page", "href")
		require.Equal(t, []string{"/schedules/" + s.ID.String() + "?after=" + second.String() + "&amp;limit=1"}, next)
		body = d.page(t, unescape(next[0]), nil)
		require.Equal(t, []string{"/runs/" + first.String()}, attrs(body, "run-link", "href"))
		require.Equal(t, []string{"/schedules/" + s.ID.String() + "?limit=1"}, attrs(body, "first-page", "href"))
	})

	t.Run("DST", func(t *testing.T) {
		// New York springs forward on 10 March 2030: 02:30 does not exist.
		dst := d.createSchedule(t, &schedule.Params{
			Name: "dst", Cron: "30 2 * * *", TimeZone: "America/New_York",
			StartAt: time.Date(2030, 3, 7, 0, 0, 0, 0, time.UTC),
		})
		body := d.page(t, "/schedules/"+dst.ID.String(), nil)
		require.Contains(t, body, "Sun 2030-03-10 03:00:00 EDT")
		require.Contains(t, body, `<span class="badge">shifted</span> <span class="muted small">named 2030-03-10T02:30:00</span>`)
		require.Contains(t, body, "02:30 does not exist on 2030-03-10 in America/New_York")
	})

	t.Run("Paused", func(t *testing.T) {
		paused := d.createSchedule(t, &schedule.Params{Name: "paused", Cron: "@daily", Paused: true, PauseNote: "maintenance <b>"})
		body := d.page(t, "/schedules/"+paused.ID.String(), nil)
		require.Equal(t, []string{"paused"}, texts(body, "schedule-state"))
		require.Contains(t, body, "maintenance &lt;b&gt;")
		require.Contains(t, body, `<button class="primary" data-testid="resume">`)
		require.NotContains(t, body, `data-testid="pause"`)
		require.Regexp(t, `data-testid="next-fires">\s*</ol>`, body)
		require.Contains(t, body, "No runs yet.")
	})

	t.Run("Errors", func(t *testing.T) {
		resp := d.send(t, http.MethodGet, "/schedules/"+uuid.NewString(), nil, nil)
		require.Equal(t, http.StatusNotFound, resp.status)
		require.Equal(t, []string{"schedule: schedule not found"}, texts(resp.body, "error"))
		requireNav(t, resp.body, "")

		// A segment that is not an id is a key.
		resp = d.send(t, http.MethodGet, "/schedules/nope", nil, nil)
		require.Equal(t, http.StatusNotFound, resp.status)
		require.Equal(t, []string{`schedule not found: no schedule has key &#34;nope&#34; under owner &#34;&#34;; a key is looked up within the owner that owner= names, and none was given`}, texts(resp.body, "error"))
		resp = d.send(t, http.MethodGet, "/schedules/no%20pe", nil, nil)
		require.Equal(t, http.StatusBadRequest, resp.status)
		require.Len(t, texts(resp.body, "error"), 1)

		resp = d.send(t, http.MethodGet, "/schedules/"+s.ID.String()+"?status=bogus", nil, nil)
		require.Equal(t, http.StatusBadRequest, resp.status)

		resp = d.send(t, http.MethodGet, "/nothing/here", nil, nil)
		require.Equal(t, http.StatusNotFound, resp.status)
		require.Equal(t, "text/html; charset=utf-8", resp.header.Get("Content-Type"))

		resp = d.send(t, http.MethodGet, "/schedules/"+s.ID.String()+"/pause", nil, nil)
		require.Equal(t, http.StatusMethodNotAllowed, resp.status)
		require.Equal(t, "POST", resp.header.Get("Allow"))
	})
}

func TestDashboardScheduleActions(t *testing.T) {
	t.Parallel()

	d := newDash(t, nil, true)
	s := d.createSchedule(t, &schedule.Params{Name: "nightly <b>digest</b>", Cron: "0 3 * * *", TimeZone: "Europe/Paris"})
	path := "/schedules/" + s.ID.String()

	// Pause, with a note.
	to := d.post(t, path+"/pause", url.Values{"note": {"db upgrade"}})
	require.Equal(t, path+"?notice=paused", to)
	body := d.page(t, to, nil)
	require.Equal(t, []string{"Schedule paused: no slot fires until it is resumed."}, texts(body, "flash"))
	require.Equal(t, []string{"paused"}, texts(body, "schedule-state"))
	got, err := d.sc.Get(t.Context(), schedule.ByID(s.ID))
	require.NoError(t, err)
	require.True(t, got.Paused)
	require.Equal(t, "db upgrade", got.PauseNote)

	// Resume, with a bad policy, then a good one.
	resp := d.send(t, http.MethodPost, path+"/resume", url.Values{"missed": {"everything"}}, nil)
	require.Equal(t, http.StatusBadRequest, resp.status)
	require.Len(t, texts(resp.body, "error"), 1)
	require.Equal(t, []string{"paused"}, texts(resp.body, "schedule-state"), "the page is shown again with the error")
	to = d.post(t, path+"/resume", url.Values{"missed": {"skip"}})
	require.Equal(t, path+"?notice=resumed", to)
	require.Equal(t, []string{"active"}, texts(d.page(t, to, nil), "schedule-state"))

	// Trigger: the notice links the run.
	to = d.post(t, path+"/trigger", url.Values{})
	u, err := url.Parse(to)
	require.NoError(t, err)
	require.Equal(t, path, u.Path)
	require.Equal(t, "triggered", u.Query().Get("notice"))
	runID, err := uuid.Parse(u.Query().Get("run"))
	require.NoError(t, err)
	body = d.page(t, to, nil)
	require.Equal(t, []string{"/runs/" + runID.String()}, attrs(body, "flash-run", "href"))
	require.Contains(t, attrs(body, "run-link", "href"), "/runs/"+runID.String())
	// Let the run finish first: schedule.Delete racing the run's last update
	// can deadlock (the runs trigger locks runs then schedules, the delete
	// schedules then runs).
	run := d.waitStatus(t, runID, workflow.StatusCompleted)
	require.Equal(t, s.ID, *run.ScheduleID)

	// A notice= the dashboard did not write shows nothing.
	require.Empty(t, texts(d.page(t, path+"?notice=pwned", nil), "flash"))

	// Cross-site forms are refused, whatever they carry.
	for _, header := range []map[string]string{{"Sec-Fetch-Site": "cross-site"}, {"Origin": "https://evil.example"}} {
		resp := d.send(t, http.MethodPost, path+"/pause", url.Values{}, header)
		require.Equal(t, http.StatusForbidden, resp.status, resp.body)
		require.Contains(t, texts(resp.body, "error")[0], "cross-site request refused")
	}
	got, err = d.sc.Get(t.Context(), schedule.ByID(s.ID))
	require.NoError(t, err)
	require.False(t, got.Paused)

	// Unknown and malformed ids.
	resp = d.send(t, http.MethodPost, "/schedules/"+uuid.NewString()+"/pause", url.Values{}, nil)
	require.Equal(t, http.StatusNotFound, resp.status)
	require.Equal(t, []string{"schedule: schedule not found"}, texts(resp.body, "error"))
	resp = d.send(t, http.MethodPost, "/schedules/nope/trigger", url.Values{}, nil)
	require.Equal(t, http.StatusNotFound, resp.status)
	resp = d.send(t, http.MethodPost, "/schedules/"+s.ID.String()+"/trigger?owner=team-a", url.Values{}, nil)
	require.Equal(t, http.StatusBadRequest, resp.status)

	// Delete asks first.
	body = d.page(t, path+"/delete", nil)
	require.Contains(t, body, "<h1>Delete schedule nightly &lt;b&gt;digest&lt;/b&gt;?</h1>")
	require.Contains(t, body, `<form class="actions" method="post" action="`+path+`/delete">`)
	require.Contains(t, body, `<button class="danger" data-testid="confirm-delete">`)
	_, err = d.sc.Get(t.Context(), schedule.ByID(s.ID))
	require.NoError(t, err, "the confirmation page deletes nothing")

	to = d.post(t, path+"/delete", url.Values{})
	require.Equal(t, "/schedules?notice=deleted", to)
	require.Equal(t, []string{"Schedule deleted. Its past runs are kept."}, texts(d.page(t, to, nil), "flash"))
	_, err = d.sc.Get(t.Context(), schedule.ByID(s.ID))
	require.ErrorIs(t, err, schedule.ErrNotFound)

	resp = d.send(t, http.MethodPost, path+"/delete", url.Values{}, nil)
	require.Equal(t, http.StatusNotFound, resp.status)
	resp = d.send(t, http.MethodGet, path+"/delete", nil, nil)
	require.Equal(t, http.StatusNotFound, resp.status)
}

// TestDashboardScheduleWithoutWorker: the page of a schedule whose workflow
// type no live client serves says so (issue 12's trap 2).
func TestDashboardScheduleWithoutWorker(t *testing.T) {
	t.Parallel()

	f := newFixture(t, nil) // an insert-only client: it serves no type
	s, err := f.sc.Create(t.Context(), &schedule.Params{Name: "ghost", Cron: "@daily", Workflow: "no_such_type"})
	require.NoError(t, err)
	resp, err := http.Get(f.server.URL + "/schedules/" + s.ID.String())
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
	require.Equal(t, []string{`Warning: no live worker serves workflow type &#34;no_such_type&#34;: its runs stay pending until a client that registers it starts (check the spelling; ` + "`tributary workers`" + ` lists what each client serves).`},
		texts(string(body), "no-worker"))
}
