package engine

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// The overview's counts (CountRuns) and failures (ListFailures). Each
// reads an index that follows what it counts, not the table's size.
var (
	// countInFlightStmt counts the unfinished runs by stored status, from
	// workflow_runs_unfinished alone, those with ids below the first id
	// of the time $1 (idFloorSQL): a prepared slot's run (slot_prepared.go) is dated
	// at its slot, and every schedule has one. The pending ones leave out
	// the prepared runs below it too, counted from River's pending jobs of
	// workflow kinds scheduled (at their slots) before $1, which only they
	// have, through river_job_tributary_pending. Both counts read the
	// slots of the next 10 s at most, not every schedule's next one (73 ms
	// over 100,000 daily schedules, measured, before the bound).
	countInFlightStmt = define(`
SELECT status, count(*) - CASE WHEN status = 'pending'
	THEN (SELECT count(*) FROM {s}river_job WHERE state = 'pending' AND scheduled_at < $1 AND kind LIKE 'workflow:%') ELSE 0 END
FROM {s}workflow_runs
WHERE status IN ('pending', 'running', 'sleeping', 'waiting') AND id < ` + idFloorSQL(`$1::timestamptz`) + `
GROUP BY status`)

	// countRunningJobsStmt counts the unfinished runs stored as pending,
	// sleeping or waiting whose River job is running right now (which reads
	// them as running), from the running jobs: River's state index finds
	// them, and their args name the run.
	countRunningJobsStmt = define(`
SELECT r.status, count(*)
FROM {s}river_job j
JOIN {s}workflow_runs r ON r.id = (j.args->>'run_id')::uuid AND r.job_id = j.id
WHERE j.state = 'running' AND j.args ? 'run_id' AND r.status IN ('pending', 'sleeping', 'waiting')
GROUP BY r.status`)

	// countRecentStmt counts, by status, the newest $2 runs created since
	// $1 (the first id of that millisecond), read through the primary key.
	countRecentStmt = define(`
SELECT CASE WHEN r.status IN ('pending', 'sleeping', 'waiting') AND j.state = 'running' THEN 'running' ELSE r.status END, count(*)
FROM (
	SELECT w.id, w.status, w.job_id FROM {s}workflow_runs w
	WHERE w.id >= $1 AND w.id < $3 AND (w.status <> 'pending' OR ` + unstartedOf("w") + `)
	ORDER BY w.id DESC LIMIT $2
) r
LEFT JOIN {s}river_job j ON j.id = r.job_id
GROUP BY 1`)

	countFailedSinceStmt = define(`SELECT count(*) FROM {s}workflow_runs WHERE status = 'failed' AND finished_at >= $1`)

	// listFailedSinceStmt lists the failed runs since $1 through
	// workflow_runs_failed (007).
	listFailedSinceStmt = define(`
SELECT ` + runReadColumns + runReadFrom + `
WHERE r.status = 'failed' AND r.finished_at >= $1
ORDER BY r.finished_at DESC, r.id DESC
LIMIT $2`)
)

// CountUnfinished counts the unfinished runs (pending, running, sleeping,
// waiting) by stored status, those created before to (by their ids),
// prepared slots' runs left out: a run whose River job is
// running but that is stored as pending, sleeping or waiting counts in its
// stored status (see CountRunningJobs). A status without runs is absent.
func (q *Queries) CountUnfinished(ctx context.Context, db DBTX, to time.Time) (map[string]int64, error) {
	return countByStatus(db.Query(ctx, q.sql(countInFlightStmt), to))
}

// CountRunningJobs counts, by stored status, the runs stored as pending,
// sleeping or waiting whose River job is running right now, which read as
// running.
func (q *Queries) CountRunningJobs(ctx context.Context, db DBTX) (map[string]int64, error) {
	return countByStatus(db.Query(ctx, q.sql(countRunningJobsStmt)))
}

// CountRecent counts, by the status they read as (a run whose job is
// running reads running), the newest limit runs whose id is at least
// fromID and less than toID, prepared slots' runs left out.
func (q *Queries) CountRecent(ctx context.Context, db DBTX, fromID, toID uuid.UUID, limit int) (map[string]int64, error) {
	return countByStatus(db.Query(ctx, q.sql(countRecentStmt), fromID, limit, toID))
}

// CountFailedSince counts the runs that failed at or after since.
func (q *Queries) CountFailedSince(ctx context.Context, db DBTX, since time.Time) (int64, error) {
	var n int64
	err := queryRow(ctx, db, q.sql(countFailedSinceStmt), since).Scan(&n)
	return n, err
}

// ListFailedSince lists the runs that failed at or after since, the latest
// failure first, at most limit, read with their River jobs joined.
func (q *Queries) ListFailedSince(ctx context.Context, db DBTX, since time.Time, limit int) ([]*Run, error) {
	return scanRuns(db.Query(ctx, q.sql(listFailedSinceStmt), since, limit))
}

// countByStatus reads rows of (status, count) into a map, and closes rows.
func countByStatus(rows pgx.Rows, err error) (map[string]int64, error) {
	if err != nil {
		return nil, err
	}
	counts := map[string]int64{}
	var (
		status string
		n      int64
	)
	_, err = pgx.ForEachRow(rows, []any{&status, &n}, func() error {
		counts[status] += n
		return nil
	})
	if err != nil {
		return nil, err
	}
	return counts, nil
}
