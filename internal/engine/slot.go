package engine

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/tributary-go/tributary/internal/runmeta"
)

// The statements that start the runs of one schedule's slots outside a
// firing pass: a trigger, a backfill, a resume (schedule/ops.go), and a
// slot a failed batch fires alone.
var (
	// ScheduleByIDForUpdate, after locking the schedule's unfinished runs
	// when runs are to start under overlap replace ($2, or the schedule's
	// own policy when $2 is ''), which cancels them: a finishing run's
	// status trigger locks the run, then the schedule, and the other order
	// deadlocks. One round trip: the runs' subquery runs before the
	// schedule's row is locked.
	lockScheduleToStartStmt = define(`
WITH runs AS (
	SELECT r.id FROM {s}workflow_runs r
	WHERE r.schedule_id = $1 AND r.status IN ('pending', 'running', 'sleeping', 'waiting') AND ` + unstarted + `
		AND coalesce(nullif($2, ''), (SELECT overlap_policy FROM {s}schedules WHERE id = $1)) = 'replace'
	ORDER BY r.id FOR NO KEY UPDATE OF r
)
SELECT ` + scheduleColumns + ` FROM {s}schedules WHERE id = $1 AND (SELECT count(*) FROM runs) >= 0 FOR UPDATE`)

	scheduleRunsUnfinishedStmt = define(`
SELECT
	EXISTS (SELECT 1 FROM {s}workflow_runs r WHERE schedule_id = $1 AND status IN ('pending', 'running', 'sleeping', 'waiting') AND NOT metadata ? '` + runmeta.KeyQueued + `'
		AND ` + unstarted + `),
	EXISTS (SELECT 1 FROM {s}workflow_runs WHERE schedule_id = $1 AND status = 'pending' AND metadata ? '` + runmeta.KeyQueued + `')`)

	// The slots in $2 that have their run (or skip record) already. A
	// plain read: it never waits for a run that is finishing (see
	// startSlotsTx).
	slotsWithRunsStmt = define(`SELECT fire_at FROM {s}workflow_runs WHERE schedule_id = $1 AND fire_at = ANY($2)`)

	// The skip records of slots a backfill runs again (RerunSkipped).
	deleteSkippedSlotsStmt = define(`
DELETE FROM {s}workflow_runs WHERE schedule_id = $1 AND fire_at = ANY($2) AND status = 'skipped'
RETURNING fire_at, coalesce(skip_reason, '')`)

	addScheduleRunsStmt = define(`UPDATE {s}schedules SET run_count = run_count + $2, updated_at = coalesce($3::timestamptz, now()) WHERE id = $1`)

	countScheduleRunStmt = define(`UPDATE {s}schedules SET run_count = run_count + 1, updated_at = coalesce($2::timestamptz, now()) WHERE id = $1`)
)

// LockScheduleToStartTx locks schedule id until tx ends, to start runs of
// it under the overlap policy override, or the schedule's own when
// override is "", and returns it; ErrNotFound when there is none. Under
// "replace", which cancels the schedule's unfinished runs, it locks those
// runs first: a finishing run's status trigger locks the run, then the
// schedule, and taking them in the other order deadlocks.
func (q *Queries) LockScheduleToStartTx(ctx context.Context, tx pgx.Tx, id uuid.UUID, override string) (*Schedule, error) {
	return scanOneSchedule(tx.QueryRow(ctx, q.sql(lockScheduleToStartStmt), id, override))
}

// ScheduleRunsUnfinished reports whether schedule id has an unfinished run
// (pending, running, sleeping or waiting) that overlap queue does not hold
// (busy), and whether it has one that it holds (queued).
func (q *Queries) ScheduleRunsUnfinished(ctx context.Context, db DBTX, id uuid.UUID) (busy, queued bool, err error) {
	err = queryRow(ctx, db, q.sql(scheduleRunsUnfinishedStmt), id).Scan(&busy, &queued)
	return busy, queued, err
}

// SlotsWithRuns returns the slots of at for which schedule id has a run or
// a skip record already. A plain read: it never waits for a run that is
// finishing.
func (q *Queries) SlotsWithRuns(ctx context.Context, db DBTX, id uuid.UUID, at []time.Time) ([]time.Time, error) {
	rows, err := db.Query(ctx, q.sql(slotsWithRunsStmt), id, at)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[time.Time])
}

// SkippedSlot is a slot's skip record that DeleteSkippedSlotsTx deleted.
type SkippedSlot struct {
	FireAt time.Time
	Reason string
}

// DeleteSkippedSlotsTx deletes the skip records of schedule id's slots in
// at, so that runs can take their place in the same tx, and returns what
// they were.
func (q *Queries) DeleteSkippedSlotsTx(ctx context.Context, tx pgx.Tx, id uuid.UUID, at []time.Time) ([]SkippedSlot, error) {
	rows, err := tx.Query(ctx, q.sql(deleteSkippedSlotsStmt), id, at)
	if err != nil {
		return nil, err
	}
	var (
		out []SkippedSlot
		s   SkippedSlot
	)
	if _, err := pgx.ForEachRow(rows, []any{&s.FireAt, &s.Reason}, func() error {
		out = append(out, s)
		return nil
	}); err != nil {
		return nil, err
	}
	return out, nil
}

// AddScheduleRunsTx adds n to schedule id's run count, in the tx that
// started the runs, updated at now (nil: the database's now()).
func (q *Queries) AddScheduleRunsTx(ctx context.Context, tx pgx.Tx, id uuid.UUID, n int, now *time.Time) error {
	_, err := tx.Exec(ctx, q.sql(addScheduleRunsStmt), id, n, now)
	return err
}

// CountScheduleRunTx adds one to schedule id's run count, in the tx that
// started the run, updated at now (nil: the database's now()).
func (q *Queries) CountScheduleRunTx(ctx context.Context, tx pgx.Tx, id uuid.UUID, now *time.Time) error {
	_, err := tx.Exec(ctx, q.sql(countScheduleRunStmt), id, now)
	return err
}
