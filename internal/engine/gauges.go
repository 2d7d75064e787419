package engine

import (
	"context"

	"github.com/jackc/pgx/v5"
)

// The database gauges' reads (package tributaryotel), which any process may
// run at every metrics collection: each is written for an index or a small
// table, not a scan of the runs or of River's finished jobs, so that a
// collection stays cheap at millions of rows.
var (
	// oldestPendingAgeStmt reads the oldest pending run's age in seconds (0
	// when none is pending). Its ORDER BY follows workflow_runs_unfinished
	// (status, id DESC), so the plan reads the one index entry it needs
	// instead of sorting the pending runs; the ids are UUIDv7, so the
	// smallest is the oldest. A prepared slot's run (slot_prepared.go) is
	// dated at its slot, later than every pending run: with none but such
	// runs pending, the age is 0.
	oldestPendingAgeStmt = define(`SELECT greatest(coalesce(extract(epoch FROM now() - (
	SELECT created_at FROM {s}workflow_runs WHERE status = 'pending' ORDER BY status, id LIMIT 1)), 0), 0)::float8`)

	// countSchedulesStmt counts the schedules, active and paused: one row
	// per schedule, not per run.
	countSchedulesStmt = define(`SELECT count(*) FILTER (WHERE NOT paused), count(*) FILTER (WHERE paused) FROM {s}schedules`)

	// countRiverJobsStmt counts River's jobs in the states not finalized,
	// which River's fetching index (river_job_prioritized_fetching_index)
	// leads with: a plan can read those jobs alone, not the completed,
	// cancelled and discarded ones River keeps until its cleaner deletes
	// them.
	countRiverJobsStmt = define(`SELECT state::text, count(*) FROM {s}river_job
	WHERE state IN ('available', 'running', 'scheduled', 'retryable') GROUP BY 1`)
)

// OldestPendingAge is the number of seconds since the oldest pending run
// was created, 0 when no run is pending.
func (q *Queries) OldestPendingAge(ctx context.Context, db DBTX) (float64, error) {
	var age float64
	err := queryRow(ctx, db, q.sql(oldestPendingAgeStmt)).Scan(&age)
	return age, err
}

// CountSchedules counts the schedules that are active and those that are
// paused.
func (q *Queries) CountSchedules(ctx context.Context, db DBTX) (active, paused int64, err error) {
	err = queryRow(ctx, db, q.sql(countSchedulesStmt)).Scan(&active, &paused)
	return active, paused, err
}

// CountRiverJobs counts River's jobs in the states available, running,
// scheduled and retryable, by state; a state without jobs is absent.
func (q *Queries) CountRiverJobs(ctx context.Context, db DBTX) (map[string]int64, error) {
	rows, err := db.Query(ctx, q.sql(countRiverJobsStmt))
	if err != nil {
		return nil, err
	}
	byState := map[string]int64{}
	var (
		state string
		n     int64
	)
	if _, err := pgx.ForEachRow(rows, []any{&state, &n}, func() error {
		byState[state] = n
		return nil
	}); err != nil {
		return nil, err
	}
	return byState, nil
}
