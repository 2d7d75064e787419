package engine

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// The statements that start the runs of schedule slots, many at once.
var (
	runsOfSlotsStmt = define(`
SELECT r.id, r.schedule_id, r.fire_at, coalesce(j.id, 0), r.status = 'pending' AND coalesce(j.state = 'pending', false),
	r.metadata, r.queue, r.priority, r.max_attempts
FROM unnest($1::uuid[], $2::timestamptz[]) AS s(id, fire_at)
JOIN {s}workflow_runs r ON r.schedule_id = s.id AND r.fire_at = s.fire_at
LEFT JOIN {s}river_job j ON j.id = r.job_id`)

	// A skipped slot's run is finished when it is recorded; a started
	// one's job id is set (its job was inserted first).
	insertScheduledRunsStmt = define(`
INSERT INTO {s}workflow_runs (id, workflow_type, input, max_attempts, queue, priority, job_id, schedule_id, fire_at,
	metadata, status, skip_reason, finished_at, tenant, created_at, updated_at)
SELECT t.id, t.typ, t.input::jsonb, t.ma, t.q, t.p, nullif(t.job, 0), t.sid, t.fa, t.meta::jsonb,
	CASE WHEN t.skip = '' THEN 'pending' ELSE 'skipped' END, nullif(t.skip, ''), CASE WHEN t.skip <> '' THEN coalesce($13::timestamptz, now()) END,
	nullif(t.tenant, ''), CASE WHEN t.prepared THEN t.fa ELSE coalesce($13::timestamptz, now()) END, coalesce($13::timestamptz, now())
FROM unnest($1::uuid[], $2::text[], $3::text[], $4::int[], $5::text[], $6::int[], $7::bigint[], $8::uuid[],
	$9::timestamptz[], $10::text[], $11::text[], $12::text[], $14::boolean[]) AS t(id, typ, input, ma, q, p, job, sid, fa, meta, skip, tenant, prepared)
ON CONFLICT DO NOTHING`)
)

// SlotRun is the run of a schedule slot.
type SlotRun struct {
	RunID      uuid.UUID
	ScheduleID uuid.UUID
	FireAt     time.Time

	// Prepared is true for a prepared slot (slot_prepared.go): its run is
	// pending and its job, JobID, is pending too. Metadata, Queue, Priority
	// and MaxAttempts are the run's, for comparing it with the slot's
	// decision.
	Prepared    bool
	JobID       int64
	Metadata    []byte
	Queue       string
	Priority    int
	MaxAttempts int
}

// RunsOfSlots returns the runs that the slots (scheduleIDs[i], fireAts[i])
// have, in no particular order; a slot without a run has none in the
// result. It is a plain read: it takes no lock.
func (q *Queries) RunsOfSlots(ctx context.Context, db DBTX, scheduleIDs [][16]byte, fireAts []time.Time) ([]SlotRun, error) {
	rows, err := db.Query(ctx, q.sql(runsOfSlotsStmt), scheduleIDs, fireAts)
	if err != nil {
		return nil, err
	}
	var (
		found []SlotRun
		r     SlotRun
	)
	_, err = pgx.ForEachRow(rows, []any{&r.RunID, &r.ScheduleID, &r.FireAt, &r.JobID, &r.Prepared,
		&r.Metadata, &r.Queue, &r.Priority, &r.MaxAttempts}, func() error {
		found = append(found, r)
		r.Metadata = nil // the next row's scan must not write into this one's
		return nil
	})
	if err != nil {
		return nil, err
	}
	return found, nil
}

// ScheduledRun is the run of a schedule slot to insert: started (its River
// job inserted already) or skipped.
type ScheduledRun struct {
	ID          uuid.UUID
	Type        string
	Input       []byte // JSON
	MaxAttempts int
	Queue       string
	Priority    int
	JobID       int64 // 0 for a skipped slot
	ScheduleID  uuid.UUID
	FireAt      time.Time
	Metadata    []byte // a JSON object
	Skip        string // why the slot is skipped; "" for a started run
	Tenant      string // "" for none
	// Prepared dates the run at its slot (created_at is FireAt): a prepared
	// slot's run (slot_prepared.go).
	Prepared bool
}

// InsertScheduledRuns inserts runs in one statement and returns how many
// it inserted: a run that conflicts with an existing one (its slot's) is
// left out. A skipped slot's run is finished as it is recorded. now is the
// time recorded (nil: the database's now()).
func (q *Queries) InsertScheduledRuns(ctx context.Context, db DBTX, runs []ScheduledRun, now *time.Time) (int, error) {
	n := len(runs)
	var (
		ids         = make([][16]byte, 0, n) // binary: see MemoBatch
		types       = make([]string, 0, n)
		inputs      = make([]string, 0, n)
		maxAttempts = make([]int32, 0, n)
		queues      = make([]string, 0, n)
		priorities  = make([]int32, 0, n)
		jobIDs      = make([]int64, 0, n)
		scheduleIDs = make([][16]byte, 0, n)
		fireAts     = make([]time.Time, 0, n)
		metadata    = make([]string, 0, n)
		skips       = make([]string, 0, n)
		tenants     = make([]string, 0, n)
		prepared    = make([]bool, 0, n)
	)
	for i := range runs {
		r := &runs[i]
		ids = append(ids, r.ID)
		types = append(types, r.Type)
		inputs = append(inputs, string(r.Input))
		maxAttempts = append(maxAttempts, int32(r.MaxAttempts))
		queues = append(queues, r.Queue)
		priorities = append(priorities, int32(r.Priority))
		jobIDs = append(jobIDs, r.JobID)
		scheduleIDs = append(scheduleIDs, r.ScheduleID)
		fireAts = append(fireAts, r.FireAt)
		metadata = append(metadata, string(r.Metadata))
		skips = append(skips, r.Skip)
		tenants = append(tenants, r.Tenant)
		prepared = append(prepared, r.Prepared)
	}
	tag, err := db.Exec(ctx, q.sql(insertScheduledRunsStmt), ids, types, inputs, maxAttempts,
		queues, priorities, jobIDs, scheduleIDs, fireAts, metadata, skips, tenants, now, prepared)
	if err != nil {
		return 0, err
	}
	return int(tag.RowsAffected()), nil
}
