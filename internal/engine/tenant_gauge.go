package engine

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
)

// HeldCount is how many runs of a workflow type are held back for one
// reason (HeldTenantLimit).
type HeldCount struct {
	Type   string
	Reason string
	Count  int64
}

// CountHeldRuns counts the runs held back, by workflow type and reason
// (HeldTenantLimit: ready, while their tenant has as many running as its
// limit, the types' limits as workers registered them within liveWithin);
// a type without held runs is absent. Its cost follows the running jobs
// and the ready runs of tenants at their limit. For the gauges of package
// tributaryotel.
func (q *Queries) CountHeldRuns(ctx context.Context, db DBTX, liveWithin time.Duration) ([]HeldCount, error) {
	rows, err := db.Query(ctx, q.sql(countHeldRunsStmt), liveWithin.Seconds())
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (HeldCount, error) {
		var c HeldCount
		c.Reason = HeldTenantLimit
		err := row.Scan(&c.Type, &c.Count)
		return c, err
	})
}
