package engine

import (
	"context"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// RunDoneChannel is the LISTEN/NOTIFY channel a finished run is announced
// on (payload: the run id). Result waits on it instead of polling.
const RunDoneChannel = "tributary_run_done"

var notifyStmt = define(`SELECT pg_notify($1, $2)`)

// NotifyRunDoneTx announces on RunDoneChannel that run runID finished. The
// notification is delivered when tx commits, and never if it rolls back.
func (q *Queries) NotifyRunDoneTx(ctx context.Context, tx pgx.Tx, runID uuid.UUID) error {
	_, err := tx.Exec(ctx, q.sql(notifyStmt), RunDoneChannel, runID.String())
	return err
}

// Listen starts listening on channel on conn: from its return on, conn
// receives the notifications sent there (conn.WaitForNotification).
// Notifications sent before it, or while conn is disconnected, are lost.
func Listen(ctx context.Context, conn *pgx.Conn, channel string) error {
	_, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{channel}.Sanitize())
	return err
}
