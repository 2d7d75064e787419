package riverui_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestAPIRunDebounce: POST /api/runs takes a "debounce" object
// (workflow.StartOpts.Debounce, durations as Go duration strings); a second
// start with the same key answers the first's run with "existing": true and
// its input; a run's answer holds its debounce_key ("" for none); a
// debounce the start refuses is a 400 naming the field, and nothing is
// written.
func TestAPIRunDebounce(t *testing.T) {
	t.Parallel()

	f := newFixture(t, nil)
	status, body := f.do(t, http.MethodPost, "/api/runs", `{"type": "index_doc", "input": {"v": 1}, "debounce": {"key": "doc-1", "period": "1h", "max_delay": "2h"}}`, nil)
	require.Equal(t, http.StatusCreated, status, body)
	first := object(t, body)
	require.Equal(t, "doc-1", first["debounce_key"])
	require.Equal(t, false, first["existing"])
	require.Equal(t, "pending", first["status"])

	status, body = f.do(t, http.MethodPost, "/api/runs", `{"type": "index_doc", "input": {"v": 2}, "debounce": {"key": "doc-1", "period": "30m"}}`, nil)
	require.Equal(t, http.StatusCreated, status, body)
	joined := object(t, body)
	require.Equal(t, first["id"], joined["id"], "the window's run")
	require.Equal(t, true, joined["existing"])
	require.Equal(t, map[string]any{"v": float64(2)}, joined["input"], "the last start's input")

	status, body = f.do(t, http.MethodGet, "/api/runs/"+first["id"].(string), "", nil)
	require.Equal(t, http.StatusOK, status, body)
	got := object(t, body)
	require.Equal(t, "doc-1", got["debounce_key"])
	require.NotContains(t, got, "existing", "in the answer of a start only")

	status, body = f.do(t, http.MethodPost, "/api/runs", `{"type": "index_doc", "debounce": {"key": "doc-2", "period": "1h"}}`, nil)
	require.Equal(t, http.StatusCreated, status, body)
	other := object(t, body)
	require.NotEqual(t, first["id"], other["id"], "another key, another window")
	require.Equal(t, false, other["existing"])
	status, body = f.do(t, http.MethodPost, "/api/runs", `{"type": "send_report"}`, nil)
	require.Equal(t, http.StatusCreated, status, body)
	require.Equal(t, "", object(t, body)["debounce_key"], "present, empty, for none")
	require.Equal(t, false, object(t, body)["existing"])

	for _, tc := range []struct {
		debounce string
		want     errorBody
	}{
		{`{"key": "doc-3", "period": "0s"}`, errorBody{Field: "debounce.period", Error: "invalid debounce.period: is 0s; give a positive duration, how long after the last start the run starts"}},
		{`{"key": "doc-3"}`, errorBody{Field: "debounce.period", Error: "invalid debounce.period: is 0s; give a positive duration, how long after the last start the run starts"}},
		{`{"key": "doc-3", "period": "-1s"}`, errorBody{Field: "debounce.period", Error: `debounce.period: "-1s" is negative; use 0s or more`}},
		{`{"key": "doc-3", "period": "soon"}`, errorBody{Field: "debounce.period", Error: `debounce.period: "soon" is not a Go duration such as "90s", "15m" or "1h30m"`}},
		{`{"key": "doc-3", "period": 30}`, errorBody{Field: "debounce.period", Error: `debounce.period: 30 is not a Go duration such as "90s", "15m" or "1h30m"`}},
		{`{"key": "doc-3", "period": "1m", "max_delay": "30s"}`, errorBody{Field: "debounce.max_delay", Error: "invalid debounce.max_delay: is 30s, shorter than period (1m0s): the debounce would be longer than its maximum delay; give at least period, or 0 for no bound"}},
		{`{"key": "doc-3", "period": "1m", "max_delay": null}`, errorBody{Field: "debounce.max_delay", Error: `debounce.max_delay: cannot be null; send a Go duration such as "90s", "15m" or "1h30m", or leave the field out`}},
		{`{"key": "doc-3", "period": "1m", "window": "1m"}`, errorBody{Field: "debounce.window", Error: "debounce.window: unknown field in debounce; the fields are key, period and max_delay"}},
		{`"doc-3"`, errorBody{Field: "debounce", Error: `debounce: "doc-3" is not a JSON object such as {"key": "doc-1", "period": "30s", "max_delay": "5m"}`}},
		{`null`, errorBody{Field: "debounce", Error: `debounce: cannot be null; send a JSON object such as {"key": "doc-1", "period": "30s", "max_delay": "5m"}, or leave the field out`}},
	} {
		status, body := f.do(t, http.MethodPost, "/api/runs", `{"type": "index_doc", "debounce": `+tc.debounce+`}`, nil)
		require.Equal(t, http.StatusBadRequest, status, tc.debounce)
		require.Equal(t, tc.want, decodeError(t, body), tc.debounce)
	}
	status, body = f.do(t, http.MethodPost, "/api/runs", `{"type": "index_doc", "debounce": {"key": "", "period": "1m"}}`, nil)
	require.Equal(t, http.StatusBadRequest, status, body)
	require.Equal(t, "debounce.key", decodeError(t, body).Field)
	status, body = f.do(t, http.MethodPost, "/api/runs", `{"type": "index_doc", "idempotency_key": "k", "debounce": {"key": "doc-3", "period": "1m"}}`, nil)
	require.Equal(t, http.StatusBadRequest, status, body)
	require.Equal(t, errorBody{Field: "debounce", Error: "invalid debounce: cannot be combined with idempotency_key: a start that joins a window takes the window's run; use one or the other"}, decodeError(t, body))
	status, body = f.do(t, http.MethodPost, "/api/runs", `{"type": "index_doc", "debounce_key": "doc-3"}`, nil)
	require.Equal(t, http.StatusBadRequest, status, body)
	require.Equal(t, "debounce_key", decodeError(t, body).Field, "read-only: a start takes debounce")

	runs, err := f.wf.ListRuns(t.Context(), nil)
	require.NoError(t, err)
	require.Len(t, runs, 3, "doc-1's run, doc-2's and send_report's; nothing more was written")
}
