package engine

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// The statements of schedule declarations (schedule.Client.Declare).
var (
	insertDeclarationStmt = define(`
INSERT INTO {s}schedule_declarations (service, version) VALUES ($1, 0) ON CONFLICT (service) DO NOTHING`)

	lockDeclarationStmt = define(`SELECT version FROM {s}schedule_declarations WHERE service = $1 FOR UPDATE`)

	setDeclarationStmt = define(`
UPDATE {s}schedule_declarations SET version = $2, schedules = $3, declared_at = coalesce($4::timestamptz, now()) WHERE service = $1`)

	// The schedules a declaration may change, and those it must not take
	// over, in id order.
	// Two indexed reads (an OR of the two would scan every schedule).
	declaredSchedulesStmt = define(`
SELECT ` + scheduleColumns + ` FROM {s}schedules
WHERE id IN (
	SELECT id FROM {s}schedules WHERE declared_by = $1
	UNION
	SELECT s.id FROM {s}schedules s JOIN unnest($2::text[], $3::text[]) AS k(k_owner, k_key)
		ON s.owner = k.k_owner AND s.key = k.k_key)
ORDER BY id`)

	// A schedule paused already keeps its pause (note and time): its
	// paused_at equals undeclared_at only when the declaration paused it.
	undeclareSchedulesStmt = define(`
UPDATE {s}schedules SET paused = true, pause_note = CASE WHEN paused THEN pause_note ELSE $2 END, next_fire_at = NULL,
	paused_at = CASE WHEN paused THEN paused_at ELSE coalesce($3::timestamptz, now()) END, undeclared_at = coalesce($3::timestamptz, now()),
	updated_at = coalesce($3::timestamptz, now())
WHERE id = ANY($1)`)

	redeclareSchedulesStmt = define(`UPDATE {s}schedules SET undeclared_at = NULL, updated_at = coalesce($2::timestamptz, now()) WHERE id = ANY($1)`)
)

// LockDeclarationTx locks service's declaration row until tx ends, making
// it first when the service has none, and returns the version of the
// newest declaration applied (0 for a new service). Declarations of one
// service take turns on this lock.
func (q *Queries) LockDeclarationTx(ctx context.Context, tx pgx.Tx, service string) (int64, error) {
	if _, err := tx.Exec(ctx, q.sql(insertDeclarationStmt), service); err != nil {
		return 0, err
	}
	var version int64
	err := tx.QueryRow(ctx, q.sql(lockDeclarationStmt), service).Scan(&version)
	return version, err
}

// SetDeclarationTx records that service's declaration of version, of n
// schedules, is applied at now (nil: the database's now()). The caller
// holds the row's lock (LockDeclarationTx).
func (q *Queries) SetDeclarationTx(ctx context.Context, tx pgx.Tx, service string, version int64, n int, now *time.Time) error {
	_, err := tx.Exec(ctx, q.sql(setDeclarationStmt), service, version, n, now)
	return err
}

// DeclaredSchedules reads the schedules service declared and those whose
// (owner, key) is one of (owners[i], keys[i]), in id order, without
// locking them; an empty, non-nil slice when there are none.
func (q *Queries) DeclaredSchedules(ctx context.Context, db DBTX, service string, owners, keys []string) ([]Schedule, error) {
	return scanSchedules(db.Query(ctx, q.sql(declaredSchedulesStmt), service, owners, keys))
}

// UndeclareSchedulesTx pauses the schedules ids with note (a schedule
// paused already keeps its note and paused_at) and marks them no longer
// declared (undeclared_at, equal to paused_at when this paused them), at
// now (nil: the database's now()). The caller holds their locks.
func (q *Queries) UndeclareSchedulesTx(ctx context.Context, tx pgx.Tx, ids []uuid.UUID, note string, now *time.Time) error {
	_, err := tx.Exec(ctx, q.sql(undeclareSchedulesStmt), ids, note, now)
	return err
}

// RedeclareSchedulesTx clears the mark UndeclareSchedulesTx left on the
// schedules ids, updated at now (nil: the database's now()). The caller
// holds their locks.
func (q *Queries) RedeclareSchedulesTx(ctx context.Context, tx pgx.Tx, ids []uuid.UUID, now *time.Time) error {
	_, err := tx.Exec(ctx, q.sql(redeclareSchedulesStmt), ids, now)
	return err
}
