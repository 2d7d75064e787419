package engine

import (
	"errors"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// ErrNotFound is returned by a query that reads one row when there is none.
var ErrNotFound = errors.New("engine: no such row")

// Run is a row of workflow_runs as the engine reads it. Status and the
// error are as stored (the façade decodes them); a read through
// runReadColumns shows a run whose River job is running as running.
type Run struct {
	ID                uuid.UUID
	Type              string
	IdempotencyKey    string
	Tenant            string // "" for none
	DebounceKey       string // "" for none
	Status            string
	Input             []byte
	Output            []byte // nil when the run has none
	Error             []byte // a RunError's JSON, or nil
	Attempt           int
	MaxAttempts       int
	Queue             string
	Priority          int
	JobID             int64
	ScheduleID        *uuid.UUID
	FireAt            *time.Time
	ParentID          *uuid.UUID
	ParentStep        string
	Metadata          []byte
	Tags              []string
	SkipReason        string
	CancelRequestedAt *time.Time
	CreatedAt         time.Time
	UpdatedAt         time.Time
	StartedAt         *time.Time
	FinishedAt        *time.Time
	// NextAttemptAt is when the run's next attempt is due, for a run whose
	// attempt failed and whose job waits to retry (runReadColumns); nil
	// otherwise.
	NextAttemptAt *time.Time
	// ForkedFrom is the run a fork was made from, and ForkedFromStep the
	// step it was made at (ForkRunTx); nil and "" for a run that is no fork.
	ForkedFrom     *uuid.UUID
	ForkedFromStep string
	// Retry is the retry policy an unfinished run's River job carries
	// (its args' "retry", JSON), for a read through runReadColumns; nil for
	// a finished run, a job that carries none, and a statement that
	// returns the rows it wrote.
	Retry []byte
}

// Step is a row of step_runs as the engine reads it.
type Step struct {
	Name       string
	Kind       string
	Status     string
	ResultType string
	Output     []byte // nil when the step has none
	Error      []byte // a RunError's JSON, or nil
	Attempts   int
	WakeAt     *time.Time
	ChildRunID *uuid.UUID
	StartedAt  time.Time
	FinishedAt *time.Time
}

// runColumns are the columns scanRun reads, for a statement that returns
// the rows it wrote.
const runColumns = `id, workflow_type, coalesce(idempotency_key, ''), coalesce(tenant, ''), status, input, output, error, attempt,
	max_attempts, queue, priority, coalesce(job_id, 0), schedule_id, fire_at, parent_run_id,
	coalesce(parent_step, ''), metadata, tags, coalesce(skip_reason, ''), cancel_requested_at,
	created_at, updated_at, started_at, finished_at, coalesce(debounce_key, ''), NULL::timestamptz,
	forked_from, coalesce(forked_from_step, ''), NULL::jsonb`

// runReadColumns are runColumns for reads, with the run's River job joined
// as j: a run whose job River is working right now reads as running, with
// the job's attempt; a pending run whose job has been attempted and waits
// (River's retryable, or available or scheduled again) has its next
// attempt's time, the job's scheduled_at; an unfinished run has the retry
// policy its job carries. (The row itself is only written when an attempt ends:
// starting an attempt is a read, which keeps a run's hot path short.)
const runReadColumns = `r.id, r.workflow_type, coalesce(r.idempotency_key, ''), coalesce(r.tenant, ''),
	CASE WHEN r.status IN ('pending', 'sleeping', 'waiting') AND j.state = 'running' THEN 'running' ELSE r.status END,
	r.input, r.output, r.error,
	CASE WHEN r.status IN ('pending', 'sleeping', 'waiting') AND j.state = 'running'
		THEN coalesce((j.args->>'attempt_base')::int, 0) + j.attempt ELSE r.attempt END,
	r.max_attempts, r.queue, r.priority, coalesce(r.job_id, 0), r.schedule_id, r.fire_at, r.parent_run_id,
	coalesce(r.parent_step, ''), r.metadata, r.tags, coalesce(r.skip_reason, ''), r.cancel_requested_at,
	r.created_at, r.updated_at, coalesce(r.started_at, CASE WHEN j.state = 'running' THEN j.attempted_at END), r.finished_at,
	coalesce(r.debounce_key, ''),
	CASE WHEN r.status = 'pending' AND j.attempt > 0 AND j.state IN ('retryable', 'available', 'scheduled') THEN j.scheduled_at END,
	r.forked_from, coalesce(r.forked_from_step, ''),
	CASE WHEN r.status IN ('pending', 'running', 'sleeping', 'waiting') THEN nullif(j.args->'retry', 'null') END`

// runReadFrom is the FROM clause of runReadColumns.
const runReadFrom = ` FROM {s}workflow_runs r LEFT JOIN {s}river_job j ON j.id = r.job_id `

// stepColumns are the columns scanStep reads.
const stepColumns = `name, kind, status, result_type, output, error, attempts, wake_at, child_run_id, started_at, finished_at`

// scanRun reads a row of runColumns or runReadColumns; ErrNotFound when
// there is none.
func scanRun(row pgx.Row) (*Run, error) {
	var r Run
	err := row.Scan(&r.ID, &r.Type, &r.IdempotencyKey, &r.Tenant, &r.Status, &r.Input, &r.Output, &r.Error, &r.Attempt,
		&r.MaxAttempts, &r.Queue, &r.Priority, &r.JobID, &r.ScheduleID, &r.FireAt, &r.ParentID,
		&r.ParentStep, &r.Metadata, &r.Tags, &r.SkipReason, &r.CancelRequestedAt,
		&r.CreatedAt, &r.UpdatedAt, &r.StartedAt, &r.FinishedAt, &r.DebounceKey, &r.NextAttemptAt,
		&r.ForkedFrom, &r.ForkedFromStep, &r.Retry)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	if len(r.Output) == 0 {
		r.Output = nil
	}
	return &r, nil
}

// scanRuns reads every row of rows with scanRun, and closes rows.
func scanRuns(rows pgx.Rows, err error) ([]*Run, error) {
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (*Run, error) { return scanRun(row) })
}

// scanStep reads a row of stepColumns.
func scanStep(row pgx.Row) (*Step, error) {
	var s Step
	if err := row.Scan(&s.Name, &s.Kind, &s.Status, &s.ResultType, &s.Output, &s.Error, &s.Attempts,
		&s.WakeAt, &s.ChildRunID, &s.StartedAt, &s.FinishedAt); err != nil {
		if errors.Is(err, pgx.ErrNoRows) {
			return nil, ErrNotFound
		}
		return nil, err
	}
	if len(s.Output) == 0 {
		s.Output = nil
	}
	return &s, nil
}
