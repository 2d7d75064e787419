package engine

import (
	"context"

	"github.com/jackc/pgx/v5"
)

// wakeChannelSQL names the channel on which a client that does not time
// wake-ups itself (insert-only, or not started: the CLI creating a schedule,
// a web app starting a run for later) hands a near wake-up to the working
// clients of the same schema ($1, or the connection's current schema when
// NULL). The schema goes in as a hash: channel names are limited to 63
// bytes, schema names alone may take 63.
const wakeChannelSQL = `'tributary_wake_' || left(md5(coalesce($1, current_schema())), 16)`

// The announcement of a wake-up to the working clients, and the channel
// they listen on for it.
var (
	announceWakeStmt = define(`SELECT pg_notify(` + wakeChannelSQL + `, $2)`)

	wakeChannelStmt = define(`SELECT ` + wakeChannelSQL)
)

// AnnounceWakeTx announces payload to the working clients of schema ("" for
// the connection's current schema) on their wake channel (see
// WakeChannel); Postgres delivers it when tx commits, and never if tx
// rolls back. The payload is "<job id> <queue> <unix milliseconds>".
func (q *Queries) AnnounceWakeTx(ctx context.Context, tx pgx.Tx, schema, payload string) error {
	_, err := tx.Exec(ctx, q.sql(announceWakeStmt), nullString(schema), payload)
	return err
}

// WakeChannel is the name of the channel on which wake-ups are announced to
// the working clients of schema ("" for db's current schema), for a
// listener to LISTEN on. Migration 006's triggers announce the runs to
// repair on it too.
func (q *Queries) WakeChannel(ctx context.Context, db DBTX, schema string) (string, error) {
	var channel string
	err := queryRow(ctx, db, q.sql(wakeChannelStmt), nullString(schema)).Scan(&channel)
	return channel, err
}

// nullString is s, or NULL when s is "".
func nullString(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
