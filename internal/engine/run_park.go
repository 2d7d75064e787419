package engine

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// The statements of a park (a sleep, a signal wait, a child wait), which
// ends an attempt without using it up, and of the end of a wait.
var (
	lockRunStmt = define(`SELECT status, cancel_requested_at IS NOT NULL FROM {s}workflow_runs WHERE id = $1 FOR UPDATE`)

	// parkedStepStmt writes a parked step's record, with its run under the
	// run's key-share lock (see the comment above insertMemosStmt).
	parkedStepStmt = define(`
INSERT INTO {s}step_runs (run_id, name, kind, status, wake_at, child_run_id, result_type, seq, signal_name, started_at)
SELECT id, $2::text, $3::text, $4::text, $5::timestamptz, $6::uuid, $7::text, nullif($8::int, -1), nullif($9::text, ''),
	coalesce($10::timestamptz, now())
FROM {s}workflow_runs WHERE id = $1
FOR KEY SHARE
ON CONFLICT (run_id, name) DO NOTHING`)

	parkRunStmt = define(`UPDATE {s}workflow_runs SET status = $2, job_id = $3, attempt = $4, started_at = coalesce(started_at, $5), updated_at = coalesce($6::timestamptz, now()) WHERE id = $1`)

	finishWaitStmt = define(`
UPDATE {s}step_runs SET status = 'completed', output = $3, error = $4, finished_at = coalesce($5::timestamptz, now())
WHERE run_id = $1 AND name = $2`)
)

// LockRunTx locks run id's row until tx ends (FOR UPDATE) and returns its
// status and whether its cancellation was requested. A missing run is
// pgx.ErrNoRows, as the caller's wording of the error expects.
func (q *Queries) LockRunTx(ctx context.Context, tx pgx.Tx, id uuid.UUID) (status string, cancelRequested bool, err error) {
	err = tx.QueryRow(ctx, q.sql(lockRunStmt), id).Scan(&status, &cancelRequested)
	return status, cancelRequested, err
}

// ParkedStepParams is the record of a step that parks its run.
type ParkedStepParams struct {
	RunID      uuid.UUID
	Name       string
	Kind       string
	Status     string     // sleeping or waiting
	WakeAt     *time.Time // nil: no timeout
	ChildRunID *uuid.UUID
	ResultType string
	Seq        int        // the record's position in the run's history; -1 for none
	Signal     string     // the signal a signal wait waits for; "" for none
	Now        *time.Time // the park's time (the record's start); nil: the database's now()
}

// InsertParkedStep writes the record of a parked step, unless the step has
// a record already (a park is reached again on replay, and keeps its first
// wake time) or the run is gone.
func (q *Queries) InsertParkedStep(ctx context.Context, db DBTX, p *ParkedStepParams) error {
	_, err := db.Exec(ctx, q.sql(parkedStepStmt), p.RunID, p.Name, p.Kind, p.Status,
		p.WakeAt, p.ChildRunID, p.ResultType, p.Seq, p.Signal, p.Now)
	return err
}

// ParkRunParams is a run parked on its next River job.
type ParkRunParams struct {
	ID        uuid.UUID
	Status    string     // sleeping or waiting
	JobID     int64      // the run's next River job
	Attempt   int        // the attempt that parked
	StartedAt *time.Time // the first attempt's start, when the row has none yet
	Now       *time.Time // the time recorded; nil: the database's now()
}

// ParkRunTx records that a run is parked: its status, its next River job
// and the attempt that parked. It belongs to the park's transaction, with
// the step's record and the hand-off of the River job.
func (q *Queries) ParkRunTx(ctx context.Context, tx pgx.Tx, p *ParkRunParams) error {
	_, err := tx.Exec(ctx, q.sql(parkRunStmt), p.ID, p.Status, p.JobID, p.Attempt, p.StartedAt, p.Now)
	return err
}

// FinishWaitParams is the outcome of a wait (a sleep, a signal or a child
// run) to store on its step's record.
type FinishWaitParams struct {
	RunID  uuid.UUID
	Name   string
	Output []byte     // JSON
	Error  []byte     // a RunError's JSON, or nil
	Now    *time.Time // the wait's finish; nil: the database's now()
}

// FinishWait completes a wait's step record with its outcome. It writes
// nothing when the step has no record.
func (q *Queries) FinishWait(ctx context.Context, db DBTX, p *FinishWaitParams) error {
	_, err := db.Exec(ctx, q.sql(finishWaitStmt), p.RunID, p.Name, p.Output, p.Error, p.Now)
	return err
}
