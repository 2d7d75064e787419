package testdb

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// SentSQL is a statement a connection sent, with its arguments.
type SentSQL struct {
	SQL  string
	Args []any
}

// SQLRecorder records the statements sent on the connections of a pool (a
// pgx.QueryTracer), so that a test can EXPLAIN what a call sent.
type SQLRecorder struct {
	mu   sync.Mutex
	sent []SentSQL
}

// TraceQueryStart records the statement.
func (r *SQLRecorder) TraceQueryStart(ctx context.Context, _ *pgx.Conn, data pgx.TraceQueryStartData) context.Context {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sent = append(r.sent, SentSQL{SQL: data.SQL, Args: data.Args})
	return ctx
}

// TraceQueryEnd does nothing.
func (r *SQLRecorder) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// Take returns the statements sent since the last Take, in order, without
// the transactions' BEGIN, COMMIT and ROLLBACK.
func (r *SQLRecorder) Take() []SentSQL {
	r.mu.Lock()
	defer r.mu.Unlock()
	var sent []SentSQL
	for _, s := range r.sent {
		if word, _, _ := strings.Cut(strings.ToLower(strings.TrimSpace(s.SQL)), " "); word != "begin" && word != "commit" && word != "rollback" {
			sent = append(sent, s)
		}
	}
	r.sent = nil
	return sent
}

// RecordingPool is a pool of db's own, closed when the test ends, whose
// statements the recorder returned records.
func (db *DB) RecordingPool(t testing.TB) (*pgxpool.Pool, *SQLRecorder) {
	t.Helper()
	rec := &SQLRecorder{}
	config := db.Pool.Config()
	config.ConnConfig.Tracer = rec
	pool, err := pgxpool.NewWithConfig(context.Background(), config)
	if err != nil {
		t.Fatalf("testdb: a recording pool: %v", err)
	}
	t.Cleanup(pool.Close)
	return pool, rec
}

// ExplainPrepared EXPLAINs statement sent, with its arguments, as a
// prepared statement (its parameters' types inferred) under
// plan_cache_mode mode: "force_generic_plan" shows the plan a prepared
// statement switches to after five executions, "force_custom_plan" the
// one made for these arguments.
func ExplainPrepared(ctx context.Context, t testing.TB, pool *pgxpool.Pool, sent SentSQL, mode string) string {
	t.Helper()
	var plan []string
	err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SET LOCAL plan_cache_mode = "+mode); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, "PREPARE testdb_explained AS "+sent.SQL); err != nil {
			return err
		}
		defer func() { _, _ = tx.Exec(ctx, "DEALLOCATE testdb_explained") }()
		placeholders := make([]string, len(sent.Args))
		for i := range placeholders {
			placeholders[i] = fmt.Sprintf("$%d", i+1)
		}
		args := append([]any{pgx.QueryExecModeSimpleProtocol}, sent.Args...)
		rows, err := tx.Query(ctx, "EXPLAIN EXECUTE testdb_explained("+strings.Join(placeholders, ", ")+")", args...)
		if err != nil {
			return err
		}
		plan, err = pgx.CollectRows(rows, pgx.RowTo[string])
		return err
	})
	if err != nil {
		t.Fatalf("testdb: EXPLAIN %s: %v", sent.SQL, err)
	}
	return strings.Join(plan, "\n")
}
