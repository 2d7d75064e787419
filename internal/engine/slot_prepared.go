package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// A prepared slot is a schedule slot whose run was inserted ahead of its
// time: its run row is pending and its River job is in River's pending
// state (InsertOpts.Pending), scheduled at the slot, unique on (schedule,
// slot) like any slot's. River never moves a pending job by itself: no
// producer fetches it, no scheduler promotes it, no maintenance service
// touches it (TestRiverLeavesPendingJobsAlone). Only the firing pass makes
// it available, at its slot, once it has decided the slot as it decides
// any (PromotePreparedTx); a slot it decides otherwise (skipped, held by
// an overlap policy) has its prepared run dropped first (DropPreparedTx)
// and is recorded as one that was never prepared. So the decision stays at
// the slot's time, and what is saved is the inserting.
//
// The statements that look prepared jobs up by id test their state as
// "(state = 'pending') IS TRUE", which no index serves, so that the planner
// keeps to the primary key: on a stale estimate of the pending jobs (a
// CreateMany of 100,000 schedules just before their slot), it hashed every
// pending job through river_job_tributary_pending to find a batch's 1,000,
// 69 ms a promotion instead of 15 (the idiom of beginAttemptsStmt).
var (
	// A slot decided under a recording tracer has its decision span's trace
	// context ($4, '' for none) added to its run's metadata and to its
	// job's, when the job carries the run's start inline (workflow's
	// runArgs: the text "start", or "input" and "metadata" in a job written
	// before it), so that the run's attempts link to the span as they do
	// for a slot started at its time.
	promotePreparedStmt = define(`
WITH v AS (
	SELECT * FROM unnest($1::bigint[], $4::text[]) AS v(id, trace)
), promoted AS (
	UPDATE {s}river_job j SET state = 'available', metadata = j.metadata - 'tributary_prepared_slot',
		args = CASE WHEN v.trace = '' THEN j.args
			WHEN j.args ? 'start' THEN jsonb_set(j.args, '{start}', to_jsonb(jsonb_set((j.args->>'start')::jsonb, '{metadata}',
				coalesce((j.args->>'start')::jsonb->'metadata', '{}') || jsonb_build_object('otel', v.trace::jsonb))::text))
			WHEN j.args ? 'input' THEN jsonb_set(j.args, '{metadata}', coalesce(j.args->'metadata', '{}') || jsonb_build_object('otel', v.trace::jsonb))
			ELSE j.args END
	FROM v
	WHERE j.id = v.id AND (j.state = 'pending') IS TRUE
	RETURNING j.id, j.queue, v.trace, j.args->>'run_id' AS run_id
), traced AS (
	UPDATE {s}workflow_runs r SET metadata = r.metadata || jsonb_build_object('otel', p.trace::jsonb)
	FROM promoted p
	WHERE p.trace <> '' AND r.id = p.run_id::uuid
	RETURNING r.id
), notified AS (
	SELECT pg_notify(coalesce(nullif($2::text, ''), current_schema()) || '.' || $3::text, json_build_object('queue', q.queue)::text)
	FROM (SELECT DISTINCT queue FROM promoted) q
)
SELECT id FROM promoted WHERE (SELECT count(*) FROM notified) >= 0 AND (SELECT count(*) FROM traced) >= 0`)

	// Through workflow_runs_schedule_unfinished: the schedules' few
	// unfinished runs, of which only those whose job is pending go.
	dropPreparedStmt = define(preparedWhere(`r.schedule_id = ANY($1::uuid[])`) + dropPreparedCTEs + `
SELECT (SELECT count(*) FROM prepared), (SELECT count(*) FROM dropped_runs)`)
)

// preparedWhere is the CTE "prepared" (id, job_id) of the prepared slots'
// runs r that cond selects: pending, with a pending job.
func preparedWhere(cond string) string {
	return `WITH prepared AS (
	SELECT r.id, r.job_id FROM {s}workflow_runs r JOIN {s}river_job j ON j.id = r.job_id
	WHERE ` + cond + ` AND r.status = 'pending' AND (j.state = 'pending') IS TRUE
)`
}

// dropPreparedCTEs follow preparedWhere: they delete the prepared runs'
// jobs that are still pending, then those runs (dropped_runs, their ids),
// so that a job promoted meanwhile keeps its run.
const dropPreparedCTEs = `, dropped_jobs AS (
	DELETE FROM {s}river_job WHERE id IN (SELECT job_id FROM prepared) AND (state = 'pending') IS TRUE
	RETURNING id
), dropped_runs AS (
	DELETE FROM {s}workflow_runs WHERE id IN (SELECT p.id FROM prepared p JOIN dropped_jobs d ON d.id = p.job_id)
	RETURNING id
)`

// unstartedOf is a condition on a run of a schedule, named alias: that it
// is not a prepared slot's, which is not a run until its slot is decided
// (for the overlap policies, one that is not running, and not to be
// cancelled; for keep_runs, not one of the runs kept). unstarted is it for
// alias r.
func unstartedOf(alias string) string {
	return `NOT EXISTS (SELECT FROM {s}river_job pj WHERE pj.id = ` + alias + `.job_id AND (pj.state = 'pending') IS TRUE)`
}

var unstarted = unstartedOf("r")

// readyBacklogStmt: whether a River job of any queue has been ready for
// at least $1 seconds by $2 (NULL: the database's now()) and is still not
// fetched. It reads the ready jobs' part of River's fetching index (state,
// queue, priority, scheduled_at) in that order and stops at the first job
// ready long enough: with no backlog it reads the ready jobs, all made
// ready in the last $1 seconds; with one, it stops at the first such job,
// having read at most the newer ready jobs of the queues before it.
var readyBacklogStmt = define(`
SELECT EXISTS (SELECT FROM {s}river_job
	WHERE state = 'available' AND scheduled_at < coalesce($2::timestamptz, now()) - make_interval(secs => $1))`)

// ReadyBacklog reports whether a River job of any queue has waited at
// least wait for a worker, by now (nil: the database's now()): the
// database's workers are behind, as in a burst of schedule slots.
func (q *Queries) ReadyBacklog(ctx context.Context, db DBTX, wait time.Duration, now *time.Time) (bool, error) {
	var behind bool
	err := queryRow(ctx, db, q.sql(readyBacklogStmt), wait.Seconds(), now).Scan(&behind)
	return behind, err
}

// PromotePreparedTx makes the pending jobs jobIDs of prepared slots
// available, within tx, and tells their queues' producers (River's insert
// notification, on commit) so that they fetch at once. traces are the
// slots' decision spans' trace contexts, a JSON object or "" each (nil for
// none), added to their runs' metadata. It returns the ids it promoted: a
// job that is no longer pending (promoted already, deleted) is left alone
// and left out.
func (q *Queries) PromotePreparedTx(ctx context.Context, tx pgx.Tx, jobIDs []int64, traces []string) ([]int64, error) {
	if traces == nil {
		traces = make([]string, len(jobIDs))
	}
	rows, err := tx.Query(ctx, q.sql(promotePreparedStmt), jobIDs, q.schema, insertTopic, traces)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[int64])
}

// DropPreparedTx deletes the prepared slots of the schedules ids (their
// runs that are pending with a pending job, and those jobs), within tx, and
// returns how many runs it deleted. Every change to a schedule that its
// prepared slot may no longer match (an update, a pause, a resume, a
// deletion) drops it, and the slot is decided and started at its time as
// one that was never prepared.
func (q *Queries) DropPreparedTx(ctx context.Context, tx pgx.Tx, ids [][16]byte) (int, error) {
	var found, runs int
	if err := tx.QueryRow(ctx, q.sql(dropPreparedStmt), ids).Scan(&found, &runs); err != nil {
		return 0, err
	}
	if runs != found {
		return 0, fmt.Errorf("dropped %d of %d prepared runs: a prepared job changed state meanwhile", runs, found)
	}
	return runs, nil
}

// The prepared slots that a firing passed over: their job is still pending
// past their slot, and their schedule has moved past it, or is paused, or
// is gone (schedule_id NULL). Only a client of a version before prepared
// slots does that (it takes the prepared run for the slot's run, and
// advances); every firing of this version promotes or drops the prepared
// run in the transaction that advances the schedule. Through
// river_job_tributary_pending (migration 024): the overdue pending jobs
// only, not every prepared slot. Each job's run is looked up by the run id
// its args carry, one index probe a job, in a lateral subquery the planner
// cannot turn into a join: as a join, the planner (which estimates the
// overdue jobs from a histogram that river_job's finished jobs fill) hashed
// them and read every run of workflow_runs (20 ms over 100,000 runs, and
// so on with the table; 6 ms for 1,000 slots passed over, this way).
var passedOverStmt = define(`
SELECT j.id, r.id, s.id IS NOT NULL AND NOT s.paused AND (s.next_fire_at IS NULL OR s.next_fire_at > r.fire_at)
FROM {s}river_job j
CROSS JOIN LATERAL (
	SELECT r.id, r.fire_at, r.schedule_id FROM {s}workflow_runs r
	WHERE r.id = (j.args->>'run_id')::uuid AND r.job_id = j.id AND r.status = 'pending'
	LIMIT 1
) r
LEFT JOIN {s}schedules s ON s.id = r.schedule_id
WHERE j.state = 'pending' AND j.kind LIKE 'workflow:%' AND j.scheduled_at < $1
	AND (s.id IS NULL OR s.paused OR s.next_fire_at IS NULL OR s.next_fire_at > r.fire_at)
ORDER BY j.scheduled_at
LIMIT 1000`)

// PassedOver is a prepared slot that a firing passed over (PassedOverTx).
type PassedOver struct {
	JobID int64
	RunID uuid.UUID
	// Started is true when the schedule moved past the slot, live: the
	// client that fired it took it as started. False: the schedule is
	// paused or gone, and the slot did not start.
	Started bool
}

// PassedOverTx reads, within tx, the prepared slots whose job is pending
// since before due and that a firing passed over (passedOverStmt), at
// most 1,000.
func (q *Queries) PassedOverTx(ctx context.Context, tx pgx.Tx, due time.Time) ([]PassedOver, error) {
	rows, err := tx.Query(ctx, q.sql(passedOverStmt), due)
	if err != nil {
		return nil, err
	}
	var (
		out []PassedOver
		p   PassedOver
	)
	_, err = pgx.ForEachRow(rows, []any{&p.JobID, &p.RunID, &p.Started}, func() error {
		out = append(out, p)
		return nil
	})
	return out, err
}

// dropRunsStmt deletes prepared runs $1 and their pending jobs.
var dropRunsStmt = define(preparedWhere(`r.id = ANY($1::uuid[])`) + dropPreparedCTEs + `
SELECT count(*) FROM dropped_runs`)

// DropPreparedRunsTx deletes, within tx, the prepared runs ids whose job
// is still pending, with those jobs, and returns how many runs it deleted.
func (q *Queries) DropPreparedRunsTx(ctx context.Context, tx pgx.Tx, ids []uuid.UUID) (int, error) {
	var n int
	err := tx.QueryRow(ctx, q.sql(dropRunsStmt), ids).Scan(&n)
	return n, err
}
