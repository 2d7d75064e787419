package workflow

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// dbtx is what both *pgxpool.Pool and pgx.Tx offer.
type dbtx interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

const runColumns = `id, workflow_type, coalesce(idempotency_key, ''), status, input, output, error, attempt,
	max_attempts, queue, priority, coalesce(job_id, 0), schedule_id, fire_at, parent_run_id,
	coalesce(parent_step, ''), metadata, tags, coalesce(skip_reason, ''), cancel_requested_at,
	created_at, updated_at, started_at, finished_at`

// runReadColumns are runColumns for reads, with the run's River job joined
// as j: a run whose job River is working right now reads as running, with
// the job's attempt. (The row itself is only written when an attempt ends:
// starting an attempt is a read, which keeps a run's hot path short.)
const runReadColumns = `r.id, r.workflow_type, coalesce(r.idempotency_key, ''),
	CASE WHEN r.status IN ('pending', 'sleeping', 'waiting') AND j.state = 'running' THEN 'running' ELSE r.status END,
	r.input, r.output, r.error,
	CASE WHEN r.status IN ('pending', 'sleeping', 'waiting') AND j.state = 'running'
		THEN coalesce((j.args->>'attempt_base')::int, 0) + j.attempt ELSE r.attempt END,
	r.max_attempts, r.queue, r.priority, coalesce(r.job_id, 0), r.schedule_id, r.fire_at, r.parent_run_id,
	coalesce(r.parent_step, ''), r.metadata, r.tags, coalesce(r.skip_reason, ''), r.cancel_requested_at,
	r.created_at, r.updated_at, coalesce(r.started_at, CASE WHEN j.state = 'running' THEN j.attempted_at END), r.finished_at`

// runReadFrom is the FROM clause of runReadColumns.
const runReadFrom = ` FROM {s}workflow_runs r LEFT JOIN {s}river_job j ON j.id = r.job_id `

const stepColumns = `name, kind, status, result_type, output, error, attempts, wake_at, child_run_id, started_at, finished_at`

// queries holds the engine's SQL with the schema filled in.
type queries struct {
	brokenRuns         string
	brokenRunsOf       string
	failRun            string
	workerTable        string
	deadWorkers        string
	deleteExpiredRuns  string
	listRuns           string
	listRunsOfSchedule string
	runByID            string
	stepsOfRun         string
	cancelRun          string
	requestCancel      string
	resetForRetry      string
	touchRun           string

	// The listings' filters (ListRuns) and the overview (CountRuns,
	// ListFailures). listRunsWhere and listRunsOfScheduleWhere are
	// listRuns and listRunsOfSchedule without their ORDER BY and LIMIT,
	// for ListRuns to add the clauses of its other filters to.
	listRunsWhere           string
	listRunsOfScheduleWhere string
	runTypes                string
	countInFlight           string
	countRunningJobs        string
	countRecent             string
	countFailedSince        string
	listFailedSince         string
}

// brokenRunsSQL finds unfinished runs whose River job ended (discarded,
// cancelled, completed) or is gone, for RepairRuns.
const brokenRunsSQL = `
SELECT r.id, coalesce(r.job_id, 0), j.state::text, j.errors[array_length(j.errors, 1)],
	coalesce(j.attempt, 0), coalesce(j.max_attempts, 0), coalesce((j.args->>'attempt_base')::int, 0)
FROM {s}workflow_runs r
LEFT JOIN {s}river_job j ON j.id = r.job_id
WHERE r.status IN ('pending', 'running', 'sleeping', 'waiting')
	AND r.job_id IS NOT NULL
	AND (j.id IS NULL OR j.state IN ('discarded', 'cancelled', 'completed'))`

// listRunsWhere lists runs (ListRuns); listRunsOrder ends it.
const listRunsWhere = `
SELECT ` + runReadColumns + runReadFrom + `
WHERE ($1 = '' OR r.workflow_type = $1)
	AND ($2 = '' OR (CASE WHEN r.status IN ('pending', 'sleeping', 'waiting') AND j.state = 'running' THEN 'running' ELSE r.status END) = $2)
	AND ($3::uuid IS NULL OR r.schedule_id = $3)
	AND ($4::uuid IS NULL OR r.id < $4)`

// listRunsOfScheduleWhere lists a schedule's runs (History), through
// workflow_runs_schedule_history: the schedule is not optional here, so
// that every plan, generic ones included, reads the schedule's runs and
// not the table's.
const listRunsOfScheduleWhere = `
SELECT ` + runReadColumns + runReadFrom + `
WHERE r.schedule_id = $3
	AND ($1 = '' OR r.workflow_type = $1)
	AND ($2 = '' OR (CASE WHEN r.status IN ('pending', 'sleeping', 'waiting') AND j.state = 'running' THEN 'running' ELSE r.status END) = $2)
	AND ($4::uuid IS NULL OR r.id < $4)`

const listRunsOrder = `
ORDER BY r.id DESC
LIMIT $5`

// runTypes are the workflow types that have runs, each found by one probe
// of workflow_runs_type_status_id (a loose index scan): its cost follows
// the number of types, not of runs. ListRuns matches an idempotency key of
// any type through it and the unique (type, key) index.
const runTypes = `
WITH RECURSIVE types(typ) AS (
	(SELECT min(workflow_type) FROM {s}workflow_runs)
	UNION ALL
	SELECT (SELECT min(workflow_type) FROM {s}workflow_runs WHERE workflow_type > types.typ)
	FROM types WHERE types.typ IS NOT NULL
)
SELECT typ FROM types WHERE typ IS NOT NULL`

// countInFlight counts the unfinished runs by stored status, from
// workflow_runs_unfinished alone.
const countInFlight = `
SELECT status, count(*) FROM {s}workflow_runs
WHERE status IN ('pending', 'running', 'sleeping', 'waiting')
GROUP BY status`

// countRunningJobs counts the unfinished runs stored as pending, sleeping
// or waiting whose River job is running right now (which reads them as
// running), from the running jobs: River's state index finds them, and
// their args name the run.
const countRunningJobs = `
SELECT r.status, count(*)
FROM {s}river_job j
JOIN {s}workflow_runs r ON r.id = (j.args->>'run_id')::uuid AND r.job_id = j.id
WHERE j.state = 'running' AND j.args ? 'run_id' AND r.status IN ('pending', 'sleeping', 'waiting')
GROUP BY r.status`

// countRecent counts, by status, the newest $2 runs created since $1 (the
// first id of that millisecond), read through the primary key.
const countRecent = `
SELECT CASE WHEN r.status IN ('pending', 'sleeping', 'waiting') AND j.state = 'running' THEN 'running' ELSE r.status END, count(*)
FROM (SELECT id, status, job_id FROM {s}workflow_runs WHERE id >= $1 ORDER BY id DESC LIMIT $2) r
LEFT JOIN {s}river_job j ON j.id = r.job_id
GROUP BY 1`

func newQueries(schema string) *queries {
	prefix := ""
	if schema != "" {
		prefix = pgx.Identifier{schema}.Sanitize() + "."
	}
	t := func(sql string) string { return strings.ReplaceAll(sql, "{s}", prefix) }
	return &queries{
		brokenRuns: t(brokenRunsSQL + `
	AND r.updated_at < now() - make_interval(secs => $1)
	AND (j.id IS NULL OR j.finalized_at < now() - make_interval(secs => $1))
LIMIT 1000`),
		brokenRunsOf: t(brokenRunsSQL + `
	AND r.id = ANY($1)`),
		cancelRun: t(`
UPDATE {s}workflow_runs
SET status = 'cancelled', cancel_requested_at = coalesce(cancel_requested_at, now()), error = $2,
	updated_at = now(), finished_at = now()
WHERE id = $1 AND status NOT IN ('completed', 'failed', 'cancelled', 'skipped')
RETURNING parent_run_id, workflow_type`),
		failRun: t(`
UPDATE {s}workflow_runs
SET status = 'failed', error = $2, attempt = coalesce($3, attempt), started_at = coalesce(started_at, $4),
	updated_at = now(), finished_at = now()
WHERE id = $1 AND status NOT IN ('completed', 'failed', 'cancelled', 'skipped')
RETURNING parent_run_id, workflow_type`),
		workerTable:        t(`{s}tributary_workers`),
		deadWorkers:        t(deadWorkersSQL),
		deleteExpiredRuns:  t(deleteExpiredRunsSQL),
		listRuns:           t(listRunsWhere + listRunsOrder),
		listRunsOfSchedule: t(listRunsOfScheduleWhere + listRunsOrder),
		requestCancel:      t(`UPDATE {s}workflow_runs SET cancel_requested_at = coalesce(cancel_requested_at, now()), updated_at = now() WHERE id = $1`),
		resetForRetry: t(`
UPDATE {s}workflow_runs
SET status = 'pending', error = NULL, cancel_requested_at = NULL, finished_at = NULL, updated_at = now(),
	job_id = coalesce($2, job_id)
WHERE id = $1`),
		runByID:    t(`SELECT ` + runReadColumns + runReadFrom + `WHERE r.id = $1`),
		stepsOfRun: t(`SELECT ` + stepColumns + ` FROM {s}step_runs WHERE run_id = $1 ORDER BY seq NULLS FIRST, started_at, name`),
		touchRun:   t(`UPDATE {s}workflow_runs r SET updated_at = now() WHERE id = $1 RETURNING status, coalesce(job_id, 0), queue, coalesce((SELECT j.state::text FROM {s}river_job j WHERE j.id = r.job_id), '')`),

		// ListRuns' other filters, CountRuns and ListFailures.
		listRunsWhere:           t(listRunsWhere),
		listRunsOfScheduleWhere: t(listRunsOfScheduleWhere),
		runTypes:                t(runTypes),
		countInFlight:           t(countInFlight),
		countRunningJobs:        t(countRunningJobs),
		countRecent:             t(countRecent),
		countFailedSince:        t(`SELECT count(*) FROM {s}workflow_runs WHERE status = 'failed' AND finished_at >= $1`),
		// The failed runs since $1 through workflow_runs_failed (007).
		listFailedSince: t(`
SELECT ` + runReadColumns + runReadFrom + `
WHERE r.status = 'failed' AND r.finished_at >= $1
ORDER BY r.finished_at DESC, r.id DESC
LIMIT $2`),
	}
}

func scanRun(row pgx.Row) (*Run, error) {
	var (
		r        Run
		status   string
		errBytes []byte
		output   []byte
	)
	err := row.Scan(&r.ID, &r.Type, &r.IdempotencyKey, &status, &r.Input, &output, &errBytes, &r.Attempt,
		&r.MaxAttempts, &r.Queue, &r.Priority, &r.JobID, &r.ScheduleID, &r.FireAt, &r.ParentID,
		&r.ParentStep, &r.Metadata, &r.Tags, &r.SkipReason, &r.CancelRequestedAt,
		&r.CreatedAt, &r.UpdatedAt, &r.StartedAt, &r.FinishedAt)
	if err != nil {
		if errors.Is(err, pgx.ErrNoRows) {
			return nil, ErrNotFound
		}
		return nil, err
	}
	r.Status = Status(status)
	if len(output) > 0 {
		r.Output = output
	}
	if r.Error, err = decodeRunError(errBytes); err != nil {
		return nil, err
	}
	return &r, nil
}

func scanStep(row pgx.Row) (*StepRun, error) {
	var (
		s        StepRun
		kind     string
		status   string
		errBytes []byte
		output   []byte
	)
	if err := row.Scan(&s.Name, &kind, &status, &s.ResultType, &output, &errBytes, &s.Attempts,
		&s.WakeAt, &s.ChildRunID, &s.StartedAt, &s.FinishedAt); err != nil {
		return nil, err
	}
	s.Kind, s.Status = StepKind(kind), StepStatus(status)
	if len(output) > 0 {
		s.Output = output
	}
	var err error
	if s.Error, err = decodeRunError(errBytes); err != nil {
		return nil, err
	}
	return &s, nil
}

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
