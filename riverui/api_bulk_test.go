package riverui_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/schedule"
	"github.com/tributary-go/tributary/workflow"
)

// bulkAPI sends a JSON body to the API of d and returns the status and
// body, checked against openapi.json.
func (d *dash) bulkAPI(t *testing.T, path, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, d.server.URL+path, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	resp, err := d.client.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	var raw json.RawMessage
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&raw))
	checkAnswer(t, http.MethodPost, path, resp.StatusCode, resp.Header.Get("Content-Type"), string(raw))
	return resp.StatusCode, string(raw)
}

// bulkResult is the answer of POST /api/runs/bulk.
type bulkResult struct {
	Action   string                  `json:"action"`
	FromStep string                  `json:"from_step"`
	DryRun   bool                    `json:"dry_run"`
	Matched  int                     `json:"matched"`
	ByStatus map[workflow.Status]int `json:"by_status"`
	Eligible int                     `json:"eligible"`
	Changed  []uuid.UUID             `json:"changed"`
	Forks    []uuid.UUID             `json:"forks"`
	Skipped  []workflow.SkippedRun   `json:"skipped"`
	Batches  int                     `json:"batches"`
}

// TestBulkRunsAPI: POST /api/runs/bulk counts (dry run), refuses (no run,
// too many, bad input) and cancels, retries and forks the runs a filter
// matches.
func TestBulkRunsAPI(t *testing.T) {
	t.Parallel()

	d := newDash(t, nil, true)
	var failed, completed []uuid.UUID
	for range 3 {
		failed = append(failed, d.start(t, flowInput{User: "ada", Mode: "fail"}).ID)
	}
	for range 2 {
		completed = append(completed, d.start(t, flowInput{User: "bo"}).ID)
	}
	waiting := d.start(t, flowInput{User: "cy", Mode: "wait"})

	post := func(t *testing.T, body string, want int) (bulkResult, string) {
		t.Helper()
		status, raw := d.bulkAPI(t, "/api/runs/bulk", body)
		require.Equal(t, want, status, raw)
		var res bulkResult
		if status == http.StatusOK {
			require.NoError(t, json.Unmarshal([]byte(raw), &res))
		}
		return res, raw
	}

	// A dry run counts, and writes nothing.
	res, _ := post(t, `{"action": "retry", "type": "dash_flow", "dry_run": true}`, http.StatusOK)
	require.True(t, res.DryRun)
	require.Equal(t, 6, res.Matched)
	require.Equal(t, 3, res.Eligible)
	require.Equal(t, map[workflow.Status]int{workflow.StatusFailed: 3, workflow.StatusCompleted: 2, workflow.StatusWaiting: 1}, res.ByStatus)
	require.Empty(t, res.Changed)
	for _, id := range failed {
		run, err := d.wf.GetRun(t.Context(), id)
		require.NoError(t, err)
		require.Equal(t, workflow.StatusFailed, run.Status, "a dry run writes nothing")
	}

	// Refusals.
	_, raw := post(t, `{"action": "cancel", "type": "nope"}`, http.StatusNotFound)
	require.Contains(t, raw, "no run matches the filter, so nothing to cancel")
	_, raw = post(t, `{"action": "retry", "type": "dash_flow", "max_runs": 2}`, http.StatusConflict)
	require.Contains(t, raw, "the filter matches 6 runs, more than max_runs (2), so nothing was done; narrow the filter, or send max_runs of at least 6")
	require.Contains(t, raw, `"field":"max_runs"`)
	for body, field := range map[string]string{
		`{"type": "dash_flow"}`:                               "action",
		`{"action": "delete"}`:                                "action",
		`{"action": "fork", "type": "dash_flow"}`:             "from_step",
		`{"action": "cancel", "from_step": "send"}`:           "from_step",
		`{"action": "cancel", "status": "broken"}`:            "status",
		`{"action": "cancel", "max_runs": -1}`:                "max_runs",
		`{"action": "cancel", "finished_after": "yesterday"}`: "finished_after",
		`{"action": "cancel", "colour": "red"}`:               "colour",
	} {
		_, raw := post(t, body, http.StatusBadRequest)
		require.Contains(t, raw, `"field":"`+field+`"`, body)
	}

	// Fork the runs that reached "send": the completed ones; the failed
	// ones never did, the waiting one is not finished.
	res, _ = post(t, `{"action": "fork", "from_step": "send", "type": "dash_flow", "dry_run": true}`, http.StatusOK)
	require.Equal(t, 2, res.Eligible)
	res, _ = post(t, `{"action": "fork", "from_step": "send", "type": "dash_flow"}`, http.StatusOK)
	require.Equal(t, "send", res.FromStep)
	require.ElementsMatch(t, completed, res.Changed)
	require.Len(t, res.Forks, 2)
	reasons := map[uuid.UUID]string{}
	for _, s := range res.Skipped {
		reasons[s.ID] = s.Reason
	}
	require.Equal(t, map[uuid.UUID]string{failed[0]: workflow.SkipStepNotRecorded, failed[1]: workflow.SkipStepNotRecorded,
		failed[2]: workflow.SkipStepNotRecorded, waiting.ID: workflow.SkipNotFinished}, reasons)
	for _, id := range res.Forks {
		fork := d.waitStatus(t, id, workflow.StatusCompleted)
		require.Equal(t, "send", fork.ForkedFromStep)
	}

	// Cancel the waiting run, retry the failed ones, by their error.
	res, _ = post(t, `{"action": "cancel", "type": "dash_flow", "status": "waiting"}`, http.StatusOK)
	require.Equal(t, []uuid.UUID{waiting.ID}, res.Changed)
	require.Empty(t, res.Forks)
	res, _ = post(t, `{"action": "retry", "status": "failed", "error_contains": "BOOM"}`, http.StatusOK)
	require.ElementsMatch(t, failed, res.Changed)
	require.Equal(t, 1, res.Batches)
}

// TestBulkSchedulesAPI: POST /api/schedules/bulk pauses and resumes an
// owner's schedules; a dry run counts them and changes nothing.
func TestBulkSchedulesAPI(t *testing.T) {
	t.Parallel()

	d := newDash(t, nil, true)
	var ids []uuid.UUID
	for _, name := range []string{"a", "b", "c"} {
		ids = append(ids, d.createSchedule(t, &schedule.Params{Name: name, Owner: "acme", Cron: "0 9 * * *"}).ID)
	}
	d.createSchedule(t, &schedule.Params{Name: "other", Owner: "globex", Cron: "0 9 * * *"})
	_, err := d.sc.Pause(t.Context(), schedule.ByID(ids[0]), "before")
	require.NoError(t, err)

	type result struct {
		Owner     string `json:"owner"`
		Action    string `json:"action"`
		DryRun    bool   `json:"dry_run"`
		Schedules int    `json:"schedules"`
		Eligible  int    `json:"eligible"`
		Changed   []struct {
			ID        uuid.UUID `json:"id"`
			Paused    bool      `json:"paused"`
			PauseNote string    `json:"pause_note"`
		} `json:"changed"`
		Unchanged []uuid.UUID `json:"unchanged"`
	}
	post := func(t *testing.T, body string, want int) (result, string) {
		t.Helper()
		status, raw := d.bulkAPI(t, "/api/schedules/bulk", body)
		require.Equal(t, want, status, raw)
		var res result
		if status == http.StatusOK {
			require.NoError(t, json.Unmarshal([]byte(raw), &res))
		}
		return res, raw
	}

	res, _ := post(t, `{"action": "pause", "owner": "acme", "note": "incident 42", "dry_run": true}`, http.StatusOK)
	require.Equal(t, 3, res.Schedules)
	require.Equal(t, 2, res.Eligible)
	require.Empty(t, res.Changed)
	s, err := d.sc.Get(t.Context(), schedule.ByID(ids[1]))
	require.NoError(t, err)
	require.False(t, s.Paused, "a dry run writes nothing")

	res, _ = post(t, `{"action": "pause", "owner": "acme", "note": "incident 42"}`, http.StatusOK)
	require.Len(t, res.Changed, 2)
	require.True(t, res.Changed[0].Paused)
	require.Equal(t, "incident 42", res.Changed[0].PauseNote)
	require.Equal(t, []uuid.UUID{ids[0]}, res.Unchanged, "paused already: keeps its note")

	res, _ = post(t, `{"action": "resume", "owner": "acme", "missed": "skip"}`, http.StatusOK)
	require.Len(t, res.Changed, 3)
	other, err := d.sc.List(t.Context(), &schedule.ListParams{Owner: "globex"})
	require.NoError(t, err)
	require.False(t, other[0].Paused)

	_, raw := post(t, `{"action": "pause", "owner": "nobody"}`, http.StatusNotFound)
	require.Contains(t, raw, `owner \"nobody\" has no schedules`)
	_, raw = post(t, `{"action": "pause", "owner": "nobody", "dry_run": true}`, http.StatusNotFound)
	require.Contains(t, raw, `"field":"owner"`)
	for body, field := range map[string]string{
		`{"owner": "acme"}`:                                      "action",
		`{"action": "stop", "owner": "acme"}`:                    "action",
		`{"action": "pause"}`:                                    "owner",
		`{"action": "resume", "owner": "acme", "note": "x"}`:     "note",
		`{"action": "pause", "owner": "acme", "missed": "skip"}`: "missed",
		`{"action": "resume", "owner": "acme", "missed": "all"}`: "missed",
	} {
		_, raw := post(t, body, http.StatusBadRequest)
		require.Contains(t, raw, `"field":"`+field+`"`, body)
	}
}

// TestBulkSchedulesAPIStopsMidway: a pause of an owner's schedules that
// fails in its second batch answers the error with what its first batch
// did (result.changed, result.batches), as POST /api/runs/bulk does; the
// batch that failed changed nothing.
func TestBulkSchedulesAPIStopsMidway(t *testing.T) {
	t.Parallel()

	d := newDash(t, nil, true)
	params := make([]*schedule.Params, 150) // two batches of 100
	for i := range params {
		params[i] = &schedule.Params{Name: fmt.Sprintf("s%03d", i), Owner: "acme", Workflow: flow.Name(), Cron: "0 9 * * *"}
	}
	_, err := d.sc.CreateMany(t.Context(), params)
	require.NoError(t, err)
	listed, err := d.sc.List(t.Context(), &schedule.ListParams{Owner: "acme", Limit: 200})
	require.NoError(t, err)
	require.Len(t, listed, 150)
	refused := listed[120] // in the second batch, in the order the action goes
	_, err = d.db.Pool.Exec(t.Context(), `CREATE FUNCTION refuse_pause() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN RAISE EXCEPTION 'the test refuses this pause'; END $$;
		CREATE TRIGGER refuse_pause BEFORE UPDATE ON schedules FOR EACH ROW
		WHEN (NEW.paused AND NOT OLD.paused AND NEW.id = '`+refused.ID.String()+`') EXECUTE FUNCTION refuse_pause()`)
	require.NoError(t, err)

	status, raw := d.bulkAPI(t, "/api/schedules/bulk", `{"action": "pause", "owner": "acme", "note": "incident 43"}`)
	require.Equal(t, http.StatusInternalServerError, status, raw)
	var stopped struct {
		Error  string `json:"error"`
		Result struct {
			Changed []struct {
				ID     uuid.UUID `json:"id"`
				Paused bool      `json:"paused"`
			} `json:"changed"`
			Batches int `json:"batches"`
		} `json:"result"`
	}
	require.NoError(t, json.Unmarshal([]byte(raw), &stopped))
	require.Contains(t, stopped.Error, `the pause of owner "acme"'s schedules stopped after 1 batches: 100 schedules changed (result.changed)`)
	require.Equal(t, 1, stopped.Result.Batches)
	require.Len(t, stopped.Result.Changed, 100)
	paused := true
	now, err := d.sc.List(t.Context(), &schedule.ListParams{Owner: "acme", Paused: &paused, Limit: 200})
	require.NoError(t, err)
	require.Len(t, now, 100, "the first batch's pauses stand, the failed batch changed nothing")
	for i, c := range stopped.Result.Changed {
		require.True(t, c.Paused)
		require.Equal(t, listed[i].ID, c.ID, "the result names the schedules paused")
	}
}
