package riverui_test

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"html"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/riverqueue/river"
	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/internal/testdb"
	"github.com/tributary-go/tributary/riverui"
	"github.com/tributary-go/tributary/schedule"
	"github.com/tributary-go/tributary/workflow"
)

// hostile is a name, owner and input that would run script if a page
// did not escape it.
const hostile = `<script>alert("x")</script>`

// flowInput is the input of flow; Mode picks what the run does.
type flowInput struct {
	User string `json:"user"`
	Mode string `json:"mode"` // "", "fail", "wait" or "sleep"
}

// flow is the workflow of the dashboard tests: two steps, then per Mode a
// failure, a signal wait or a long sleep.
var flow = workflow.Define("dash_flow", func(ctx workflow.Context, in flowInput) (string, error) {
	out, err := workflow.Step(ctx, "fetch", func(context.Context) (string, error) { return "fetched " + in.User, nil })
	if err != nil {
		return "", err
	}
	switch in.Mode {
	case "fail":
		_, err := workflow.Step(ctx, "explode", func(context.Context) (string, error) {
			return "", workflow.NonRetryable(errors.New("boom " + hostile))
		})
		return "", err
	case "wait":
		approval, err := workflow.WaitSignal[map[string]any](ctx, "approve", nil)
		if err != nil {
			return "", err
		}
		out += fmt.Sprintf(" approved by %v", approval["by"])
	case "sleep":
		if err := workflow.Sleep(ctx, "nap", time.Hour); err != nil {
			return "", err
		}
	}
	return workflow.Step(ctx, "send", func(context.Context) (string, error) { return out + " sent", nil })
}, nil)

// parentFlow runs flow as a child.
var parentFlow = workflow.Define("dash_parent", func(ctx workflow.Context, user string) (string, error) {
	return workflow.RunChild(ctx, "kid", flow, flowInput{User: user}, nil)
}, nil)

// dash is a Handler on a working client of flow and parentFlow, served
// by an httptest.Server, with a client that does not follow redirects.
type dash struct {
	client *http.Client
	prefix string
	sc     *schedule.Client
	server *httptest.Server
	wf     *workflow.Client
}

func newDash(t *testing.T, config *riverui.Config, withSchedules bool) *dash {
	t.Helper()

	db := testdb.New(t)
	var (
		sc         *schedule.Client
		extensions []workflow.Extension
	)
	if withSchedules {
		sc = schedule.New(nil)
		extensions = append(extensions, sc)
	}
	wf, err := workflow.NewClient(db.Pool, &workflow.Config{
		Extensions: extensions,
		River:      &river.Config{Queues: map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 4}}},
		Schema:     db.Schema,
		Workflows:  []workflow.Registrable{flow, parentFlow},
	})
	require.NoError(t, err)
	require.NoError(t, wf.Start(context.Background()))
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		require.NoError(t, wf.Stop(ctx))
	})

	withLogger := riverui.Config{}
	if config != nil {
		withLogger = *config
	}
	if withLogger.Logger == nil {
		withLogger.Logger = slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	h, err := riverui.New(wf, sc, &withLogger)
	require.NoError(t, err)
	uiCtx, stopUI := context.WithCancel(context.Background())
	require.NoError(t, h.Start(uiCtx))
	server := httptest.NewServer(h)
	t.Cleanup(func() {
		server.Close()
		stopUI()
	})

	client := *server.Client()
	client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	d := &dash{client: &client, sc: sc, server: server, wf: wf}
	if config != nil {
		d.prefix = strings.TrimSuffix(config.Prefix, "/")
	}
	return d
}

// response is an answer read whole.
type response struct {
	status int
	header http.Header
	body   string
}

// location is the redirect target, relative to the server.
func (r *response) location(t *testing.T) string {
	t.Helper()
	require.Contains(t, []int{http.StatusSeeOther, http.StatusMovedPermanently, http.StatusFound}, r.status, r.body)
	return r.header.Get("Location")
}

// send sends a request to path under the prefix; form, when not nil, is
// the body of a POST. header entries with an empty value are removed.
func (d *dash) send(t *testing.T, method, path string, form url.Values, header map[string]string) *response {
	t.Helper()

	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequestWithContext(t.Context(), method, d.server.URL+d.prefix+path, body)
	require.NoError(t, err)
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	req.Header.Set("Accept", "text/html,application/xhtml+xml")
	for k, v := range header {
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	resp, err := d.client.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return &response{status: resp.StatusCode, header: resp.Header, body: string(data)}
}

// page gets a page and requires 200.
func (d *dash) page(t *testing.T, path string, header map[string]string) string {
	t.Helper()

	resp := d.send(t, http.MethodGet, path, nil, header)
	require.Equal(t, http.StatusOK, resp.status, resp.body)
	require.Equal(t, "text/html; charset=utf-8", resp.header.Get("Content-Type"))
	return resp.body
}

// post posts a form as the dashboard's pages do and requires a 303 to a
// page, which it returns.
func (d *dash) post(t *testing.T, path string, form url.Values) string {
	t.Helper()

	resp := d.send(t, http.MethodPost, path, form, map[string]string{"Sec-Fetch-Site": "same-origin"})
	require.Equal(t, http.StatusSeeOther, resp.status, resp.body)
	return resp.header.Get("Location")
}

func (d *dash) createSchedule(t *testing.T, p *schedule.Params) *schedule.Schedule {
	t.Helper()

	if p.Workflow == "" {
		p.Workflow = flow.Name()
	}
	s, err := d.sc.Create(t.Context(), p)
	require.NoError(t, err)
	return s
}

// start starts a run of flow and, unless it waits or sleeps, waits for
// its result.
func (d *dash) start(t *testing.T, in flowInput) *workflow.Run {
	t.Helper()

	handle, err := flow.Start(t.Context(), d.wf, in, nil)
	require.NoError(t, err)
	switch in.Mode {
	case "wait", "sleep":
		want := map[string]workflow.Status{"wait": workflow.StatusWaiting, "sleep": workflow.StatusSleeping}[in.Mode]
		return d.waitStatus(t, handle.ID, want)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	_, _ = handle.Result(ctx)
	run, err := handle.Get(t.Context())
	require.NoError(t, err)
	require.True(t, run.Status.Finished(), "run %s is %s", run.ID, run.Status)
	return run
}

// waitStatus waits until run id has status want, one it reaches as its
// River job ends: parked (waiting, sleeping) or finished. It reads the run,
// then again after each River job event of d.wf, which works the runs: the
// event comes after the run's new status committed.
func (d *dash) waitStatus(t *testing.T, id uuid.UUID, want workflow.Status) *workflow.Run {
	t.Helper()

	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	events, unsubscribe := d.wf.River().Subscribe(river.EventKindJobCompleted, river.EventKindJobFailed,
		river.EventKindJobCancelled, river.EventKindJobSnoozed)
	defer unsubscribe()
	for {
		run, err := d.wf.GetRun(ctx, id)
		require.NoError(t, err)
		if run.Status == want {
			return run
		}
		select {
		case <-events:
		case <-ctx.Done():
			t.Fatalf("run %s is %s; it never became %s", id, run.Status, want)
		}
	}
}

// attrs returns the values of attr of the elements with data-testid=testid.
func attrs(body, testid, attr string) []string {
	re := regexp.MustCompile(`<[a-z]+ [^>]*data-testid="` + regexp.QuoteMeta(testid) + `"[^>]*>`)
	attrRe := regexp.MustCompile(` ` + regexp.QuoteMeta(attr) + `="([^"]*)"`)
	var out []string
	for _, tag := range re.FindAllString(body, -1) {
		if m := attrRe.FindStringSubmatch(tag); m != nil {
			out = append(out, m[1])
		}
	}
	return out
}

// texts returns the text of the elements with data-testid=testid that
// hold only text.
func texts(body, testid string) []string {
	re := regexp.MustCompile(`<([a-z0-9]+) [^>]*data-testid="` + regexp.QuoteMeta(testid) + `"[^>]*>([^<]*)</[a-z0-9]+>`)
	var out []string
	for _, m := range re.FindAllStringSubmatch(body, -1) {
		out = append(out, strings.TrimSpace(m[2]))
	}
	return out
}

// unescape undoes the HTML escaping of an attribute value.
func unescape(s string) string {
	return strings.NewReplacer("&amp;", "&", "&#43;", "+", "&lt;", "<", "&gt;", ">", "&#34;", `"`, "&#39;", "'").Replace(s)
}

// requireNav checks the navigation every page has.
func requireNav(t *testing.T, body, prefix string) {
	t.Helper()

	require.Equal(t, []string{prefix + "/"}, attrs(body, "nav-schedules", "href"))
	require.Equal(t, []string{prefix + "/runs"}, attrs(body, "nav-runs", "href"))
	require.Equal(t, []string{prefix + "/riverui/"}, attrs(body, "nav-riverui", "href"))
}

func TestDashboardSchedules(t *testing.T) {
	t.Parallel()

	d := newDash(t, nil, true)
	weekdays := d.createSchedule(t, &schedule.Params{Name: "weekday report", Owner: "team-a", Cron: "0 9 * * 1-5", TimeZone: "Europe/Paris"})
	ticker := d.createSchedule(t, &schedule.Params{Name: "ticker", Owner: "team-b", Cron: "*/10 * * * * *", TimeZone: "America/New_York", Paused: true, PauseNote: "too chatty"})
	evil := d.createSchedule(t, &schedule.Params{Name: hostile, Owner: hostile, Cron: "0 3 * * *", Input: flowInput{User: hostile}})

	t.Run("List", func(t *testing.T) {
		t.Parallel()

		resp := d.send(t, http.MethodGet, "/", nil, nil)
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
		require.Regexp(t, `CES?T</time> <span class="rel">\(in \d+ (s|min|h|d)\)</span>`, body)

		// Every value is escaped; no page has script.
		require.NotContains(t, body, "<script>") // no inline script; a live page loads refresh.js
		require.Contains(t, body, "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;")
		requireCSP(t, resp)
	})

	t.Run("Filters", func(t *testing.T) {
		t.Parallel()

		names := func(query string) []string {
			return unescapeAll(attrs(d.page(t, "/?"+query, nil), "schedule-row", "data-name"))
		}
		require.Equal(t, []string{"weekday report"}, names("owner=team-a"))
		require.Equal(t, []string{"ticker"}, names("paused=yes"))
		require.ElementsMatch(t, []string{"weekday report", hostile}, names("paused=no"))
		require.Len(t, names("paused=&owner=&workflow="+flow.Name()), 3)
		require.Empty(t, names("workflow=other"))
		require.Contains(t, d.page(t, "/?workflow=other", nil), "No schedule matches these filters.")

		// The form shows the filters.
		body := d.page(t, "/?owner=team-a&paused=no", nil)
		require.Contains(t, body, `<input name="owner" value="team-a">`)
		require.Contains(t, body, `<option value="no" selected>no</option>`)

		resp := d.send(t, http.MethodGet, "/?paused=maybe", nil, nil)
		require.Equal(t, http.StatusBadRequest, resp.status)
		require.Equal(t, []string{`paused=&#34;maybe&#34; is not true or false`}, texts(resp.body, "error"))

		// /schedules is the list too.
		resp = d.send(t, http.MethodGet, "/schedules?owner=team-a", nil, nil)
		require.Equal(t, "/?owner=team-a", resp.location(t))
	})

	t.Run("Pagination", func(t *testing.T) {
		t.Parallel()

		body := d.page(t, "/?limit=2&owner=", nil)
		first := attrs(body, "schedule-row", "data-name")
		require.Len(t, first, 2)
		require.Empty(t, attrs(body, "first-page", "href"))
		next := attrs(body, "next-page", "href")
		require.Len(t, next, 1)
		u, err := url.Parse(unescape(next[0]))
		require.NoError(t, err)
		require.Equal(t, "/", u.Path)
		require.Equal(t, "2", u.Query().Get("limit"))
		require.NotEmpty(t, u.Query().Get("after"))

		body = d.page(t, u.RequestURI(), nil)
		second := attrs(body, "schedule-row", "data-name")
		require.Len(t, second, 1)
		require.NotContains(t, first, second[0])
		require.Empty(t, attrs(body, "next-page", "href"))
		require.Equal(t, []string{"/?limit=2&amp;owner="}, attrs(body, "first-page", "href"))
	})
}

func unescapeAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = unescape(s)
	}
	return out
}

// requireCSP checks that a page's policy allows its stylesheet, by hash,
// and scripts only from files of the dashboard's origin, and that the page
// has no inline script: its only script is refresh.js, on a live page.
func requireCSP(t *testing.T, resp *response) {
	t.Helper()

	csp := resp.header.Get("Content-Security-Policy")
	require.Contains(t, csp, "default-src 'none'")
	require.Contains(t, csp, "script-src 'self';")
	require.NotContains(t, csp, "unsafe-inline")
	require.NotContains(t, csp, "unsafe-eval")
	for _, m := range regexp.MustCompile(`<script[^>]*>([^<]*)</script>`).FindAllStringSubmatch(resp.body, -1) {
		require.Regexp(t, `^<script src="[^"]*/assets/refresh\.js" defer>`, m[0])
		require.Empty(t, m[1], "inline script")
	}
	require.Equal(t, strings.Count(resp.body, "<script"), len(regexp.MustCompile(`<script src="[^"]*/assets/refresh\.js" defer></script>`).FindAllString(resp.body, -1)))
	m := regexp.MustCompile(`(?s)<style>(.*)</style>`).FindStringSubmatch(resp.body)
	require.NotNil(t, m)
	sum := sha256.Sum256([]byte(m[1]))
	require.Contains(t, csp, "style-src 'sha256-"+base64.StdEncoding.EncodeToString(sum[:])+"'")
	require.Equal(t, "DENY", resp.header.Get("X-Frame-Options"))
}

func TestDashboardSchedulePage(t *testing.T) {
	t.Parallel()

	d := newDash(t, nil, true)
	grant, err := d.sc.CreateGrant(t.Context(), &schedule.GrantParams{Subject: "user-42", Scopes: []string{schedule.ScopeExecute(flow.Name())}})
	require.NoError(t, err)
	s := d.createSchedule(t, &schedule.Params{
		Name: "approvals " + hostile, Owner: "team-a", Cron: "0 9 * * 1-5", TimeZone: "Europe/Paris",
		Input: flowInput{User: hostile, Mode: "wait"}, Overlap: schedule.OverlapSkip, GrantID: &grant.ID,
	})

	// Two triggers while the first run waits: the second slot is skipped.
	first, err := d.sc.Trigger(t.Context(), s.ID, nil)
	require.NoError(t, err)
	d.waitStatus(t, first, workflow.StatusWaiting)
	second, err := d.sc.Trigger(t.Context(), s.ID, nil)
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
		"<dt>Owner</dt><dd>team-a</dd>",
		"<dt>Overlap policy</dt><dd>skip</dd>",
		"<dt>Catch-up</dt><dd>window, window 1m0s</dd>",
		"user-42",
		`&#34;user&#34;: &#34;&lt;script&gt;alert(\&#34;x\&#34;)&lt;/script&gt;&#34;`,
	} {
		require.Contains(t, body, want)
	}

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
		t.Parallel()

		body := d.page(t, "/schedules/"+s.ID.String()+"?limit=1", nil)
		require.Equal(t, []string{"/runs/" + second.String()}, attrs(body, "run-link", "href"))
		next := attrs(body, "next-page", "href")
		require.Equal(t, []string{"/schedules/" + s.ID.String() + "?after=" + second.String() + "&amp;limit=1"}, next)
		body = d.page(t, unescape(next[0]), nil)
		require.Equal(t, []string{"/runs/" + first.String()}, attrs(body, "run-link", "href"))
		require.Equal(t, []string{"/schedules/" + s.ID.String() + "?limit=1"}, attrs(body, "first-page", "href"))
	})

	t.Run("DST", func(t *testing.T) {
		t.Parallel()

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
		t.Parallel()

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
		t.Parallel()

		resp := d.send(t, http.MethodGet, "/schedules/"+uuid.NewString(), nil, nil)
		require.Equal(t, http.StatusNotFound, resp.status)
		require.Equal(t, []string{"schedule: schedule not found"}, texts(resp.body, "error"))
		requireNav(t, resp.body, "")

		resp = d.send(t, http.MethodGet, "/schedules/nope", nil, nil)
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
	got, err := d.sc.Get(t.Context(), s.ID)
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
	got, err = d.sc.Get(t.Context(), s.ID)
	require.NoError(t, err)
	require.False(t, got.Paused)

	// Unknown and malformed ids.
	resp = d.send(t, http.MethodPost, "/schedules/"+uuid.NewString()+"/pause", url.Values{}, nil)
	require.Equal(t, http.StatusNotFound, resp.status)
	require.Equal(t, []string{"schedule: schedule not found"}, texts(resp.body, "error"))
	resp = d.send(t, http.MethodPost, "/schedules/nope/trigger", url.Values{}, nil)
	require.Equal(t, http.StatusBadRequest, resp.status)

	// Delete asks first.
	body = d.page(t, path+"/delete", nil)
	require.Contains(t, body, "<h1>Delete schedule nightly &lt;b&gt;digest&lt;/b&gt;?</h1>")
	require.Contains(t, body, `<form class="actions" method="post" action="`+path+`/delete">`)
	require.Contains(t, body, `<button class="danger" data-testid="confirm-delete">`)
	_, err = d.sc.Get(t.Context(), s.ID)
	require.NoError(t, err, "the confirmation page deletes nothing")

	to = d.post(t, path+"/delete", url.Values{})
	require.Equal(t, "/?notice=deleted", to)
	require.Equal(t, []string{"Schedule deleted. Its past runs are kept."}, texts(d.page(t, to, nil), "flash"))
	_, err = d.sc.Get(t.Context(), s.ID)
	require.ErrorIs(t, err, schedule.ErrNotFound)

	resp = d.send(t, http.MethodPost, path+"/delete", url.Values{}, nil)
	require.Equal(t, http.StatusNotFound, resp.status)
	resp = d.send(t, http.MethodGet, path+"/delete", nil, nil)
	require.Equal(t, http.StatusNotFound, resp.status)
}

func TestDashboardRuns(t *testing.T) {
	t.Parallel()

	d := newDash(t, nil, true)
	s := d.createSchedule(t, &schedule.Params{Name: "s", Cron: "@daily", Input: flowInput{User: "sched"}})
	completed := d.start(t, flowInput{User: "ada"})
	failed := d.start(t, flowInput{User: "bob", Mode: "fail"})
	triggered, err := d.sc.Trigger(t.Context(), s.ID, nil)
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
	require.Regexp(t, `<td colspan="8" data-testid="run-error"><span class="status status-failed">[a-z_]+</span> in step <code>explode</code>, attempt 1: [^<]*boom &lt;script&gt;`, resp.body)
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
		t.Parallel()

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
		t.Parallel()

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
		t.Parallel()

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
		t.Parallel()

		run := d.start(t, flowInput{User: "cy", Mode: "sleep"})
		body := d.page(t, "/runs/"+run.ID.String(), nil)
		require.Equal(t, []string{"sleeping"}, texts(body, "run-status"))
		require.Equal(t, []string{"fetch", "nap"}, attrs(body, "step", "data-name"))
		require.Regexp(t, `<tr data-testid="step" data-name="nap">(?s:.*?)<time datetime="[^"]+">[^<]+UTC</time> <span class="rel">\(in (59 min|1 h)\)</span>`, body)
	})

	t.Run("ParentChild", func(t *testing.T) {
		t.Parallel()

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
		t.Parallel()

		s := d.createSchedule(t, &schedule.Params{Name: "tokyo", Cron: "0 9 * * *", TimeZone: "Asia/Tokyo", Input: flowInput{User: "jo"}})
		runID, err := d.sc.Trigger(t.Context(), s.ID, nil)
		require.NoError(t, err)
		body := d.page(t, "/runs/"+runID.String(), nil)
		require.Contains(t, body, `<a href="/schedules/`+s.ID.String()+`">tokyo</a>`)
		require.Regexp(t, `<dt>Triggered</dt><dd><time datetime="[^"]+&#43;09:00">[^<]+JST</time>`, body)
	})

	t.Run("Errors", func(t *testing.T) {
		t.Parallel()

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

func TestDashboardAuth(t *testing.T) {
	t.Parallel()

	const token = "s3cret-token"
	d := newDash(t, &riverui.Config{Prefix: "/ops", Token: token}, true)
	s := d.createSchedule(t, &schedule.Params{Name: "guarded", Cron: "@daily"})
	basic := "Basic " + base64.StdEncoding.EncodeToString([]byte("anyone:"+token))
	json := map[string]string{"Accept": "application/json"}

	t.Run("Unauthenticated", func(t *testing.T) {
		t.Parallel()

		// A browser asking for a page goes to the login page, and back.
		for _, path := range []string{"/", "/runs?status=failed&type=a%20b", "/schedules/" + s.ID.String(), "/riverui/jobs/1"} {
			resp := d.send(t, http.MethodGet, path, nil, nil)
			require.Equal(t, "/ops/login?next="+url.QueryEscape("/ops"+path), resp.location(t), path)
		}

		// Anything else gets 401 with both challenges.
		for _, req := range []struct{ method, path string }{
			{http.MethodGet, "/api/runs"}, {http.MethodGet, "/riverui/api/jobs?state=available"},
			{http.MethodPost, "/schedules/" + s.ID.String() + "/pause"}, {http.MethodGet, "/"},
		} {
			resp := d.send(t, req.method, req.path, url.Values{}, json)
			require.Equal(t, http.StatusUnauthorized, resp.status, req.path)
			require.Equal(t, []string{`Bearer realm="tributary"`, `Basic realm="tributary", charset="UTF-8"`}, resp.header.Values("WWW-Authenticate"))
			require.Contains(t, resp.body, `"error"`)
		}
		got, err := d.sc.Get(t.Context(), s.ID)
		require.NoError(t, err)
		require.False(t, got.Paused)

		for _, auth := range []string{"Bearer wrong", "Basic " + base64.StdEncoding.EncodeToString([]byte("ops:wrong")), "Basic " + base64.StdEncoding.EncodeToString([]byte(token))} {
			resp := d.send(t, http.MethodGet, "/api/runs", nil, map[string]string{"Authorization": auth, "Accept": "application/json"})
			require.Equal(t, http.StatusUnauthorized, resp.status, auth)
		}
	})

	t.Run("BearerAndBasic", func(t *testing.T) {
		t.Parallel()

		for _, auth := range []string{"Bearer " + token, basic, "Basic " + base64.StdEncoding.EncodeToString([]byte(":"+token))} {
			for _, path := range []string{"/", "/runs", "/api/runs", "/riverui/", "/riverui/api/jobs?state=available"} {
				resp := d.send(t, http.MethodGet, path, nil, map[string]string{"Authorization": auth})
				require.Equal(t, http.StatusOK, resp.status, "%s %s", auth, path)
			}
		}

		// Basic credentials, which a browser caches and sends on its own,
		// do not vouch for a cross-site request; the bearer token does.
		resp := d.send(t, http.MethodPost, "/schedules/"+s.ID.String()+"/trigger", url.Values{}, map[string]string{"Authorization": basic, "Sec-Fetch-Site": "cross-site"})
		require.Equal(t, http.StatusForbidden, resp.status)
		resp = d.send(t, http.MethodPost, "/api/schedules/"+s.ID.String()+"/trigger", nil, map[string]string{"Authorization": "Bearer " + token, "Sec-Fetch-Site": "cross-site"})
		require.Equal(t, http.StatusOK, resp.status, resp.body)
	})

	t.Run("Login", func(t *testing.T) {
		t.Parallel()

		s := d.createSchedule(t, &schedule.Params{Name: "login", Cron: "@daily"})
		body := d.page(t, "/login?next="+url.QueryEscape("/ops/runs?status=failed"), nil)
		requireNav(t, body, "/ops")
		require.Contains(t, body, `<form class="stack" method="post" action="/ops/login">`)
		require.Contains(t, body, `<input type="hidden" name="next" value="/ops/runs?status=failed">`)
		require.Contains(t, body, `name="token"`)
		require.Contains(t, body, `<button class="primary" data-testid="login">`)
		require.NotContains(t, body, `data-testid="logout"`)

		resp := d.send(t, http.MethodPost, "/login", url.Values{"token": {"wrong"}, "next": {"/ops/runs"}}, nil)
		require.Equal(t, http.StatusUnauthorized, resp.status)
		require.Equal(t, []string{"wrong token"}, texts(resp.body, "error"))
		require.Empty(t, resp.header.Values("Set-Cookie"))

		resp = d.send(t, http.MethodPost, "/login", url.Values{"token": {token}, "next": {"/ops/runs?status=failed"}}, nil)
		require.Equal(t, "/ops/runs?status=failed", resp.location(t))
		cookies := (&http.Response{Header: resp.header}).Cookies()
		require.Len(t, cookies, 1)
		c := cookies[0]
		require.Equal(t, "tributary_session", c.Name)
		require.Equal(t, "/ops", c.Path)
		require.True(t, c.HttpOnly)
		require.Equal(t, http.SameSiteStrictMode, c.SameSite)
		require.InDelta(t, (12 * time.Hour).Seconds(), c.MaxAge, 5)
		require.NotContains(t, c.Value, token)
		require.NotContains(t, c.Value, base64.StdEncoding.EncodeToString([]byte(token)))
		cookie := map[string]string{"Cookie": c.Name + "=" + c.Value}

		// The cookie opens the dashboard, River UI (its page and its XHRs)
		// and the API.
		for _, path := range []string{"/", "/runs", "/schedules/" + s.ID.String(), "/riverui/", "/riverui/api/jobs?state=available", "/api/runs"} {
			resp := d.send(t, http.MethodGet, path, nil, cookie)
			require.Equal(t, http.StatusOK, resp.status, path)
		}
		require.Contains(t, d.page(t, "/", cookie), `<button data-testid="logout">`)

		// It changes things from the same origin only.
		samesite := map[string]string{"Cookie": cookie["Cookie"], "Sec-Fetch-Site": "same-origin"}
		resp = d.send(t, http.MethodPost, "/schedules/"+s.ID.String()+"/pause", url.Values{}, samesite)
		require.Equal(t, "/ops/schedules/"+s.ID.String()+"?notice=paused", resp.location(t))
		resp = d.send(t, http.MethodPost, "/schedules/"+s.ID.String()+"/resume", url.Values{}, map[string]string{"Cookie": cookie["Cookie"], "Sec-Fetch-Site": "cross-site"})
		require.Equal(t, http.StatusForbidden, resp.status)
		got, err := d.sc.Get(t.Context(), s.ID)
		require.NoError(t, err)
		require.True(t, got.Paused)

		// A forged or altered cookie does not.
		for _, value := range []string{"4102444800.forged", c.Value + "x", "1." + strings.SplitN(c.Value, ".", 2)[1], token} {
			resp := d.send(t, http.MethodGet, "/api/runs", nil, map[string]string{"Cookie": "tributary_session=" + value, "Accept": "application/json"})
			require.Equal(t, http.StatusUnauthorized, resp.status, value)
		}

		// Logging out clears it.
		resp = d.send(t, http.MethodPost, "/logout", url.Values{}, samesite)
		require.Equal(t, "/ops/login?notice=signed-out", resp.location(t))
		cleared := (&http.Response{Header: resp.header}).Cookies()
		require.Len(t, cleared, 1)
		require.Equal(t, "tributary_session", cleared[0].Name)
		require.Equal(t, "/ops", cleared[0].Path)
		require.Negative(t, cleared[0].MaxAge)
		require.Equal(t, []string{"Signed out."}, texts(d.page(t, "/login?notice=signed-out", nil), "flash"))

		// Logging in cross-site is refused (login forgery).
		resp = d.send(t, http.MethodPost, "/login", url.Values{"token": {token}}, map[string]string{"Sec-Fetch-Site": "cross-site"})
		require.Equal(t, http.StatusForbidden, resp.status)
	})

	t.Run("NoOpenRedirect", func(t *testing.T) {
		t.Parallel()

		for next, want := range map[string]string{
			"":                           "/ops/",
			"/ops/runs?status=failed":    "/ops/runs?status=failed",
			"/ops/schedules/x/":          "/ops/schedules/x/",
			"/ops":                       "/ops",
			"//evil.example/ops/":        "/ops/",
			"https://evil.example/ops/":  "/ops/",
			"/\\evil.example":            "/ops/",
			"/ops/\\..\\..\\evil":        "/ops/",
			"/ops/../admin":              "/ops/",
			"/opsx":                      "/ops/",
			"/other":                     "/ops/",
			"ops/runs":                   "/ops/",
			"javascript:alert(1)":        "/ops/",
			"/ops/\t/evil.example":       "/ops/",
			"/ops/login?next=//evil.com": "/ops/",
			"/ops/%2F%2Fevil.example":    "/ops/evil.example",
		} {
			resp := d.send(t, http.MethodPost, "/login", url.Values{"token": {token}, "next": {next}}, nil)
			require.Equal(t, want, resp.location(t), "next=%q", next)
		}

		// The login page's form only carries a safe next.
		body := d.page(t, "/login?next="+url.QueryEscape("https://evil.example/"), nil)
		require.Contains(t, body, `<input type="hidden" name="next" value="/ops/">`)
	})
}

func TestDashboardRootAndPrefix(t *testing.T) {
	t.Parallel()

	for _, prefix := range []string{"", "/ops"} {
		t.Run("Prefix="+prefix, func(t *testing.T) {
			t.Parallel()

			d := newDash(t, &riverui.Config{Prefix: prefix}, true)
			s := d.createSchedule(t, &schedule.Params{Name: "p", Cron: "@hourly"})
			run := d.start(t, flowInput{User: "p"})

			body := d.page(t, "/", nil)
			requireNav(t, body, prefix)
			require.Equal(t, []string{prefix + "/schedules/" + s.ID.String()}, attrs(body, "schedule-link", "href"))
			require.Contains(t, body, `<form class="filters" method="get" action="`+prefix+`/"`)

			body = d.page(t, "/schedules/"+s.ID.String(), nil)
			requireNav(t, body, prefix)
			require.Contains(t, body, `action="`+prefix+`/schedules/`+s.ID.String()+`/pause"`)
			require.Equal(t, []string{prefix + "/schedules/" + s.ID.String() + "/delete"}, attrs(body, "delete", "href"))

			body = d.page(t, "/runs", nil)
			require.Equal(t, []string{prefix + "/runs/" + run.ID.String()}, attrs(body, "run-link", "href"))
			body = d.page(t, "/runs/"+run.ID.String(), nil)
			require.Equal(t, []string{fmt.Sprintf("%s/riverui/jobs/%d", prefix, run.JobID)}, attrs(body, "river-job", "href"))

			require.Equal(t, prefix+"/schedules/"+s.ID.String()+"?notice=paused", d.post(t, "/schedules/"+s.ID.String()+"/pause", url.Values{}))
			require.Equal(t, prefix+"/?notice=deleted", d.post(t, "/schedules/"+s.ID.String()+"/delete", url.Values{}))

			// River UI's page for the run's job is there.
			resp := d.send(t, http.MethodGet, fmt.Sprintf("/riverui/jobs/%d", run.JobID), nil, nil)
			require.Equal(t, http.StatusOK, resp.status)

			// Without credentials configured, the login page has nothing to do.
			resp = d.send(t, http.MethodGet, "/login", nil, nil)
			require.Equal(t, prefix+"/", resp.location(t))
		})
	}
}

func TestDashboardWithoutSchedules(t *testing.T) {
	t.Parallel()

	d := newDash(t, nil, false)
	body := d.page(t, "/", nil)
	require.Contains(t, body, "built without a schedule client")
	requireNav(t, body, "")
	resp := d.send(t, http.MethodGet, "/schedules/"+uuid.NewString(), nil, nil)
	require.Equal(t, http.StatusNotFound, resp.status)
	require.Contains(t, texts(resp.body, "error")[0], "without a schedule client")
	resp = d.send(t, http.MethodPost, "/schedules/"+uuid.NewString()+"/pause", url.Values{}, nil)
	require.Equal(t, http.StatusNotFound, resp.status)
	require.Contains(t, d.page(t, "/runs", nil), "No runs yet.")
}

// formFields returns the fields of the form with data-testid=testid as a
// browser would submit them: its inputs' values, its selects' selected
// options and its textareas' text, unescaped.
func formFields(t *testing.T, body, testid string) url.Values {
	t.Helper()

	form := regexp.MustCompile(`(?s)<form [^>]*data-testid="` + regexp.QuoteMeta(testid) + `"[^>]*>(.*?)</form>`).FindStringSubmatch(body)
	require.NotNil(t, form, "no form %s", testid)
	out := url.Values{}
	value := regexp.MustCompile(` value="([^"]*)"`)
	for _, m := range regexp.MustCompile(`<input [^>]*name="([^"]+)"[^>]*>`).FindAllStringSubmatch(form[1], -1) {
		v := ""
		if vm := value.FindStringSubmatch(m[0]); vm != nil {
			v = html.UnescapeString(vm[1])
		}
		out.Set(m[1], v)
	}
	for _, m := range regexp.MustCompile(`(?s)<select name="([^"]+)">(.*?)</select>`).FindAllStringSubmatch(form[1], -1) {
		selected := regexp.MustCompile(`<option value="([^"]*)" selected>`).FindStringSubmatch(m[2])
		if selected == nil {
			selected = regexp.MustCompile(`<option value="([^"]*)"`).FindStringSubmatch(m[2]) // the first
		}
		out.Set(m[1], html.UnescapeString(selected[1]))
	}
	for _, m := range regexp.MustCompile(`(?s)<textarea [^>]*name="([^"]+)"[^>]*>(.*?)</textarea>`).FindAllStringSubmatch(form[1], -1) {
		out.Set(m[1], html.UnescapeString(m[2]))
	}
	return out
}

// with returns a copy of form with the fields of change set.
func with(form url.Values, change map[string]string) url.Values {
	out := url.Values{}
	for k, v := range form {
		out[k] = append([]string(nil), v...)
	}
	for k, v := range change {
		out.Set(k, v)
	}
	return out
}

func TestDashboardScheduleEdit(t *testing.T) {
	t.Parallel()

	d := newDash(t, nil, true)

	// editable creates a schedule to edit, with every field set. It starts
	// in 2098, so no slot fires while a test reads it.
	editable := func(t *testing.T, name string) *schedule.Schedule {
		t.Helper()

		return d.createSchedule(t, &schedule.Params{
			Name: name, Description: "the nightly one", Owner: "team-a", Cron: "0 3 * * *", TimeZone: "Europe/Paris",
			StartAt: time.Date(2098, 1, 1, 8, 0, 0, 0, time.UTC), EndAt: time.Date(2099, 1, 1, 0, 0, 0, 0, time.UTC),
			Overlap: schedule.OverlapQueue, CatchUp: schedule.CatchUpLatest, CatchUpWindow: 10 * time.Minute,
			MaxAttempts: 3, Priority: 2, Queue: "reports", Timeout: time.Hour, Input: flowInput{User: "ada"},
		})
	}

	t.Run("Prefilled", func(t *testing.T) {
		t.Parallel()

		s := editable(t, "prefilled")
		path := "/schedules/" + s.ID.String()
		require.Equal(t, []string{path + "/edit"}, attrs(d.page(t, path, nil), "edit", "href"))

		resp := d.send(t, http.MethodGet, path+"/edit", nil, nil)
		require.Equal(t, http.StatusOK, resp.status, resp.body)
		requireNav(t, resp.body, "")
		requireCSP(t, resp)
		require.Contains(t, resp.body, `action="/schedules/`+s.ID.String()+`/edit"`)
		require.Contains(t, resp.body, "Start (in Europe/Paris; empty for none)")
		form := formFields(t, resp.body, "edit-form")
		require.Equal(t, url.Values{
			"name": {"prefilled"}, "description": {"the nightly one"}, "owner": {"team-a"},
			"cron": {"0 3 * * *"}, "time_zone": {"Europe/Paris"},
			"start_at": {"2098-01-01T09:00"}, "end_at": {"2099-01-01T01:00"}, // in Paris
			"overlap": {"queue"}, "catch_up": {"latest"}, "catch_up_window": {"10m0s"},
			"max_attempts": {"3"}, "priority": {"2"}, "queue": {"reports"}, "timeout": {"1h0m0s"},
			"grant_id": {""}, "input": {"{\n  \"mode\": \"\",\n  \"user\": \"ada\"\n}"},
		}, form)

		// Submitting it as it is changes nothing.
		to := d.post(t, path+"/edit", form)
		require.Equal(t, path+"?notice=unchanged", to)
		require.Equal(t, []string{"Nothing to update: the form matched the schedule."}, texts(d.page(t, to, nil), "flash"))
		got, err := d.sc.Get(t.Context(), s.ID)
		require.NoError(t, err)
		require.Equal(t, s.UpdatedAt, got.UpdatedAt)

		resp = d.send(t, http.MethodGet, "/schedules/"+uuid.NewString()+"/edit", nil, nil)
		require.Equal(t, http.StatusNotFound, resp.status)
		require.Equal(t, []string{"schedule: schedule not found"}, texts(resp.body, "error"))
	})

	t.Run("Update", func(t *testing.T) {
		t.Parallel()

		s := editable(t, "update")
		path := "/schedules/" + s.ID.String()
		form := formFields(t, d.page(t, path+"/edit", nil), "edit-form")
		to := d.post(t, path+"/edit", with(form, map[string]string{
			"name": "update v2", "description": "line one\r\nline two", "owner": "team-b", "cron": "30 8 * * 1-5", "time_zone": "Asia/Tokyo",
			"start_at": "", "end_at": "2098-06-01T12:00", "overlap": "allow", "catch_up": "window", "catch_up_window": "0s",
			"max_attempts": "", "priority": "4", "queue": "", "timeout": "90s", "input": `{"user": "bob"}`,
		}))
		require.Equal(t, path+"?notice=updated", to)
		body := d.page(t, to, nil)
		require.Equal(t, []string{"Schedule updated. A new cron expression, time zone, start or end applies at once; other changes from the next slot."}, texts(body, "flash"))
		require.Contains(t, body, "<dt>Time zone</dt><dd>Asia/Tokyo</dd>")

		got, err := d.sc.Get(t.Context(), s.ID)
		require.NoError(t, err)
		require.Equal(t, "update v2", got.Name)
		require.Equal(t, "line one\nline two", got.Description)
		require.Equal(t, "team-b", got.Owner)
		require.Equal(t, "30 8 * * 1-5", got.Cron)
		require.Equal(t, "Asia/Tokyo", got.TimeZone)
		require.Nil(t, got.StartAt)
		require.NotNil(t, got.EndAt)
		require.Equal(t, "2098-06-01T12:00:00+02:00", got.EndAt.In(mustZone(t, "Europe/Paris")).Format(time.RFC3339), "read in the zone the form showed")
		require.Equal(t, schedule.OverlapAllow, got.Overlap)
		require.Equal(t, schedule.CatchUpWindow, got.CatchUp)
		require.Zero(t, got.CatchUpWindow, "0s is no window")
		require.Zero(t, got.MaxAttempts)
		require.Equal(t, 4, got.Priority)
		require.Empty(t, got.Queue)
		require.Equal(t, 90*time.Second, got.Timeout)
		require.JSONEq(t, `{"user": "bob"}`, string(got.Input))
		require.NotNil(t, got.NextFireAt)
		require.Equal(t, "08:30", got.NextFireAt.In(mustZone(t, "Asia/Tokyo")).Format("15:04"), "re-timed at once")

		// The form shows it as it is now: submitted again, it changes
		// nothing. An empty input is none.
		form = formFields(t, d.page(t, path+"/edit", nil), "edit-form")
		require.Equal(t, "0s", form.Get("catch_up_window"))
		require.Equal(t, path+"?notice=unchanged", d.post(t, path+"/edit", with(form, map[string]string{"description": "line one\r\nline two"})))
		require.Equal(t, path+"?notice=updated", d.post(t, path+"/edit", with(form, map[string]string{"input": ""})))
		got, err = d.sc.Get(t.Context(), s.ID)
		require.NoError(t, err)
		require.JSONEq(t, `null`, string(got.Input))
	})

	t.Run("OnlyChangedFields", func(t *testing.T) {
		t.Parallel()

		// Under a grant revoked since: an edit that leaves the grant alone
		// does not check it again, which would refuse every edit.
		grant, err := d.sc.CreateGrant(t.Context(), &schedule.GrantParams{Subject: "user-7", Scopes: []string{schedule.ScopeExecute(flow.Name())}})
		require.NoError(t, err)
		s := d.createSchedule(t, &schedule.Params{
			Name: "granted", Cron: "0 3 * * *", TimeZone: "Europe/Paris", GrantID: &grant.ID,
			StartAt: time.Date(2098, 1, 1, 8, 0, 0, 0, time.UTC),
		})
		_, err = d.sc.RevokeGrant(t.Context(), grant.ID, "left")
		require.NoError(t, err)
		path := "/schedules/" + s.ID.String()
		form := formFields(t, d.page(t, path+"/edit", nil), "edit-form")
		require.Equal(t, grant.ID.String(), form.Get("grant_id"))
		require.Equal(t, path+"?notice=updated", d.post(t, path+"/edit", with(form, map[string]string{"description": "still granted"})))
		got, err := d.sc.Get(t.Context(), s.ID)
		require.NoError(t, err)
		require.Equal(t, "still granted", got.Description)
		require.Equal(t, grant.ID, *got.GrantID)
		require.Equal(t, s.NextFireAt, got.NextFireAt)

		// Naming an unknown grant is refused; removing the grant is not.
		resp := d.send(t, http.MethodPost, path+"/edit", with(form, map[string]string{"grant_id": uuid.NewString()}), nil)
		require.Equal(t, http.StatusBadRequest, resp.status, resp.body)
		require.Contains(t, texts(resp.body, "error")[0], "execution grant not found")
		require.Equal(t, path+"?notice=updated", d.post(t, path+"/edit", with(form, map[string]string{"grant_id": ""})))
		got, err = d.sc.Get(t.Context(), s.ID)
		require.NoError(t, err)
		require.Nil(t, got.GrantID)
	})

	t.Run("Invalid", func(t *testing.T) {
		t.Parallel()

		s := editable(t, "invalid")
		path := "/schedules/" + s.ID.String()
		form := formFields(t, d.page(t, path+"/edit", nil), "edit-form")
		for name, tc := range map[string]struct {
			field, value, err string
		}{
			"BadCron":     {"cron", "61 * * * *", `schedule: bad cron expression &#34;61 * * * *&#34;`},
			"NeverFires":  {"cron", "0 0 30 2 *", "never fires"},
			"UnknownZone": {"time_zone", "Mars/Olympus", `schedule: bad time zone &#34;Mars/Olympus&#34;: unknown time zone`},
			"BadJSON":     {"input", `{"user":`, "the input is not valid JSON"},
			"EmptyName":   {"name", "", "schedule: invalid Name: is empty"},
			"BadDuration": {"catch_up_window", "soon", `catch-up window &#34;soon&#34; is not a duration`},
			"BadTime":     {"end_at", "tomorrow", `end &#34;tomorrow&#34; is not a time`},
			"EndFirst":    {"end_at", "2097-01-01T08:00", "schedule: invalid EndAt"},
			"BadPriority": {"priority", "9", "schedule: invalid Priority"},
			"BadOverlap":  {"overlap", "sometimes", "is not an overlap policy"},
			"BadGrant":    {"grant_id", "nope", `grant &#34;nope&#34; is not an id`},
		} {
			resp := d.send(t, http.MethodPost, path+"/edit", with(form, map[string]string{tc.field: tc.value, "description": "changed too"}), map[string]string{"Sec-Fetch-Site": "same-origin"})
			require.Equal(t, http.StatusBadRequest, resp.status, name)
			errs := texts(resp.body, "error")
			require.Len(t, errs, 1, name)
			require.Contains(t, errs[0], tc.err, name)

			// The form again, as typed.
			again := formFields(t, resp.body, "edit-form")
			if tc.field != "overlap" { // a select shows only its options
				require.Equal(t, tc.value, again.Get(tc.field), name)
			}
			require.Equal(t, "changed too", again.Get("description"), name)
		}
		got, err := d.sc.Get(t.Context(), s.ID)
		require.NoError(t, err)
		require.Equal(t, s.UpdatedAt, got.UpdatedAt, "nothing was written")
		require.Equal(t, "the nightly one", got.Description)
		require.Equal(t, "0 3 * * *", got.Cron)
	})

	t.Run("Escaped", func(t *testing.T) {
		t.Parallel()

		s := d.createSchedule(t, &schedule.Params{Name: hostile, Owner: hostile, Cron: "0 3 * * *", Input: flowInput{User: hostile}})
		path := "/schedules/" + s.ID.String()
		body := d.page(t, path+"/edit", nil)
		require.NotContains(t, body, "<script>") // no inline script; a live page loads refresh.js
		require.Contains(t, body, `<input name="name" value="&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;"`)
		form := formFields(t, body, "edit-form")
		require.Equal(t, hostile, form.Get("owner"))

		// In an error, and in the form shown again with it.
		resp := d.send(t, http.MethodPost, path+"/edit", with(form, map[string]string{"cron": hostile}), nil)
		require.Equal(t, http.StatusBadRequest, resp.status)
		require.NotContains(t, resp.body, "<script")
		require.Contains(t, texts(resp.body, "error")[0], "&lt;script&gt;")
		require.Equal(t, hostile, formFields(t, resp.body, "edit-form").Get("cron"))
	})

	t.Run("CrossOrigin", func(t *testing.T) {
		t.Parallel()

		s := editable(t, "cross")
		path := "/schedules/" + s.ID.String()
		form := formFields(t, d.page(t, path+"/edit", nil), "edit-form")
		for _, header := range []map[string]string{
			{"Sec-Fetch-Site": "cross-site"},
			{"Origin": "https://evil.example"},
		} {
			resp := d.send(t, http.MethodPost, path+"/edit", with(form, map[string]string{"cron": "* * * * *"}), header)
			require.Equal(t, http.StatusForbidden, resp.status, header)
			require.Contains(t, texts(resp.body, "error")[0], "cross-site request refused")
		}
		got, err := d.sc.Get(t.Context(), s.ID)
		require.NoError(t, err)
		require.Equal(t, "0 3 * * *", got.Cron)

		resp := d.send(t, http.MethodPut, path+"/edit", url.Values{}, nil)
		require.Equal(t, http.StatusMethodNotAllowed, resp.status)
		require.Equal(t, "GET, POST", resp.header.Get("Allow"))
	})
}

func TestDashboardScheduleBackfill(t *testing.T) {
	t.Parallel()

	d := newDash(t, nil, true)
	newYork := mustZone(t, "America/New_York")

	// backfillable is a schedule at 06:00 in New York that runs its
	// slots side by side. It is paused, so that only backfills start runs.
	backfillable := func(t *testing.T, cron string) *schedule.Schedule {
		t.Helper()

		// Its runs wait for a signal: the first one backfilled stays
		// unfinished, so what queues or skips behind it does not depend on
		// how fast the worker is.
		return d.createSchedule(t, &schedule.Params{
			Name: "backfill", Cron: cron, TimeZone: "America/New_York", Overlap: schedule.OverlapAllow, Paused: true,
			Input: flowInput{Mode: "wait"},
		})
	}
	// slots are the fire times of the schedule's runs, oldest first, in New
	// York.
	slots := func(t *testing.T, id uuid.UUID) []string {
		t.Helper()

		runs, err := d.sc.History(t.Context(), id, nil)
		require.NoError(t, err)
		var at []time.Time
		for _, run := range runs {
			require.NotNil(t, run.FireAt)
			at = append(at, *run.FireAt)
		}
		slices.SortFunc(at, time.Time.Compare)
		out := []string{}
		for _, a := range at {
			out = append(out, a.In(newYork).Format("2006-01-02 15:04 MST"))
		}
		return out
	}

	t.Run("Backfill", func(t *testing.T) {
		t.Parallel()

		s := backfillable(t, "0 6 * * *")
		path := "/schedules/" + s.ID.String()
		body := d.page(t, path, nil)
		require.Contains(t, body, `action="/schedules/`+s.ID.String()+`/backfill"`)
		require.Contains(t, body, "From (America/New_York)")
		require.Contains(t, body, `<option value="">buffer: all, one after the other</option>`)
		require.Contains(t, body, `name="rerun_skipped"`)

		// Wall times in New York: three mornings.
		to := d.post(t, path+"/backfill", url.Values{"from": {"2026-03-05T00:00"}, "to": {"2026-03-08T00:00"}})
		require.Equal(t, path+"?existing=0&notice=backfilled&queued=2&rerun=0&slots=3&started=1", to)
		body = d.page(t, to, nil)
		require.Equal(t, []string{"Backfilled 3 slots: 1 started, 2 queued to run one after the other."}, texts(body, "flash"))
		require.Len(t, attrs(body, "run-link", "href"), 3)
		require.Equal(t, []string{"2026-03-05 06:00 EST", "2026-03-06 06:00 EST", "2026-03-07 06:00 EST"}, slots(t, s.ID))

		// A wider range starts only the slot that has no run; RFC 3339
		// works too, across the change to summer time.
		to = d.post(t, path+"/backfill", url.Values{"from": {"2026-03-04T00:00"}, "to": {"2026-03-08T00:00"}})
		require.Equal(t, path+"?existing=3&notice=backfilled&queued=1&rerun=0&slots=4&started=0", to)
		require.Equal(t, []string{"Backfilled 4 slots: 1 queued to run one after the other, 3 had run (or been skipped) already."}, texts(d.page(t, to, nil), "flash"))
		// Overlap skip, chosen in the form: the first run above waits, so
		// the slot is skipped, and the notice says why.
		to = d.post(t, path+"/backfill", url.Values{"from": {"2026-03-09T00:00:00Z"}, "to": {"2026-03-10T00:00:00Z"}, "overlap": {"skip"}})
		require.Equal(t, path+"?existing=0&notice=backfilled&queued=0&rerun=0&skipped_overlap=1&slots=1&started=0", to)
		require.Equal(t, []string{"Backfilled 1 slot: 1 skipped (overlap)."}, texts(d.page(t, to, nil), "flash"))
		to = d.post(t, path+"/backfill", url.Values{"from": {"2026-03-09T00:00:00Z"}, "to": {"2026-03-10T00:00:00Z"}, "rerun_skipped": {"1"}})
		require.Equal(t, []string{"Backfilled 1 slot: 1 queued to run one after the other, 1 of them run again after a skip."}, texts(d.page(t, to, nil), "flash"))
		require.Equal(t, []string{"2026-03-04 06:00 EST", "2026-03-05 06:00 EST", "2026-03-06 06:00 EST", "2026-03-07 06:00 EST", "2026-03-09 06:00 EDT"}, slots(t, s.ID))

		to = d.post(t, path+"/backfill", url.Values{"from": {"2026-03-05T07:00"}, "to": {"2026-03-06T05:00"}})
		require.Equal(t, []string{"Backfill found no slot in the range."}, texts(d.page(t, to, nil), "flash"))

		// Counts the dashboard did not write show nothing.
		require.Empty(t, texts(d.page(t, path+"?notice=backfilled&slots=2&started=5", nil), "flash"))
		require.Empty(t, texts(d.page(t, path+"?notice=backfilled&slots=x", nil), "flash"))
	})

	t.Run("BadRange", func(t *testing.T) {
		t.Parallel()

		s := backfillable(t, "0 6 * * *")
		every := backfillable(t, "* * * * *")
		for name, tc := range map[string]struct {
			s          *schedule.Schedule
			from, to   string
			overlap    string
			wantStatus int
			wantErr    string
		}{
			"Reversed":   {s, "2026-03-08T00:00", "2026-03-05T00:00", "", http.StatusBadRequest, "schedule: invalid to: is not after from"},
			"NoTo":       {s, "2026-03-05T00:00", "", "", http.StatusBadRequest, "enter both ends of the range to backfill, from and to (in America/New_York)"},
			"NotATime":   {s, "yesterday", "2026-03-05T00:00", "", http.StatusBadRequest, `from &#34;yesterday&#34; is not a time`},
			"BadOverlap": {s, "2026-03-05T00:00", "2026-03-08T00:00", "sometimes", http.StatusBadRequest, "is not an overlap policy"},
			"OverTheCap": {every, "2026-03-05T00:00", "2026-03-06T00:00", "", http.StatusBadRequest, "holds more than 1000 slots; backfill a shorter range at a time"},
			"Hostile":    {s, hostile, "2026-03-05T00:00", "", http.StatusBadRequest, "&lt;script&gt;"},
		} {
			path := "/schedules/" + tc.s.ID.String()
			form := url.Values{"from": {tc.from}, "to": {tc.to}, "overlap": {tc.overlap}}
			resp := d.send(t, http.MethodPost, path+"/backfill", form, map[string]string{"Sec-Fetch-Site": "same-origin"})
			require.Equal(t, tc.wantStatus, resp.status, name)
			errs := texts(resp.body, "error")
			require.Len(t, errs, 1, name)
			require.Contains(t, errs[0], tc.wantErr, name)
			require.NotContains(t, resp.body, "<script", name)

			// The schedule's page again, with the form as typed.
			require.Equal(t, []string{"paused"}, texts(resp.body, "schedule-state"), name)
			again := formFields(t, resp.body, "backfill")
			require.Equal(t, tc.from, again.Get("from"), name)
			require.Equal(t, tc.to, again.Get("to"), name)
		}
		require.Empty(t, slots(t, s.ID), "nothing was written")
		require.Empty(t, slots(t, every.ID), "nothing was written")

		resp := d.send(t, http.MethodPost, "/schedules/"+uuid.NewString()+"/backfill", url.Values{"from": {"2026-03-05T00:00"}, "to": {"2026-03-06T00:00"}}, nil)
		require.Equal(t, http.StatusNotFound, resp.status)
	})

	t.Run("CrossOrigin", func(t *testing.T) {
		t.Parallel()

		s := backfillable(t, "0 6 * * *")
		resp := d.send(t, http.MethodPost, "/schedules/"+s.ID.String()+"/backfill",
			url.Values{"from": {"2026-03-05T00:00"}, "to": {"2026-03-08T00:00"}}, map[string]string{"Sec-Fetch-Site": "cross-site"})
		require.Equal(t, http.StatusForbidden, resp.status)
		require.Empty(t, slots(t, s.ID))
	})
}

func mustZone(t *testing.T, name string) *time.Location {
	t.Helper()

	loc, err := time.LoadLocation(name)
	require.NoError(t, err)
	return loc
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
