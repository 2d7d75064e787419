package engine

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// The statements of a fork (workflow.Client.Fork): a new run, inserted as
// any other (InsertRun), is marked with its origin and given copies of the
// origin's step records that replay is to return instead of running again.
var (
	forkOriginStmt = define(`UPDATE {s}workflow_runs SET forked_from = $2, forked_from_step = $3 WHERE id = $1`)

	// forkStepsStmt copies records as they are, position included, so that
	// the fork's replay consumes them in the origin's order (see
	// workflow/history.go); the fork's own steps take the positions after
	// them.
	forkStepsStmt = define(`
INSERT INTO {s}step_runs (run_id, name, kind, status, result_type, output, error, attempts, wake_at, child_run_id,
	started_at, finished_at, seq, signal_name)
SELECT $1, name, kind, status, result_type, output, error, attempts, wake_at, child_run_id,
	started_at, finished_at, seq, signal_name
FROM {s}step_runs WHERE run_id = $2 AND name = ANY($3::text[])`)
)

// Fork is a fork to record: Run, just inserted in the same transaction, was
// forked from Origin at step Step, and takes copies of the origin's step
// records named Copy.
type Fork struct {
	Run    uuid.UUID
	Origin uuid.UUID
	Step   string
	Copy   []string
}

// ForkRunTx records f within tx: the run's origin, and the copies of the
// origin's records. The origin's row is expected to be locked by the
// caller (RunByIDForUpdateTx), so that its records do not change meanwhile.
func (q *Queries) ForkRunTx(ctx context.Context, tx pgx.Tx, f *Fork) error {
	if _, err := tx.Exec(ctx, q.sql(forkOriginStmt), f.Run, f.Origin, f.Step); err != nil {
		return err
	}
	if len(f.Copy) == 0 {
		return nil
	}
	tag, err := tx.Exec(ctx, q.sql(forkStepsStmt), f.Run, f.Origin, f.Copy)
	if err != nil {
		return err
	}
	if int(tag.RowsAffected()) != len(f.Copy) {
		return fmt.Errorf("copied %d step records of run %s, not %d: the run changed meanwhile", tag.RowsAffected(), f.Origin, len(f.Copy))
	}
	return nil
}
