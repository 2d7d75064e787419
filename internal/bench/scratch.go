package bench

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/tributary-go/tributary/migrations"
)

// SchemaPrefix begins the name of every schema Run creates.
const SchemaPrefix = "tributary_bench_"

// dropTimeout bounds dropping a case's schema, which happens also after ctx
// is cancelled.
const dropTimeout = time.Minute

// scratch is a fresh schema with River's and Tributary's tables, and a pool
// whose connections have it as their search_path.
type scratch struct {
	pool   *pgxpool.Pool
	schema string
}

// newScratch creates and migrates a schema through admin, and opens a pool
// on it with admin's connection settings, every connection already open so
// that connecting is not timed. It leaves nothing behind when it fails.
func newScratch(ctx context.Context, admin *pgxpool.Pool, config *Config) (_ *scratch, err error) {
	var random [4]byte
	_, _ = rand.Read(random[:]) // never fails
	s := &scratch{schema: SchemaPrefix + hex.EncodeToString(random[:])}
	// Dropped on failure, also when creating it failed: a cancelled CREATE
	// may have committed all the same.
	defer func() {
		if err != nil {
			err = errors.Join(err, s.drop(ctx, admin))
		}
	}()
	if _, err := admin.Exec(ctx, "CREATE SCHEMA "+pgx.Identifier{s.schema}.Sanitize()); err != nil {
		return nil, fmt.Errorf("creating schema %s: %w", s.schema, err)
	}

	poolConfig := admin.Config()
	poolConfig.ConnConfig.RuntimeParams["search_path"] = pgx.Identifier{s.schema}.Sanitize()
	poolConfig.MaxConns = poolConns(config.Workers)
	if s.pool, err = pgxpool.NewWithConfig(ctx, poolConfig); err != nil {
		return nil, fmt.Errorf("connecting: %w", err)
	}
	if err := openAll(ctx, s.pool); err != nil {
		return nil, fmt.Errorf("connecting: %w", err)
	}

	migrator, err := migrations.New(s.pool, &migrations.Config{Logger: config.Logger, Schema: s.schema})
	if err != nil {
		return nil, err
	}
	if _, err := migrator.Up(ctx); err != nil {
		return nil, fmt.Errorf("migrating schema %s: %w", s.schema, err)
	}
	return s, nil
}

// poolConns is the size of a case's pool: room for every worker (a
// checkpoint worker holds a connection while it inserts) and as many again
// for River's fetches, completions and notifications, as in the package
// benchmarks (40 for 20 workers).
func poolConns(workers int) int32 {
	return int32(max(2*workers, 10))
}

// clientPool opens another pool on the schema, of maxConns connections, all
// already open, for a working client of its own. The caller closes it.
func (s *scratch) clientPool(ctx context.Context, maxConns int32) (*pgxpool.Pool, error) {
	config := s.pool.Config()
	config.MaxConns = maxConns
	pool, err := pgxpool.NewWithConfig(ctx, config)
	if err != nil {
		return nil, fmt.Errorf("connecting: %w", err)
	}
	if err := openAll(ctx, pool); err != nil {
		pool.Close()
		return nil, fmt.Errorf("connecting: %w", err)
	}
	return pool, nil
}

// openAll opens every connection pool may hold.
func openAll(ctx context.Context, pool *pgxpool.Pool) error {
	conns := make([]*pgxpool.Conn, 0, pool.Config().MaxConns)
	defer func() {
		for _, conn := range conns {
			conn.Release()
		}
	}()
	for range cap(conns) {
		conn, err := pool.Acquire(ctx)
		if err != nil {
			return err
		}
		conns = append(conns, conn)
	}
	return nil
}

// drop closes the pool and drops the schema with everything in it. It
// works after ctx is cancelled too.
func (s *scratch) drop(ctx context.Context, admin *pgxpool.Pool) error {
	if s.pool != nil {
		s.pool.Close()
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), dropTimeout)
	defer cancel()
	if _, err := admin.Exec(ctx, "DROP SCHEMA IF EXISTS "+pgx.Identifier{s.schema}.Sanitize()+" CASCADE"); err != nil {
		return fmt.Errorf("dropping schema %s: %w", s.schema, err)
	}
	return nil
}

// table is the quoted, schema-qualified name of a table in the schema.
func (s *scratch) table(name string) string {
	return pgx.Identifier{s.schema, name}.Sanitize()
}

// count runs a query that returns one number.
func (s *scratch) count(ctx context.Context, sql string, args ...any) (int, error) {
	var n int
	err := s.scanRow(ctx, sql, args, &n)
	return n, err
}

// scanRow runs a single-row query on a connection acquired for it and
// scans the row into dest. It does not use the pool's QueryRow, whose row
// keeps its pool connection's wrapper, and with it a slab of 128 of them,
// reachable after Scan (see internal/engine's queryRow): the soak, which
// samples this way, would measure its own sampling as heap growth.
func (s *scratch) scanRow(ctx context.Context, sql string, args []any, dest ...any) error {
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	defer conn.Release()
	return conn.QueryRow(ctx, sql, args...).Scan(dest...)
}
