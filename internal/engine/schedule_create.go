package engine

import (
	"context"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// InsertScheduleTx's set-based twin (CreateManyTx): one array per column;
// the rows come back in no particular order, without the rows whose key
// their owner has already.
var insertSchedulesStmt = define(`
INSERT INTO {s}schedules (id, name, description, owner, workflow_type, input, cron, time_zone, start_at, end_at,
	overlap_policy, catchup_window_ms, max_attempts, timeout_ms, queue, priority, paused, pause_note, next_fire_at,
	catchup_policy, paused_at, grant_id, keep_runs, key, declared_by, created_by, run_tenant, created_at, updated_at,
	dst_gap, dst_fold, calendars, on_excluded, retry)
SELECT id, name, description, owner, workflow_type, input::jsonb, cron, time_zone, start_at, end_at,
	overlap_policy, catchup_window_ms, max_attempts, timeout_ms, queue, priority, paused, pause_note, next_fire_at,
	catchup_policy, CASE WHEN paused THEN coalesce($27::timestamptz, now()) END, grant_id, keep_runs, nullif(key, ''), nullif(declared_by, ''),
	created_by, nullif(run_tenant, ''), coalesce($27::timestamptz, now()), coalesce($27::timestamptz, now()),
	dst_gap, dst_fold, coalesce(string_to_array(nullif(calendars, ''), ','), '{}'), on_excluded, nullif(retry, '')::jsonb
FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[],
	$9::timestamptz[], $10::timestamptz[], $11::text[], $12::bigint[], $13::integer[], $14::bigint[], $15::text[],
	$16::smallint[], $17::boolean[], $18::text[], $19::timestamptz[], $20::text[], $21::uuid[], $22::integer[],
	$23::text[], $24::text[], $25::text[], $26::text[], $28::text[], $29::text[], $30::text[], $31::text[], $32::text[])
	AS v(id, name, description, owner, workflow_type, input, cron, time_zone, start_at, end_at,
	overlap_policy, catchup_window_ms, max_attempts, timeout_ms, queue, priority, paused, pause_note, next_fire_at,
	catchup_policy, grant_id, keep_runs, key, declared_by, created_by, run_tenant, dst_gap, dst_fold, calendars, on_excluded, retry)
ON CONFLICT (owner, key) WHERE key IS NOT NULL DO NOTHING
RETURNING ` + scheduleColumns)

// schedulesByKeysStmt reads the schedules of (owner, key) pairs, one array
// of each.
var schedulesByKeysStmt = define(`
SELECT ` + scheduleColumns + ` FROM {s}schedules s
	JOIN unnest($1::text[], $2::text[]) AS k(k_owner, k_key) ON s.owner = k.k_owner AND s.key = k.k_key`)

// SchedulesByKeys reads the schedules whose (owner, key) is one of
// (owners[i], keys[i]), in no particular order; an empty, non-nil slice
// when there are none.
func (q *Queries) SchedulesByKeys(ctx context.Context, db DBTX, owners, keys []string) ([]Schedule, error) {
	return scanSchedules(db.Query(ctx, q.sql(schedulesByKeysStmt), owners, keys))
}

// InsertSchedulesParams are the columns of new schedules, one slice per
// column (InsertScheduleParams's fields), all of the same length.
type InsertSchedulesParams struct {
	ID              []uuid.UUID
	Name            []string
	Description     []string
	Owner           []string
	Type            []string
	Input           []string // JSON
	Cron            []string
	TimeZone        []string
	StartAt         []*time.Time
	EndAt           []*time.Time
	OverlapPolicy   []string
	CatchUpWindowMS []int64
	MaxAttempts     []int
	TimeoutMS       []int64
	Queue           []string
	Priority        []int
	Paused          []bool
	PauseNote       []string
	NextFireAt      []*time.Time
	CatchUpPolicy   []string
	GrantID         []*uuid.UUID
	KeepRuns        []int32
	Key             []string
	DeclaredBy      []string
	CreatedBy       []string
	RunTenant       []string
	DSTGap          []string
	DSTFold         []string
	Calendars       []string // each row's calendars, comma-separated (names hold no comma)
	OnExcluded      []string
	Retry           []string // each row's retry policy's JSON, "" for none
	// Now is the time recorded (created, paused), one for all the rows;
	// nil: the database's now().
	Now *time.Time
}

// NewInsertSchedulesParams returns empty params with room for n rows.
func NewInsertSchedulesParams(n int) *InsertSchedulesParams {
	return &InsertSchedulesParams{
		ID: make([]uuid.UUID, 0, n), Name: make([]string, 0, n), Description: make([]string, 0, n),
		Owner: make([]string, 0, n), Type: make([]string, 0, n), Input: make([]string, 0, n),
		Cron: make([]string, 0, n), TimeZone: make([]string, 0, n), StartAt: make([]*time.Time, 0, n),
		EndAt: make([]*time.Time, 0, n), OverlapPolicy: make([]string, 0, n), CatchUpWindowMS: make([]int64, 0, n),
		MaxAttempts: make([]int, 0, n), TimeoutMS: make([]int64, 0, n), Queue: make([]string, 0, n),
		Priority: make([]int, 0, n), Paused: make([]bool, 0, n), PauseNote: make([]string, 0, n),
		NextFireAt: make([]*time.Time, 0, n), CatchUpPolicy: make([]string, 0, n), GrantID: make([]*uuid.UUID, 0, n),
		KeepRuns: make([]int32, 0, n), Key: make([]string, 0, n), DeclaredBy: make([]string, 0, n),
		CreatedBy: make([]string, 0, n), RunTenant: make([]string, 0, n), DSTGap: make([]string, 0, n),
		DSTFold: make([]string, 0, n), Calendars: make([]string, 0, n), OnExcluded: make([]string, 0, n),
		Retry: make([]string, 0, n),
	}
}

// Add appends the row of p.
func (r *InsertSchedulesParams) Add(p *InsertScheduleParams) {
	r.ID = append(r.ID, p.ID)
	r.Name = append(r.Name, p.Name)
	r.Description = append(r.Description, p.Description)
	r.Owner = append(r.Owner, p.Owner)
	r.Type = append(r.Type, p.Type)
	r.Input = append(r.Input, string(p.Input))
	r.Cron = append(r.Cron, p.Cron)
	r.TimeZone = append(r.TimeZone, p.TimeZone)
	r.StartAt = append(r.StartAt, p.StartAt)
	r.EndAt = append(r.EndAt, p.EndAt)
	r.OverlapPolicy = append(r.OverlapPolicy, p.OverlapPolicy)
	r.CatchUpWindowMS = append(r.CatchUpWindowMS, p.CatchUpWindowMS)
	r.MaxAttempts = append(r.MaxAttempts, p.MaxAttempts)
	r.TimeoutMS = append(r.TimeoutMS, p.TimeoutMS)
	r.Queue = append(r.Queue, p.Queue)
	r.Priority = append(r.Priority, p.Priority)
	r.Paused = append(r.Paused, p.Paused)
	r.PauseNote = append(r.PauseNote, p.PauseNote)
	r.NextFireAt = append(r.NextFireAt, p.NextFireAt)
	r.CatchUpPolicy = append(r.CatchUpPolicy, p.CatchUpPolicy)
	r.GrantID = append(r.GrantID, p.GrantID)
	r.KeepRuns = append(r.KeepRuns, int32(p.KeepRuns))
	r.Key = append(r.Key, p.Key)
	r.DeclaredBy = append(r.DeclaredBy, p.DeclaredBy)
	r.CreatedBy = append(r.CreatedBy, p.CreatedBy)
	r.RunTenant = append(r.RunTenant, p.RunTenant)
	r.DSTGap = append(r.DSTGap, p.DSTGap)
	r.DSTFold = append(r.DSTFold, p.DSTFold)
	r.Calendars = append(r.Calendars, strings.Join(p.Calendars, ","))
	r.OnExcluded = append(r.OnExcluded, p.OnExcluded)
	r.Retry = append(r.Retry, string(p.Retry))
}

// Len is how many rows r holds.
func (r *InsertSchedulesParams) Len() int { return len(r.ID) }

// Slice is the rows [from, to) of r, sharing r's arrays.
func (r *InsertSchedulesParams) Slice(from, to int) *InsertSchedulesParams {
	return &InsertSchedulesParams{
		ID: r.ID[from:to], Name: r.Name[from:to], Description: r.Description[from:to], Owner: r.Owner[from:to],
		Type: r.Type[from:to], Input: r.Input[from:to], Cron: r.Cron[from:to], TimeZone: r.TimeZone[from:to],
		StartAt: r.StartAt[from:to], EndAt: r.EndAt[from:to], OverlapPolicy: r.OverlapPolicy[from:to],
		CatchUpWindowMS: r.CatchUpWindowMS[from:to], MaxAttempts: r.MaxAttempts[from:to],
		TimeoutMS: r.TimeoutMS[from:to], Queue: r.Queue[from:to], Priority: r.Priority[from:to],
		Paused: r.Paused[from:to], PauseNote: r.PauseNote[from:to], NextFireAt: r.NextFireAt[from:to],
		CatchUpPolicy: r.CatchUpPolicy[from:to], GrantID: r.GrantID[from:to], KeepRuns: r.KeepRuns[from:to],
		Key: r.Key[from:to], DeclaredBy: r.DeclaredBy[from:to], CreatedBy: r.CreatedBy[from:to],
		RunTenant: r.RunTenant[from:to], DSTGap: r.DSTGap[from:to], DSTFold: r.DSTFold[from:to],
		Calendars: r.Calendars[from:to], OnExcluded: r.OnExcluded[from:to], Retry: r.Retry[from:to], Now: r.Now,
	}
}

// InsertSchedulesTx inserts every row of p in one statement and returns
// them as stored, in no particular order. A row whose key its owner has
// already (committed, or by a racing transaction that commits) is not
// inserted and not returned. The caller bounds the rows of one call (the
// arrays' size) and seeds the first slots' fire jobs in the same tx.
func (q *Queries) InsertSchedulesTx(ctx context.Context, tx pgx.Tx, p *InsertSchedulesParams) ([]Schedule, error) {
	return scanSchedules(tx.Query(ctx, q.sql(insertSchedulesStmt), p.ID, p.Name, p.Description, p.Owner, p.Type,
		p.Input, p.Cron, p.TimeZone, p.StartAt, p.EndAt, p.OverlapPolicy, p.CatchUpWindowMS, p.MaxAttempts,
		p.TimeoutMS, p.Queue, p.Priority, p.Paused, p.PauseNote, p.NextFireAt, p.CatchUpPolicy, p.GrantID, p.KeepRuns,
		p.Key, p.DeclaredBy, p.CreatedBy, p.RunTenant, p.Now, p.DSTGap, p.DSTFold, p.Calendars, p.OnExcluded, p.Retry))
}
