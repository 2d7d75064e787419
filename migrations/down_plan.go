package migrations

import (
	"context"
	"fmt"
)

// DownPlan is what Down would roll back and the data it would drop, read
// before it runs (PlanDown), so that an operator can confirm knowing what
// is lost: `tributary migrate down` asks with it.
type DownPlan struct {
	// River is whether Down would roll back River's migrations too:
	// DownOpts.IncludeRiver, on a database that has River's tables.
	River bool

	// Tables lists the tables Down would drop that hold what an operator
	// would miss, each with its rows: Tributary's schedules and workflow
	// runs (TableSchedules, TableWorkflowRuns), then River's jobs
	// (TableRiverJobs), in the order Down drops them. The tables that go
	// with them (a run's steps, a schedule's slots, River's queues) are not
	// listed.
	Tables []TableRows

	// Versions lists Tributary's migrations Down would roll back, newest
	// first, the order it rolls them back in. Empty when there is none.
	Versions []Version
}

// Table is a table whose rows PlanDown counts before Down drops it.
type Table string

const (
	// TableRiverJobs is River's river_job: every job, a workflow run's
	// included. Down drops it with River's migrations (IncludeRiver).
	TableRiverJobs Table = "river_job"

	// TableSchedules is Tributary's schedules, which migration 002_schedules
	// creates and rolling it back drops.
	TableSchedules Table = "schedules"

	// TableWorkflowRuns is Tributary's workflow_runs, which migration
	// 001_workflows creates and rolling it back drops.
	TableWorkflowRuns Table = "workflow_runs"
)

// TableRows is a table Down would drop and the rows it holds.
type TableRows struct {
	// Rows is how many rows the table held when PlanDown counted them.
	Rows int64

	// Table is the table.
	Table Table
}

// countedTables are the tables whose rows PlanDown counts, by the migration
// that creates them and, rolled back, drops them.
var countedTables = map[Version]Table{
	{Name: "workflows", Version: 1}: TableWorkflowRuns,
	{Name: "schedules", Version: 2}: TableSchedules,
}

// PlanDown says what Down with the same opts would do now: the migrations
// it would roll back and the rows of the tables it would drop. It returns
// the errors Down would for opts (a target version that does not exist,
// IncludeRiver with a target) and for a database that has a Tributary
// migration this build doesn't know. It changes nothing and, like Status,
// takes no lock: a Down that follows may find the database changed, and
// the counts are what the tables held when read.
func (m *Migrator) PlanDown(ctx context.Context, opts *DownOpts) (*DownPlan, error) {
	if opts == nil {
		opts = &DownOpts{}
	}
	if err := m.checkDownOpts(opts); err != nil {
		return nil, err
	}

	conn, err := m.checkedConn(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Release()

	rollBack, err := m.rolledBack(ctx, conn.Conn(), opts)
	if err != nil {
		return nil, err
	}
	plan := &DownPlan{}
	var drops []Table
	for _, mig := range rollBack {
		version := Version{Name: mig.Name, Version: mig.Version}
		plan.Versions = append(plan.Versions, version)
		if table, ok := countedTables[version]; ok {
			drops = append(drops, table)
		}
	}
	if opts.IncludeRiver {
		riverVersions, err := m.river.ExistingVersions(ctx)
		if err != nil {
			return nil, fmt.Errorf("migrations: reading River's migrations: %w", err)
		}
		if plan.River = len(riverVersions) > 0; plan.River {
			drops = append(drops, TableRiverJobs)
		}
	}

	for _, table := range drops {
		var rows int64
		if err := conn.QueryRow(ctx, "SELECT count(*) FROM "+m.prefix+string(table)).Scan(&rows); err != nil {
			return nil, fmt.Errorf("migrations: counting the rows of %s: %w", table, err)
		}
		plan.Tables = append(plan.Tables, TableRows{Rows: rows, Table: table})
	}
	return plan, nil
}
