package engine

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// The statements of an attempt: what it starts from, and what it records
// when it fails and River retries it.
var (
	// beginAttemptsStmt loads runs with all their step records. Like
	// completeRunsStmt, it is a batched statement: these run with generic
	// plans (the workflow client's batch pool sets
	// plan_cache_mode=force_generic_plan), and look rows up by id. Their
	// status filters are written as "(...) IS TRUE", which no index can
	// serve, so that the planner keeps to the primary key: a plan that
	// scans the state index's 'running' range of river_job, or the
	// unfinished-runs index, walks through every job or run in flight
	// (and, under load, thousands of dead index entries) to find a batch
	// of a few rows.
	beginAttemptsStmt = define(`
SELECT r.id, r.workflow_type, r.input, r.schedule_id, r.fire_at, r.parent_run_id, r.metadata,
	coalesce((
		SELECT json_agg(json_build_object(
			'name', s.name, 'kind', s.kind, 'status', s.status, 'result_type', s.result_type,
			'output', s.output, 'error', s.error, 'wake_at', s.wake_at, 'child_run_id', s.child_run_id,
			'seq', s.seq))
		FROM {s}step_runs s WHERE s.run_id = r.id
	), '[]'::json)
FROM {s}workflow_runs r
WHERE r.id = ANY($1) AND (r.status IN ('pending', 'running', 'sleeping', 'waiting')) IS TRUE AND r.cancel_requested_at IS NULL`)

	recordAttemptErrorStmt = define(`
UPDATE {s}workflow_runs SET status = 'pending', error = $2, attempt = $3, started_at = coalesce(started_at, $4), updated_at = coalesce($5::timestamptz, now())
WHERE id = $1 AND status NOT IN ('completed', 'failed', 'cancelled', 'skipped')`)

	runStateStmt = define(`SELECT status, cancel_requested_at IS NOT NULL, coalesce(job_id, 0) FROM {s}workflow_runs WHERE id = $1`)
)

// AttemptRun is a run as an attempt starts from it.
type AttemptRun struct {
	ID         uuid.UUID
	Type       string
	Input      []byte
	ScheduleID *uuid.UUID
	FireAt     *time.Time
	ParentID   *uuid.UUID
	Metadata   []byte
	// Memos are all the run's step records, a JSON array of objects with
	// the keys name, kind, status, result_type, output, error (a
	// RunError's JSON), wake_at, child_run_id and seq (null for a record
	// from before migration 007); [] when there are none.
	Memos []byte
}

// BeginAttempts loads the runs of runIDs that an attempt may start on
// (unfinished and not being cancelled), each with all its step records,
// in one statement; the others are left out. The ids go as [16]byte (see
// MemoBatch).
func (q *Queries) BeginAttempts(ctx context.Context, db DBTX, runIDs [][16]byte) ([]AttemptRun, error) {
	rows, err := db.Query(ctx, q.sql(beginAttemptsStmt), runIDs)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	runs := make([]AttemptRun, 0, len(runIDs))
	var r AttemptRun // one scan target: each column is scanned into fresh memory
	for rows.Next() {
		if err := rows.Scan(&r.ID, &r.Type, &r.Input, &r.ScheduleID, &r.FireAt, &r.ParentID, &r.Metadata, &r.Memos); err != nil {
			return nil, err
		}
		runs = append(runs, r)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return runs, nil
}

// RecordAttemptErrorParams is a failed attempt that River retries.
type RecordAttemptErrorParams struct {
	ID        uuid.UUID
	Error     []byte     // the RunError's JSON
	Attempt   int        // the attempt that failed
	StartedAt *time.Time // the first attempt's start, when the row has none yet
	Now       *time.Time // the time recorded; nil: the database's now()
}

// RecordAttemptError records a failed attempt's error on an unfinished
// run, which is pending its next attempt. A finished run is left alone.
func (q *Queries) RecordAttemptError(ctx context.Context, db DBTX, p *RecordAttemptErrorParams) error {
	_, err := db.Exec(ctx, q.sql(recordAttemptErrorStmt), p.ID, p.Error, p.Attempt, p.StartedAt, p.Now)
	return err
}

// RunState is a run's stored status, with whether its cancellation was
// requested and its River job.
type RunState struct {
	Status          string
	CancelRequested bool
	JobID           int64 // 0 when the run has no River job
}

// RunStateByID reads a run's RunState (its stored status: the River job
// is not joined); ErrNotFound when there is no such run.
func (q *Queries) RunStateByID(ctx context.Context, db DBTX, id uuid.UUID) (*RunState, error) {
	var s RunState
	err := queryRow(ctx, db, q.sql(runStateStmt), id).Scan(&s.Status, &s.CancelRequested, &s.JobID)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	return &s, nil
}
