package riverui_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/internal/testdb"
	"github.com/tributary-go/tributary/riverui"
	"github.com/tributary-go/tributary/schedule"
	"github.com/tributary-go/tributary/workflow"
)

func TestMain(m *testing.M) { testdb.Main(m) }

// fixture is a Handler on a fresh schema, served by an httptest.Server.
type fixture struct {
	prefix string
	sc     *schedule.Client
	server *httptest.Server
	token  string
	wf     *workflow.Client
}

func newFixture(t *testing.T, config *riverui.Config) *fixture {
	t.Helper()

	db := testdb.New(t)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)

	wf, err := workflow.NewClient(db.Pool, &workflow.Config{Schema: db.Schema})
	require.NoError(t, err)
	sc, err := schedule.New(wf, nil)
	require.NoError(t, err)
	require.NoError(t, wf.Start(ctx))
	t.Cleanup(func() { require.NoError(t, wf.Stop(context.Background())) })

	h, err := riverui.New(wf, sc, config)
	require.NoError(t, err)
	uiCtx, stopUI := context.WithCancel(ctx)
	require.NoError(t, h.Start(uiCtx))
	server := httptest.NewServer(h)
	t.Cleanup(func() {
		server.Close()
		stopUI()
	})

	f := &fixture{sc: sc, server: server, wf: wf}
	if config != nil {
		f.token = config.Token
		f.prefix = strings.TrimSuffix(config.Prefix, "/")
	}
	return f
}

// do sends a request with the fixture's token (if any) and returns the
// status and body. Every answer from the JSON API is checked against
// openapi.json (see checkAnswer).
func (f *fixture) do(t *testing.T, method, path, body string, header map[string]string) (int, string) {
	t.Helper()

	var reader io.Reader
	if body != "" {
		reader = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(t.Context(), method, f.server.URL+path, reader)
	require.NoError(t, err)
	if f.token != "" {
		req.Header.Set("Authorization", "Bearer "+f.token)
	}
	for k, v := range header {
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	resp, err := f.server.Client().Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	// The escaped path, so that an escaped / stays in its segment.
	if api, ok := strings.CutPrefix(req.URL.EscapedPath(), f.prefix); ok && strings.HasPrefix(api, "/api/") {
		checkAnswer(t, method, api, resp.StatusCode, resp.Header.Get("Content-Type"), string(data))
	}
	return resp.StatusCode, string(data)
}

func (f *fixture) getJSON(t *testing.T, path string, wantStatus int, v any) {
	t.Helper()

	status, body := f.do(t, http.MethodGet, path, "", nil)
	require.Equal(t, wantStatus, status, body)
	require.NoError(t, json.Unmarshal([]byte(body), v), body)
}

func (f *fixture) createSchedule(t *testing.T, name, owner string) *schedule.Schedule {
	t.Helper()

	s, err := f.sc.Create(t.Context(), &schedule.Params{Name: name, Owner: owner, Workflow: "digest", Cron: "0 9 * * *", TimeZone: "Europe/Paris"})
	require.NoError(t, err)
	return s
}

type errorBody struct {
	Error string `json:"error"`
	Field string `json:"field"`
}

// apiSchedule and apiRun are the fields of the API's schedules and runs
// that the tests read.
type apiSchedule struct {
	ID            uuid.UUID `json:"id"`
	Name          string    `json:"name"`
	Workflow      string    `json:"workflow"`
	TimeZone      string    `json:"time_zone"`
	Cron          string    `json:"cron"`
	RRule         string    `json:"rrule"`
	Overlap       string    `json:"overlap"`
	CatchUpWindow string    `json:"catch_up_window"`
	DSTGap        string    `json:"dst_gap"`
	DSTFold       string    `json:"dst_fold"`
	Calendars     []string  `json:"calendars"`
	OnExcluded    string    `json:"on_excluded"`
	Input         json.RawMessage
	Paused        bool            `json:"paused"`
	PauseNote     string          `json:"pause_note"`
	UpdatedAt     time.Time       `json:"updated_at"`
	NextFireAt    *time.Time      `json:"next_fire_at"`
	NextFireTimes []apiOccurrence `json:"next_fire_times"`
}

type apiOccurrence struct {
	At       time.Time `json:"at"`
	Nominal  string    `json:"nominal"`
	Shifted  bool      `json:"shifted"`
	Skipped  bool      `json:"skipped"`
	Excluded string    `json:"excluded"`
	Note     string    `json:"note"`
}

type apiRun struct {
	ID     uuid.UUID       `json:"id"`
	Type   string          `json:"type"`
	Status workflow.Status `json:"status"`
	Input  json.RawMessage `json:"input"`
	Tags   []string        `json:"tags"`
}

func TestAPI(t *testing.T) {
	t.Parallel()

	f := newFixture(t, nil)
	s1 := f.createSchedule(t, "morning <digest>", "team-a")
	s2 := f.createSchedule(t, "evening digest", "team-b")

	t.Run("Schedules", func(t *testing.T) {
		var list struct {
			Schedules []apiSchedule `json:"schedules"`
		}
		f.getJSON(t, "/api/schedules", http.StatusOK, &list)
		require.Len(t, list.Schedules, 2)

		f.getJSON(t, "/api/schedules?owner=team-b", http.StatusOK, &list)
		require.Len(t, list.Schedules, 1)
		require.Equal(t, s2.ID, list.Schedules[0].ID)

		var got apiSchedule
		f.getJSON(t, "/api/schedules/"+s1.ID.String(), http.StatusOK, &got)
		require.Equal(t, s1.Name, got.Name)
		require.Equal(t, "digest", got.Workflow)
		require.Equal(t, "1m0s", got.CatchUpWindow)
		require.Len(t, got.NextFireTimes, 10)
		require.True(t, got.NextFireTimes[0].At.After(time.Now()))

		var e errorBody
		f.getJSON(t, "/api/schedules/"+uuid.New().String(), http.StatusNotFound, &e)
		require.NotEmpty(t, e.Error)
		// A segment that is not an id is a key, of owner "" without owner=.
		f.getJSON(t, "/api/schedules/not-an-id", http.StatusNotFound, &e)
		require.Contains(t, e.Error, `no schedule has key "not-an-id" under owner ""`)
		f.getJSON(t, "/api/schedules?paused=maybe", http.StatusBadRequest, &e)

		status, body := f.do(t, http.MethodPost, "/api/schedules/"+s1.ID.String()+"/pause", `{"note": "maintenance"}`, nil)
		require.Equal(t, http.StatusOK, status, body)
		f.getJSON(t, "/api/schedules?paused=true", http.StatusOK, &list)
		require.Len(t, list.Schedules, 1)
		require.Equal(t, "maintenance", list.Schedules[0].PauseNote)
		status, body = f.do(t, http.MethodPost, "/api/schedules/"+s1.ID.String()+"/resume", "", nil)
		require.Equal(t, http.StatusOK, status, body)

		status, body = f.do(t, http.MethodDelete, "/api/schedules/"+s2.ID.String(), "", nil)
		require.Equal(t, http.StatusNoContent, status, body)
		status, _ = f.do(t, http.MethodDelete, "/api/schedules/"+s2.ID.String(), "", nil)
		require.Equal(t, http.StatusNotFound, status)

		// State changes need POST or DELETE.
		status, _ = f.do(t, http.MethodGet, "/api/schedules/"+s1.ID.String()+"/pause", "", nil)
		require.Equal(t, http.StatusMethodNotAllowed, status)
	})

	t.Run("Runs", func(t *testing.T) {
		status, body := f.do(t, http.MethodPost, "/api/schedules/"+s1.ID.String()+"/trigger", "", nil)
		require.Equal(t, http.StatusOK, status, body)
		var triggered struct {
			RunID uuid.UUID `json:"run_id"`
		}
		require.NoError(t, json.Unmarshal([]byte(body), &triggered))

		var list struct {
			Runs []apiRun `json:"runs"`
		}
		f.getJSON(t, "/api/runs", http.StatusOK, &list)
		require.Len(t, list.Runs, 1)
		require.Equal(t, triggered.RunID, list.Runs[0].ID)
		f.getJSON(t, "/api/runs?schedule_id="+s1.ID.String()+"&type=digest&limit=5", http.StatusOK, &list)
		require.Len(t, list.Runs, 1)
		f.getJSON(t, "/api/runs?schedule="+s1.ID.String(), http.StatusOK, &list) // former name, deprecated
		require.Len(t, list.Runs, 1)
		f.getJSON(t, "/api/runs?schedule_id="+uuid.NewString(), http.StatusOK, &list)
		require.Empty(t, list.Runs)
		f.getJSON(t, "/api/runs?status=completed", http.StatusOK, &list)
		require.Empty(t, list.Runs)
		f.getJSON(t, "/api/schedules/"+s1.ID.String()+"/history", http.StatusOK, &list)
		require.Len(t, list.Runs, 1)

		var e errorBody
		f.getJSON(t, "/api/runs?status=bogus", http.StatusBadRequest, &e)
		f.getJSON(t, "/api/runs?limit=0", http.StatusBadRequest, &e)
		f.getJSON(t, "/api/runs/"+uuid.New().String(), http.StatusNotFound, &e)
		f.getJSON(t, "/api/schedules/"+uuid.New().String()+"/history", http.StatusNotFound, &e)
		f.getJSON(t, "/api/nothing", http.StatusNotFound, &e)

		var got apiRun
		f.getJSON(t, "/api/runs/"+triggered.RunID.String(), http.StatusOK, &got)
		require.Equal(t, "digest", got.Type)

		path := "/api/runs/" + triggered.RunID.String()
		status, body = f.do(t, http.MethodPost, path+"/signal", `{"name": "approved", "payload": {"by": "ops"}}`, nil)
		require.Equal(t, http.StatusOK, status, body)
		status, body = f.do(t, http.MethodPost, path+"/signal", `{"payload": 1}`, nil)
		require.Equal(t, http.StatusBadRequest, status, body)
		status, body = f.do(t, http.MethodPost, path+"/retry", "", nil)
		require.Equal(t, http.StatusConflict, status, body)

		status, body = f.do(t, http.MethodPost, path+"/cancel", "", nil)
		require.Equal(t, http.StatusOK, status, body)
		require.NoError(t, json.Unmarshal([]byte(body), &got))
		require.Equal(t, workflow.StatusCancelled, got.Status)
		// Again: the run as it is, as pausing a paused schedule answers.
		status, body = f.do(t, http.MethodPost, path+"/cancel", "", nil)
		require.Equal(t, http.StatusOK, status, body)
		require.NoError(t, json.Unmarshal([]byte(body), &got))
		require.Equal(t, workflow.StatusCancelled, got.Status)

		status, body = f.do(t, http.MethodPost, path+"/retry", "", nil)
		require.Equal(t, http.StatusOK, status, body)
		require.NoError(t, json.Unmarshal([]byte(body), &got))
		require.Equal(t, workflow.StatusPending, got.Status)
	})

	t.Run("Dashboard", func(t *testing.T) {
		status, body := f.do(t, http.MethodGet, "/schedules", "", nil)
		require.Equal(t, http.StatusOK, status)
		require.Contains(t, body, "morning &lt;digest&gt;")
		require.NotContains(t, body, "<digest>")
		require.Contains(t, body, `href="/riverui/"`)
	})

	t.Run("RiverUI", func(t *testing.T) {
		status, body := f.do(t, http.MethodGet, "/riverui/", "", nil)
		require.Equal(t, http.StatusOK, status)
		require.Contains(t, body, "<html")

		status, body = f.do(t, http.MethodGet, "/riverui/api/jobs?state=available", "", nil)
		require.Equal(t, http.StatusOK, status, body)
	})

	t.Run("CrossSite", func(t *testing.T) {
		for _, header := range []map[string]string{
			{"Sec-Fetch-Site": "cross-site"},
			{"Origin": "https://evil.example"},
		} {
			status, body := f.do(t, http.MethodPost, "/api/schedules/"+s1.ID.String()+"/pause", "", header)
			require.Equal(t, http.StatusForbidden, status, body)
			var e errorBody
			require.NoError(t, json.Unmarshal([]byte(body), &e))
			require.Contains(t, e.Error, "cross-site")
		}
		var got apiSchedule
		f.getJSON(t, "/api/schedules/"+s1.ID.String(), http.StatusOK, &got)
		require.False(t, got.Paused)

		// Same-origin browser requests pass.
		host := strings.TrimPrefix(f.server.URL, "http://")
		status, body := f.do(t, http.MethodPost, "/api/schedules/"+s1.ID.String()+"/pause", "", map[string]string{"Sec-Fetch-Site": "same-origin"})
		require.Equal(t, http.StatusOK, status, body)
		status, body = f.do(t, http.MethodPost, "/api/schedules/"+s1.ID.String()+"/resume", "", map[string]string{"Origin": "http://" + host})
		require.Equal(t, http.StatusOK, status, body)
	})
}

func TestToken(t *testing.T) {
	t.Parallel()

	f := newFixture(t, &riverui.Config{Token: "s3cret", Prefix: "/ops/"})
	s := f.createSchedule(t, "digest", "")

	for _, path := range []string{"/ops/", "/ops/api/schedules", "/ops/riverui/", "/ops/riverui/api/jobs?state=available"} {
		for _, auth := range []string{"", "Bearer wrong", "Basic czNjcmV0", "Bearer s3cret2"} {
			status, body := f.do(t, http.MethodGet, path, "", map[string]string{"Authorization": auth})
			require.Equal(t, http.StatusUnauthorized, status, "%s %q: %s", path, auth, body)
		}
		status, body := f.do(t, http.MethodGet, path, "", nil)
		require.Equal(t, http.StatusOK, status, "%s: %s", path, body)
	}

	// The bearer token vouches for a request a browser would not send
	// cross-site on its own.
	status, body := f.do(t, http.MethodPost, "/ops/api/schedules/"+s.ID.String()+"/pause", "", map[string]string{"Sec-Fetch-Site": "cross-site"})
	require.Equal(t, http.StatusOK, status, body)

	// Nothing is served outside the prefix.
	status, _ = f.do(t, http.MethodGet, "/api/schedules", "", nil)
	require.Equal(t, http.StatusNotFound, status)
}

func TestNew(t *testing.T) {
	t.Parallel()

	_, err := riverui.New(nil, nil, nil)
	require.ErrorContains(t, err, "workflow client is nil")
}

// TestAPIScheduleWrites creates, updates and backfills schedules over the
// API, as the CLI's schedule create, update and backfill do.
func TestAPIScheduleWrites(t *testing.T) {
	t.Parallel()

	f := newFixture(t, nil)
	var created apiSchedule
	status, body := f.do(t, http.MethodPost, "/api/schedules", `{"name": "reports", "owner": "finance", "workflow": "digest",
		"cron": "0 9 * * 1-5", "time_zone": "Asia/Tokyo", "input": {"team": "finance"}, "catch_up_window": "1h", "overlap": "skip"}`, nil)
	require.Equal(t, http.StatusCreated, status, body)
	require.NoError(t, json.Unmarshal([]byte(body), &created))
	s := created
	require.Equal(t, "Asia/Tokyo", s.TimeZone)
	require.Equal(t, "skip", s.Overlap)
	require.Equal(t, "1h0m0s", s.CatchUpWindow)
	require.JSONEq(t, `{"team": "finance"}`, string(s.Input))
	require.Len(t, created.NextFireTimes, 10)

	var e errorBody
	for name, bad := range map[string]string{
		"bad cron":      `{"name": "x", "workflow": "digest", "cron": "61 * * * *"}`,
		"unknown zone":  `{"name": "x", "workflow": "digest", "cron": "0 9 * * *", "time_zone": "Mars/Olympus"}`,
		"bad duration":  `{"name": "x", "workflow": "digest", "cron": "0 9 * * *", "catch_up_window": "soon"}`,
		"unknown field": `{"name": "x", "workflow": "digest", "cron": "0 9 * * *", "colour": "red"}`,
		"empty":         ``,
	} {
		status, body := f.do(t, http.MethodPost, "/api/schedules", bad, nil)
		require.Equal(t, http.StatusBadRequest, status, name)
		require.NoError(t, json.Unmarshal([]byte(body), &e), name)
		require.NotEmpty(t, e.Error, name)
	}
	list, err := f.sc.List(t.Context(), nil)
	require.NoError(t, err)
	require.Len(t, list, 1, "bad input writes nothing")

	path := "/api/schedules/" + s.ID.String()
	status, body = f.do(t, http.MethodPatch, path, `{"cron": "30 8 * * *", "catch_up_window": "10m"}`, nil)
	require.Equal(t, http.StatusOK, status, body)
	got, err := f.sc.Get(t.Context(), schedule.ByID(s.ID))
	require.NoError(t, err)
	require.Equal(t, "30 8 * * *", got.Cron)
	require.Equal(t, "Asia/Tokyo", got.TimeZone, "fields not named are kept")
	// The workflow type changes from the next slot (this client registers
	// no type, so any name is one).
	status, body = f.do(t, http.MethodPatch, path, `{"workflow": "digest_v2"}`, nil)
	require.Equal(t, http.StatusOK, status, body)
	got, err = f.sc.Get(t.Context(), schedule.ByID(s.ID))
	require.NoError(t, err)
	require.Equal(t, "digest_v2", got.Workflow)
	status, _ = f.do(t, http.MethodPatch, "/api/schedules/"+uuid.New().String(), `{"cron": "0 9 * * *"}`, nil)
	require.Equal(t, http.StatusNotFound, status)

	// 08:30 Tokyo is 23:30 UTC the day before: three slots in these three days.
	var backfilled schedule.BackfillResult
	status, body = f.do(t, http.MethodPost, path+"/backfill", `{"from": "2026-01-10T00:00:00Z", "to": "2026-01-13T00:00:00Z"}`, nil)
	require.Equal(t, http.StatusOK, status, body)
	require.NoError(t, json.Unmarshal([]byte(body), &backfilled))
	require.Equal(t, 3, backfilled.Slots)
	require.Equal(t, 3, backfilled.Started+backfilled.Queued, "all three run, one after the other")
	status, body = f.do(t, http.MethodPost, path+"/backfill", `{"from": "2026-01-10T00:00:00Z", "to": "2026-01-13T00:00:00Z", "overlap": "allow", "rerun_skipped": true}`, nil)
	require.Equal(t, http.StatusOK, status, body)
	require.JSONEq(t, `{"schedule_id": "`+created.ID.String()+`", "from": "2026-01-10T00:00:00Z", "to": "2026-01-13T00:00:00Z", "slots": 3, "started": 0, "queued": 0, "existing": 3, "rerun": 0, "skipped": {}}`, body)
	status, _ = f.do(t, http.MethodPost, path+"/backfill", `{"from": "2026-01-10T00:00:00Z"}`, nil)
	require.Equal(t, http.StatusBadRequest, status)

	status, body = f.do(t, http.MethodPut, path, `{}`, nil)
	require.Equal(t, http.StatusMethodNotAllowed, status, body)
	require.Contains(t, body, "PATCH")
}

// TestAPIStartRun: POST /api/runs starts a run of a type, idempotently with
// a key, and refuses a body without a type or with a bad one.
func TestAPIStartRun(t *testing.T) {
	t.Parallel()

	f := newFixture(t, nil)
	var started apiRun
	status, body := f.do(t, http.MethodPost, "/api/runs", `{"type": "send_report", "input": {"to": "ops"}, "tags": ["api"]}`, nil)
	require.Equal(t, http.StatusCreated, status, body)
	require.NoError(t, json.Unmarshal([]byte(body), &started))
	require.Equal(t, "send_report", started.Type)
	require.Equal(t, workflow.StatusPending, started.Status)
	require.JSONEq(t, `{"to": "ops"}`, string(started.Input))
	got, err := f.wf.GetRun(t.Context(), started.ID)
	require.NoError(t, err)
	require.Equal(t, []string{"api"}, got.Tags)

	var first, again apiRun
	status, body = f.do(t, http.MethodPost, "/api/runs", `{"type": "import_users", "idempotency_key": "k-1"}`, nil)
	require.Equal(t, http.StatusCreated, status, body)
	require.NoError(t, json.Unmarshal([]byte(body), &first))
	status, body = f.do(t, http.MethodPost, "/api/runs", `{"type": "import_users", "idempotency_key": "k-1", "input": 2}`, nil)
	require.Equal(t, http.StatusCreated, status, body)
	require.NoError(t, json.Unmarshal([]byte(body), &again))
	require.Equal(t, first.ID, again.ID, "one run per key")

	// "workflow", the former name of "type", is still read (deprecated).
	status, body = f.do(t, http.MethodPost, "/api/runs", `{"workflow": "legacy_client"}`, nil)
	require.Equal(t, http.StatusCreated, status, body)
	require.NoError(t, json.Unmarshal([]byte(body), &started))
	require.Equal(t, "legacy_client", started.Type)

	for bad, field := range map[string]string{
		`{}`:                                   "type",
		`{"type": "bad name!"}`:                "type",
		`{"type": "x", "input": }`:             "",
		`{"type": "x", "unknown": 1}`:          "unknown",
		`{"type": "x", "workflow": "y"}`:       "type",
		`{"type": "x", "status": "completed"}`: "status",
		`{"type": "x", "priority": "high"}`:    "priority",
		`{"type": "x", "tags": "a"}`:           "tags",
		`{"type": null}`:                       "type",
	} {
		status, body = f.do(t, http.MethodPost, "/api/runs", bad, nil)
		require.Equal(t, http.StatusBadRequest, status, "%s: %s", bad, body)
		var e errorBody
		require.NoError(t, json.Unmarshal([]byte(body), &e))
		require.Equal(t, field, e.Field, "%s: %s", bad, body)
		if field != "" {
			require.True(t, strings.HasPrefix(e.Error, field+":"), "the error names the field: %s", body)
		}
	}
	runs, err := f.wf.ListRuns(t.Context(), nil)
	require.NoError(t, err)
	require.Len(t, runs, 3, "bad input starts nothing")
}
