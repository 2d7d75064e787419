package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

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

// RunIDSlack is how far past the present the statements that read runs
// below the present by their ids (listings, counts, the repair) reach. A
// run's id is a UUIDv7 made by the clock of the process that started it,
// so a run started on a clock up to RunIDSlack ahead is read at once (one
// further ahead, once the reader's clock reaches its id). Only a prepared
// slot's run is dated later on purpose, at its slot, and it is not a run
// until then; every schedule has one, dated after every other run.
const RunIDSlack = 10 * time.Second

// runIDSlackSQL is RunIDSlack as an SQL interval.
var runIDSlackSQL = fmt.Sprintf("interval '%d milliseconds'", RunIDSlack.Milliseconds())

// idFloorSQL is the SQL of the smallest UUIDv7 of the millisecond of at,
// an SQL expression of a timestamptz: run ids are UUIDv7s, so a run
// created before at has a smaller id, and a bound on r.id keeps an index
// scan of runs from reading those created later, as the runs of prepared
// slots are dated (at their slots).
func idFloorSQL(at string) string {
	return `encode(overlay(uuid_send('00000000-0000-7000-8000-000000000000') PLACING substring(int8send((extract(epoch FROM ` +
		at + `) * 1000)::bigint) FROM 3 FOR 6) FROM 1 FOR 6), 'hex')::uuid`
}

// The run repair's reads, and the changes with which an operator's control
// (Cancel, Retry) and the repair put a run back on a job or stop it.
var (
	// A prepared slot's run (slot_prepared.go), dated at its slot, is
	// left out until then: every schedule has one, and the repair read
	// them all each pass, with their jobs (78 ms over 100,000).
	brokenRunsStmt = define(brokenRunsSQL + `
	AND r.id < ` + idFloorSQL(`greatest(now(), coalesce($2::timestamptz, now())) + `+runIDSlackSQL) + `
	AND r.updated_at < coalesce($2::timestamptz, now()) - make_interval(secs => $1)
	AND (j.id IS NULL OR j.finalized_at < coalesce($2::timestamptz, now()) - make_interval(secs => $1))
LIMIT 1000`)

	brokenRunsOfStmt = define(brokenRunsSQL + `
	AND r.id = ANY($1)`)

	requestCancelStmt = define(`UPDATE {s}workflow_runs SET cancel_requested_at = coalesce(cancel_requested_at, $2::timestamptz, now()), updated_at = coalesce($2::timestamptz, now()) WHERE id = $1`)

	resetForRetryStmt = define(`
UPDATE {s}workflow_runs
SET status = 'pending', error = NULL, cancel_requested_at = NULL, finished_at = NULL, updated_at = coalesce($3::timestamptz, now()),
	job_id = coalesce($2, job_id)
WHERE id = $1`)
)

// BrokenRun is an unfinished run whose River job ended outside Tributary
// or is gone, with what the job's row says about how it ended.
type BrokenRun struct {
	ID          uuid.UUID
	JobID       int64
	JobState    *string // nil when the job is gone
	LastError   []byte  // the job's last AttemptError as JSON, or nil
	Attempt     int     // the job's attempts (0 when it is gone)
	MaxAttempts int     // the job's maximum attempts (0 when it is gone)
	AttemptBase int     // the attempts of the run's earlier jobs (the job's attempt_base arg)
}

// BrokenRuns finds at most 1000 unfinished runs whose River job was
// discarded, cancelled or completed, or was deleted, leaving alone any run
// updated, or whose job was finalized, within grace: an attempt that is
// finishing normally is not raced (before now; nil: the database's now()).
// Its cost grows with the number of unfinished runs, which it reads
// through an index on status.
func (q *Queries) BrokenRuns(ctx context.Context, db DBTX, grace time.Duration, now *time.Time) ([]*BrokenRun, error) {
	return scanBrokenRuns(db.Query(ctx, q.sql(brokenRunsStmt), grace.Seconds(), now))
}

// BrokenRunsOf is BrokenRuns for the runs ids, without a grace.
func (q *Queries) BrokenRunsOf(ctx context.Context, db DBTX, ids []uuid.UUID) ([]*BrokenRun, error) {
	return scanBrokenRuns(db.Query(ctx, q.sql(brokenRunsOfStmt), ids))
}

func scanBrokenRuns(rows pgx.Rows, err error) ([]*BrokenRun, error) {
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (*BrokenRun, error) {
		var b BrokenRun
		err := row.Scan(&b.ID, &b.JobID, &b.JobState, &b.LastError, &b.Attempt, &b.MaxAttempts, &b.AttemptBase)
		return &b, err
	})
}

// RequestCancelTx records that the cancellation of run id was requested
// at now, nil for the database's now() (keeping the time of an earlier
// request), for its running attempt to see; it changes nothing when there
// is no such run.
func (q *Queries) RequestCancelTx(ctx context.Context, tx pgx.Tx, id uuid.UUID, now *time.Time) error {
	_, err := tx.Exec(ctx, q.sql(requestCancelStmt), id, now)
	return err
}

// ResetForRetryTx makes run id pending again on River job jobID, clearing
// its error, its finish and any cancellation request, updated at now (nil:
// the database's now()); it changes nothing when there is no such run. The
// caller inserted the job in tx.
func (q *Queries) ResetForRetryTx(ctx context.Context, tx pgx.Tx, id uuid.UUID, jobID int64, now *time.Time) error {
	_, err := tx.Exec(ctx, q.sql(resetForRetryStmt), id, jobID, now)
	return err
}
