package tributarytest

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/tributary-go/tributary/internal/wfruntime"
	"github.com/tributary-go/tributary/workflow"
)

// Replay replays a recorded run against the code of the Env's workflow
// types, as the run's next attempt would after a deploy of that code, in
// this process: history is the run as `tributary workflow get --json RUN`
// prints it or GET /api/runs/{id} answers it, with its steps. Every step,
// sleep, signal wait, child run and version the code reaches is matched to
// the history and returns its recorded result; nothing the history does not
// record as done runs, and nothing is written.
//
// It returns nil when the code fits the history, and the
// *workflow.DivergenceError the run would fail with when it does not (a
// step renamed, removed or inserted before recorded ones, a result type
// changed). For a finished run it also returns an error when the code goes
// on past the recorded steps, or, for a completed one, returns another
// output. Keep yesterday's production histories as files and replay them
// in today's tests:
//
//	history, _ := os.ReadFile("testdata/run-0193.json") // tributary workflow get --json 0193… > testdata/run-0193.json
//	require.NoError(t, tributarytest.Replay(env, history))
func Replay(e *Env, history []byte) error {
	e.t.Helper()
	run, err := decodeHistory(history)
	if err != nil {
		return err
	}
	return wfruntime.Of(e.Workflows).ReplayHistory(e.Context(), run)
}

// recordedRun is the part of a run's JSON a replay reads, in both of its
// vocabularies: workflow.Run's own tags (what the CLI's --json printed
// before it printed the API's shape, and what Go code marshalling a Run
// writes) and the API's.
type recordedRun struct {
	ID           uuid.UUID       `json:"id"`
	WorkflowType string          `json:"workflow_type"` // workflow.Run's tags
	Type         string          `json:"type"`          // the API's
	Status       workflow.Status `json:"status"`
	Input        json.RawMessage `json:"input"`
	Output       json.RawMessage `json:"output"`
	Attempt      int             `json:"attempt"`
	MaxAttempts  int             `json:"max_attempts"`
	Metadata     json.RawMessage `json:"metadata"`
	Tenant       string          `json:"tenant"`
	Steps        []struct {
		Name       string              `json:"name"`
		Kind       workflow.StepKind   `json:"kind"`
		Status     workflow.StepStatus `json:"status"`
		ResultType string              `json:"result_type"`
		Output     json.RawMessage     `json:"output"`
		WakeAt     *time.Time          `json:"wake_at"`
		ChildRunID *uuid.UUID          `json:"child_run_id"`
	} `json:"steps"`
}

// decodeHistory reads a recorded run.
func decodeHistory(history []byte) (*workflow.Run, error) {
	var rec recordedRun
	if err := json.Unmarshal(history, &rec); err != nil {
		return nil, fmt.Errorf("tributarytest: read the recorded run: %w; give the JSON of `tributary workflow get --json RUN` or of GET /api/runs/{id}", err)
	}
	typ := rec.WorkflowType
	if typ == "" {
		typ = rec.Type
	}
	if typ == "" || rec.Steps == nil {
		return nil, fmt.Errorf("tributarytest: the recorded run has no workflow type or no steps; give the JSON of `tributary workflow get --json RUN` or of GET /api/runs/{id}, which carry both")
	}
	run := &workflow.Run{ID: rec.ID, Type: typ, Status: rec.Status, Input: rec.Input, Output: rec.Output,
		Attempt: rec.Attempt, MaxAttempts: rec.MaxAttempts, Metadata: rec.Metadata, Tenant: rec.Tenant}
	for _, s := range rec.Steps {
		run.Steps = append(run.Steps, workflow.StepRun{Name: s.Name, Kind: s.Kind, Status: s.Status, ResultType: s.ResultType,
			Output: s.Output, WakeAt: s.WakeAt, ChildRunID: s.ChildRunID})
	}
	return run, nil
}
