package riverui_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/riverui"
	"github.com/tributary-go/tributary/schedule"
)

// keyConflict is the 409 answer of a create whose key names a schedule
// with another spec.
type keyConflict struct {
	Error      string               `json:"error"`
	ID         uuid.UUID            `json:"id"`
	Owner      string               `json:"owner"`
	Key        string               `json:"key"`
	DeclaredBy string               `json:"declared_by"`
	Diffs      []schedule.FieldDiff `json:"diffs"`
}

// keyPath is the API path of owner's schedule with key, suffix after its
// segment.
func keyPath(key, owner, suffix string) string {
	path := "/api/schedules/" + url.PathEscape(key) + suffix
	if owner != "" {
		path += "?owner=" + url.QueryEscape(owner)
	}
	return path
}

// TestAPIScheduleKeys: POST /api/schedules with a key creates the schedule
// once (201, then 200 and existing with the same spec, 409 naming the
// fields with another), and every /api/schedules/{id} route takes the key,
// escaped, with ?owner=.
func TestAPIScheduleKeys(t *testing.T) {
	t.Parallel()

	f := newFixture(t, nil)
	const key = "digest:user@42" // ':' and '@' stay as they are in a path
	body := `{"name": "digest", "owner": "acme", "key": "digest:user@42", "workflow": "digest", "cron": "0 8 * * *"}`

	status, first := f.do(t, http.MethodPost, "/api/schedules", body, nil)
	require.Equal(t, http.StatusCreated, status, first)
	created := object(t, first)
	require.Equal(t, key, created["key"])
	require.Equal(t, false, created["existing"])
	require.Equal(t, "api", created["created_by"])
	require.Equal(t, "", created["declared_by"])
	require.Nil(t, created["undeclared_at"])
	require.Equal(t, "created through the JSON API", created["origin"])
	id := created["id"].(string)

	t.Run("CreateAgain", func(t *testing.T) {
		status, again := f.do(t, http.MethodPost, "/api/schedules", body, nil)
		require.Equal(t, http.StatusOK, status, again)
		got := object(t, again)
		require.Equal(t, true, got["existing"])
		require.Equal(t, id, got["id"])
		require.Equal(t, without(created, "existing", "next_fire_times"), without(got, "existing", "next_fire_times"), "the schedule as it was")
		list, err := f.sc.List(t.Context(), &schedule.ListParams{Owner: "acme"})
		require.NoError(t, err)
		require.Len(t, list, 1, "one row")

		// existing is in the answer of a create only.
		status, read := f.do(t, http.MethodGet, keyPath(key, "acme", ""), "", nil)
		require.Equal(t, http.StatusOK, status, read)
		require.NotContains(t, object(t, read), "existing")
	})

	t.Run("Conflict", func(t *testing.T) {
		changed := `{"name": "digest", "owner": "acme", "key": "digest:user@42", "workflow": "digest", "cron": "0 9 * * *", "time_zone": "Europe/Paris", "catch_up_window": "5m"}`
		status, answer := f.do(t, http.MethodPost, "/api/schedules", changed, nil)
		require.Equal(t, http.StatusConflict, status, answer)
		var c keyConflict
		require.NoError(t, json.Unmarshal([]byte(answer), &c))
		require.Equal(t, id, c.ID.String())
		require.Equal(t, "acme", c.Owner)
		require.Equal(t, key, c.Key)
		require.Empty(t, c.DeclaredBy)
		require.Equal(t, []schedule.FieldDiff{
			{Field: "cron", Stored: `"0 8 * * *"`, Given: `"0 9 * * *"`},
			{Field: "time_zone", Stored: `"UTC"`, Given: `"Europe/Paris"`},
			{Field: "catch_up_window", Stored: "1m0s", Given: "5m0s"},
		}, c.Diffs)
		require.Contains(t, c.Error, `key "digest:user@42" of owner "acme" names schedule `+id)
		require.Contains(t, c.Error, `cron "0 8 * * *" → "0 9 * * *"`)
		require.Contains(t, c.Error, "PATCH /api/schedules/digest:user@42?owner=acme")

		got, err := f.sc.Get(t.Context(), schedule.ByKey("acme", key))
		require.NoError(t, err)
		require.Equal(t, "0 8 * * *", got.Cron, "nothing was written")

		// As the answer says: PATCH the schedule by its key, and the
		// create then finds it as it would make it.
		status, answer = f.do(t, http.MethodPatch, keyPath(key, "acme", ""), `{"cron": "0 9 * * *", "time_zone": "Europe/Paris", "catch_up_window": "5m"}`, nil)
		require.Equal(t, http.StatusOK, status, answer)
		status, answer = f.do(t, http.MethodPost, "/api/schedules", changed, nil)
		require.Equal(t, http.StatusOK, status, answer)
		require.Equal(t, true, object(t, answer)["existing"])
		status, answer = f.do(t, http.MethodPatch, keyPath(key, "acme", ""), `{"cron": "0 8 * * *", "time_zone": "UTC", "catch_up_window": "1m"}`, nil)
		require.Equal(t, http.StatusOK, status, answer)
	})

	t.Run("OwnersHaveTheirOwnKeys", func(t *testing.T) {
		// The same key under owner "" is another schedule, which a path
		// without owner= names.
		status, answer := f.do(t, http.MethodPost, "/api/schedules", `{"name": "mine", "key": "digest:user@42", "workflow": "digest", "cron": "@daily"}`, nil)
		require.Equal(t, http.StatusCreated, status, answer)
		mine := object(t, answer)
		require.NotEqual(t, id, mine["id"])
		status, answer = f.do(t, http.MethodGet, keyPath(key, "", ""), "", nil)
		require.Equal(t, http.StatusOK, status, answer)
		require.Equal(t, mine["id"], object(t, answer)["id"])
		status, answer = f.do(t, http.MethodGet, keyPath(key, "acme", ""), "", nil)
		require.Equal(t, http.StatusOK, status, answer)
		require.Equal(t, id, object(t, answer)["id"])
	})

	t.Run("Routes", func(t *testing.T) {
		path := keyPath(key, "acme", "")
		status, answer := f.do(t, http.MethodPatch, path, `{"description": "by key"}`, nil)
		require.Equal(t, http.StatusOK, status, answer)
		require.Equal(t, "by key", object(t, answer)["description"])

		// What GET answers by key, PATCH by key takes back unchanged.
		status, before := f.do(t, http.MethodGet, path, "", nil)
		require.Equal(t, http.StatusOK, status, before)
		status, after := f.do(t, http.MethodPatch, path, before, nil)
		require.Equal(t, http.StatusOK, status, after)
		require.JSONEq(t, before, after)

		status, answer = f.do(t, http.MethodPost, keyPath(key, "acme", "/pause"), `{"note": "by key"}`, nil)
		require.Equal(t, http.StatusOK, status, answer)
		require.Equal(t, true, object(t, answer)["paused"])
		status, answer = f.do(t, http.MethodPost, keyPath(key, "acme", "/resume"), "", nil)
		require.Equal(t, http.StatusOK, status, answer)
		require.Equal(t, false, object(t, answer)["paused"])

		status, answer = f.do(t, http.MethodPost, keyPath(key, "acme", "/trigger"), "", nil)
		require.Equal(t, http.StatusOK, status, answer)
		runID := object(t, answer)["run_id"]
		status, answer = f.do(t, http.MethodPost, keyPath(key, "acme", "/backfill"), `{"from": "2026-01-10T00:00:00Z", "to": "2026-01-12T00:00:00Z"}`, nil)
		require.Equal(t, http.StatusOK, status, answer)
		require.Equal(t, float64(2), object(t, answer)["slots"])

		var history struct {
			Runs []apiRun `json:"runs"`
		}
		f.getJSON(t, keyPath(key, "acme", "/history"), http.StatusOK, &history)
		require.Len(t, history.Runs, 3)
		require.Contains(t, []string{history.Runs[0].ID.String(), history.Runs[1].ID.String(), history.Runs[2].ID.String()}, runID)
		f.getJSON(t, keyPath(key, "acme", "/history")+"&limit=1", http.StatusOK, &history)
		require.Len(t, history.Runs, 1)

		// A keyed schedule's key and owner are its name.
		var e errorBody
		status, answer = f.do(t, http.MethodPatch, path, `{"owner": "globex"}`, nil)
		require.Equal(t, http.StatusBadRequest, status, answer)
		require.NoError(t, json.Unmarshal([]byte(answer), &e))
		require.Equal(t, "owner", e.Field)
		require.Contains(t, e.Error, "cannot move the schedule")
		status, answer = f.do(t, http.MethodPatch, path, `{"key": "digest:user@43"}`, nil)
		require.Equal(t, http.StatusBadRequest, status, answer)
		require.NoError(t, json.Unmarshal([]byte(answer), &e))
		require.Equal(t, "key", e.Field)
		require.Contains(t, e.Error, "never changes")
	})

	t.Run("Errors", func(t *testing.T) {
		var e errorBody
		f.getJSON(t, keyPath("nope", "acme", ""), http.StatusNotFound, &e)
		require.Equal(t, `schedule not found: no schedule has key "nope" under owner "acme"`, e.Error)
		f.getJSON(t, keyPath("nope", "", "/history"), http.StatusNotFound, &e)
		require.Equal(t, `schedule not found: no schedule has key "nope" under owner ""; a key is looked up within the owner that owner= names, and none was given`, e.Error)
		for _, method := range []string{http.MethodPatch, http.MethodDelete} {
			status, answer := f.do(t, method, keyPath("nope", "acme", ""), `{"cron": "@daily"}`, nil)
			require.Equal(t, http.StatusNotFound, status, answer)
		}
		status, answer := f.do(t, http.MethodPost, keyPath("nope", "acme", "/trigger"), "", nil)
		require.Equal(t, http.StatusNotFound, status, answer)

		// An id names the schedule alone.
		f.getJSON(t, "/api/schedules/"+id+"?owner=acme", http.StatusBadRequest, &e)
		require.Equal(t, "owner", e.Field)
		require.Contains(t, e.Error, "an id names the schedule alone")
		status, answer = f.do(t, http.MethodPost, "/api/schedules/"+id+"/pause?owner=acme", "", nil)
		require.Equal(t, http.StatusBadRequest, status, answer)
		f.getJSON(t, "/api/schedules/"+id+"?owner=", http.StatusOK, &apiSchedule{})

		// A segment that is no key at all.
		f.getJSON(t, "/api/schedules/two%20words", http.StatusBadRequest, &e)
		require.Equal(t, "key", e.Field)
	})

	t.Run("Escaped", func(t *testing.T) {
		// A key with characters a URL reserves, escaped in the path.
		const odd = "report?daily#1%"
		status, answer := f.do(t, http.MethodPost, "/api/schedules", `{"name": "odd", "key": "report?daily#1%", "workflow": "digest", "cron": "@daily"}`, nil)
		require.Equal(t, http.StatusCreated, status, answer)
		oddID := object(t, answer)["id"]
		require.Equal(t, "/api/schedules/report%3Fdaily%231%25", keyPath(odd, "", ""))
		status, answer = f.do(t, http.MethodGet, keyPath(odd, "", ""), "", nil)
		require.Equal(t, http.StatusOK, status, answer)
		require.Equal(t, oddID, object(t, answer)["id"])
		require.Equal(t, odd, object(t, answer)["key"])
		status, answer = f.do(t, http.MethodPost, keyPath(odd, "", "/pause"), "", nil)
		require.Equal(t, http.StatusOK, status, answer)

		// A 409's PATCH path is escaped too.
		status, answer = f.do(t, http.MethodPost, "/api/schedules", `{"name": "odd", "key": "report?daily#1%", "workflow": "digest", "cron": "@hourly"}`, nil)
		require.Equal(t, http.StatusConflict, status, answer)
		require.Contains(t, answer, "PATCH /api/schedules/report%3Fdaily%231%25 with")
	})

	t.Run("Delete", func(t *testing.T) {
		status, answer := f.do(t, http.MethodDelete, keyPath(key, "acme", ""), "", nil)
		require.Equal(t, http.StatusNoContent, status, answer)
		var e errorBody
		f.getJSON(t, keyPath(key, "acme", ""), http.StatusNotFound, &e)
		require.Contains(t, e.Error, `no schedule has key "digest:user@42" under owner "acme"`)
		_, err := f.sc.Get(t.Context(), schedule.ByKey("", key))
		require.NoError(t, err, "owner \"\"'s schedule with the key stays")
	})
}

// TestAPIScheduleKeysDeclared: a declared schedule says so in every answer,
// and a create that conflicts with it says to change its service's code.
func TestAPIScheduleKeysDeclared(t *testing.T) {
	t.Parallel()

	f := newFixture(t, &riverui.Config{Prefix: "/ops"})
	_, err := f.sc.Declare(t.Context(), &schedule.Declaration{Service: "billing", Schedules: []*schedule.Params{
		{Key: "invoices", Owner: "acme", Name: "invoices", Workflow: "digest", Cron: "0 6 * * *"},
	}})
	require.NoError(t, err)

	status, answer := f.do(t, http.MethodGet, "/ops/api/schedules/invoices?owner=acme", "", nil)
	require.Equal(t, http.StatusOK, status, answer)
	got := object(t, answer)
	require.Equal(t, "billing", got["declared_by"])
	require.Equal(t, "", got["created_by"])
	require.Equal(t, "declared by service billing", got["origin"])

	var list struct {
		Schedules []map[string]any `json:"schedules"`
	}
	f.getJSON(t, "/ops/api/schedules?owner=acme", http.StatusOK, &list)
	require.Len(t, list.Schedules, 1)
	require.Equal(t, "invoices", list.Schedules[0]["key"])
	require.Equal(t, "declared by service billing", list.Schedules[0]["origin"])

	status, answer = f.do(t, http.MethodPost, "/ops/api/schedules", `{"name": "invoices", "owner": "acme", "key": "invoices", "workflow": "digest", "cron": "0 7 * * *"}`, nil)
	require.Equal(t, http.StatusConflict, status, answer)
	var c keyConflict
	require.NoError(t, json.Unmarshal([]byte(answer), &c))
	require.Equal(t, "billing", c.DeclaredBy)
	require.Equal(t, []schedule.FieldDiff{{Field: "cron", Stored: `"0 6 * * *"`, Given: `"0 7 * * *"`}}, c.Diffs)
	require.Contains(t, c.Error, "declared by service billing")
	require.Contains(t, c.Error, "its spec is service billing's code, so change it there (a PATCH /ops/api/schedules/invoices?owner=acme lasts only until the service declares it again)")
}
