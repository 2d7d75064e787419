package workflow

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/tributary-go/tributary/internal/engine"
)

// runOf is the Run of an engine row; ErrNotFound for engine.ErrNotFound.
func runOf(row *engine.Run, err error) (*Run, error) {
	if errors.Is(err, engine.ErrNotFound) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	r := new(Run)
	if err := setRun(r, row); err != nil {
		return nil, err
	}
	return r, nil
}

// setRun sets r to the Run of an engine row.
func setRun(r *Run, row *engine.Run) error {
	*r = Run{
		ID: row.ID, Type: row.Type, Status: Status(row.Status), IdempotencyKey: row.IdempotencyKey,
		Tenant: row.Tenant, DebounceKey: row.DebounceKey,
		Input: row.Input, Output: row.Output, Attempt: row.Attempt, MaxAttempts: row.MaxAttempts,
		Queue: row.Queue, Priority: row.Priority, JobID: row.JobID, ScheduleID: row.ScheduleID,
		FireAt: row.FireAt, ParentID: row.ParentID, ParentStep: row.ParentStep, Metadata: row.Metadata,
		Tags: row.Tags, SkipReason: row.SkipReason, CancelRequestedAt: row.CancelRequestedAt,
		CreatedAt: row.CreatedAt, UpdatedAt: row.UpdatedAt, StartedAt: row.StartedAt, FinishedAt: row.FinishedAt,
		NextAttemptAt: row.NextAttemptAt, ForkedFrom: row.ForkedFrom, ForkedFromStep: row.ForkedFromStep,
	}
	if len(row.Retry) > 0 {
		r.Retry = new(RetryPolicy)
		if err := json.Unmarshal(row.Retry, r.Retry); err != nil {
			return fmt.Errorf("workflow: run %s: read the retry policy its River job carries: %w", row.ID, err)
		}
	}
	var err error
	r.Error, err = decodeRunError(row.Error)
	return err
}

// runsOf is runOf for each row.
func runsOf(rows []*engine.Run, err error) ([]*Run, error) {
	if err != nil {
		return nil, err
	}
	runs := make([]*Run, len(rows))
	for i, row := range rows {
		if runs[i], err = runOf(row, nil); err != nil {
			return nil, err
		}
	}
	return runs, nil
}

// stepOf is the StepRun of an engine row.
func stepOf(row *engine.Step) (*StepRun, error) {
	s := &StepRun{
		Name: row.Name, Kind: StepKind(row.Kind), Status: StepStatus(row.Status), ResultType: row.ResultType,
		Output: row.Output, Attempts: row.Attempts, WakeAt: row.WakeAt, ChildRunID: row.ChildRunID,
		StartedAt: row.StartedAt, FinishedAt: row.FinishedAt,
	}
	var err error
	if s.Error, err = decodeRunError(row.Error); err != nil {
		return nil, err
	}
	return s, nil
}
