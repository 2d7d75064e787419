package engine

import (
	"context"
	"strconv"
	"strings"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// notPrepared leaves out the runs of prepared slots (slot_prepared.go):
// written ahead of their time, they are not runs until their slot is
// decided, and a listing shows them then.
const notPrepared = `(r.status <> 'pending' OR j.state IS DISTINCT FROM 'pending')`

// listRunsWhere lists runs (ListRuns); listRunsOrder ends it.
const listRunsWhere = `
SELECT ` + runReadColumns + runReadFrom + `
WHERE ($1 = '' OR r.workflow_type = $1)
	AND ($2 = '' OR (CASE WHEN r.status IN ('pending', 'sleeping', 'waiting') AND j.state = 'running' THEN 'running' ELSE r.status END) = $2)
	AND ($3::uuid IS NULL OR r.schedule_id = $3)
	AND r.id < $4
	AND ` + notPrepared

// listRunsOfScheduleWhere lists a schedule's runs (History), through
// workflow_runs_schedule_history: the schedule is not optional here, so
// that every plan, generic ones included, reads the schedule's runs and
// not the table's.
const listRunsOfScheduleWhere = `
SELECT ` + runReadColumns + runReadFrom + `
WHERE r.schedule_id = $3
	AND ($1 = '' OR r.workflow_type = $1)
	AND ($2 = '' OR (CASE WHEN r.status IN ('pending', 'sleeping', 'waiting') AND j.state = 'running' THEN 'running' ELSE r.status END) = $2)
	AND r.id < $4
	AND ` + notPrepared

const listRunsOrder = `
ORDER BY r.id DESC
LIMIT $5`

// runTypes are the workflow types that have runs, each found by one probe
// of workflow_runs_type_status_id (a loose index scan): its cost follows
// the number of types, not of runs. ListRuns matches an idempotency key of
// any type through it and the unique (type, key) index.
const runTypes = `
WITH RECURSIVE types(typ) AS (
	(SELECT min(workflow_type) FROM {s}workflow_runs)
	UNION ALL
	SELECT (SELECT min(workflow_type) FROM {s}workflow_runs WHERE workflow_type > types.typ)
	FROM types WHERE types.typ IS NOT NULL
)
SELECT typ FROM types WHERE typ IS NOT NULL`

// The listings of runs and of a run's steps. listRunsStmt and
// listRunsOfScheduleStmt serve the filters every listing has; ListRuns
// composes the others onto listRunsWhere and listRunsOfScheduleWhere (see
// listRunsFiltered).
var (
	listRunsStmt = define(listRunsWhere + listRunsOrder)

	listRunsOfScheduleStmt = define(listRunsOfScheduleWhere + listRunsOrder)

	stepsOfRunStmt = define(`SELECT ` + stepColumns + ` FROM {s}step_runs WHERE run_id = $1 ORDER BY seq NULLS FIRST, started_at, name`)
)

// ListRunsParams filter and page ListRuns. The zero value of a filter
// keeps every run.
type ListRunsParams struct {
	Type       string     // the workflow type
	Status     string     // the status as a run reads (a run whose job is running reads running)
	ScheduleID *uuid.UUID // the schedule that started the run
	// After lists the runs with smaller ids: the last run id of the
	// previous page, or the listing's ceiling (workflow's listCeiling), a
	// bound the listing's index scan starts from in every plan, generic
	// ones included; nil lists from the largest id there can be.
	After *uuid.UUID
	Limit int // the page size

	IdempotencyKey  string     // the run started with this key (of any type when Type is "")
	Tenant          string     // the runs of this tenant
	Metadata        []byte     // a JSON object the run's metadata must contain (@>); nil for none
	CreatedFromID   *uuid.UUID // runs whose id is at least this (the first id of a millisecond)
	CreatedBeforeID *uuid.UUID // runs whose id is less than this
	ForkedFrom      *uuid.UUID // the forks of this run (workflow_runs_forked_from)
}

// before is the id the listing p lists below (ListRunsParams.After).
func (p *ListRunsParams) before() uuid.UUID {
	if p.After == nil {
		return uuid.Max
	}
	return *p.After
}

// ListRuns lists runs newest first (by id), read with their River jobs
// joined (see runReadColumns), at most p.Limit. A listing with
// IdempotencyKey, Tenant, Metadata, CreatedFromID, CreatedBeforeID or ForkedFrom is planned
// for its values each time (QueryExecModeExec), never with a generic plan.
func (q *Queries) ListRuns(ctx context.Context, db DBTX, p *ListRunsParams) ([]*Run, error) {
	args := []any{p.Type, p.Status, p.ScheduleID, p.before(), p.Limit}
	if p.IdempotencyKey != "" || p.Tenant != "" || p.Metadata != nil || p.CreatedFromID != nil || p.CreatedBeforeID != nil || p.ForkedFrom != nil {
		sql, args := q.listRunsFiltered(p, args)
		return scanRuns(db.Query(ctx, sql, args...))
	}
	sql := q.sql(listRunsStmt)
	if p.ScheduleID != nil {
		sql = q.sql(listRunsOfScheduleStmt)
	}
	return scanRuns(db.Query(ctx, sql, args...))
}

// listRunsFiltered is the listing query of p with the clauses of its
// filters that listRunsStmt lacks, and its arguments, which start with
// args (the five of listRunsStmt). It is run with QueryExecModeExec,
// planned for its values: a generic plan cannot tell a rare metadata value
// from a common one. The type and a finished status are repeated as plain
// clauses, so that the plan can use the indexes that lead with them.
func (q *Queries) listRunsFiltered(p *ListRunsParams, args []any) (string, []any) {
	where := listRunsWhere
	if p.ScheduleID != nil {
		where = listRunsOfScheduleWhere
	}
	var sql strings.Builder
	sql.WriteString(where)
	arg := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	if p.Type != "" {
		sql.WriteString("\n\tAND r.workflow_type = $1")
	}
	switch p.Status {
	case "completed", "failed", "cancelled", "skipped":
		// A finished status reads as stored; the constant lets a plan use a
		// partial index on it.
		sql.WriteString("\n\tAND r.status = '" + p.Status + "'")
	}
	if p.IdempotencyKey != "" {
		sql.WriteString("\n\tAND r.idempotency_key = " + arg(p.IdempotencyKey))
		if p.Type == "" {
			sql.WriteString("\n\tAND r.workflow_type IN (" + runTypes + ")")
		}
	}
	if p.Tenant != "" {
		sql.WriteString("\n\tAND r.tenant = " + arg(p.Tenant))
	}
	if p.Metadata != nil {
		// Runs without metadata are not in workflow_runs_metadata.
		sql.WriteString("\n\tAND r.metadata @> " + arg(string(p.Metadata)) + "::jsonb AND r.metadata <> '{}'::jsonb")
	}
	if p.CreatedFromID != nil {
		sql.WriteString("\n\tAND r.id >= " + arg(*p.CreatedFromID))
	}
	if p.CreatedBeforeID != nil {
		sql.WriteString("\n\tAND r.id < " + arg(*p.CreatedBeforeID))
	}
	if p.ForkedFrom != nil {
		sql.WriteString("\n\tAND r.forked_from = " + arg(*p.ForkedFrom))
	}
	sql.WriteString(listRunsOrder)
	return q.qualify(sql.String()), append([]any{pgx.QueryExecModeExec}, args...)
}

// StepsOfRun reads a run's step records in the order they started (their
// position in the run's history; records from before migration 007 first,
// by start time).
func (q *Queries) StepsOfRun(ctx context.Context, db DBTX, runID uuid.UUID) ([]*Step, error) {
	rows, err := db.Query(ctx, q.sql(stepsOfRunStmt), runID)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (*Step, error) { return scanStep(row) })
}
