package engine

import (
	"context"

	"github.com/jackc/pgx/v5"
)

// The workflow types that live schedules (not paused, with a next slot)
// start, with how many schedules each: the reconciler's check for types no
// live worker serves (warnUnserved).
var liveScheduleTypesStmt = define(`
SELECT workflow_type, count(*) FROM {s}schedules WHERE NOT paused AND next_fire_at IS NOT NULL GROUP BY 1`)

// LiveScheduleTypes returns, by workflow type, how many live schedules
// (not paused, with a next slot) start it.
func (q *Queries) LiveScheduleTypes(ctx context.Context, db DBTX) (map[string]int, error) {
	rows, err := db.Query(ctx, q.sql(liveScheduleTypesStmt))
	if err != nil {
		return nil, err
	}
	counts := map[string]int{}
	var (
		typ string
		n   int
	)
	if _, err := pgx.ForEachRow(rows, []any{&typ, &n}, func() error {
		counts[typ] = n
		return nil
	}); err != nil {
		return nil, err
	}
	return counts, nil
}
