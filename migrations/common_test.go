package migrations_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/tributary-go/tributary/internal/testdb"
)

// panicTB stands in for the testing.TB that examples don't have: it panics
// where a test would fail.
type panicTB struct{ testing.TB }

func (panicTB) Fatalf(format string, args ...any) { panic(fmt.Sprintf(format, args...)) }
func (panicTB) Helper()                           {}

// exampleSchema creates an empty schema on the test server for an example
// and returns a pool and the function that drops the schema and closes the
// pool.
func exampleSchema(ctx context.Context) (*pgxpool.Pool, string, func()) {
	serverURL := testdb.ServerURL(panicTB{})
	pool, err := pgxpool.New(ctx, serverURL)
	if err != nil {
		panic(err)
	}

	var schema string
	if err := pool.QueryRow(ctx, "SELECT 'example_' || substr(md5(random()::text), 1, 8)").Scan(&schema); err != nil {
		panic(err)
	}
	if _, err := pool.Exec(ctx, "CREATE SCHEMA "+pgx.Identifier{schema}.Sanitize()); err != nil {
		panic(err)
	}

	return pool, schema, func() {
		_, _ = pool.Exec(context.WithoutCancel(ctx), "DROP SCHEMA "+pgx.Identifier{schema}.Sanitize()+" CASCADE")
		pool.Close()
	}
}
