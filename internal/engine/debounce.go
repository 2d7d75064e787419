package engine

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// debounceJoinStmt joins a start to the open debounce window of (type $1,
// key $2), if any: it locks the window's run, and when its River job has
// not been fetched yet (scheduled, or available) gives the run the input
// $3 and moves the job's time to $4 seconds from now, but no later than
// $5 seconds after the run was created ($5 = 0: no such bound). A job
// already due and available keeps its time: the window passed with no new
// start, and the run starts as it is, with the new input. When the job has
// been fetched (or held back, or ended), the window is closed instead
// (debounce_open false) and nothing else changes, and the caller opens a
// new one.
var debounceJoinStmt = define(`
WITH run AS (
    SELECT id, job_id, created_at FROM {s}workflow_runs
    WHERE workflow_type = $1 AND debounce_key = $2 AND debounce_open
    FOR UPDATE
),
job AS (
    UPDATE {s}river_job j
    SET scheduled_at = CASE WHEN j.state = 'scheduled' OR j.scheduled_at > coalesce($6::timestamptz, now())
        THEN CASE WHEN $5::float8 > 0
            THEN least(coalesce($6::timestamptz, now()) + make_interval(secs => $4::float8), run.created_at + make_interval(secs => $5::float8))
            ELSE coalesce($6::timestamptz, now()) + make_interval(secs => $4::float8) END
        ELSE j.scheduled_at END
    FROM run
    WHERE j.id = run.job_id AND j.state IN ('scheduled', 'available')
    RETURNING j.id, j.queue, j.scheduled_at, j.state::text
),
joined AS (
    UPDATE {s}workflow_runs r SET input = $3, updated_at = coalesce($6::timestamptz, now())
    FROM run, job WHERE r.id = run.id
    RETURNING r.id
),
closed AS (
    UPDATE {s}workflow_runs r SET debounce_open = false
    FROM run WHERE r.id = run.id AND NOT EXISTS (SELECT 1 FROM job)
    RETURNING r.id
)
SELECT run.id, job.id, job.queue, job.scheduled_at, job.state
FROM run LEFT JOIN job ON true`)

// DebounceJoin is the outcome of JoinDebounceTx.
type DebounceJoin struct {
	RunID uuid.UUID // the window's run; uuid.Nil when no window was open

	// Joined is true when the start joined the run: its job is JobID, in
	// Queue, due at ScheduledAt, and still Scheduled (false: available).
	// False with a RunID: the window had closed, and is closed now.
	Joined      bool
	JobID       int64
	Queue       string
	ScheduledAt time.Time
	Scheduled   bool
}

// JoinDebounceTx joins a start of type typ with debounce key key to the
// open window of that pair, within tx (see debounceJoinStmt): input
// becomes the run's, and its job's time moves to period from now, bounded
// by maxDelay after the run's first start (0: unbounded); now is the
// time it moves from (nil: the database's now()).
func (q *Queries) JoinDebounceTx(ctx context.Context, tx pgx.Tx, typ, key string, input []byte, period, maxDelay time.Duration, now *time.Time) (*DebounceJoin, error) {
	var (
		d           DebounceJoin
		jobID       *int64
		queue       *string
		scheduledAt *time.Time
		state       *string
	)
	err := tx.QueryRow(ctx, q.sql(debounceJoinStmt), typ, key, input, period.Seconds(), maxDelay.Seconds(), now).
		Scan(&d.RunID, &jobID, &queue, &scheduledAt, &state)
	if errors.Is(err, pgx.ErrNoRows) {
		return &d, nil
	}
	if err != nil {
		return nil, err
	}
	if jobID != nil {
		d.Joined, d.JobID, d.Queue, d.ScheduledAt = true, *jobID, *queue, *scheduledAt
		d.Scheduled = *state == "scheduled"
	}
	return &d, nil
}
