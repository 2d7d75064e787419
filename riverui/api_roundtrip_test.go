package riverui_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/schedule"
)

// object decodes a JSON object answer.
func object(t *testing.T, body string) map[string]any {
	t.Helper()
	var v map[string]any
	require.NoError(t, json.Unmarshal([]byte(body), &v), body)
	return v
}

func encode(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b)
}

// without is v without the fields named.
func without(v map[string]any, names ...string) map[string]any {
	out := map[string]any{}
	for k, x := range v {
		out[k] = x
	}
	for _, name := range names {
		delete(out, name)
	}
	return out
}

// scheduleReadOnly and runReadOnly are the fields openapi.json marks
// readOnly; TestAPIReadOnlyFields checks the lists against it.
var (
	scheduleReadOnly = []string{
		"id", "run_tenant", "declared_by", "undeclared_at", "created_by", "origin", "paused_at", "next_fire_at", "last_fire_at",
		"run_count", "failure_count", "last_run_status", "created_at", "updated_at", "next_fire_times", "worker_live", "existing",
	}
	runReadOnly = []string{"id", "status", "output", "error", "attempt", "job_id", "schedule_id", "fire_at", "parent_id", "parent_step", "skip_reason", "held", "held_reason", "cancel_requested_at", "created_at", "updated_at", "started_at", "finished_at", "steps", "debounce_key", "existing", "next_attempt_at", "retry", "forked_from", "forked_from_step"}
)

// TestAPIReadOnlyFields: the lists of read-only fields the round-trip
// tests strip are the document's.
func TestAPIReadOnlyFields(t *testing.T) {
	t.Parallel()

	doc := loadOpenAPI(t)
	for name, want := range map[string][]string{"Schedule": scheduleReadOnly, "Run": runReadOnly} {
		var got []string
		props := doc.root["components"].(map[string]any)["schemas"].(map[string]any)[name].(map[string]any)["properties"].(map[string]any)
		for prop, schema := range props {
			if schema.(map[string]any)["readOnly"] == true {
				got = append(got, prop)
			}
		}
		require.ElementsMatch(t, want, got, name)
	}
}

// TestAPIScheduleRoundTrip: what GET /api/schedules/{id} answers, PATCH
// takes back as it is and changes nothing (not even updated_at or the
// pending slot), and POST takes without the read-only fields to make an
// equal schedule; with every field set, a zero catch-up window, a revoked
// grant and a pause.
func TestAPIScheduleRoundTrip(t *testing.T) {
	t.Parallel()

	f := newFixture(t, nil)
	grant, err := f.sc.CreateGrant(t.Context(), &schedule.GrantParams{Subject: "ada", Scopes: []string{"*"}})
	require.NoError(t, err)
	status, body := f.do(t, http.MethodPost, "/api/schedules", `{"name": "reports", "description": "weekday reports", "owner": "finance", "tenant": "finance-eu",
		"workflow": "digest", "input": {"team": "finance", "n": 1.5, "tags": ["a"]}, "cron": "30 8 * * 1-5", "time_zone": "America/New_York",
		"start_at": "2026-01-01T00:00:00+01:00", "end_at": "2099-01-01T00:00:00Z", "overlap": "queue", "catch_up_window": "0s",
		"catch_up": "latest", "dst_gap": "shift", "dst_fold": "both", "max_attempts": 3, "priority": 2, "queue": "reports", "timeout": "90m", "grant_id": "`+grant.ID.String()+`"}`, nil)
	require.Equal(t, http.StatusCreated, status, body)
	created := object(t, body)
	require.Equal(t, "0s", created["catch_up_window"], "no window, not the default minute")
	require.Equal(t, "1h30m0s", created["timeout"])
	require.Equal(t, "2025-12-31T23:00:00Z", created["start_at"])
	require.Equal(t, "finance-eu", created["tenant"])
	require.Equal(t, "finance-eu", created["run_tenant"])
	require.Equal(t, "shift", created["dst_gap"])
	require.Equal(t, "both", created["dst_fold"])
	path := "/api/schedules/" + created["id"].(string)

	roundTrip := func(t *testing.T) string {
		t.Helper()
		status, before := f.do(t, http.MethodGet, path, "", nil)
		require.Equal(t, http.StatusOK, status, before)
		status, patched := f.do(t, http.MethodPatch, path, before, nil)
		require.Equal(t, http.StatusOK, status, patched)
		require.JSONEq(t, before, patched)
		status, after := f.do(t, http.MethodGet, path, "", nil)
		require.Equal(t, http.StatusOK, status, after)
		require.JSONEq(t, before, after)
		return before
	}

	t.Run("Patch", func(t *testing.T) {
		roundTrip(t)
	})

	t.Run("RevokedGrant", func(t *testing.T) {
		// The grant sent back unchanged is not checked again: a revoked
		// grant does not refuse an edit of something else.
		_, err := f.sc.RevokeGrant(t.Context(), grant.ID, "left the company")
		require.NoError(t, err)
		before := object(t, roundTrip(t))
		before["description"] = "weekday reports, until a new grant"
		status, body := f.do(t, http.MethodPatch, path, encode(t, before), nil)
		require.Equal(t, http.StatusOK, status, body)
		after := object(t, body)
		require.Equal(t, before["description"], after["description"])
		require.Equal(t, before["grant_id"], after["grant_id"])
		require.NotEqual(t, before["updated_at"], after["updated_at"])
		require.Equal(t, without(before, "description", "updated_at"), without(after, "description", "updated_at"), "only the field changed changes")
	})

	t.Run("Paused", func(t *testing.T) {
		status, body := f.do(t, http.MethodPost, path+"/pause", `{"note": "audit"}`, nil)
		require.Equal(t, http.StatusOK, status, body)
		before := object(t, roundTrip(t))
		require.Equal(t, true, before["paused"])
		require.Equal(t, "audit", before["pause_note"])
		require.Empty(t, before["next_fire_times"])
	})

	t.Run("Create", func(t *testing.T) {
		status, body := f.do(t, http.MethodGet, path, "", nil)
		require.Equal(t, http.StatusOK, status, body)
		original := object(t, body)
		// A revoked grant cannot start a schedule; a copy takes none.
		original["grant_id"] = nil
		status, body = f.do(t, http.MethodPost, "/api/schedules", encode(t, without(original, scheduleReadOnly...)), nil)
		require.Equal(t, http.StatusCreated, status, body)
		copied := object(t, body)
		require.NotEqual(t, original["id"], copied["id"])
		require.Equal(t, without(original, scheduleReadOnly...), without(copied, scheduleReadOnly...))
		require.Equal(t, "0s", copied["catch_up_window"])
		require.Equal(t, "shift", copied["dst_gap"])
	})
}

// TestAPIRunRoundTrip: what GET /api/runs/{id} answers, POST /api/runs
// takes without the read-only fields: with the run's idempotency key it
// answers the same run and changes nothing; without one it starts a run
// equal in every writable field.
func TestAPIRunRoundTrip(t *testing.T) {
	t.Parallel()

	f := newFixture(t, nil)
	status, body := f.do(t, http.MethodPost, "/api/runs", `{"type": "send_report", "input": {"to": "ops", "pages": [1, 2]},
		"idempotency_key": "report-2026-11", "tenant": "acme", "max_attempts": 4, "priority": 2, "queue": "reports", "tags": ["api", "monthly"],
		"metadata": {"requested_by": "ops"}}`, nil)
	require.Equal(t, http.StatusCreated, status, body)
	path := "/api/runs/" + object(t, body)["id"].(string)

	status, before := f.do(t, http.MethodGet, path, "", nil)
	require.Equal(t, http.StatusOK, status, before)
	run := object(t, before)
	require.Equal(t, "send_report", run["type"])
	require.Equal(t, "acme", run["tenant"])
	require.Equal(t, []any{}, run["steps"])

	status, again := f.do(t, http.MethodPost, "/api/runs", encode(t, without(run, runReadOnly...)), nil)
	require.Equal(t, http.StatusCreated, status, again)
	require.Equal(t, true, object(t, again)["existing"], "nothing was started")
	require.Equal(t, object(t, before), without(object(t, again), "existing"), "the same run, as it was")
	status, after := f.do(t, http.MethodGet, path, "", nil)
	require.Equal(t, http.StatusOK, status, after)
	require.JSONEq(t, before, after)

	run["idempotency_key"] = ""
	status, body = f.do(t, http.MethodPost, "/api/runs", encode(t, without(run, runReadOnly...)), nil)
	require.Equal(t, http.StatusCreated, status, body)
	other := object(t, body)
	require.NotEqual(t, run["id"], other["id"])
	require.Equal(t, without(run, runReadOnly...), without(other, runReadOnly...))
}

// TestAPIScheduleBodyErrors: a body the API does not take is refused with
// an error that names the field, in the message and in "field", and says
// what to send; nothing is written.
func TestAPIScheduleBodyErrors(t *testing.T) {
	t.Parallel()

	f := newFixture(t, nil)
	s := f.createSchedule(t, "digest", "team-a")
	other := f.createSchedule(t, "other", "team-b")
	path := "/api/schedules/" + s.ID.String()
	status, original := f.do(t, http.MethodGet, path, "", nil)
	require.Equal(t, http.StatusOK, status)

	for _, tc := range []struct {
		name, method, path, body string
		field, says              string
	}{
		{"ReadOnlyOnCreate", http.MethodPost, "/api/schedules", `{"name": "x", "workflow": "digest", "cron": "@daily", "run_count": 3}`, "run_count", "read-only"},
		{"FormerName", http.MethodPost, "/api/schedules", `{"name": "x", "workflow_type": "digest", "cron": "@daily"}`, "workflow_type", `"workflow"`},
		{"FormerWindow", http.MethodPatch, path, `{"catchup_window": 60000000000}`, "catchup_window", `"catch_up_window", a Go duration`},
		{"NanosecondWindow", http.MethodPatch, path, `{"catch_up_window": 60000000000}`, "catch_up_window", "60000000000 is not a Go duration"},
		{"NegativeWindow", http.MethodPatch, path, `{"catch_up_window": "-1m"}`, "catch_up_window", "negative"},
		{"Unknown", http.MethodPatch, path, `{"colour": "red"}`, "colour", "the fields are name, description"},
		{"NullName", http.MethodPatch, path, `{"name": null}`, "name", "cannot be null"},
		{"BadTime", http.MethodPatch, path, `{"start_at": "tomorrow"}`, "start_at", "RFC 3339"},
		{"BadGrant", http.MethodPatch, path, `{"grant_id": "g-1"}`, "grant_id", "is not an id"},
		{"OtherID", http.MethodPatch, path, `{"id": "` + other.ID.String() + `"}`, "id", "not the id of the schedule the path names"},
		{"Key", http.MethodPatch, path, `{"key": "other"}`, "key", "a key is given only when a schedule is created"},
		{"BadKey", http.MethodPost, "/api/schedules", `{"name": "x", "workflow": "digest", "cron": "@daily", "key": "a b"}`, "key", "holds ' '"},
		{"UUIDKey", http.MethodPost, "/api/schedules", `{"name": "x", "workflow": "digest", "cron": "@daily", "key": "` + other.ID.String() + `"}`, "key", "looks like a schedule id"},
		{"CreatedBy", http.MethodPost, "/api/schedules", `{"name": "x", "workflow": "digest", "cron": "@daily", "created_by": "cli"}`, "created_by", "read-only"},
		{"IDWithOwner", http.MethodGet, path + "?owner=team-a", ``, "owner", "an id names the schedule alone"},
		{"Paused", http.MethodPatch, path, `{"paused": true}`, "paused", "/pause"},
		{"PauseNote", http.MethodPatch, path, `{"pause_note": "x"}`, "pause_note", "/pause"},
		{"EndInPast", http.MethodPatch, path, `{"end_at": "2020-01-01T00:00:00Z"}`, "end_at", "invalid end_at: 2020-01-01T00:00:00Z is in the past"},
		{"Cron", http.MethodPatch, path, `{"cron": "61 * * * *"}`, "cron", "bad cron expression"},
		{"Zone", http.MethodPatch, path, `{"time_zone": "Mars/Olympus"}`, "time_zone", "Mars/Olympus"},
		{"Priority", http.MethodPatch, path, `{"priority": 9}`, "priority", "invalid priority: is 9"},
		{"Overlap", http.MethodPatch, path, `{"overlap": "sometimes"}`, "overlap", "invalid overlap"},
		{"DSTGap", http.MethodPatch, path, `{"dst_gap": "later"}`, "dst_gap", `invalid dst_gap: "later" is not a DST gap policy; use jump, shift or skip`},
		{"DSTFold", http.MethodPost, "/api/schedules", `{"name": "x", "workflow": "digest", "cron": "@daily", "dst_fold": "twice"}`, "dst_fold", `invalid dst_fold: "twice" is not a DST fold policy; use first, last or both`},
		{"DSTGapType", http.MethodPatch, path, `{"dst_gap": true}`, "dst_gap", "true is not a string"},
		{"DSTFoldNull", http.MethodPatch, path, `{"dst_fold": null}`, "dst_fold", "cannot be null"},
		{"NotObject", http.MethodPatch, path, `[1]`, "", "JSON object"},
		{"TwoValues", http.MethodPatch, path, `{} {}`, "", "more than one JSON value"},
		{"TriggerField", http.MethodPost, path + "/trigger", `{"inputs": 1}`, "inputs", "the fields are input, overlap"},
		{"PauseField", http.MethodPost, path + "/pause", `{"reason": "x"}`, "reason", "the fields are note"},
		{"ResumeMissed", http.MethodPost, path + "/resume", `{"missed": "all"}`, "missed", "invalid missed"},
		{"BackfillTo", http.MethodPost, path + "/backfill", `{"from": "2026-01-10T00:00:00Z"}`, "to", "is missing"},
		{"Query", http.MethodGet, "/api/schedules?colour=red", ``, "colour", "takes name, owner, workflow, paused, calendar, limit, after"},
		{"QueryRuns", http.MethodGet, "/api/runs?stauts=failed", ``, "stauts", "takes type, status"},
		{"QueryLimit", http.MethodGet, "/api/runs?limit=0", ``, "limit", "limit="},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, body := f.do(t, tc.method, tc.path, tc.body, nil)
			require.Equal(t, http.StatusBadRequest, status, body)
			var e errorBody
			require.NoError(t, json.Unmarshal([]byte(body), &e))
			require.Equal(t, tc.field, e.Field, body)
			require.Contains(t, e.Error, tc.says)
			if tc.field != "" {
				require.Contains(t, e.Error, tc.field)
			}
		})
	}

	status, after := f.do(t, http.MethodGet, path, "", nil)
	require.Equal(t, http.StatusOK, status)
	require.JSONEq(t, original, after, "nothing was written")
	list, err := f.sc.List(t.Context(), nil)
	require.NoError(t, err)
	require.Len(t, list, 2)
}

// TestAPIPatchNull: in a PATCH, null clears a nullable field and a field
// left out is kept.
func TestAPIPatchNull(t *testing.T) {
	t.Parallel()

	f := newFixture(t, nil)
	status, body := f.do(t, http.MethodPost, "/api/schedules", `{"name": "n", "workflow": "digest", "cron": "@daily",
		"start_at": "2030-01-01T00:00:00Z", "end_at": "2031-01-01T00:00:00Z", "input": {"a": 1}}`, nil)
	require.Equal(t, http.StatusCreated, status, body)
	s := object(t, body)
	require.Equal(t, "2030-01-01T00:00:00Z", s["next_fire_at"])
	path := "/api/schedules/" + s["id"].(string)

	status, body = f.do(t, http.MethodPatch, path, `{"start_at": null, "input": null}`, nil)
	require.Equal(t, http.StatusOK, status, body)
	s = object(t, body)
	require.Nil(t, s["start_at"])
	require.Nil(t, s["input"])
	require.Equal(t, "2031-01-01T00:00:00Z", s["end_at"])
	require.False(t, strings.HasPrefix(s["next_fire_at"].(string), "2030-01-01"), "the pending slot is re-timed: %v", s["next_fire_at"])
}

// TestAPIBodyTooLarge: a body over the limit is refused with 413 and an
// Error, and starts nothing.
func TestAPIBodyTooLarge(t *testing.T) {
	t.Parallel()

	f := newFixture(t, nil)
	huge := `{"type": "send_report", "input": "` + strings.Repeat("x", 2<<20) + `"}`
	status, body := f.do(t, http.MethodPost, "/api/runs", huge, nil)
	require.Equal(t, http.StatusRequestEntityTooLarge, status)
	var e errorBody
	require.NoError(t, json.Unmarshal([]byte(body), &e))
	require.Contains(t, e.Error, "larger than")
	runs, err := f.wf.ListRuns(t.Context(), nil)
	require.NoError(t, err)
	require.Empty(t, runs)
}

// TestAPIRequireWorker: require_worker refuses, with 409 and nothing
// written, a run or schedule of a type no live client serves.
func TestAPIRequireWorker(t *testing.T) {
	t.Parallel()

	f := newFixture(t, nil)
	for _, tc := range []struct{ path, body string }{
		{"/api/runs", `{"type": "nobody_serves", "require_worker": true}`},
		{"/api/schedules", `{"name": "n", "workflow": "nobody_serves", "cron": "@daily", "require_worker": true}`},
	} {
		status, body := f.do(t, http.MethodPost, tc.path, tc.body, nil)
		require.Equal(t, http.StatusConflict, status, body)
		require.Contains(t, body, "no live worker serves")
	}
	runs, err := f.wf.ListRuns(t.Context(), nil)
	require.NoError(t, err)
	require.Empty(t, runs)
	list, err := f.sc.List(t.Context(), nil)
	require.NoError(t, err)
	require.Empty(t, list)

	// Without it, the run is started and waits for a worker.
	status, body := f.do(t, http.MethodPost, "/api/runs", `{"type": "nobody_serves", "require_worker": false}`, nil)
	require.Equal(t, http.StatusCreated, status, body)
	// A schedule created anyway says that no live worker serves its type.
	status, body = f.do(t, http.MethodPost, "/api/schedules", `{"name": "n", "workflow": "nobody_serves", "cron": "@daily"}`, nil)
	require.Equal(t, http.StatusCreated, status, body)
	require.Contains(t, body, `"worker_live":false`)
	// It is not a field of a PATCH: it would apply to nothing.
	s := f.createSchedule(t, "digest", "")
	status, body = f.do(t, http.MethodPatch, "/api/schedules/"+s.ID.String(), `{"require_worker": true}`, nil)
	require.Equal(t, http.StatusBadRequest, status, body)
}
