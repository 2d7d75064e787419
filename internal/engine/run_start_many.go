package engine

import (
	"context"
	"time"

	"github.com/google/uuid"
)

// insertRunsStmt inserts many plain runs in one statement: pending, each
// with its River job, and no idempotency key, schedule, parent or debounce
// key (InsertRun inserts those, one at a time, for the conflicts they
// decide). The tags go as a JSON array each ($9): Postgres arrays of arrays
// must be rectangular.
var insertRunsStmt = define(`
INSERT INTO {s}workflow_runs (id, workflow_type, input, max_attempts, queue, priority, job_id, metadata, tags, status, tenant,
	created_at, updated_at)
SELECT v.id, v.workflow_type, v.input::jsonb, v.max_attempts, v.queue, v.priority, v.job_id, v.metadata::jsonb,
	ARRAY(SELECT jsonb_array_elements_text(v.tags::jsonb)), 'pending', nullif(v.tenant, ''),
	coalesce($11::timestamptz, now()), coalesce($11::timestamptz, now())
FROM unnest($1::uuid[], $2::text[], $3::text[], $4::int[], $5::text[], $6::int[], $7::bigint[], $8::text[], $9::text[], $10::text[])
	AS v(id, workflow_type, input, max_attempts, queue, priority, job_id, metadata, tags, tenant)
RETURNING ` + runColumns)

// InsertRunsParams are plain runs to insert, a slice element each (see
// InsertRuns).
type InsertRunsParams struct {
	IDs         []uuid.UUID
	Types       []string
	Inputs      []string // JSON
	MaxAttempts []int32
	Queues      []string
	Priorities  []int32
	JobIDs      []int64
	Metadata    []string   // JSON objects
	Tags        []string   // JSON arrays of strings
	Tenants     []string   // "" for none
	Now         *time.Time // the time recorded; nil: the database's now()
}

// InsertRuns inserts plain runs (pending, each linked to its River job,
// without an idempotency key, schedule, parent or debounce key) in one
// statement and returns their rows, in no particular order.
func (q *Queries) InsertRuns(ctx context.Context, db DBTX, p *InsertRunsParams) ([]*Run, error) {
	rows, err := db.Query(ctx, q.sql(insertRunsStmt), p.IDs, p.Types, p.Inputs, p.MaxAttempts, p.Queues, p.Priorities,
		p.JobIDs, p.Metadata, p.Tags, p.Tenants, p.Now)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	runs := make([]*Run, 0, len(p.IDs))
	for rows.Next() {
		r, err := scanRun(rows)
		if err != nil {
			return nil, err
		}
		runs = append(runs, r)
	}
	return runs, rows.Err()
}
