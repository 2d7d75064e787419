package riverui_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/workflow"
)

// TestForkRun: POST /api/runs/{id}/fork and the run page's "Fork from
// this step" forms start a fork, which links back to its origin; the
// origin lists its forks.
func TestForkRun(t *testing.T) {
	t.Parallel()

	d := newDash(t, nil, false)
	origin := d.start(t, flowInput{User: "ada"})
	require.Equal(t, workflow.StatusCompleted, origin.Status)

	api := func(t *testing.T, method, path, body string) (int, string) {
		t.Helper()
		req, err := http.NewRequestWithContext(t.Context(), method, d.server.URL+path, strings.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		resp, err := d.client.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		var raw json.RawMessage
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&raw))
		route, _, _ := strings.Cut(path, "?")
		checkAnswer(t, method, route, resp.StatusCode, resp.Header.Get("Content-Type"), string(raw))
		return resp.StatusCode, string(raw)
	}

	t.Run("API", func(t *testing.T) {
		path := "/api/runs/" + origin.ID.String() + "/fork"
		status, body := api(t, http.MethodPost, path, `{"from_step": "send"}`)
		require.Equal(t, http.StatusCreated, status, body)
		var fork struct {
			ID             uuid.UUID  `json:"id"`
			ForkedFrom     *uuid.UUID `json:"forked_from"`
			ForkedFromStep string     `json:"forked_from_step"`
		}
		require.NoError(t, json.Unmarshal([]byte(body), &fork))
		require.Equal(t, &origin.ID, fork.ForkedFrom)
		require.Equal(t, "send", fork.ForkedFromStep)
		done := d.waitStatus(t, fork.ID, workflow.StatusCompleted)
		require.JSONEq(t, `"fetched ada sent"`, string(done.Output))

		status, body = api(t, http.MethodGet, "/api/runs?forked_from="+origin.ID.String(), "")
		require.Equal(t, http.StatusOK, status, body)
		require.Contains(t, body, fork.ID.String())

		status, body = api(t, http.MethodPost, path, `{"from_step": "nope"}`)
		require.Equal(t, http.StatusBadRequest, status, body)
		require.Contains(t, body, `"field":"from_step"`)
		require.Contains(t, body, `it recorded [\"fetch\" \"send\"]`)
		status, body = api(t, http.MethodPost, path, `{}`)
		require.Equal(t, http.StatusBadRequest, status, body)
		status, _ = api(t, http.MethodPost, "/api/runs/"+uuid.NewString()+"/fork", `{"from_step": "send"}`)
		require.Equal(t, http.StatusNotFound, status)

		waiting := d.start(t, flowInput{User: "bo", Mode: "wait"})
		status, body = api(t, http.MethodPost, "/api/runs/"+waiting.ID.String()+"/fork", `{"from_step": "fetch"}`)
		require.Equal(t, http.StatusConflict, status, body)
		require.Contains(t, body, "cancel it first")
	})

	t.Run("Dashboard", func(t *testing.T) {
		page := d.page(t, "/runs/"+origin.ID.String(), nil)
		require.Len(t, attrs(page, "fork-step", "data-testid"), 2, "a fork button on each step")

		location := d.post(t, "/runs/"+origin.ID.String()+"/fork", url.Values{"step": {"fetch"}})
		u, err := url.Parse(location)
		require.NoError(t, err)
		require.Equal(t, "forked", u.Query().Get("notice"))
		forkID, err := uuid.Parse(strings.TrimPrefix(u.Path, "/runs/"))
		require.NoError(t, err)
		d.waitStatus(t, forkID, workflow.StatusCompleted)

		page = d.page(t, u.Path, nil)
		require.Equal(t, []string{"/runs/" + origin.ID.String()}, attrs(page, "forked-from", "href"))
		require.Contains(t, page, "(at step fetch)")
		page = d.page(t, "/runs/"+origin.ID.String(), nil)
		require.Contains(t, attrs(page, "fork", "href"), "/runs/"+forkID.String())

		// An unknown step shows the run's page again with what was wrong.
		resp := d.send(t, http.MethodPost, "/runs/"+origin.ID.String()+"/fork", url.Values{"step": {"nope"}}, map[string]string{"Sec-Fetch-Site": "same-origin"})
		require.Equal(t, http.StatusBadRequest, resp.status)
		require.Contains(t, resp.body, "fork from one of them")
		// A cross-site post is refused.
		resp = d.send(t, http.MethodPost, "/runs/"+origin.ID.String()+"/fork", url.Values{"step": {"fetch"}}, map[string]string{"Sec-Fetch-Site": "cross-site"})
		require.Equal(t, http.StatusForbidden, resp.status)
	})
}
