package workflow

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"
)

// decodeRunError reads a RunError as stored (workflow_runs.error,
// step_runs.error); nil for none.
func decodeRunError(b []byte) (*RunError, error) {
	if len(b) == 0 || string(b) == "null" {
		return nil, nil
	}
	var e RunError
	if err := json.Unmarshal(b, &e); err != nil {
		return nil, fmt.Errorf("decode stored run error: %w", err)
	}
	return &e, nil
}

// encodeRunError is the stored form of e; nil for none.
func encodeRunError(e *RunError) []byte {
	if e == nil {
		return nil
	}
	b, _ := json.Marshal(e) // RunError has only plain fields: cannot fail
	return b
}

// memo is a step record as loaded at the start of an attempt.
type memo struct {
	ChildRunID *uuid.UUID      `json:"child_run_id"`
	Error      *RunError       `json:"error"`
	Kind       StepKind        `json:"kind"`
	Name       string          `json:"name"`
	Output     json.RawMessage `json:"output"`
	ResultType string          `json:"result_type"`
	Status     StepStatus      `json:"status"`
	WakeAt     *time.Time      `json:"wake_at"`
	// Seq is the record's position in the run's history (see
	// wfContext.match); nil for a record written before migration 007.
	Seq *int `json:"seq"`
}
