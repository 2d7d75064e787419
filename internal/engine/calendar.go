package engine

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// Calendar is a row of tributary_calendars with its dates.
type Calendar struct {
	Name        string
	Description string
	Days        []time.Time // its dates, at 00:00 UTC, in order
	Notes       []string    // Days[i]'s note
	CreatedAt   time.Time
	UpdatedAt   time.Time
	Schedules   int // how many schedules exclude it
}

// The statements of holiday calendars (migration 021).
var (
	insertCalendarStmt = define(`
INSERT INTO {s}tributary_calendars (name, description, created_at, updated_at)
VALUES ($1, $2, coalesce($3::timestamptz, now()), coalesce($3::timestamptz, now()))
ON CONFLICT (name) DO NOTHING`)

	calendarStmt = define(`
SELECT c.name, c.description, c.created_at, c.updated_at,
	coalesce((SELECT array_agg(d.day::timestamp AT TIME ZONE 'UTC' ORDER BY d.day) FROM {s}tributary_calendar_dates d WHERE d.calendar = c.name), '{}'),
	coalesce((SELECT array_agg(d.note ORDER BY d.day) FROM {s}tributary_calendar_dates d WHERE d.calendar = c.name), '{}'),
	(SELECT count(*) FROM {s}schedules s WHERE s.calendars @> ARRAY[c.name] AND s.calendars <> '{}')
FROM {s}tributary_calendars c WHERE c.name = ANY($1::text[]) ORDER BY c.name`)

	allCalendarsStmt = define(`
SELECT c.name, c.description, c.created_at, c.updated_at, '{}'::timestamptz[],
	'{}'::text[], (SELECT count(*) FROM {s}schedules s WHERE s.calendars @> ARRAY[c.name] AND s.calendars <> '{}')
FROM {s}tributary_calendars c ORDER BY c.name`)

	calendarDayCountsStmt = define(`
SELECT calendar, count(*), min(day)::timestamp AT TIME ZONE 'UTC', max(day)::timestamp AT TIME ZONE 'UTC'
FROM {s}tributary_calendar_dates GROUP BY calendar`)

	addCalendarDaysStmt = define(`
WITH days AS (
	INSERT INTO {s}tributary_calendar_dates (calendar, day, note)
	SELECT $1, d::date, n FROM unnest($2::timestamptz[], $3::text[]) AS v(d, n)
	WHERE EXISTS (SELECT 1 FROM {s}tributary_calendars WHERE name = $1)
	ON CONFLICT (calendar, day) DO UPDATE SET note = excluded.note
	RETURNING 1
)
UPDATE {s}tributary_calendars SET updated_at = coalesce($4::timestamptz, now())
WHERE name = $1 AND (SELECT count(*) FROM days) >= 0`)

	removeCalendarDaysStmt = define(`
WITH days AS (
	DELETE FROM {s}tributary_calendar_dates WHERE calendar = $1 AND day = ANY(SELECT d::date FROM unnest($2::timestamptz[]) AS d)
	RETURNING 1
)
UPDATE {s}tributary_calendars SET updated_at = coalesce($3::timestamptz, now())
WHERE name = $1 AND (SELECT count(*) FROM days) >= 0`)

	deleteCalendarStmt = define(`DELETE FROM {s}tributary_calendars WHERE name = $1`)

	calendarSchedulesStmt = define(`
SELECT id FROM {s}schedules WHERE calendars @> ARRAY[$1::text] AND calendars <> '{}' ORDER BY id LIMIT $2`)

	lockCalendarSchedulesStmt = define(`
SELECT ` + scheduleColumns + ` FROM {s}schedules
WHERE calendars @> ARRAY[$1::text] AND calendars <> '{}' AND NOT paused AND next_fire_at IS NOT NULL
ORDER BY id FOR UPDATE`)

	setNextFireStmt = define(`
UPDATE {s}schedules s SET next_fire_at = v.next, next_fire_catch_up = false, updated_at = coalesce($3::timestamptz, now())
FROM unnest($1::uuid[], $2::timestamptz[]) AS v(id, next) WHERE s.id = v.id`)
)

// ErrCalendarExists is returned by InsertCalendar for a name taken.
var ErrCalendarExists = errors.New("engine: a calendar has this name")

// InsertCalendar inserts an empty calendar at now (nil: the database's
// now()); ErrCalendarExists when its name is taken.
func (q *Queries) InsertCalendar(ctx context.Context, db DBTX, name, description string, now *time.Time) error {
	tag, err := db.Exec(ctx, q.sql(insertCalendarStmt), name, description, now)
	if err == nil && tag.RowsAffected() == 0 {
		return ErrCalendarExists
	}
	return err
}

// Calendars reads the calendars of names with their dates, in name order;
// a name without a calendar is absent.
func (q *Queries) Calendars(ctx context.Context, db DBTX, names []string) ([]Calendar, error) {
	return scanCalendars(db.Query(ctx, q.sql(calendarStmt), names))
}

// AllCalendars reads every calendar without its dates (Days and Notes
// empty), in name order.
func (q *Queries) AllCalendars(ctx context.Context, db DBTX) ([]Calendar, error) {
	return scanCalendars(db.Query(ctx, q.sql(allCalendarsStmt)))
}

// CalendarDayCount is how many dates a calendar holds, and its first and
// last.
type CalendarDayCount struct {
	Days        int
	First, Last time.Time
}

// CalendarDayCounts reads each calendar's count of dates.
func (q *Queries) CalendarDayCounts(ctx context.Context, db DBTX) (map[string]CalendarDayCount, error) {
	rows, err := db.Query(ctx, q.sql(calendarDayCountsStmt))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]CalendarDayCount{}
	for rows.Next() {
		var name string
		var c CalendarDayCount
		if err := rows.Scan(&name, &c.Days, &c.First, &c.Last); err != nil {
			return nil, err
		}
		out[name] = c
	}
	return out, rows.Err()
}

func scanCalendars(rows pgx.Rows, err error) ([]Calendar, error) {
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []Calendar{}
	for rows.Next() {
		var c Calendar
		if err := rows.Scan(&c.Name, &c.Description, &c.CreatedAt, &c.UpdatedAt, &c.Days, &c.Notes, &c.Schedules); err != nil {
			return nil, err
		}
		for i := range c.Days {
			c.Days[i] = c.Days[i].UTC()
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// AddCalendarDays adds days (each at 00:00 UTC) with their notes to a
// calendar, replacing the note of a day it has, and marks it updated at
// now; it returns false when there is no such calendar.
func (q *Queries) AddCalendarDays(ctx context.Context, db DBTX, name string, days []time.Time, notes []string, now *time.Time) (bool, error) {
	tag, err := db.Exec(ctx, q.sql(addCalendarDaysStmt), name, days, notes, now)
	return tag.RowsAffected() > 0, err
}

// RemoveCalendarDays removes days from a calendar and marks it updated at
// now; it returns false when there is no such calendar.
func (q *Queries) RemoveCalendarDays(ctx context.Context, db DBTX, name string, days []time.Time, now *time.Time) (bool, error) {
	tag, err := db.Exec(ctx, q.sql(removeCalendarDaysStmt), name, days, now)
	return tag.RowsAffected() > 0, err
}

// DeleteCalendar deletes a calendar and its dates; false when there was
// none.
func (q *Queries) DeleteCalendar(ctx context.Context, db DBTX, name string) (bool, error) {
	tag, err := db.Exec(ctx, q.sql(deleteCalendarStmt), name)
	return tag.RowsAffected() > 0, err
}

// CalendarSchedules returns the ids of up to limit schedules that exclude
// a calendar.
func (q *Queries) CalendarSchedules(ctx context.Context, db DBTX, name string, limit int) ([]uuid.UUID, error) {
	rows, err := db.Query(ctx, q.sql(calendarSchedulesStmt), name, limit)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[uuid.UUID])
}

// LockCalendarSchedulesTx reads and locks, until tx ends, the running
// schedules (not paused, with a next slot) that exclude a calendar.
func (q *Queries) LockCalendarSchedulesTx(ctx context.Context, tx pgx.Tx, name string) ([]Schedule, error) {
	return scanSchedules(tx.Query(ctx, q.sql(lockCalendarSchedulesStmt), name))
}

// SetNextFireTx sets the next slot of schedules (ids[i] to next[i]),
// updated at now; the caller holds their locks and seeds the new slots'
// fire jobs in the same tx.
func (q *Queries) SetNextFireTx(ctx context.Context, tx pgx.Tx, ids []uuid.UUID, next []time.Time, now *time.Time) error {
	_, err := tx.Exec(ctx, q.sql(setNextFireStmt), ids, next, now)
	return err
}
