package engine

import (
	"context"
	"time"

	"github.com/google/uuid"
)

// deleteExpiredRunsStmt deletes a batch of runs finished before their
// retention: $1 is the first run id of the completed runs' cutoff (run ids
// are UUIDv7, so the primary key reads the oldest runs first), $2 and $3 the
// cutoffs of completed (and skipped) and of failed (and cancelled) runs, a
// NULL cutoff keeping those forever, $4 the batch size.
//
// A finished child run whose parent has not taken its outcome yet (the
// parent's child step is still waiting: the parent is parked, or failed or
// was cancelled while waiting and may be retried) is kept: the parent reads
// the child's row when it resumes. The check is an index lookup on the
// parent's steps, for child runs only.
//
// The batch's rows are locked SKIP LOCKED: two passes at once (a new
// leader's while the old one's ends, an operator's call) take different
// rows instead of deadlocking on the same ones.
//
// So is a run among the latest keep_runs runs (by slot) of its schedule
// (schedule.Params.KeepRuns), a prepared slot's not counted
// (slot_prepared.go): for the runs of a schedule that keeps some, an index
// scan of its last keep_runs slots. Schedules are package
// schedule's; their table is created with the runs' by the same
// migrations, so it is always there.
var deleteExpiredRunsStmt = define(`
DELETE FROM {s}workflow_runs
WHERE id IN (
	SELECT r.id FROM {s}workflow_runs r
	WHERE r.id < $1
		AND ((r.status IN ('completed', 'skipped') AND r.finished_at < $2)
			OR (r.status IN ('failed', 'cancelled') AND r.finished_at < $3))
		AND NOT EXISTS (
			SELECT 1 FROM {s}step_runs s
			WHERE r.parent_run_id IS NOT NULL AND s.run_id = r.parent_run_id
				AND s.child_run_id = r.id AND s.status <> 'completed')
		AND NOT EXISTS (
			SELECT 1 FROM {s}schedules sc
			WHERE r.schedule_id IS NOT NULL AND sc.id = r.schedule_id AND sc.keep_runs > 0
				AND r.fire_at >= coalesce((
					SELECT x.fire_at FROM {s}workflow_runs x
					WHERE x.schedule_id = sc.id
						AND ` + unstartedOf("x") + `
					ORDER BY x.fire_at DESC OFFSET sc.keep_runs - 1 LIMIT 1), '-infinity'))
	ORDER BY r.id
	LIMIT $4
	FOR UPDATE OF r SKIP LOCKED
)`)

// DeleteExpiredRunsParams say which finished runs one batch deletes.
type DeleteExpiredRunsParams struct {
	// BeforeID bounds the batch to runs whose id is less than it: the
	// first id of the later of the two cutoffs' milliseconds.
	BeforeID uuid.UUID
	// CompletedBefore is the cutoff of completed and skipped runs, by
	// finish time; nil keeps them forever.
	CompletedBefore *time.Time
	// FailedBefore is the cutoff of failed and cancelled runs, by finish
	// time; nil keeps them forever.
	FailedBefore *time.Time
	// Limit is the batch size.
	Limit int
}

// DeleteExpiredRuns deletes one batch of at most p.Limit finished runs past
// their cutoff, oldest first, with their steps and signals, and returns how
// many it deleted. It never deletes an
// unfinished run, a finished child whose parent still waits for its
// outcome, or one of the latest runs its schedule keeps (keep_runs); rows
// locked by another transaction are skipped, not waited for.
func (q *Queries) DeleteExpiredRuns(ctx context.Context, db DBTX, p *DeleteExpiredRunsParams) (int, error) {
	tag, err := db.Exec(ctx, q.sql(deleteExpiredRunsStmt), p.BeforeID, p.CompletedBefore, p.FailedBefore, p.Limit)
	if err != nil {
		return 0, err
	}
	return int(tag.RowsAffected()), nil
}
