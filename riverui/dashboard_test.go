package riverui_test

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/riverqueue/river"
	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/internal/testdb"
	"github.com/tributary-go/tributary/internal/testwait"
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
	db     *testdb.DB
	prefix string
	sc     *schedule.Client
	server *httptest.Server
	wf     *workflow.Client
}

// newDash serves a dash on a fresh schema, stopped when the test ends.
//
// The subtests of a test that shares one dash (or fixture) run one after
// another, not in parallel: a test waiting for parallel subtests gives its
// parallel slot to the next test, which opens its own client, and the
// package's seventeen such tests then held up to 99 of a default server's
// 100 connections at once (each client holds about nine), which failed
// clients with SQLSTATE 53300 in CI. TestSharedEnvSubtestsNotParallel
// holds the rule.
func newDash(t *testing.T, config *riverui.Config, withSchedules bool) *dash {
	t.Helper()

	db := testdb.New(t)
	wf, err := workflow.NewClient(db.Pool, &workflow.Config{
		River:     &river.Config{Queues: map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 4}}},
		Schema:    db.Schema,
		Workflows: []workflow.Registrable{flow, parentFlow},
	})
	require.NoError(t, err)
	var sc *schedule.Client
	if withSchedules {
		sc, err = schedule.New(wf, nil)
		require.NoError(t, err)
	}
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
	d := &dash{client: &client, db: db, sc: sc, server: server, wf: wf}
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
	changed, stop := testwait.JobEvents(d.wf.River())
	defer stop()
	var run *workflow.Run
	missing := testwait.Until(ctx, func(ctx context.Context) error {
		var err error
		if run, err = d.wf.GetRun(ctx, id); err != nil {
			return err
		}
		if run.Status != want {
			return fmt.Errorf("run %s is %s; it never became %s", id, run.Status, want)
		}
		return nil
	}, changed)
	require.NoError(t, missing)
	return run
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

	require.Equal(t, []string{prefix + "/"}, attrs(body, "nav-overview", "href"))
	require.Equal(t, []string{prefix + "/schedules"}, attrs(body, "nav-schedules", "href"))
	require.Equal(t, []string{prefix + "/calendars"}, attrs(body, "nav-calendars", "href"))
	require.Equal(t, []string{prefix + "/runs"}, attrs(body, "nav-runs", "href"))
	require.Equal(t, []string{prefix + "/tenants"}, attrs(body, "nav-tenants", "href"))
	require.Equal(t, []string{prefix + "/riverui/"}, attrs(body, "nav-riverui", "href"))
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

func TestDashboardRootAndPrefix(t *testing.T) {
	t.Parallel()

	for _, prefix := range []string{"", "/ops"} {
		t.Run("Prefix="+prefix, func(t *testing.T) {
			t.Parallel()

			d := newDash(t, &riverui.Config{Prefix: prefix}, true)
			s := d.createSchedule(t, &schedule.Params{Name: "p", Cron: "@hourly"})
			run := d.start(t, flowInput{User: "p"})

			// The root is the overview; the schedules are at /schedules,
			// and /overview, where the overview was, sends there.
			resp := d.send(t, http.MethodGet, "/", nil, nil)
			require.Equal(t, http.StatusOK, resp.status)
			requireNav(t, resp.body, prefix)
			require.Contains(t, resp.body, `<title>Overview · Tributary</title>`)
			require.Equal(t, []string{prefix + "/"}, attrs(resp.body, "nav-overview", "href"))
			require.Contains(t, resp.body, `<a data-testid="nav-overview" href="`+prefix+`/" aria-current="page">`)
			require.Equal(t, prefix+"/?x=1", d.send(t, http.MethodGet, "/overview?x=1", nil, nil).location(t))

			body := d.page(t, "/schedules", nil)
			requireNav(t, body, prefix)
			require.Equal(t, []string{prefix + "/schedules/" + s.ID.String()}, attrs(body, "schedule-link", "href"))
			require.Contains(t, body, `<form class="filters" method="get" action="`+prefix+`/schedules"`)

			body = d.page(t, "/schedules/"+s.ID.String(), nil)
			requireNav(t, body, prefix)
			require.Contains(t, body, `action="`+prefix+`/schedules/`+s.ID.String()+`/pause"`)
			require.Equal(t, []string{prefix + "/schedules/" + s.ID.String() + "/delete"}, attrs(body, "delete", "href"))

			body = d.page(t, "/runs", nil)
			require.Equal(t, []string{prefix + "/runs/" + run.ID.String()}, attrs(body, "run-link", "href"))
			body = d.page(t, "/runs/"+run.ID.String(), nil)
			require.Equal(t, []string{fmt.Sprintf("%s/riverui/jobs/%d", prefix, run.JobID)}, attrs(body, "river-job", "href"))

			require.Equal(t, prefix+"/schedules/"+s.ID.String()+"?notice=paused", d.post(t, "/schedules/"+s.ID.String()+"/pause", url.Values{}))
			require.Equal(t, prefix+"/schedules?notice=deleted", d.post(t, "/schedules/"+s.ID.String()+"/delete", url.Values{}))

			// River UI's page for the run's job is there.
			resp = d.send(t, http.MethodGet, fmt.Sprintf("/riverui/jobs/%d", run.JobID), nil, nil)
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
	body := d.page(t, "/schedules", nil)
	require.Contains(t, body, "built without a schedule client")
	requireNav(t, body, "")
	resp := d.send(t, http.MethodGet, "/schedules/"+uuid.NewString(), nil, nil)
	require.Equal(t, http.StatusNotFound, resp.status)
	require.Contains(t, texts(resp.body, "error")[0], "without a schedule client")
	resp = d.send(t, http.MethodPost, "/schedules/"+uuid.NewString()+"/pause", url.Values{}, nil)
	require.Equal(t, http.StatusNotFound, resp.status)
	require.Contains(t, d.page(t, "/runs", nil), "No runs yet.")
}

func mustZone(t *testing.T, name string) *time.Location {
	t.Helper()

	loc, err := time.LoadLocation(name)
	require.NoError(t, err)
	return loc
}
