package schedule

import (
	"errors"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tributary-go/tributary/internal/runmeta"
)

const scheduleColumns = `id, name, description, owner, workflow_type, input, cron, time_zone, start_at, end_at,
	overlap_policy, catchup_window_ms, catchup_policy, max_attempts, timeout_ms, queue, priority, paused, pause_note,
	paused_at, next_fire_at, last_fire_at, run_count, failure_count, coalesce(last_run_status, ''), grant_id,
	created_at, updated_at, next_fire_catch_up, keep_runs`

type queries struct {
	addRuns               string
	slotsWithRuns         string
	deleteSkippedSlots    string
	lockToStart           string
	advance               string
	claimDue              string
	fireJobsAt            string
	grantsGet             string
	lockRunsSkipLocked    string
	unfinishedOfSchedules string
	countRun              string
	delete                string
	get                   string
	getForUpdate          string
	insert                string
	insertMany            string
	grantGet              string
	grantInsert           string
	grantRevoke           string
	list                  string
	anyDue                string
	liveTypes             string
	pause                 string
	resume                string
	update                string
	unfinishedRuns        string
}

func newQueries(schema string) *queries {
	prefix := ""
	if schema != "" {
		prefix = pgx.Identifier{schema}.Sanitize() + "."
	}
	t := func(sql string) string { return strings.ReplaceAll(sql, "{s}", prefix) }
	return &queries{
		// One row per schedule a batch fired: its next slot (NULL: the chain
		// ends), the slot fired, whether it started a run, whether the next
		// slot is a caught-up one, and a note to pause it with ('' for none).
		advance: t(`
UPDATE {s}schedules s
SET next_fire_at = v.next, last_fire_at = v.fired, run_count = s.run_count + v.ran, next_fire_catch_up = v.catch_up,
	paused = s.paused OR v.pause <> '',
	pause_note = CASE WHEN v.pause <> '' THEN v.pause ELSE s.pause_note END,
	paused_at = CASE WHEN v.pause <> '' AND NOT s.paused THEN now() ELSE s.paused_at END,
	updated_at = now()
FROM unnest($1::uuid[], $2::timestamptz[], $3::timestamptz[], $4::bigint[], $5::boolean[], $6::text[])
	AS v(id, next, fired, ran, catch_up, pause)
WHERE s.id = v.id`),
		// The schedules due by $1, oldest slot first, $2 at most, skipping
		// those another pass holds and those in $3 (given up on by this
		// pass). Read through schedules_next_fire.
		claimDue: t(`
SELECT ` + scheduleColumns + ` FROM {s}schedules
WHERE NOT paused AND next_fire_at <= $1 AND id <> ALL(coalesce($3::uuid[], '{}'))
ORDER BY next_fire_at, id
LIMIT $2
FOR UPDATE SKIP LOCKED`),
		// The instants in $3 that have a fire job waiting, through River's
		// fetch index (state, queue, priority, scheduled_at).
		fireJobsAt: t(`
SELECT DISTINCT scheduled_at FROM {s}river_job
WHERE state IN ('available', 'scheduled') AND queue = $2 AND priority = 1 AND scheduled_at = ANY($3::timestamptz[])
	AND kind = $1`),
		grantsGet: t(`SELECT id, subject, scopes, expires_at, revoked_at, revoke_reason, created_at FROM {s}execution_grants WHERE id = ANY($1::uuid[])`),
		lockRunsSkipLocked: t(`
SELECT id FROM {s}workflow_runs
WHERE id = ANY($1::uuid[]) AND status IN ('pending', 'running', 'sleeping', 'waiting')
ORDER BY id
FOR NO KEY UPDATE SKIP LOCKED`),
		// Through workflow_runs_schedule_unfinished: a few rows per schedule
		// however long its history.
		unfinishedOfSchedules: t(`
SELECT id, schedule_id, status = 'pending' AND metadata ? '` + runmeta.KeyQueued + `' FROM {s}workflow_runs
WHERE schedule_id = ANY($1::uuid[]) AND status IN ('pending', 'running', 'sleeping', 'waiting')`),
		addRuns: t(`UPDATE {s}schedules SET run_count = run_count + $2, updated_at = now() WHERE id = $1`),
		// getForUpdate, after locking the schedule's unfinished runs when
		// runs are to start under overlap replace ($2, or the schedule's
		// own policy when $2 is ''), which cancels them: a finishing run's
		// status trigger locks the run, then the schedule, and the other
		// order deadlocks. One round trip: the runs' subquery runs before
		// the schedule's row is locked.
		lockToStart: t(`
WITH runs AS (
	SELECT r.id FROM {s}workflow_runs r
	WHERE r.schedule_id = $1 AND r.status IN ('pending', 'running', 'sleeping', 'waiting')
		AND coalesce(nullif($2, ''), (SELECT overlap_policy FROM {s}schedules WHERE id = $1)) = 'replace'
	ORDER BY r.id FOR NO KEY UPDATE OF r
)
SELECT ` + scheduleColumns + ` FROM {s}schedules WHERE id = $1 AND (SELECT count(*) FROM runs) >= 0 FOR UPDATE`),
		// The slots in $2 that have their run (or skip record) already. A
		// plain read: it never waits for a run that is finishing (see
		// startSlotsTx).
		slotsWithRuns: t(`SELECT fire_at FROM {s}workflow_runs WHERE schedule_id = $1 AND fire_at = ANY($2)`),
		// The skip records of slots a backfill runs again (RerunSkipped).
		deleteSkippedSlots: t(`
DELETE FROM {s}workflow_runs WHERE schedule_id = $1 AND fire_at = ANY($2) AND status = 'skipped'
RETURNING fire_at, coalesce(skip_reason, '')`),
		countRun: t(`UPDATE {s}schedules SET run_count = run_count + 1, updated_at = now() WHERE id = $1`),
		// Lock the schedule's runs before the schedule, the order in which a
		// finishing run's status trigger locks them; ON DELETE SET NULL then
		// updates runs already locked. The other order deadlocks.
		delete: t(`
WITH runs AS (SELECT id FROM {s}workflow_runs WHERE schedule_id = $1 ORDER BY id FOR UPDATE)
DELETE FROM {s}schedules WHERE id = $1 AND (SELECT count(*) FROM runs) >= 0`),
		get:          t(`SELECT ` + scheduleColumns + ` FROM {s}schedules WHERE id = $1`),
		getForUpdate: t(`SELECT ` + scheduleColumns + ` FROM {s}schedules WHERE id = $1 FOR UPDATE`),
		grantGet:     t(`SELECT id, subject, scopes, expires_at, revoked_at, revoke_reason, created_at FROM {s}execution_grants WHERE id = $1`),
		grantInsert:  t(`INSERT INTO {s}execution_grants (id, subject, scopes, expires_at) VALUES ($1, $2, $3, $4) RETURNING id, subject, scopes, expires_at, revoked_at, revoke_reason, created_at`),
		grantRevoke:  t(`UPDATE {s}execution_grants SET revoked_at = coalesce(revoked_at, now()), revoke_reason = $2 WHERE id = $1 RETURNING id, subject, scopes, expires_at, revoked_at, revoke_reason, created_at`),
		// insert's set-based twin (CreateManyTx): one array per column; the
		// rows come back in no particular order.
		insertMany: t(`
INSERT INTO {s}schedules (id, name, description, owner, workflow_type, input, cron, time_zone, start_at, end_at,
	overlap_policy, catchup_window_ms, max_attempts, timeout_ms, queue, priority, paused, pause_note, next_fire_at,
	catchup_policy, paused_at, grant_id, keep_runs)
SELECT id, name, description, owner, workflow_type, input::jsonb, cron, time_zone, start_at, end_at,
	overlap_policy, catchup_window_ms, max_attempts, timeout_ms, queue, priority, paused, pause_note, next_fire_at,
	catchup_policy, CASE WHEN paused THEN now() END, grant_id, keep_runs
FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[],
	$9::timestamptz[], $10::timestamptz[], $11::text[], $12::bigint[], $13::integer[], $14::bigint[], $15::text[],
	$16::smallint[], $17::boolean[], $18::text[], $19::timestamptz[], $20::text[], $21::uuid[], $22::integer[])
	AS v(id, name, description, owner, workflow_type, input, cron, time_zone, start_at, end_at,
	overlap_policy, catchup_window_ms, max_attempts, timeout_ms, queue, priority, paused, pause_note, next_fire_at,
	catchup_policy, grant_id, keep_runs)
RETURNING ` + scheduleColumns),
		insert: t(`
INSERT INTO {s}schedules (id, name, description, owner, workflow_type, input, cron, time_zone, start_at, end_at,
	overlap_policy, catchup_window_ms, max_attempts, timeout_ms, queue, priority, paused, pause_note, next_fire_at,
	catchup_policy, paused_at, grant_id, keep_runs)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20,
	CASE WHEN $17 THEN now() END, $21, $22)
RETURNING ` + scheduleColumns),
		list: t(`
SELECT ` + scheduleColumns + ` FROM {s}schedules
WHERE ($1 = '' OR owner = $1) AND ($2 = '' OR workflow_type = $2)
	AND ($3::boolean IS NULL OR paused = $3) AND ($4::uuid IS NULL OR id < $4)
ORDER BY id DESC LIMIT $5`),
		// The workflow types that live schedules (not paused, with a next
		// slot) start, with how many schedules each: the reconciler's
		// check for types no live worker serves (warnUnserved).
		liveTypes: t(`
SELECT workflow_type, count(*) FROM {s}schedules WHERE NOT paused AND next_fire_at IS NOT NULL GROUP BY 1`),
		// Whether a schedule is due by $1, apart from those in $2: the
		// reconciler's check for broken chains, and the firing pass's for
		// due schedules that its SKIP LOCKED claim passed over.
		anyDue: t(`
SELECT EXISTS (SELECT FROM {s}schedules WHERE NOT paused AND next_fire_at <= $1 AND id <> ALL(coalesce($2::uuid[], '{}')))`),
		pause: t(`
UPDATE {s}schedules SET paused = true, pause_note = $2, next_fire_at = NULL,
	paused_at = CASE WHEN paused THEN paused_at ELSE now() END, updated_at = now()
WHERE id = $1 RETURNING ` + scheduleColumns),
		resume: t(`
UPDATE {s}schedules SET paused = false, pause_note = '', paused_at = NULL, next_fire_at = $2, updated_at = now()
WHERE id = $1 RETURNING ` + scheduleColumns),
		update: t(`
UPDATE {s}schedules
SET name = $2, description = $3, input = $4, cron = $5, time_zone = $6, overlap_policy = $7,
	catchup_window_ms = $8, max_attempts = $9, timeout_ms = $10, queue = $11, priority = $12,
	next_fire_at = $13, catchup_policy = $14, owner = $15, start_at = $16, end_at = $17, grant_id = $18,
	keep_runs = $19, updated_at = now()
WHERE id = $1 RETURNING ` + scheduleColumns),
		unfinishedRuns: t(`
SELECT
	EXISTS (SELECT 1 FROM {s}workflow_runs WHERE schedule_id = $1 AND status IN ('pending', 'running', 'sleeping', 'waiting') AND NOT metadata ? '` + runmeta.KeyQueued + `'),
	EXISTS (SELECT 1 FROM {s}workflow_runs WHERE schedule_id = $1 AND status = 'pending' AND metadata ? '` + runmeta.KeyQueued + `')`),
	}
}

// scanScheduleRow is scanSchedule for pgx.CollectRows.
func scanScheduleRow(row pgx.CollectableRow) (*Schedule, error) { return scanSchedule(row) }

func scanSchedule(row pgx.Row) (*Schedule, error) {
	var (
		s                   Schedule
		overlap, catchUp    string
		catchUpMS, timeoutM int64
	)
	err := row.Scan(&s.ID, &s.Name, &s.Description, &s.Owner, &s.Workflow, &s.Input, &s.Cron, &s.TimeZone,
		&s.StartAt, &s.EndAt, &overlap, &catchUpMS, &catchUp, &s.MaxAttempts, &timeoutM, &s.Queue, &s.Priority,
		&s.Paused, &s.PauseNote, &s.PausedAt, &s.NextFireAt, &s.LastFireAt, &s.RunCount, &s.FailureCount, &s.LastRunStatus,
		&s.GrantID, &s.CreatedAt, &s.UpdatedAt, &s.nextCatchUp, &s.KeepRuns)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	s.Overlap = OverlapPolicy(overlap)
	s.CatchUp = CatchUpPolicy(catchUp)
	s.CatchUpWindow = time.Duration(catchUpMS) * time.Millisecond
	s.Timeout = time.Duration(timeoutM) * time.Millisecond
	return &s, nil
}
