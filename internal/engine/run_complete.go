package engine

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// The statements that complete runs, and read how a run ended.
var (
	// completeRunsStmt is a batched statement, which runs with a generic
	// plan (see beginAttemptsStmt). It looks its runs up by the join
	// alone: with "r.id = ANY($2)" beside "r.id = v.run_id", Postgres 15
	// walked the whole array for each run of the batch, and a batch of 500
	// runs took 30 ms instead of 3.
	completeRunsStmt = define(`
WITH v AS (
	SELECT * FROM unnest($1::bigint[], $2::uuid[], $3::text[], $4::int[], $5::timestamptz[])
		AS v(job_id, run_id, output, attempt, started_at)
), ` + strings.ReplaceAll(CompleteRunningCTE, "$now", "$16") + `, done AS (
	UPDATE {s}workflow_runs r
	SET status = 'completed', output = v.output::jsonb, error = NULL, attempt = v.attempt,
		started_at = coalesce(r.started_at, v.started_at), updated_at = coalesce($16::timestamptz, now()), finished_at = coalesce($16::timestamptz, now())
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
	SELECT pg_notify('` + RunDoneChannel + `', done.id::text) FROM done
), commit_mode AS (
	SELECT CASE WHEN $6::boolean THEN set_config('synchronous_commit', 'off', true) END
)
SELECT v.job_id, jobs.id IS NOT NULL, jobs.finalized_at, done.id IS NOT NULL, done.parent_run_id, (SELECT count(*) FROM notified), (SELECT count(*) FROM commit_mode)
FROM v LEFT JOIN jobs ON jobs.id = v.job_id LEFT JOIN done ON done.id = v.run_id`)

	runOutcomeStmt = define(`SELECT status, output, error FROM {s}workflow_runs WHERE id = $1`)
)

// CompleteRunsParams are the runs to complete, each with its River job and
// output: the columns of an unnest, one element per run, in the order of
// the jobs' ids (see CompleteRuns).
type CompleteRunsParams struct {
	JobIDs     []int64
	RunIDs     [][16]byte // binary: see MemoBatch
	Outputs    []string   // JSON
	Attempts   []int32    // the attempt that completed each run
	StartedAts []*time.Time

	// Async turns synchronous_commit off for the caller's transaction.
	Async bool

	// Now is the time recorded (the runs' and jobs' finish); nil: the
	// database's now().
	Now *time.Time

	// Memos are step records to store with the runs that complete: those
	// their attempts left unsaved.
	Memos MemoBatch
}

// CompletedRun is what CompleteRuns did with one job of its batch.
type CompletedRun struct {
	JobID int64

	// JobCompleted says the job was running and is completed now; a job
	// that is not (rescued, cancelled, completed by River's completer) is
	// left alone, and so is its run.
	JobCompleted bool

	// FinalizedAt is the completed job's finalized_at; nil when the job was
	// not completed.
	FinalizedAt *time.Time

	// RunCompleted says the run was unfinished and is completed now; a run
	// finished meanwhile (cancelled, say) keeps its ending.
	RunCompleted bool

	// ParentID is the parent of a child run completed now, which the
	// caller must wake in the same transaction; nil for others.
	ParentID *uuid.UUID
}

// CompleteRuns completes runs and their River jobs in one statement: it
// makes the state change river.JobCompleteTx makes (state completed,
// finalized_at set, only if the job is still running: River's "if
// running" rule, CompleteRunningCTE) for every job, completes the runs
// whose job it completed, stores p.Memos of those runs (under the run's
// row lock from the update, which stands in for the key-share lock the
// other statements that write steps take), and NOTIFYs RunDoneChannel for
// each run completed. With p.Async, it turns synchronous_commit off for its
// transaction. It returns one CompletedRun per job, in no particular order.
//
// Two batches holding the same runs lock them in the order of p.JobIDs:
// the jobs' primary-key scan locks them in id order anyway, and the runs
// follow it too when the caller sorts the batch by job id, so that such
// batches do not deadlock.
func (q *Queries) CompleteRuns(ctx context.Context, db DBTX, p *CompleteRunsParams) ([]CompletedRun, error) {
	args := append([]any{p.JobIDs, p.RunIDs, p.Outputs, p.Attempts, p.StartedAts, p.Async}, p.Memos.args()...)
	args = append(args, p.Now)
	rows, err := db.Query(ctx, q.sql(completeRunsStmt), args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	completed := make([]CompletedRun, 0, len(p.JobIDs))
	var c CompletedRun
	for rows.Next() {
		if err := rows.Scan(&c.JobID, &c.JobCompleted, &c.FinalizedAt, &c.RunCompleted, &c.ParentID, nil, nil); err != nil {
			return nil, err
		}
		completed = append(completed, c)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return completed, nil
}

// RunOutcome is how a run stands: its stored status, and its output and
// error (a RunError's JSON), nil while it has none.
type RunOutcome struct {
	Status string
	Output []byte
	Error  []byte
}

// RunOutcomeByID reads a run's RunOutcome (its stored status: the River
// job is not joined); ErrNotFound when there is no such run.
func (q *Queries) RunOutcomeByID(ctx context.Context, db DBTX, id uuid.UUID) (*RunOutcome, error) {
	var o RunOutcome
	err := queryRow(ctx, db, q.sql(runOutcomeStmt), id).Scan(&o.Status, &o.Output, &o.Error)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	return &o, nil
}
