package engine

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// The statements of signals: storing one for a run, and a wait consuming
// one.
var (
	consumeSignalStmt = define(`
UPDATE {s}workflow_signals SET consumed_at = coalesce($4::timestamptz, now()), consumed_by_step = $3
WHERE id = (
	SELECT id FROM {s}workflow_signals
	WHERE run_id = $1 AND name = $2 AND consumed_at IS NULL
	ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED
)
RETURNING payload`)

	// insertSignalStmt stores a signal and returns how many of its name are
	// pending, and, when $4 says the run is parked waiting, the signal
	// its parked wait waits for (for a record from before migration 007,
	// read from the default step name "signal:<name>").
	insertSignalStmt = define(`
WITH sent AS (
	INSERT INTO {s}workflow_signals (run_id, name, payload, created_at) VALUES ($1, $2, $3, coalesce($5::timestamptz, now())) RETURNING id
)
SELECT
	(SELECT count(*) FROM {s}workflow_signals WHERE run_id = $1 AND name = $2 AND consumed_at IS NULL)
		+ (SELECT count(*) FROM sent),
	coalesce((
		SELECT coalesce(s.signal_name, CASE WHEN s.name LIKE 'signal:%' THEN substr(s.name, 8) END, '')
		FROM {s}step_runs s
		WHERE $4::boolean AND s.run_id = $1 AND s.kind = 'signal' AND s.status = 'waiting'
		ORDER BY s.seq DESC NULLS LAST
		LIMIT 1
	), '')`)
)

// ConsumeSignalTx takes the oldest pending signal name of run runID for
// step, marking it consumed by the step at now (nil: the database's
// now()), and returns its payload. Signals that other transactions are
// consuming are skipped, not waited for. It returns ErrNotFound when no
// signal of that name is pending.
func (q *Queries) ConsumeSignalTx(ctx context.Context, tx pgx.Tx, runID uuid.UUID, name, step string, now *time.Time) ([]byte, error) {
	var payload []byte
	err := tx.QueryRow(ctx, q.sql(consumeSignalStmt), runID, name, step, now).Scan(&payload)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	return payload, nil
}

// InsertSignalParams is a signal to store.
type InsertSignalParams struct {
	RunID   uuid.UUID
	Name    string
	Payload []byte     // JSON
	Waiting bool       // the run is parked waiting (its stored status)
	Now     *time.Time // the signal's time; nil: the database's now()
}

// SignalSent is what storing a signal found.
type SignalSent struct {
	// Pending counts the run's signals of the name not consumed yet, this
	// one included.
	Pending int
	// WaitingFor is the signal the run's parked signal wait waits for; ""
	// when the run is not waiting for a signal (or Waiting was false).
	WaitingFor string
}

// InsertSignalTx stores a signal for a run. The caller locks the run's row
// first (TouchRunTx), so that a wait parking concurrently either sees the
// signal or is woken after it.
func (q *Queries) InsertSignalTx(ctx context.Context, tx pgx.Tx, p *InsertSignalParams) (*SignalSent, error) {
	var sent SignalSent
	if err := tx.QueryRow(ctx, q.sql(insertSignalStmt), p.RunID, p.Name, p.Payload, p.Waiting, p.Now).Scan(&sent.Pending, &sent.WaitingFor); err != nil {
		return nil, err
	}
	return &sent, nil
}
