package engine

import (
	"context"

	"github.com/jackc/pgx/v5"
)

// The statements that tell when a completion committed asynchronously
// (synchronous_commit off) is durable, and make it so. WAL positions are
// read as byte offsets from 0/0, which compare as plain integers.
var (
	walInsertLSNStmt = define(`SELECT (pg_current_wal_insert_lsn() - '0/0'::pg_lsn)::bigint`)

	walFlushLSNStmt = define(`SELECT (pg_current_wal_flush_lsn() - '0/0'::pg_lsn)::bigint`)

	// A transaction that wrote no WAL commits without a flush, even with a
	// transaction id; a transactional logical message is the least WAL
	// record that makes a transaction flush at its commit (any user may
	// emit one).
	writeWALRecordStmt = define(`SELECT pg_logical_emit_message(true, 'tributary', 'flush')`)
)

// WALInsertLSN returns the server's WAL insert position: read after a
// commit, it lies past that commit's record, which is on disk once the WAL
// is flushed that far (WALFlushLSN).
func (q *Queries) WALInsertLSN(ctx context.Context, db DBTX) (int64, error) {
	var lsn int64
	err := queryRow(ctx, db, q.sql(walInsertLSNStmt)).Scan(&lsn)
	return lsn, err
}

// WALFlushLSN returns how far the server's WAL is flushed to disk.
func (q *Queries) WALFlushLSN(ctx context.Context, db DBTX) (int64, error) {
	var lsn int64
	err := queryRow(ctx, db, q.sql(walFlushLSNStmt)).Scan(&lsn)
	return lsn, err
}

// WriteWALRecordTx writes a WAL record in tx (a transactional logical
// message), so that tx's commit, if synchronous, flushes the WAL up to its
// commit record, past every earlier commit.
func (q *Queries) WriteWALRecordTx(ctx context.Context, tx pgx.Tx) error {
	_, err := tx.Exec(ctx, q.sql(writeWALRecordStmt))
	return err
}
