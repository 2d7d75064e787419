package engine

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// The statements that end an unfinished run, and the reads and touches
// that several of the façade's calls share.
var (
	runByIDStmt = define(`SELECT ` + runReadColumns + runReadFrom + `WHERE r.id = $1`)

	runByIDForUpdateStmt = define(`SELECT ` + runReadColumns + runReadFrom + `WHERE r.id = $1 FOR UPDATE OF r`)

	failRunStmt = define(`
UPDATE {s}workflow_runs
SET status = 'failed', error = $2, attempt = coalesce($3, attempt), started_at = coalesce(started_at, $4),
	updated_at = coalesce($5::timestamptz, now()), finished_at = coalesce($5::timestamptz, now())
WHERE id = $1 AND status NOT IN ('completed', 'failed', 'cancelled', 'skipped')
RETURNING parent_run_id, workflow_type`)

	cancelRunStmt = define(`
UPDATE {s}workflow_runs
SET status = 'cancelled', cancel_requested_at = coalesce(cancel_requested_at, $3::timestamptz, now()), error = $2,
	updated_at = coalesce($3::timestamptz, now()), finished_at = coalesce($3::timestamptz, now())
WHERE id = $1 AND status NOT IN ('completed', 'failed', 'cancelled', 'skipped')
RETURNING parent_run_id, workflow_type`)

	touchRunStmt = define(`
UPDATE {s}workflow_runs r SET updated_at = coalesce($2::timestamptz, now()) WHERE id = $1
RETURNING status, coalesce(job_id, 0), queue, coalesce((SELECT j.state::text FROM {s}river_job j WHERE j.id = r.job_id), '')`)
)

// RunByID reads a run, its River job joined (see runReadColumns);
// ErrNotFound when there is none.
func (q *Queries) RunByID(ctx context.Context, db DBTX, id uuid.UUID) (*Run, error) {
	return scanRun(queryRow(ctx, db, q.sql(runByIDStmt), id))
}

// RunByIDForUpdateTx is RunByID that also locks the run's row until tx ends.
func (q *Queries) RunByIDForUpdateTx(ctx context.Context, tx pgx.Tx, id uuid.UUID) (*Run, error) {
	return scanRun(tx.QueryRow(ctx, q.sql(runByIDForUpdateStmt), id))
}

// Finished is what ending a run returns: the run's parent (nil for a run
// that has none) and its workflow type.
type Finished struct {
	ParentID *uuid.UUID
	Type     string
}

// FailRunParams are the fields FailRun writes besides the failed status.
type FailRunParams struct {
	ID        uuid.UUID
	Error     []byte     // the RunError's JSON
	Attempt   *int       // the attempt that failed; nil keeps the stored one
	StartedAt *time.Time // the first attempt's start, when the row has none yet
	Now       *time.Time // the time recorded; nil: the database's now()
}

// FailRun marks an unfinished run failed. It returns false, and changes
// nothing, when the run is gone or already finished.
func (q *Queries) FailRun(ctx context.Context, db DBTX, p *FailRunParams) (*Finished, bool, error) {
	return scanFinished(queryRow(ctx, db, q.sql(failRunStmt), p.ID, p.Error, p.Attempt, p.StartedAt, p.Now))
}

// CancelRun marks an unfinished run cancelled with the error given (a
// RunError's JSON), recording the cancellation request if none was, at
// now (nil: the database's now()). It returns false, and changes nothing,
// when the run is gone or already finished.
func (q *Queries) CancelRun(ctx context.Context, db DBTX, id uuid.UUID, runError []byte, now *time.Time) (*Finished, bool, error) {
	return scanFinished(queryRow(ctx, db, q.sql(cancelRunStmt), id, runError, now))
}

func scanFinished(row pgx.Row) (*Finished, bool, error) {
	var f Finished
	err := row.Scan(&f.ParentID, &f.Type)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	return &f, true, nil
}

// Touched is a run as TouchRunTx found it.
type Touched struct {
	Status   string
	JobID    int64 // 0 when the run has no River job
	Queue    string
	JobState string // the River job's state, "" when it has none
}

// TouchRunTx locks an existing run's row until tx ends (by bumping its
// updated_at to now, nil for the database's now()) and returns its status
// and River job; ErrNotFound when there is no such run. Every change to a
// run that must not race its worker's (a signal, a cancellation, a
// wake-up) starts with it.
func (q *Queries) TouchRunTx(ctx context.Context, tx pgx.Tx, id uuid.UUID, now *time.Time) (*Touched, error) {
	var t Touched
	err := tx.QueryRow(ctx, q.sql(touchRunStmt), id, now).Scan(&t.Status, &t.JobID, &t.Queue, &t.JobState)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	return &t, nil
}
