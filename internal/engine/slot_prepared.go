package engine

import (
	"context"
	"fmt"

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
var (
	promotePreparedStmt = define(`
WITH promoted AS (
	UPDATE {s}river_job SET state = 'available'
	WHERE id = ANY($1::bigint[]) AND state = 'pending'
	RETURNING id, queue
), notified AS (
	SELECT pg_notify(coalesce(nullif($2::text, ''), current_schema()) || '.' || $3::text, json_build_object('queue', q.queue)::text)
	FROM (SELECT DISTINCT queue FROM promoted) q
)
SELECT id FROM promoted WHERE (SELECT count(*) FROM notified) >= 0`)

	// Through workflow_runs_schedule_unfinished: the schedules' few
	// unfinished runs, of which only those whose job is pending go.
	dropPreparedStmt = define(`
WITH prepared AS (
	SELECT r.id, r.job_id FROM {s}workflow_runs r JOIN {s}river_job j ON j.id = r.job_id
	WHERE r.schedule_id = ANY($1::uuid[]) AND r.status = 'pending' AND j.state = 'pending'
), jobs AS (
	DELETE FROM {s}river_job WHERE id IN (SELECT job_id FROM prepared) AND state = 'pending'
	RETURNING id
), runs AS (
	DELETE FROM {s}workflow_runs WHERE id IN (SELECT p.id FROM prepared p JOIN jobs d ON d.id = p.job_id)
	RETURNING id
)
SELECT (SELECT count(*) FROM prepared), (SELECT count(*) FROM runs)`)
)

// unstarted is a condition on a run r of a schedule: that it is not a
// prepared slot's, which is not a run until its slot is decided (for the
// overlap policies, one that is not running, and not to be cancelled).
const unstarted = `NOT EXISTS (SELECT FROM {s}river_job pj WHERE pj.id = r.job_id AND pj.state = 'pending')`

// PromotePreparedTx makes the pending jobs jobIDs of prepared slots
// available, within tx, and tells their queues' producers (River's insert
// notification, on commit) so that they fetch at once. It returns the ids
// it promoted: a job that is no longer pending (promoted already, deleted)
// is left alone and left out.
func (q *Queries) PromotePreparedTx(ctx context.Context, tx pgx.Tx, jobIDs []int64) ([]int64, error) {
	rows, err := tx.Query(ctx, q.sql(promotePreparedStmt), jobIDs, q.schema, insertTopic)
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
