package workflow

import (
	"encoding/json"
	"time"

	"github.com/google/uuid"
)

// Status is a run's status.
type Status string

// Run statuses. A run is pending until an attempt starts, running during an
// attempt, sleeping or waiting while parked (no worker slot held), and ends
// completed, failed, cancelled or skipped (a schedule slot that did not run).
const (
	StatusPending   Status = "pending"
	StatusRunning   Status = "running"
	StatusSleeping  Status = "sleeping"
	StatusWaiting   Status = "waiting"
	StatusCompleted Status = "completed"
	StatusFailed    Status = "failed"
	StatusCancelled Status = "cancelled"
	StatusSkipped   Status = "skipped"
)

// Finished reports whether s is a final status.
func (s Status) Finished() bool {
	switch s {
	case StatusCompleted, StatusFailed, StatusCancelled, StatusSkipped:
		return true
	}
	return false
}

// Run is a workflow run as stored in workflow_runs. Its json tags are
// for a program that marshals a Run itself and are kept as they are;
// Tributary's own JSON of a run (the API's and the CLI's --json) is
// another shape, described by riverui's OpenAPI document: "type" for
// Type, "parent_id" for ParentID, every field present.
type Run struct {
	ID             uuid.UUID `json:"id"`
	Type           string    `json:"workflow_type"`
	Status         Status    `json:"status"`
	IdempotencyKey string    `json:"idempotency_key,omitempty"`
	Tenant         string    `json:"tenant,omitempty"`
	// DebounceKey is the StartOpts.Debounce.Key the run was started with,
	// "" for none.
	DebounceKey string `json:"debounce_key,omitempty"`
	// Existing is true on the run a start returns (StartByName,
	// StartByNameTx) when that start started nothing: its
	// StartOpts.IdempotencyKey matched this run, or its StartOpts.Debounce
	// joined this run's open window. It is false on every run read
	// otherwise (GetRun, ListRuns).
	Existing bool `json:"-"`
	// Held says why a pending run is held back instead of working:
	// HeldTenantLimit while its job is ready and its tenant has as many
	// runs of its type working as its limit (DefineOpts.TenantLimit,
	// SetTenantLimit); else HeldTenantRate while its job is ready and its
	// tenant's bucket has fewer whole tokens than its place in its
	// tenant's line (DefineOpts.TenantRate, SetTenantRate). "" for a run
	// that is not held back. It is read with
	// the run (GetRun, ListRuns), not stored; Tenant.Why and
	// Tenant.RateWhy say why for people.
	Held        string          `json:"held,omitempty"`
	Input       json.RawMessage `json:"input"`
	Output      json.RawMessage `json:"output,omitempty"`
	Error       *RunError       `json:"error,omitempty"`
	Attempt     int             `json:"attempt"`
	MaxAttempts int             `json:"max_attempts"`
	// NextAttemptAt is when the next attempt of a run whose last attempt
	// failed is due (its RetryPolicy's wait, or River's backoff, from the
	// failure): set while the run is pending on its retry, nil otherwise.
	// It is read with the run (GetRun, ListRuns) from its River job.
	NextAttemptAt *time.Time `json:"next_attempt_at,omitempty"`
	// Retry is how an unfinished run's failed attempts are retried: the
	// policy its River job carries (its StartOpts.Retry, else its
	// schedule's Params.Retry, else its type's DefineOpts.Retry, as its
	// start found them; the zero policy is River's backoff). It is read
	// with the run (GetRun, ListRuns) from its job. nil for a finished run,
	// and for one whose job carries none: that run's retries follow
	// DefineOpts.Retry on the client that works it, else River's backoff.
	Retry             *RetryPolicy    `json:"retry,omitempty"`
	Queue             string          `json:"queue"`
	Priority          int             `json:"priority"`
	JobID             int64           `json:"job_id,omitempty"`
	ScheduleID        *uuid.UUID      `json:"schedule_id,omitempty"`
	FireAt            *time.Time      `json:"fire_at,omitempty"`
	ParentID          *uuid.UUID      `json:"parent_run_id,omitempty"`
	ParentStep        string          `json:"parent_step,omitempty"`
	Metadata          json.RawMessage `json:"metadata"`
	Tags              []string        `json:"tags"`
	SkipReason        string          `json:"skip_reason,omitempty"`
	CancelRequestedAt *time.Time      `json:"cancel_requested_at,omitempty"`
	CreatedAt         time.Time       `json:"created_at"`
	UpdatedAt         time.Time       `json:"updated_at"`
	StartedAt         *time.Time      `json:"started_at,omitempty"`
	FinishedAt        *time.Time      `json:"finished_at,omitempty"`

	// ForkedFrom is the run this one was forked from (Client.Fork), and
	// ForkedFromStep the step the fork was made at; nil and "" for a run
	// that is no fork. The origin may have been deleted since (retention):
	// a fork outlives it. ListParams.ForkedFrom lists a run's forks.
	ForkedFrom     *uuid.UUID `json:"forked_from,omitempty"`
	ForkedFromStep string     `json:"forked_from_step,omitempty"`

	// Steps are the run's step records in the order the workflow reached
	// them (records written before migration 007, which have no position,
	// first, by start time). Only Client.GetRun fills them.
	Steps []StepRun `json:"steps,omitempty"`
}

// StepKind is what a step record stands for.
type StepKind string

// Step kinds.
const (
	StepKindStep   StepKind = "step"
	StepKindSleep  StepKind = "sleep"
	StepKindSignal StepKind = "signal"
	StepKindChild  StepKind = "child"
	// StepKindVersion records the version a Version call chose.
	StepKindVersion StepKind = "version"
)

// StepStatus is the state of a step record.
type StepStatus string

// Step statuses: completed and failed for steps; sleeping and waiting while
// a sleep, signal wait or child wait is parked.
const (
	StepStatusCompleted StepStatus = "completed"
	StepStatusFailed    StepStatus = "failed"
	StepStatusSleeping  StepStatus = "sleeping"
	StepStatusWaiting   StepStatus = "waiting"
	// StepStatusInterrupted is how GetRun shows a sleep or wait that was
	// parked when its run finished (cancelled, say): no wake time is to
	// come. The record keeps its parked state, so that a retried run
	// resumes it where it was.
	StepStatusInterrupted StepStatus = "interrupted"
)

// StepRun is one step record of a run (a row of step_runs).
type StepRun struct {
	Name       string          `json:"name"`
	Kind       StepKind        `json:"kind"`
	Status     StepStatus      `json:"status"`
	ResultType string          `json:"result_type,omitempty"`
	Output     json.RawMessage `json:"output,omitempty"`
	Error      *RunError       `json:"error,omitempty"`
	Attempts   int             `json:"attempts"`
	WakeAt     *time.Time      `json:"wake_at,omitempty"`
	ChildRunID *uuid.UUID      `json:"child_run_id,omitempty"`
	StartedAt  time.Time       `json:"started_at"`
	FinishedAt *time.Time      `json:"finished_at,omitempty"`
}

// Duration is how long the step took, or zero while it is unfinished.
func (s *StepRun) Duration() time.Duration {
	if s.FinishedAt == nil {
		return 0
	}
	return s.FinishedAt.Sub(s.StartedAt)
}

// HeldTenantLimit is Run.Held of a run held back by its tenant's limit.
const HeldTenantLimit = "tenant_limit"

// HeldTenantRate is Run.Held of a ready run waiting for its tenant's rate.
const HeldTenantRate = "tenant_rate"
