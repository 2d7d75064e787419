package engine

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
)

// HeldCount is how many runs of a workflow type are held back for one
// reason (HeldTenantLimit, HeldTenantRate).
type HeldCount struct {
	Type   string
	Reason string
	Count  int64
}

// CountHeldRuns counts the runs held back, by workflow type and reason:
// HeldTenantLimit (ready, while their tenant has as many running as its
// limit) and HeldTenantRate (ready, their tenant not at its limit, beyond
// its bucket's whole tokens in its line: see the top of tenant.go), the
// types' limits and rates as workers registered them within liveWithin; a
// type and reason without runs is absent. Its cost follows the running
// jobs, the ready runs of tenants at their limit, and the ready runs of
// rated types. For the gauges of package tributaryotel.
func (q *Queries) CountHeldRuns(ctx context.Context, db DBTX, liveWithin time.Duration) ([]HeldCount, error) {
	rows, err := db.Query(ctx, q.sql(countHeldRunsStmt), liveWithin.Seconds())
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowToStructByPos[HeldCount])
}
