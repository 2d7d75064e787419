package engine

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// BatchPoolSettings are the server settings of a workflow client's batch
// pool (workflow's newBatchPool, which says why), on top of its pool's
// own: generic plans, made without sequential scans. The batch statements'
// plan tests plan under them.
var BatchPoolSettings = map[string]string{
	"plan_cache_mode": "force_generic_plan",
	"enable_seqscan":  "off",
}

// Pool is a pgxpool.Pool whose reads keep nothing of the pool once done:
// Query runs on a connection acquired for its rows and released when they
// close, and QueryRow on one acquired for its Scan (queryRow).
//
// Why: pgxpool's own Query and QueryRow hand out rows from a slab of 128
// per connection, and a slot is only overwritten by the 128th query after
// it on that connection. Until then it keeps its query's arguments and
// rows reachable. A connection that serves few queries (one deep in the
// pool's idle stack) fills its slab over hours, so a working client's
// heap grew for as long as its connections lived, by up to 128 queries'
// worth a connection (`tributary bench soak`: 0.5 MiB in 11 minutes, most
// of it River's fetches). The cost is one small allocation a query, which
// pgxpool's slab saves.
type Pool struct{ *pgxpool.Pool }

// Query runs sql on a connection of its own, released when the rows are
// closed or read to their end.
func (p Pool) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	conn, err := p.Pool.Acquire(ctx)
	if err != nil {
		return nil, err
	}
	rows, err := conn.Conn().Query(ctx, sql, args...)
	if err != nil {
		conn.Release()
		return nil, err
	}
	return &releasingRows{Rows: rows, conn: conn}, nil
}

// QueryRow runs sql on a connection acquired for Scan.
func (p Pool) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	return &acquiringRow{ctx: ctx, pool: p.Pool, sql: sql, args: args}
}

// releasingRows are Pool.Query's rows: they release their connection once
// read to the end or closed.
type releasingRows struct {
	pgx.Rows
	conn *pgxpool.Conn
}

func (r *releasingRows) Next() bool {
	if r.Rows.Next() {
		return true
	}
	r.release()
	return false
}

func (r *releasingRows) Close() {
	r.Rows.Close()
	r.release()
}

func (r *releasingRows) release() {
	if r.conn != nil {
		r.conn.Release()
		r.conn = nil
	}
}

// poolTx is a Pool as the pgx.Tx that riverpgxv5's UnwrapExecutor takes,
// so that River's executor on the pool reads through Pool (see
// Driver.GetExecutor). It is no transaction: each statement runs on a
// connection of its own, as on the pool, and Begin begins a real one.
type poolTx struct{ Pool }

// errNotATx is what poolTx answers to the calls only a transaction takes;
// River's executor on the pool never makes them.
var errNotATx = errors.New("tributary: River's executor on the pool is not a transaction")

func (poolTx) Commit(context.Context) error   { return errNotATx }
func (poolTx) Rollback(context.Context) error { return errNotATx }
func (poolTx) LargeObjects() pgx.LargeObjects { return pgx.LargeObjects{} }
func (poolTx) Conn() *pgx.Conn                { return nil }

func (poolTx) Prepare(context.Context, string, string) (*pgconn.StatementDescription, error) {
	return nil, errNotATx
}
