package engine

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// MatchRunsParams select the runs of a bulk action (cancel or retry every
// run that matches): a listing's filters (ListRunsParams, whose After and
// Limit page the matches) and those that only bulk actions take.
type MatchRunsParams struct {
	ListRunsParams
	ErrorContains  string     // runs whose error message contains this, ignoring case
	FinishedFrom   *time.Time // runs that finished at or after this
	FinishedBefore *time.Time // runs that finished before this
	RecordedStep   string     // runs with a step record of this name (a bulk fork's count)
}

// MatchedRun is a run a bulk action matched: its id and its status as a
// run reads (see runReadColumns).
type MatchedRun struct {
	ID     uuid.UUID
	Status string
}

// matchColumns are the columns of a MatchedRun, in place of runReadColumns.
const matchColumns = `r.id, CASE WHEN r.status IN ('pending', 'sleeping', 'waiting') AND j.state = 'running' THEN 'running' ELSE r.status END`

// MatchRuns reads the ids and statuses of the runs p matches, newest first
// (by id), at most p.Limit, after p.After: a bulk action pages through its
// runs with it, one batch at a time. Its filter is the listing's
// (listRunsFiltered), planned for its values each time.
func (q *Queries) MatchRuns(ctx context.Context, db DBTX, p *MatchRunsParams) ([]MatchedRun, error) {
	sql, args := q.matchRunsSQL(p, p.Limit)
	rows, err := db.Query(ctx, sql, args...)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (MatchedRun, error) {
		var m MatchedRun
		err := row.Scan(&m.ID, &m.Status)
		return m, err
	})
}

// CountMatchingRuns counts the runs p matches (after p.After, its Limit
// aside), by their status as a run reads.
func (q *Queries) CountMatchingRuns(ctx context.Context, db DBTX, p *MatchRunsParams) (map[string]int64, error) {
	sql, args := q.matchRunsSQL(p, nil)
	rows, err := db.Query(ctx, `SELECT m.status, count(*) FROM (`+sql+`) m (id, status) GROUP BY m.status`, args...)
	if err != nil {
		return nil, err
	}
	counts := map[string]int64{}
	var status string
	var n int64
	if _, err := pgx.ForEachRow(rows, []any{&status, &n}, func() error { counts[status] = n; return nil }); err != nil {
		return nil, err
	}
	return counts, nil
}

// matchRunsSQL is the statement of MatchRuns and its arguments, limited
// to limit rows (nil: all). It is the listing's statement of p
// (listRunsFiltered), which keeps one definition of what each filter
// means, with matchColumns selected and the bulk filters added.
func (q *Queries) matchRunsSQL(p *MatchRunsParams, limit any) (string, []any) {
	lp := p.ListRunsParams
	sql, args := q.listRunsFiltered(&lp, []any{lp.Type, lp.Status, lp.ScheduleID, lp.before(), limit})
	sql = strings.Replace(sql, runReadColumns, matchColumns, 1)
	var extra strings.Builder
	arg := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args)-1) // args[0] is the query mode
	}
	if p.ErrorContains != "" {
		extra.WriteString("\n\tAND strpos(lower(r.error->>'message'), lower(" + arg(p.ErrorContains) + ")) > 0")
	}
	if p.FinishedFrom != nil {
		extra.WriteString("\n\tAND r.finished_at >= " + arg(*p.FinishedFrom))
	}
	if p.FinishedBefore != nil {
		extra.WriteString("\n\tAND r.finished_at < " + arg(*p.FinishedBefore))
	}
	if p.RecordedStep != "" {
		extra.WriteString("\n\tAND EXISTS (SELECT 1 FROM " + q.prefix + "step_runs s WHERE s.run_id = r.id AND s.name = " + arg(p.RecordedStep) + ")")
	}
	sql = strings.TrimSuffix(sql, listRunsOrder) + extra.String() + listRunsOrder
	return sql, args
}
