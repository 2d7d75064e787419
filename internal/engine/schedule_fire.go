package engine

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/tributary-go/tributary/internal/runmeta"
)

// The statements of a firing pass (schedule/fire.go): each is one round
// trip for a whole batch of slots, whatever its size.
var (
	// The schedules due by $1, oldest slot first, $2 at most, skipping
	// those another pass holds and those in $3 (given up on by this
	// pass). Read through schedules_next_fire.
	claimDueStmt = define(`
SELECT ` + scheduleColumns + ` FROM {s}schedules
WHERE NOT paused AND next_fire_at <= $1 AND id <> ALL(coalesce($3::uuid[], '{}'))
ORDER BY next_fire_at, id
LIMIT $2
FOR UPDATE SKIP LOCKED`)

	// Whether a schedule is due by $1, apart from those in $2: the
	// reconciler's check for broken chains, and the firing pass's for
	// due schedules that its SKIP LOCKED claim passed over.
	anyDueStmt = define(`
SELECT EXISTS (SELECT FROM {s}schedules WHERE NOT paused AND next_fire_at <= $1 AND id <> ALL(coalesce($2::uuid[], '{}')))`)

	// One row per schedule a batch fired: its next slot (NULL: the chain
	// ends), the slot fired, whether it started a run, whether the next
	// slot is a caught-up one, and a note to pause it with ('' for none).
	advanceStmt = define(`
UPDATE {s}schedules s
SET next_fire_at = v.next, last_fire_at = v.fired, run_count = s.run_count + v.ran, next_fire_catch_up = v.catch_up,
	paused = s.paused OR v.pause <> '',
	pause_note = CASE WHEN v.pause <> '' THEN v.pause ELSE s.pause_note END,
	paused_at = CASE WHEN v.pause <> '' AND NOT s.paused THEN coalesce($7::timestamptz, now()) ELSE s.paused_at END,
	updated_at = coalesce($7::timestamptz, now())
FROM unnest($1::uuid[], $2::timestamptz[], $3::timestamptz[], $4::bigint[], $5::boolean[], $6::text[])
	AS v(id, next, fired, ran, catch_up, pause)
WHERE s.id = v.id`)

	// The instants in $3 that have a fire job waiting, through River's
	// fetch index (state, queue, priority, scheduled_at).
	fireJobsAtStmt = define(`
SELECT DISTINCT scheduled_at FROM {s}river_job
WHERE state IN ('available', 'scheduled') AND queue = $2 AND priority = 1 AND scheduled_at = ANY($3::timestamptz[])
	AND kind = $1`)

	// Through workflow_runs_schedule_unfinished: a few rows per schedule
	// however long its history. A prepared slot's run (its job pending,
	// slot_prepared.go) has not started: it is not one of them.
	unfinishedRunsOfSchedulesStmt = define(`
SELECT id, schedule_id, status = 'pending' AND metadata ? '` + runmeta.KeyQueued + `' FROM {s}workflow_runs r
WHERE schedule_id = ANY($1::uuid[]) AND status IN ('pending', 'running', 'sleeping', 'waiting')
	AND ` + unstarted)

	lockRunsSkipLockedStmt = define(`
SELECT id FROM {s}workflow_runs
WHERE id = ANY($1::uuid[]) AND status IN ('pending', 'running', 'sleeping', 'waiting')
ORDER BY id
FOR NO KEY UPDATE SKIP LOCKED`)
)

// ClaimDueTx locks, until tx ends, the schedules that are not paused and
// whose next slot is due by bound, oldest slot first (then by id), limit
// at most. It skips those another transaction holds (FOR UPDATE SKIP
// LOCKED: passes running at once split the work) and those in excluded
// (nil for none).
func (q *Queries) ClaimDueTx(ctx context.Context, tx pgx.Tx, bound time.Time, limit int, excluded []uuid.UUID) ([]Schedule, error) {
	return scanSchedules(tx.Query(ctx, q.sql(claimDueStmt), bound, limit, excluded))
}

// AnyDue reports whether a schedule that is not paused is due by bound,
// apart from those in excluded (nil for none), whether or not another
// transaction holds it. It reads only due schedules (the partial index on
// next_fire_at), so its cost grows with them, not with all schedules.
func (q *Queries) AnyDue(ctx context.Context, db DBTX, bound time.Time, excluded []uuid.UUID) (bool, error) {
	var due bool
	err := queryRow(ctx, db, q.sql(anyDueStmt), bound, excluded).Scan(&due)
	return due, err
}

// AnyDueSQL is AnyDue's statement, for the benchmark that EXPLAINs it.
func (q *Queries) AnyDueSQL() string { return q.sql(anyDueStmt) }

// AdvanceParams are the columns of AdvanceSchedulesTx, one element per
// schedule, all of the same length.
type AdvanceParams struct {
	IDs [][16]byte
	// Next is each schedule's next slot; nil ends its chain.
	Next []*time.Time
	// Fired is the slot fired: the schedule's last_fire_at.
	Fired []time.Time
	// Ran is added to the schedule's run count: 1 when the slot started a
	// run, else 0.
	Ran []int64
	// CatchUp marks Next as the slot the "latest" catch-up policy jumped to.
	CatchUp []bool
	// Pause, when not "", pauses the schedule with this note.
	Pause []string
	// Now is the time recorded (updated, paused), one for all the
	// schedules; nil: the database's now().
	Now *time.Time
}

// AdvanceSchedulesTx moves each schedule of p to its next slot, in one
// statement, within the tx that fired (and holds) them.
func (q *Queries) AdvanceSchedulesTx(ctx context.Context, tx pgx.Tx, p *AdvanceParams) error {
	_, err := tx.Exec(ctx, q.sql(advanceStmt), p.IDs, p.Next, p.Fired, p.Ran, p.CatchUp, p.Pause, p.Now)
	return err
}

// FireJobsAt returns the instants of at that have a River job of kind
// waiting (available or scheduled) in queue at priority 1, scheduled at
// that very instant; each at most once.
func (q *Queries) FireJobsAt(ctx context.Context, db DBTX, kind, queue string, at []time.Time) ([]time.Time, error) {
	rows, err := db.Query(ctx, q.sql(fireJobsAtStmt), kind, queue, at)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[time.Time])
}

// UnfinishedRun is an unfinished run of a schedule.
type UnfinishedRun struct {
	ID         uuid.UUID
	ScheduleID uuid.UUID
	// Queued: the run is pending, held by overlap queue until its
	// predecessor finishes.
	Queued bool
}

// UnfinishedRunsOfSchedules returns the unfinished runs (pending, running,
// sleeping or waiting) of the schedules in ids, in no particular order.
// It locks nothing.
func (q *Queries) UnfinishedRunsOfSchedules(ctx context.Context, db DBTX, ids [][16]byte) ([]UnfinishedRun, error) {
	rows, err := db.Query(ctx, q.sql(unfinishedRunsOfSchedulesStmt), ids)
	if err != nil {
		return nil, err
	}
	var (
		out []UnfinishedRun
		r   UnfinishedRun
	)
	if _, err := pgx.ForEachRow(rows, []any{&r.ID, &r.ScheduleID, &r.Queued}, func() error {
		out = append(out, r)
		return nil
	}); err != nil {
		return nil, err
	}
	return out, nil
}

// LockRunsSkipLockedTx locks, until tx ends and in id order, those of the
// runs in ids that are unfinished and that no other transaction holds,
// and returns their ids (FOR NO KEY UPDATE SKIP LOCKED: it never waits).
func (q *Queries) LockRunsSkipLockedTx(ctx context.Context, tx pgx.Tx, ids []uuid.UUID) ([]uuid.UUID, error) {
	rows, err := tx.Query(ctx, q.sql(lockRunsSkipLockedStmt), ids)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[uuid.UUID])
}
