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

	"github.com/tributary-go/tributary/internal/engine"
)

// dbtx is what both *pgxpool.Pool and pgx.Tx offer.
type dbtx interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// runDoneChannel is the LISTEN/NOTIFY channel a finished run is announced on
// (payload: the run id). Result waits on it instead of polling.
const runDoneChannel = "tributary_run_done"

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
	beginAttempts        string
	completeRuns         string
	consumeSignal        string
	failRun              string
	insertRun            string
	insertSignal         string
	lockRun              string
	memoInsert           string
	memoUpsert           string
	parkMemo             string
	recordRunError       string
	runByKey             string
	runTable             string
	runByID              string
	setRunJob            string
	parkRun              string
	stepByName           string
	unfinishedOfSchedule string
	stepFailed           string
	cancelRun            string
	touchRun             string
	childOutcome         string
	finishWaitMemo       string
	runStatusByID        string
	runsOfSlots          string
	insertScheduledRuns  string
}

// memoInsert writes a batch of step records (see flushMemos).
const memoInsert = `
INSERT INTO {s}step_runs (run_id, name, kind, status, result_type, output, started_at, finished_at, seq)
SELECT t.r, t.n, t.k, t.st, t.rt, t.o::jsonb, t.sa, t.fa, nullif(t.q, -1)
FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::timestamptz[], $8::timestamptz[], $9::int[])
	AS t(r, n, k, st, rt, o, sa, fa, q)
JOIN {s}workflow_runs run ON run.id = t.r
FOR KEY SHARE OF run`

// memoConflict makes a memo write an upsert: a step's record from an
// earlier attempt (a failure, a park) takes the new result and position; a
// completed record stays as it is.
const memoConflict = `ON CONFLICT (run_id, name) DO UPDATE SET
	kind = excluded.kind, status = excluded.status, result_type = excluded.result_type,
	output = excluded.output, error = NULL, attempts = step_runs.attempts + 1,
	started_at = excluded.started_at, finished_at = excluded.finished_at,
	seq = coalesce(excluded.seq, step_runs.seq)
WHERE step_runs.status <> 'completed'`

func newQueries(schema string) *queries {
	prefix := ""
	if schema != "" {
		prefix = pgx.Identifier{schema}.Sanitize() + "."
	}
	t := func(sql string) string { return strings.ReplaceAll(sql, "{s}", prefix) }
	return &queries{
		// The batched queries run with generic plans (see newBatchPool), and
		// look rows up by id. Their status filters are written as
		// "(...) IS TRUE", which no index can serve, so that the planner
		// keeps to the primary key: a plan that scans the state index's
		// 'running' range of river_job, or the unfinished-runs index, walks
		// through every job or run in flight (and, under load, thousands of
		// dead index entries) to find a batch of a few rows. completeRuns
		// looks its runs up by the join alone: with "r.id = ANY($2)" beside
		// "r.id = v.run_id", Postgres 15 walked the whole array for each run
		// of the batch, and a batch of 500 runs took 30 ms instead of 3.
		beginAttempts: t(`
SELECT r.id, r.workflow_type, r.input, r.schedule_id, r.fire_at, r.parent_run_id, r.metadata,
	coalesce((
		SELECT json_agg(json_build_object(
			'name', s.name, 'kind', s.kind, 'status', s.status, 'result_type', s.result_type,
			'output', s.output, 'error', s.error, 'wake_at', s.wake_at, 'child_run_id', s.child_run_id,
			'seq', s.seq))
		FROM {s}step_runs s WHERE s.run_id = r.id
	), '[]'::json)
FROM {s}workflow_runs r
WHERE r.id = ANY($1) AND (r.status IN ('pending', 'running', 'sleeping', 'waiting')) IS TRUE AND r.cancel_requested_at IS NULL`),
		completeRuns: t(`
WITH v AS (
	SELECT * FROM unnest($1::bigint[], $2::uuid[], $3::text[], $4::int[], $5::timestamptz[])
		AS v(job_id, run_id, output, attempt, started_at)
), ` + engine.CompleteRunningCTE + `, done AS (
	UPDATE {s}workflow_runs r
	SET status = 'completed', output = v.output::jsonb, error = NULL, attempt = v.attempt,
		started_at = coalesce(r.started_at, v.started_at), updated_at = now(), finished_at = now()
	FROM v JOIN jobs ON jobs.id = v.job_id
	WHERE r.id = v.run_id AND r.status NOT IN ('completed', 'failed', 'cancelled', 'skipped')
	RETURNING r.id, r.parent_run_id
), memos AS (
	INSERT INTO {s}step_runs (run_id, name, kind, status, result_type, output, started_at, finished_at, seq)
	SELECT t.r, t.n, t.k, t.st, t.rt, t.o::jsonb, t.sa, t.fa, nullif(t.q, -1)
	FROM unnest($7::uuid[], $8::text[], $9::text[], $10::text[], $11::text[], $12::text[], $13::timestamptz[], $14::timestamptz[], $15::int[])
		AS t(r, n, k, st, rt, o, sa, fa, q)
	JOIN done ON done.id = t.r
	` + memoConflict + `
), notified AS (
	SELECT pg_notify('` + runDoneChannel + `', done.id::text) FROM done
), commit_mode AS (
	SELECT CASE WHEN $6::boolean THEN set_config('synchronous_commit', 'off', true) END
)
SELECT v.job_id, jobs.id IS NOT NULL, done.id IS NOT NULL, done.parent_run_id, (SELECT count(*) FROM notified), (SELECT count(*) FROM commit_mode)
FROM v LEFT JOIN jobs ON jobs.id = v.job_id LEFT JOIN done ON done.id = v.run_id`),
		cancelRun: t(`
UPDATE {s}workflow_runs
SET status = 'cancelled', cancel_requested_at = coalesce(cancel_requested_at, now()), error = $2,
	updated_at = now(), finished_at = now()
WHERE id = $1 AND status NOT IN ('completed', 'failed', 'cancelled', 'skipped')
RETURNING parent_run_id, workflow_type`),
		childOutcome: t(`SELECT status, output, error FROM {s}workflow_runs WHERE id = $1`),
		consumeSignal: t(`
UPDATE {s}workflow_signals SET consumed_at = now(), consumed_by_step = $3
WHERE id = (
	SELECT id FROM {s}workflow_signals
	WHERE run_id = $1 AND name = $2 AND consumed_at IS NULL
	ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED
)
RETURNING payload`),
		failRun: t(`
UPDATE {s}workflow_runs
SET status = 'failed', error = $2, attempt = coalesce($3, attempt), started_at = coalesce(started_at, $4),
	updated_at = now(), finished_at = now()
WHERE id = $1 AND status NOT IN ('completed', 'failed', 'cancelled', 'skipped')
RETURNING parent_run_id, workflow_type`),
		finishWaitMemo: t(`
UPDATE {s}step_runs SET status = 'completed', output = $3, error = $4, finished_at = now()
WHERE run_id = $1 AND name = $2`),
		insertRun: t(`
INSERT INTO {s}workflow_runs (id, workflow_type, idempotency_key, input, max_attempts, queue, priority,
	job_id, schedule_id, fire_at, parent_run_id, parent_step, metadata, tags, status, skip_reason, finished_at)
VALUES ($1, $2, nullif($3, ''), $4, $5, $6, $7, nullif($8, 0), $9, $10, $11, nullif($12, ''), $13, $14, $15::text,
	nullif($16, ''), CASE WHEN $15::text = 'skipped' THEN now() END)
ON CONFLICT DO NOTHING
RETURNING ` + runColumns),
		// insertSignal stores a signal and returns how many of its name are
		// pending, and, when $4 says the run is parked waiting, the signal
		// its parked wait waits for (for a record from before migration 007,
		// read from the default step name "signal:<name>").
		insertSignal: t(`
WITH sent AS (
	INSERT INTO {s}workflow_signals (run_id, name, payload) VALUES ($1, $2, $3) RETURNING id
)
SELECT
	(SELECT count(*) FROM {s}workflow_signals WHERE run_id = $1 AND name = $2 AND consumed_at IS NULL)
		+ (SELECT count(*) FROM sent),
	coalesce((
		SELECT coalesce(s.signal_name, CASE WHEN s.name LIKE 'signal:%' THEN substr(s.name, 8) END, '')
		FROM {s}step_runs s
		WHERE $4::boolean AND s.run_id = $1 AND s.kind = 'signal' AND s.status = 'waiting'
		ORDER BY s.seq DESC NULLS LAST
		LIMIT 1
	), '')`),
		lockRun: t(`SELECT status, cancel_requested_at IS NOT NULL FROM {s}workflow_runs WHERE id = $1 FOR UPDATE`),
		// The statements that write step_runs (memoInsert, memoUpsert,
		// parkMemo, stepFailed) insert a step only together with its run,
		// under the run's key-share lock: they are what stands in for a
		// foreign key (migration 003). No step is written for a missing run,
		// and a run deleted meanwhile waits for the step's transaction, then
		// deletes the step with the run's others.
		memoInsert: t(memoInsert),
		memoUpsert: t(memoInsert + "\n" + memoConflict),
		parkMemo: t(`
INSERT INTO {s}step_runs (run_id, name, kind, status, wake_at, child_run_id, result_type, seq, signal_name)
SELECT id, $2::text, $3::text, $4::text, $5::timestamptz, $6::uuid, $7::text, nullif($8::int, -1), nullif($9::text, '')
FROM {s}workflow_runs WHERE id = $1
FOR KEY SHARE
ON CONFLICT (run_id, name) DO NOTHING`),
		recordRunError: t(`
UPDATE {s}workflow_runs SET status = 'pending', error = $2, attempt = $3, started_at = coalesce(started_at, $4), updated_at = now()
WHERE id = $1 AND status NOT IN ('completed', 'failed', 'cancelled', 'skipped')`),
		runTable:      t(`{s}workflow_runs`),
		runByID:       t(`SELECT ` + runReadColumns + runReadFrom + `WHERE r.id = $1`),
		runByKey:      t(`SELECT ` + runReadColumns + runReadFrom + `WHERE r.workflow_type = $1 AND r.idempotency_key = $2`),
		runStatusByID: t(`SELECT status, output, error FROM {s}workflow_runs WHERE id = $1`),
		runsOfSlots: t(`
SELECT r.id, r.schedule_id, r.fire_at
FROM unnest($1::uuid[], $2::timestamptz[]) AS s(id, fire_at)
JOIN {s}workflow_runs r ON r.schedule_id = s.id AND r.fire_at = s.fire_at`),
		// A skipped slot's run is finished when it is recorded; a started
		// one's job id is set (its job was inserted first).
		insertScheduledRuns: t(`
INSERT INTO {s}workflow_runs (id, workflow_type, input, max_attempts, queue, priority, job_id, schedule_id, fire_at,
	metadata, status, skip_reason, finished_at)
SELECT t.id, t.typ, t.input::jsonb, t.ma, t.q, t.p, nullif(t.job, 0), t.sid, t.fa, t.meta::jsonb,
	CASE WHEN t.skip = '' THEN 'pending' ELSE 'skipped' END, nullif(t.skip, ''), CASE WHEN t.skip <> '' THEN now() END
FROM unnest($1::uuid[], $2::text[], $3::text[], $4::int[], $5::text[], $6::int[], $7::bigint[], $8::uuid[],
	$9::timestamptz[], $10::text[], $11::text[]) AS t(id, typ, input, ma, q, p, job, sid, fa, meta, skip)
ON CONFLICT DO NOTHING`),
		setRunJob: t(`UPDATE {s}workflow_runs SET job_id = $2 WHERE id = $1`),
		parkRun:   t(`UPDATE {s}workflow_runs SET status = $2, job_id = $3, attempt = $4, started_at = coalesce(started_at, $5), updated_at = now() WHERE id = $1`),
		stepFailed: t(`
INSERT INTO {s}step_runs (run_id, name, kind, status, result_type, error, started_at, finished_at, seq)
SELECT id, $2::text, 'step', 'failed', $3::text, $4::jsonb, $5::timestamptz, now(), nullif($6::int, -1)
FROM {s}workflow_runs WHERE id = $1
FOR KEY SHARE
ON CONFLICT (run_id, name) DO UPDATE SET
	status = 'failed', error = excluded.error, attempts = step_runs.attempts + 1,
	started_at = excluded.started_at, finished_at = excluded.finished_at,
	seq = coalesce(excluded.seq, step_runs.seq)
WHERE step_runs.status <> 'completed'`),
		unfinishedOfSchedule: t(`SELECT id FROM {s}workflow_runs WHERE schedule_id = $1 AND status IN ('pending', 'running', 'sleeping', 'waiting') ORDER BY id`),
		stepByName:           t(`SELECT ` + stepColumns + ` FROM {s}step_runs WHERE run_id = $1 AND name = $2`),
		touchRun:             t(`UPDATE {s}workflow_runs r SET updated_at = now() WHERE id = $1 RETURNING status, coalesce(job_id, 0), queue, coalesce((SELECT j.state::text FROM {s}river_job j WHERE j.id = r.job_id), '')`),
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
