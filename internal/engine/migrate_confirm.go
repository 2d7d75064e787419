package engine

import "context"

// CountedTable is a table whose rows `migrate down` counts before it drops
// the table, so that the operator confirms knowing what is lost.
type CountedTable int

// The counted tables.
const (
	TableSchedules CountedTable = iota
	TableWorkflowRuns
	TableRiverJobs
)

// countedTables are the tables' names and their counting statements, by
// CountedTable.
var countedTables = [...]struct {
	name  string
	count stmt
}{
	TableSchedules:    {"schedules", define(`SELECT count(*) FROM {s}schedules`)},
	TableWorkflowRuns: {"workflow_runs", define(`SELECT count(*) FROM {s}workflow_runs`)},
	TableRiverJobs:    {"river_job", define(`SELECT count(*) FROM {s}river_job`)},
}

// String is the table's name.
func (t CountedTable) String() string { return countedTables[t].name }

// CountRows counts the rows of table t.
func (q *Queries) CountRows(ctx context.Context, db DBTX, t CountedTable) (int64, error) {
	var n int64
	err := queryRow(ctx, db, q.sql(countedTables[t].count)).Scan(&n)
	return n, err
}
