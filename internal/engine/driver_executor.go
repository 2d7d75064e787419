package engine

import (
	"context"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/rivertype"
)

// GetExecutor is River's executor on the pool, except that the two
// single-row statements a working River client repeats on the pool for as
// long as it runs, its leader's re-election (every few seconds) and its
// producers' queue upserts, run in a transaction of their own instead of
// through the pool's QueryRow.
//
// Why: pgxpool's QueryRow returns a row that keeps its *pgxpool.Conn after
// Scan, and the row lives in a slab of 128 per connection that is
// replaced only after 128 more QueryRows on that connection; a Conn kept
// so keeps reachable the whole slab of Conns it was allocated in. A
// client's heap then grew for as long as its connections lived (the soak,
// `tributary bench soak`; queryRow in sql.go says the same of the
// engine's own reads). A transaction's rows belong to its connection and
// keep nothing of the pool. The cost is a BEGIN and a COMMIT on two
// statements that run every few seconds.
func (d *Driver) GetExecutor() riverdriver.Executor {
	if d.pilot.pool == nil {
		return d.Driver.GetExecutor()
	}
	return &executor{Executor: d.Driver.GetExecutor(), d: d}
}

// executor is Driver.GetExecutor's executor.
type executor struct {
	riverdriver.Executor
	d *Driver
}

func (e *executor) LeaderAttemptReelect(ctx context.Context, params *riverdriver.LeaderReelectParams) (*riverdriver.Leader, error) {
	return inOwnTx(ctx, e.d, func(exec riverdriver.ExecutorTx) (*riverdriver.Leader, error) {
		return exec.LeaderAttemptReelect(ctx, params)
	})
}

func (e *executor) QueueCreateOrSetUpdatedAt(ctx context.Context, params *riverdriver.QueueCreateOrSetUpdatedAtParams) (*rivertype.Queue, error) {
	return inOwnTx(ctx, e.d, func(exec riverdriver.ExecutorTx) (*rivertype.Queue, error) {
		return exec.QueueCreateOrSetUpdatedAt(ctx, params)
	})
}

// inOwnTx runs f in a transaction of its own on d's pool, committed when f
// succeeds and rolled back when it fails.
func inOwnTx[T any](ctx context.Context, d *Driver, f func(riverdriver.ExecutorTx) (T, error)) (T, error) {
	var result T
	err := pgx.BeginFunc(ctx, d.pilot.pool, func(tx pgx.Tx) error {
		var err error
		result, err = f(d.UnwrapExecutor(tx))
		return err
	})
	return result, err
}
