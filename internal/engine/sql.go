package engine

import (
	"context"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// DBTX is what *pgxpool.Pool, *pgx.Conn and pgx.Tx offer: every query
// method takes one, so that the caller decides whether it runs in a
// transaction of its own or inside the caller's (the Tx twin of a public
// call passes its transaction through).
type DBTX interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// queryRow is db.QueryRow; the package's single-row queries on a DBTX go
// through it. On a *pgxpool.Pool it does not use the pool's QueryRow but
// returns a row whose Scan acquires a connection, runs the query on it and
// releases it. The row pgxpool's QueryRow returns keeps its *pgxpool.Conn
// after Scan has released it, and that row lives in a slab of 128 rows per
// connection, which is replaced only after 128 more QueryRows on that
// connection; a Conn kept so keeps the whole slab of 128 Conns it was
// allocated in (2 KiB) reachable. An occasional QueryRow on the pool (a
// reconcile pass) thus kept one more slab each time, and a frequent one (a
// fetch's probe) hundreds at once: a heap that grew for as long as the
// connections lived (the soak, `tributary bench soak`). The query runs at Scan, not at the call: every caller
// scans at once.
func queryRow(ctx context.Context, db DBTX, sql string, args ...any) pgx.Row {
	pool, ok := db.(*pgxpool.Pool)
	if !ok {
		return db.QueryRow(ctx, sql, args...)
	}
	return &acquiringRow{ctx: ctx, pool: pool, sql: sql, args: args}
}

// acquiringRow is queryRow's row on a pool.
type acquiringRow struct {
	ctx  context.Context
	pool *pgxpool.Pool
	sql  string
	args []any
}

// Scan runs the query on a connection of the pool, scans its first row
// into dest as pgx's QueryRow does (pgx.ErrNoRows when there is none), and
// releases the connection.
func (r *acquiringRow) Scan(dest ...any) error {
	return r.pool.AcquireFunc(r.ctx, func(conn *pgxpool.Conn) error {
		return conn.QueryRow(r.ctx, r.sql, r.args...).Scan(dest...)
	})
}

// stmt is one of the package's SQL statements. Each is written once, as a
// package-level var made by define, with {s} where the schema-qualifying
// prefix of a table name goes; Queries holds them with the prefix filled
// in, so that a call costs a slice index, not a string replacement.
//
// The statements are plain Go string constants rather than sqlc-generated
// code (River's choice): a good part of Tributary's SQL is composed (a
// shared column list, River's completion CTE, the listings' optional
// filters) and runs in one schema chosen at run time, which sqlc would
// need templates for; TestStatusLiterals checks the status and state
// literals they spell against the one definition of each set.
type stmt int

// stmts are the texts of every stmt, by index, as written.
var stmts []string

// define registers a statement. It is called only from package-level var
// declarations, before any Queries exists.
func define(text string) stmt {
	stmts = append(stmts, text)
	return stmt(len(stmts) - 1)
}

// Queries is Tributary's SQL for one schema. Its methods are the only
// place Tributary's tables are read or written (migrations aside); each
// takes the DBTX to run on. A Queries is immutable and safe for concurrent
// use.
type Queries struct {
	schema string
	prefix string   // "" or `"schema".`
	text   []string // stmts with the prefix filled in
}

// NewQueries returns the Queries of schema ("" for the search path).
func NewQueries(schema string) *Queries {
	q := &Queries{schema: schema, prefix: schemaPrefix(schema), text: make([]string, len(stmts))}
	for i, s := range stmts {
		q.text[i] = q.qualify(s)
	}
	return q
}

// sql is s with the schema filled in.
func (q *Queries) sql(s stmt) string { return q.text[s] }

// qualify fills the schema into text, for the few statements composed at
// call time (a listing's filters).
func (q *Queries) qualify(text string) string { return strings.ReplaceAll(text, "{s}", q.prefix) }

// schemaPrefix is the prefix that qualifies a table name with schema.
func schemaPrefix(schema string) string {
	if schema == "" {
		return ""
	}
	return pgx.Identifier{schema}.Sanitize() + "."
}
