package engine

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// Schedule is a row of schedules as the engine reads it. The policies are
// stored strings and the durations milliseconds; the façade decodes them.
type Schedule struct {
	ID              uuid.UUID
	Name            string
	Description     string
	Owner           string
	Type            string // the workflow type each slot starts
	Input           []byte // JSON
	Cron            string
	TimeZone        string
	StartAt         *time.Time
	EndAt           *time.Time
	OverlapPolicy   string
	CatchUpWindowMS int64
	CatchUpPolicy   string
	MaxAttempts     int
	TimeoutMS       int64
	Queue           string
	Priority        int
	Paused          bool
	PauseNote       string
	PausedAt        *time.Time
	NextFireAt      *time.Time
	LastFireAt      *time.Time
	RunCount        int64
	FailureCount    int64
	LastRunStatus   string // "" when no run has finished
	GrantID         *uuid.UUID
	CreatedAt       time.Time
	UpdatedAt       time.Time
	// NextFireCatchUp marks NextFireAt as the slot the "latest" catch-up
	// policy jumped to.
	NextFireCatchUp bool
	KeepRuns        int
	Key             string     // "" when the schedule has none
	DeclaredBy      string     // the declaring service; "" for a schedule made by Create
	UndeclaredAt    *time.Time // when DeclaredBy stopped declaring it
	CreatedBy       string
	// RunTenant is the tenant of the schedule's runs when it is not the
	// owner; "" for the owner's (run_tenant NULL).
	RunTenant string
	// DSTGap and DSTFold are the schedule's DST policy: jump, shift or
	// skip; first, last or both.
	DSTGap, DSTFold string
	// Calendars are the holiday calendars whose dates the schedule
	// excludes, and OnExcluded what their slots do: skip or
	// next-business-day.
	Calendars  []string
	OnExcluded string
	// Retry is the retry policy of the schedule's runs, a
	// workflow.RetryPolicy's JSON; nil for the workflow type's.
	Retry []byte
}

// scheduleColumns are the columns scanSchedule reads.
const scheduleColumns = `id, name, description, owner, workflow_type, input, cron, time_zone, start_at, end_at,
	overlap_policy, catchup_window_ms, catchup_policy, max_attempts, timeout_ms, queue, priority, paused, pause_note,
	paused_at, next_fire_at, last_fire_at, run_count, failure_count, coalesce(last_run_status, ''), grant_id,
	created_at, updated_at, next_fire_catch_up, keep_runs, coalesce(key, ''), coalesce(declared_by, ''), undeclared_at,
	created_by, coalesce(run_tenant, ''), dst_gap, dst_fold, calendars, on_excluded, retry`

// scanSchedule reads a row of scheduleColumns into s; ErrNotFound when
// there is none.
func scanSchedule(row pgx.Row, s *Schedule) error {
	err := row.Scan(&s.ID, &s.Name, &s.Description, &s.Owner, &s.Type, &s.Input, &s.Cron, &s.TimeZone,
		&s.StartAt, &s.EndAt, &s.OverlapPolicy, &s.CatchUpWindowMS, &s.CatchUpPolicy, &s.MaxAttempts, &s.TimeoutMS,
		&s.Queue, &s.Priority, &s.Paused, &s.PauseNote, &s.PausedAt, &s.NextFireAt, &s.LastFireAt, &s.RunCount,
		&s.FailureCount, &s.LastRunStatus, &s.GrantID, &s.CreatedAt, &s.UpdatedAt, &s.NextFireCatchUp, &s.KeepRuns,
		&s.Key, &s.DeclaredBy, &s.UndeclaredAt, &s.CreatedBy, &s.RunTenant, &s.DSTGap, &s.DSTFold, &s.Calendars, &s.OnExcluded, &s.Retry)
	if errors.Is(err, pgx.ErrNoRows) {
		return ErrNotFound
	}
	return err
}

// scanOneSchedule reads the one row of scheduleColumns of row; ErrNotFound
// when there is none.
func scanOneSchedule(row pgx.Row) (*Schedule, error) {
	var s Schedule
	if err := scanSchedule(row, &s); err != nil {
		return nil, err
	}
	return &s, nil
}

// scanSchedules reads every row of rows with scanSchedule, into one slice
// of values (no allocation per row beyond the row's own fields), and
// closes rows. It returns an empty, non-nil slice when there are none.
func scanSchedules(rows pgx.Rows, err error) ([]Schedule, error) {
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []Schedule{}
	for rows.Next() {
		out = append(out, Schedule{})
		if err := scanSchedule(rows, &out[len(out)-1]); err != nil {
			return nil, err
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// The statements that read and write one schedule's row.
var (
	scheduleByIDStmt = define(`SELECT ` + scheduleColumns + ` FROM {s}schedules WHERE id = $1`)

	scheduleByIDForUpdateStmt = define(`SELECT ` + scheduleColumns + ` FROM {s}schedules WHERE id = $1 FOR UPDATE`)

	// A schedule with a key that its owner has already is not inserted:
	// ON CONFLICT waits for a racing transaction that inserts the same key
	// and, when it commits, inserts nothing.
	insertScheduleStmt = define(`
INSERT INTO {s}schedules (id, name, description, owner, workflow_type, input, cron, time_zone, start_at, end_at,
	overlap_policy, catchup_window_ms, max_attempts, timeout_ms, queue, priority, paused, pause_note, next_fire_at,
	catchup_policy, paused_at, grant_id, keep_runs, key, declared_by, created_by, run_tenant, created_at, updated_at,
	dst_gap, dst_fold, calendars, on_excluded, retry)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20,
	CASE WHEN $17 THEN coalesce($27::timestamptz, now()) END, $21, $22, nullif($23, ''), nullif($24, ''), $25, nullif($26, ''),
	coalesce($27::timestamptz, now()), coalesce($27::timestamptz, now()), $28, $29, coalesce($30::text[], '{}'), $31, $32::jsonb)
ON CONFLICT (owner, key) WHERE key IS NOT NULL DO NOTHING
RETURNING ` + scheduleColumns)

	scheduleByKeyStmt = define(`SELECT ` + scheduleColumns + ` FROM {s}schedules WHERE owner = $1 AND key = $2`)

	scheduleIDByKeyStmt = define(`SELECT id FROM {s}schedules WHERE owner = $1 AND key = $2`)

	// The name's condition ($6) has no index: the listing reads schedules
	// newest first until it has its page.
	listSchedulesStmt = define(`
SELECT ` + scheduleColumns + ` FROM {s}schedules
WHERE ($1 = '' OR owner = $1) AND ($2 = '' OR workflow_type = $2)
	AND ($3::boolean IS NULL OR paused = $3) AND ($4::uuid IS NULL OR id < $4)
	AND ($6 = '' OR strpos(lower(name), lower($6)) > 0)
ORDER BY id DESC LIMIT $5`)

	// listSchedulesByCalendarStmt is listSchedulesStmt for the schedules
	// that exclude calendar $6, found through the partial GIN index
	// schedules_calendars (whose predicate the first condition repeats).
	listSchedulesByCalendarStmt = define(`
SELECT ` + scheduleColumns + ` FROM {s}schedules
WHERE calendars <> '{}' AND calendars @> ARRAY[$6::text]
	AND ($1 = '' OR owner = $1) AND ($2 = '' OR workflow_type = $2)
	AND ($3::boolean IS NULL OR paused = $3) AND ($4::uuid IS NULL OR id < $4)
	AND ($7 = '' OR strpos(lower(name), lower($7)) > 0)
ORDER BY id DESC LIMIT $5`)

	pauseScheduleStmt = define(`
UPDATE {s}schedules SET paused = true, pause_note = $2, next_fire_at = NULL,
	paused_at = CASE WHEN paused THEN paused_at ELSE coalesce($3::timestamptz, now()) END, updated_at = coalesce($3::timestamptz, now())
WHERE id = $1 RETURNING ` + scheduleColumns)

	resumeScheduleStmt = define(`
UPDATE {s}schedules SET paused = false, pause_note = '', paused_at = NULL, next_fire_at = $2, updated_at = coalesce($3::timestamptz, now())
WHERE id = $1 RETURNING ` + scheduleColumns)

	updateScheduleStmt = define(`
UPDATE {s}schedules
SET name = $2, description = $3, input = $4, cron = $5, time_zone = $6, overlap_policy = $7,
	catchup_window_ms = $8, max_attempts = $9, timeout_ms = $10, queue = $11, priority = $12,
	next_fire_at = $13, catchup_policy = $14, owner = $15, start_at = $16, end_at = $17, grant_id = $18,
	keep_runs = $19, workflow_type = $20, run_tenant = nullif($21, ''), updated_at = coalesce($22::timestamptz, now()),
	dst_gap = $23, dst_fold = $24, calendars = coalesce($25::text[], '{}'), on_excluded = $26, retry = $27::jsonb
WHERE id = $1 RETURNING ` + scheduleColumns)

	// Its schedules among $1 that no other transaction holds, locked.
	lockSchedulesSkipLockedStmt = define(`SELECT ` + scheduleColumns + ` FROM {s}schedules
WHERE id = ANY($1::uuid[]) ORDER BY id FOR NO KEY UPDATE SKIP LOCKED`)

	// Lock the schedule's runs before the schedule, the order in which a
	// finishing run's status trigger locks them; ON DELETE SET NULL then
	// updates runs already locked. The other order deadlocks.
	// Its prepared slot (slot_prepared.go) goes with it: its run, which
	// has not started, and its pending job.
	deleteScheduleStmt = define(preparedWhere(`r.schedule_id = $1`) + dropPreparedCTEs + `, runs AS (
	SELECT id FROM {s}workflow_runs WHERE schedule_id = $1 AND id NOT IN (SELECT id FROM prepared) ORDER BY id FOR UPDATE
)
DELETE FROM {s}schedules WHERE id = $1 AND (SELECT count(*) FROM runs) >= 0`)
)

// ScheduleByID reads a schedule; ErrNotFound when there is none.
func (q *Queries) ScheduleByID(ctx context.Context, db DBTX, id uuid.UUID) (*Schedule, error) {
	return scanOneSchedule(queryRow(ctx, db, q.sql(scheduleByIDStmt), id))
}

// LockSchedulesSkipLockedTx reads and locks, until tx ends, those of the
// schedules ids that exist and that no other transaction holds.
func (q *Queries) LockSchedulesSkipLockedTx(ctx context.Context, tx pgx.Tx, ids []uuid.UUID) ([]Schedule, error) {
	return scanSchedules(tx.Query(ctx, q.sql(lockSchedulesSkipLockedStmt), ids))
}

// ScheduleByIDForUpdateTx is ScheduleByID that also locks the schedule's
// row until tx ends.
func (q *Queries) ScheduleByIDForUpdateTx(ctx context.Context, tx pgx.Tx, id uuid.UUID) (*Schedule, error) {
	return scanOneSchedule(tx.QueryRow(ctx, q.sql(scheduleByIDForUpdateStmt), id))
}

// InsertScheduleParams are the columns of a new schedule.
type InsertScheduleParams struct {
	ID              uuid.UUID
	Name            string
	Description     string
	Owner           string
	Type            string
	Input           []byte // JSON
	Cron            string
	TimeZone        string
	StartAt         *time.Time
	EndAt           *time.Time
	OverlapPolicy   string
	CatchUpWindowMS int64
	MaxAttempts     int
	TimeoutMS       int64
	Queue           string
	Priority        int
	// Paused inserts the schedule paused, with PauseNote; its paused_at is
	// Now.
	Paused        bool
	PauseNote     string
	NextFireAt    *time.Time // nil for a paused schedule
	CatchUpPolicy string
	GrantID       *uuid.UUID
	KeepRuns      int
	Key           string // "" for none
	DeclaredBy    string // "" when not declared
	CreatedBy     string
	RunTenant     string     // "" for the owner's
	Now           *time.Time // the time recorded (created, paused); nil: the database's now()
	DSTGap        string     // jump, shift or skip
	DSTFold       string     // first, last or both
	Calendars     []string   // the holiday calendars excluded
	OnExcluded    string     // skip or next-business-day
	Retry         []byte     // the runs' retry policy's JSON; nil for the workflow type's
}

// ErrKeyExists is returned by InsertScheduleTx when the schedule's owner
// has a schedule with its key already; nothing was inserted.
var ErrKeyExists = errors.New("engine: the owner has a schedule with this key")

// InsertScheduleTx inserts a schedule and returns it as stored; ErrKeyExists
// when its owner has its key already (a racing insert of the same key is
// waited for). The caller seeds its first slot's fire job in the same tx.
func (q *Queries) InsertScheduleTx(ctx context.Context, tx pgx.Tx, p *InsertScheduleParams) (*Schedule, error) {
	s, err := scanOneSchedule(tx.QueryRow(ctx, q.sql(insertScheduleStmt), p.ID, p.Name, p.Description, p.Owner, p.Type,
		p.Input, p.Cron, p.TimeZone, p.StartAt, p.EndAt, p.OverlapPolicy, p.CatchUpWindowMS, p.MaxAttempts,
		p.TimeoutMS, p.Queue, p.Priority, p.Paused, p.PauseNote, p.NextFireAt, p.CatchUpPolicy, p.GrantID, p.KeepRuns,
		p.Key, p.DeclaredBy, p.CreatedBy, p.RunTenant, p.Now, p.DSTGap, p.DSTFold, p.Calendars, p.OnExcluded, jsonOrNil(p.Retry)))
	if errors.Is(err, ErrNotFound) {
		return nil, ErrKeyExists
	}
	return s, err
}

// ScheduleByKey reads owner's schedule with key; ErrNotFound when there is
// none.
func (q *Queries) ScheduleByKey(ctx context.Context, db DBTX, owner, key string) (*Schedule, error) {
	return scanOneSchedule(queryRow(ctx, db, q.sql(scheduleByKeyStmt), owner, key))
}

// ScheduleIDByKey is the id of owner's schedule with key; ErrNotFound when
// there is none.
func (q *Queries) ScheduleIDByKey(ctx context.Context, db DBTX, owner, key string) (uuid.UUID, error) {
	var id uuid.UUID
	err := queryRow(ctx, db, q.sql(scheduleIDByKeyStmt), owner, key).Scan(&id)
	if errors.Is(err, pgx.ErrNoRows) {
		return uuid.Nil, ErrNotFound
	}
	return id, err
}

// ListSchedulesParams filter and page ListSchedules.
type ListSchedulesParams struct {
	Owner  string // "" for any
	Type   string // "" for any
	Paused *bool  // nil for both
	// Calendar keeps the schedules that exclude this calendar's dates
	// (through the schedules_calendars GIN index); "" for any.
	Calendar string
	// Name keeps the schedules whose name contains it, in any case; ""
	// for any.
	Name  string
	After *uuid.UUID
	Limit int
}

// ListSchedules lists schedules newest first (by id) after p.After, at
// most p.Limit; an empty, non-nil slice when there are none.
func (q *Queries) ListSchedules(ctx context.Context, db DBTX, p *ListSchedulesParams) ([]Schedule, error) {
	if p.Calendar != "" {
		return scanSchedules(db.Query(ctx, q.sql(listSchedulesByCalendarStmt), p.Owner, p.Type, p.Paused, p.After, p.Limit, p.Calendar, p.Name))
	}
	return scanSchedules(db.Query(ctx, q.sql(listSchedulesStmt), p.Owner, p.Type, p.Paused, p.After, p.Limit, p.Name))
}

// PauseSchedule pauses a schedule with note, ending its chain (next_fire_at
// NULL), at now (nil: the database's now()), and returns it; a schedule
// paused already keeps its paused_at. ErrNotFound when there is none.
func (q *Queries) PauseSchedule(ctx context.Context, db DBTX, id uuid.UUID, note string, now *time.Time) (*Schedule, error) {
	return scanOneSchedule(queryRow(ctx, db, q.sql(pauseScheduleStmt), id, note, now))
}

// ResumeScheduleTx resumes a schedule with its chain restarting at next
// (nil: it has no slot left), updated at now (nil: the database's now()),
// and returns it; ErrNotFound when there is none. The caller seeds next's
// fire job in the same tx.
func (q *Queries) ResumeScheduleTx(ctx context.Context, tx pgx.Tx, id uuid.UUID, next, now *time.Time) (*Schedule, error) {
	return scanOneSchedule(tx.QueryRow(ctx, q.sql(resumeScheduleStmt), id, next, now))
}

// UpdateScheduleParams are the columns Update writes, all of them.
type UpdateScheduleParams struct {
	ID              uuid.UUID
	Name            string
	Description     string
	Input           []byte // JSON
	Cron            string
	TimeZone        string
	OverlapPolicy   string
	CatchUpWindowMS int64
	MaxAttempts     int
	TimeoutMS       int64
	Queue           string
	Priority        int
	NextFireAt      *time.Time
	CatchUpPolicy   string
	Owner           string
	StartAt         *time.Time
	EndAt           *time.Time
	GrantID         *uuid.UUID
	KeepRuns        int
	Type            string
	RunTenant       string     // "" for the owner's
	Now             *time.Time // the update's time; nil: the database's now()
	DSTGap          string     // jump, shift or skip
	DSTFold         string     // first, last or both
	Calendars       []string   // the holiday calendars excluded
	OnExcluded      string     // skip or next-business-day
	Retry           []byte     // the runs' retry policy's JSON; nil for the workflow type's
}

// UpdateScheduleTx rewrites a schedule's settings and returns it;
// ErrNotFound when there is none. The caller holds the schedule's lock
// (ScheduleByIDForUpdateTx) and seeds a new next slot's fire job in the
// same tx.
func (q *Queries) UpdateScheduleTx(ctx context.Context, tx pgx.Tx, p *UpdateScheduleParams) (*Schedule, error) {
	return scanOneSchedule(tx.QueryRow(ctx, q.sql(updateScheduleStmt), p.ID, p.Name, p.Description, p.Input,
		p.Cron, p.TimeZone, p.OverlapPolicy, p.CatchUpWindowMS, p.MaxAttempts, p.TimeoutMS, p.Queue, p.Priority,
		p.NextFireAt, p.CatchUpPolicy, p.Owner, p.StartAt, p.EndAt, p.GrantID, p.KeepRuns, p.Type, p.RunTenant, p.Now,
		p.DSTGap, p.DSTFold, p.Calendars, p.OnExcluded, jsonOrNil(p.Retry)))
}

// jsonOrNil is a JSON document as a statement's text parameter, nil (SQL
// NULL) for none.
func jsonOrNil(doc []byte) *string {
	if len(doc) == 0 {
		return nil
	}
	s := string(doc)
	return &s
}

// DeleteSchedule deletes a schedule, after locking its runs (whose
// schedule_id becomes NULL). It returns false when there was none.
func (q *Queries) DeleteSchedule(ctx context.Context, db DBTX, id uuid.UUID) (bool, error) {
	tag, err := db.Exec(ctx, q.sql(deleteScheduleStmt), id)
	if err != nil {
		return false, err
	}
	return tag.RowsAffected() > 0, nil
}
