package engine

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// The statements that start a run: its row, linked to its River job.
var (
	insertRunStmt = define(`
INSERT INTO {s}workflow_runs (id, workflow_type, idempotency_key, input, max_attempts, queue, priority,
	job_id, schedule_id, fire_at, parent_run_id, parent_step, metadata, tags, status, skip_reason, finished_at, tenant,
	debounce_key, debounce_open, created_at, updated_at)
VALUES ($1, $2, nullif($3, ''), $4, $5, $6, $7, nullif($8, 0), $9, $10, $11, nullif($12, ''), $13, $14, $15::text,
	nullif($16, ''), CASE WHEN $15::text = 'skipped' THEN coalesce($19::timestamptz, now()) END, nullif($17, ''), nullif($18, ''), $18 <> '',
	coalesce($19::timestamptz, now()), coalesce($19::timestamptz, now()))
ON CONFLICT DO NOTHING
RETURNING ` + runColumns)

	runByKeyStmt = define(`SELECT ` + runReadColumns + runReadFrom + `WHERE r.workflow_type = $1 AND r.idempotency_key = $2`)

	setRunJobStmt = define(`UPDATE {s}workflow_runs SET job_id = $2 WHERE id = $1`)

	unfinishedOfScheduleStmt = define(`SELECT id FROM {s}workflow_runs r WHERE schedule_id = $1 AND status IN ('pending', 'running', 'sleeping', 'waiting')
	AND ` + unstarted + ` ORDER BY id`)
)

// InsertRunParams is a run to insert.
type InsertRunParams struct {
	ID             uuid.UUID
	Type           string
	IdempotencyKey string // "" for none
	Input          []byte // JSON
	MaxAttempts    int
	Queue          string
	Priority       int
	JobID          int64 // its River job; 0 when the job is inserted after the run (SetRunJob)
	ScheduleID     *uuid.UUID
	FireAt         *time.Time
	ParentID       *uuid.UUID
	ParentStep     string // "" for none
	Metadata       []byte // a JSON object
	Tags           []string
	Status         string     // pending, or skipped (finished at once)
	SkipReason     string     // "" for none
	Tenant         string     // "" for none
	DebounceKey    string     // "" for none; a run with one opens its window
	Now            *time.Time // the time recorded (created, and finished when skipped); nil: the database's now()
}

// InsertRun inserts a run and returns its row. It returns ErrNotFound, and
// inserts nothing, when the run conflicts with one that exists: the same
// idempotency key of its type, the same schedule slot (a slot has one
// run), or the same debounce key of its type with its window open.
func (q *Queries) InsertRun(ctx context.Context, db DBTX, p *InsertRunParams) (*Run, error) {
	return scanRun(queryRow(ctx, db, q.sql(insertRunStmt), p.ID, p.Type, p.IdempotencyKey, p.Input, p.MaxAttempts,
		p.Queue, p.Priority, p.JobID, p.ScheduleID, p.FireAt, p.ParentID, p.ParentStep, p.Metadata, p.Tags, p.Status, p.SkipReason,
		p.Tenant, p.DebounceKey, p.Now))
}

// RunByKey reads the run of workflow type typ with idempotency key key,
// its River job joined (see runReadColumns); ErrNotFound when there is
// none.
func (q *Queries) RunByKey(ctx context.Context, db DBTX, typ, key string) (*Run, error) {
	return scanRun(queryRow(ctx, db, q.sql(runByKeyStmt), typ, key))
}

// SetRunJob links run id to its River job jobID, inserted after the run.
func (q *Queries) SetRunJob(ctx context.Context, db DBTX, id uuid.UUID, jobID int64) error {
	_, err := db.Exec(ctx, q.sql(setRunJobStmt), id, jobID)
	return err
}

// UnfinishedRunsOfSchedule returns the ids of a schedule's unfinished runs
// (by stored status), oldest first.
func (q *Queries) UnfinishedRunsOfSchedule(ctx context.Context, db DBTX, scheduleID uuid.UUID) ([]uuid.UUID, error) {
	rows, err := db.Query(ctx, q.sql(unfinishedOfScheduleStmt), scheduleID)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[uuid.UUID])
}
