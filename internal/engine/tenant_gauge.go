package engine

import (
	"context"

	"github.com/jackc/pgx/v5"
)

// countHeldRunsStmt counts the held runs (see migration 014) by workflow
// type and why, through workflow_runs_held, the partial index of the runs
// that carry a hold: its cost follows those runs (held now, or cancelled
// while held, which keep their mark), not the table.
var countHeldRunsStmt = define(`SELECT workflow_type, held, count(*) FROM {s}workflow_runs
	WHERE held IS NOT NULL AND status = 'pending' GROUP BY 1, 2 ORDER BY 1, 2`)

// HeldCount is how many runs of a workflow type are held back for one
// reason (HeldTenantLimit).
type HeldCount struct {
	Type   string
	Reason string
	Count  int64
}

// CountHeldRuns counts the pending runs held back, by workflow type and
// reason; a type without held runs is absent. For the gauges of package
// tributaryotel.
func (q *Queries) CountHeldRuns(ctx context.Context, db DBTX) ([]HeldCount, error) {
	rows, err := db.Query(ctx, q.sql(countHeldRunsStmt))
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (HeldCount, error) {
		var c HeldCount
		err := row.Scan(&c.Type, &c.Reason, &c.Count)
		return c, err
	})
}
