package engine

import (
	"context"
	"time"

	"github.com/google/uuid"
)

// The statements that write a step's record (its memo) and read one back.
//
// The statements that write step_runs (insertMemos, upsertMemos,
// insertParkedStep, stepFailed) insert a step only together with its run,
// under the run's key-share lock: they are what stands in for a foreign key
// (migration 003). No step is written for a missing run, and a run deleted
// meanwhile waits for the step's transaction, then deletes the step with
// the run's others.
var (
	// insertMemosStmt writes a batch of step records (see InsertMemos).
	insertMemosStmt = define(memoInsert)

	// upsertMemosStmt is insertMemosStmt that also takes over an earlier
	// attempt's record of a step (see memoConflict).
	upsertMemosStmt = define(memoInsert + "\n" + memoConflict)

	stepFailedStmt = define(`
INSERT INTO {s}step_runs (run_id, name, kind, status, result_type, error, started_at, finished_at, seq)
SELECT id, $2::text, 'step', 'failed', $3::text, $4::jsonb, $5::timestamptz, coalesce($7::timestamptz, now()), nullif($6::int, -1)
FROM {s}workflow_runs WHERE id = $1
FOR KEY SHARE
ON CONFLICT (run_id, name) DO UPDATE SET
	status = 'failed', error = excluded.error, attempts = step_runs.attempts + 1,
	started_at = excluded.started_at, finished_at = excluded.finished_at,
	seq = coalesce(excluded.seq, step_runs.seq)
WHERE step_runs.status <> 'completed'`)

	stepByNameStmt = define(`SELECT ` + stepColumns + ` FROM {s}step_runs WHERE run_id = $1 AND name = $2`)
)

// memoInsert writes a batch of step records (see InsertMemos), from the
// columns of a MemoBatch.
const memoInsert = `
INSERT INTO {s}step_runs (run_id, name, kind, status, result_type, output, started_at, finished_at, seq)
SELECT t.r, t.n, t.k, t.st, t.rt, t.o::jsonb, t.sa, t.fa, nullif(t.q, -1)
FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::timestamptz[], $8::timestamptz[], $9::int[])
	AS t(r, n, k, st, rt, o, sa, fa, q)
JOIN {s}workflow_runs run ON run.id = t.r
FOR KEY SHARE OF run`

// memoConflict makes a memo write an upsert: a step's record from an
// earlier attempt (a failure, a park) takes the new result and position; a
// completed record stays as it is.
const memoConflict = `ON CONFLICT (run_id, name) DO UPDATE SET
	kind = excluded.kind, status = excluded.status, result_type = excluded.result_type,
	output = excluded.output, error = NULL, attempts = step_runs.attempts + 1,
	started_at = excluded.started_at, finished_at = excluded.finished_at,
	seq = coalesce(excluded.seq, step_runs.seq)
WHERE step_runs.status <> 'completed'`

// Memo is a step record to write: a step's result (its memo), or a sleep
// that ended without parking.
type Memo struct {
	RunID      uuid.UUID
	Name       string
	Kind       string
	Status     string
	ResultType string
	Output     []byte // JSON; empty is stored as null
	StartedAt  time.Time
	FinishedAt time.Time
	Seq        *int // the record's position in the run's history; nil for none
}

// MemoBatch is step records as the columns of an unnest: the parameters of
// InsertMemos and UpsertMemos, and of CompleteRuns's memos. The zero value
// is an empty batch; NewMemoBatch sizes one.
//
// Run ids go as [16]byte, not uuid.UUID: pgx encodes a uuid.UUID through
// its driver.Valuer (a string, parsed back), which cost more than the rest
// of a memo batch's encoding; a [16]byte goes as 16 binary bytes. The same
// holds for every batch of this package.
type MemoBatch struct {
	n          int                  // capacity hint
	seen       map[memoKey]struct{} // the steps added
	runIDs     [][16]byte
	names      []string
	kinds      []string
	statuses   []string
	types      []string
	outputs    []string
	startedAts []time.Time
	at         []time.Time
	seqs       []int32 // -1: no position (see Memo.Seq)
}

// memoKey is a step of a run.
type memoKey struct {
	run  uuid.UUID
	name string
}

// NewMemoBatch returns an empty batch with room for n records.
func NewMemoBatch(n int) MemoBatch { return MemoBatch{n: n} }

// Len is the number of records in b.
func (b *MemoBatch) Len() int { return len(b.runIDs) }

// Add adds m unless a record of the same step of the same run is in b
// already, and says whether it did. Two attempts of one run racing on one
// step (a rescued job) may meet in a batch, and Postgres refuses to upsert
// a row twice in a statement.
func (b *MemoBatch) Add(m *Memo) bool {
	key := memoKey{m.RunID, m.Name}
	if _, dup := b.seen[key]; dup {
		return false
	}
	if b.runIDs == nil {
		b.seen = make(map[memoKey]struct{}, b.n)
		b.runIDs = make([][16]byte, 0, b.n)
		b.names = make([]string, 0, b.n)
		b.kinds = make([]string, 0, b.n)
		b.statuses = make([]string, 0, b.n)
		b.types = make([]string, 0, b.n)
		b.outputs = make([]string, 0, b.n)
		b.startedAts = make([]time.Time, 0, b.n)
		b.at = make([]time.Time, 0, b.n)
		b.seqs = make([]int32, 0, b.n)
	}
	b.runIDs = append(b.runIDs, m.RunID)
	b.names = append(b.names, m.Name)
	b.kinds = append(b.kinds, m.Kind)
	b.statuses = append(b.statuses, m.Status)
	b.types = append(b.types, m.ResultType)
	output := string(m.Output)
	if output == "" {
		output = "null"
	}
	b.outputs = append(b.outputs, output)
	b.startedAts = append(b.startedAts, m.StartedAt)
	b.at = append(b.at, m.FinishedAt)
	seq := int32(-1)
	if m.Seq != nil {
		seq = int32(*m.Seq)
	}
	b.seqs = append(b.seqs, seq)
	b.seen[key] = struct{}{}
	return true
}

func (b *MemoBatch) args() []any {
	return []any{b.runIDs, b.names, b.kinds, b.statuses, b.types, b.outputs, b.startedAts, b.at, b.seqs}
}

// InsertMemos writes the records of b, each with its run (see the comment
// above insertMemosStmt: a record of a missing run is not written). It
// fails whole, with a unique violation (SQLSTATE 23505), when one of the
// steps has a record already: a plain insert costs less than an upsert's
// speculative insertion, and UpsertMemos settles the rare conflict.
func (q *Queries) InsertMemos(ctx context.Context, db DBTX, b *MemoBatch) error {
	_, err := db.Exec(ctx, q.sql(insertMemosStmt), b.args()...)
	return err
}

// UpsertMemos writes the records of b, each with its run. A step's record
// from an earlier attempt (a failure, a park) takes the new result and
// position; a completed record stays as it is. It returns how many records
// it wrote.
func (q *Queries) UpsertMemos(ctx context.Context, db DBTX, b *MemoBatch) (int64, error) {
	tag, err := db.Exec(ctx, q.sql(upsertMemosStmt), b.args()...)
	if err != nil {
		return 0, err
	}
	return tag.RowsAffected(), nil
}

// UpsertMemo is UpsertMemos of the one record m. It returns false when it
// wrote nothing: the step has a completed record already (another attempt
// stored it first), or the run is gone.
func (q *Queries) UpsertMemo(ctx context.Context, db DBTX, m *Memo) (bool, error) {
	seq := int32(-1)
	if m.Seq != nil {
		seq = int32(*m.Seq)
	}
	output := string(m.Output)
	if output == "" {
		output = "null"
	}
	tag, err := db.Exec(ctx, q.sql(upsertMemosStmt), [][16]byte{m.RunID}, []string{m.Name}, []string{m.Kind},
		[]string{m.Status}, []string{m.ResultType}, []string{output},
		[]time.Time{m.StartedAt}, []time.Time{m.FinishedAt}, []int32{seq})
	if err != nil {
		return false, err
	}
	return tag.RowsAffected() > 0, nil
}

// StepFailedParams is a failed step to record.
type StepFailedParams struct {
	RunID      uuid.UUID
	Name       string
	ResultType string
	Error      []byte // the RunError's JSON
	StartedAt  time.Time
	Seq        int        // the record's position in the run's history; -1 for none
	Now        *time.Time // the step's finish; nil: the database's now()
}

// RecordStepFailed records a failed step: its error and one more attempt
// on the step's record, which it creates if there is none. A completed
// record stays as it is, and nothing is written for a missing run.
func (q *Queries) RecordStepFailed(ctx context.Context, db DBTX, p *StepFailedParams) error {
	_, err := db.Exec(ctx, q.sql(stepFailedStmt), p.RunID, p.Name, p.ResultType, p.Error, p.StartedAt, p.Seq, p.Now)
	return err
}

// StepByName reads the record of step name of run runID; ErrNotFound when
// there is none.
func (q *Queries) StepByName(ctx context.Context, db DBTX, runID uuid.UUID, name string) (*Step, error) {
	return scanStep(queryRow(ctx, db, q.sql(stepByNameStmt), runID, name))
}
