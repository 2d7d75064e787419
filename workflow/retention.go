package workflow

import (
	"context"
	"fmt"
	"log/slog"
	"time"
)

// Default retention of finished runs (Config.CompletedRunRetention and
// Config.FailedRunRetention). River's job cleaner keeps jobs a day; a run
// is the history an operator reads (a schedule's ledger, a failure to
// investigate), so it is kept longer.
const (
	DefaultCompletedRunRetention = 14 * 24 * time.Hour
	DefaultFailedRunRetention    = 30 * 24 * time.Hour
)

// retentionPassLimit bounds one pass of DeleteExpiredRuns; the next pass
// goes on.
const retentionPassLimit = time.Minute

// deleteExpiredRunsSQL deletes a batch of runs finished before their
// retention: $1 is the first run id of the completed runs' cutoff (run ids
// are UUIDv7, so the primary key reads the oldest runs first), $2 and $3 the
// cutoffs of completed (and skipped) and of failed (and cancelled) runs, a
// NULL cutoff keeping those forever.
const deleteExpiredRunsSQL = `
DELETE FROM {s}workflow_runs
WHERE id IN (
	SELECT id FROM {s}workflow_runs
	WHERE id < $1
		AND ((status IN ('completed', 'skipped') AND finished_at < $2)
			OR (status IN ('failed', 'cancelled') AND finished_at < $3))
	ORDER BY id
	LIMIT $4
)`

// DeleteExpiredRuns deletes the runs that finished longer ago than their
// retention (Config.CompletedRunRetention for completed and skipped runs,
// Config.FailedRunRetention for failed and cancelled ones), with their
// steps and signals, in batches, for at most a minute. Unfinished runs are
// never deleted, however old. It returns how many runs it deleted. A
// working client runs it on the leader every
// Config.Maintenance.RetentionInterval (jobs.KindRunRetention), deleting
// Config.Maintenance.RetentionBatchSize runs per statement.
//
// A deleted run of a schedule takes its slot's record with it: a backfill
// over that slot later runs it again, as it would a slot never fired.
func (c *Client) DeleteExpiredRuns(ctx context.Context) (int, error) {
	now := time.Now()
	completed, failed := cutoff(now, c.completedRetention), cutoff(now, c.failedRetention)
	if completed == nil && failed == nil {
		return 0, nil
	}
	var newest time.Time
	for _, t := range []*time.Time{completed, failed} {
		if t != nil && t.After(newest) {
			newest = *t
		}
	}
	deleted := 0
	for deadline := now.Add(retentionPassLimit); time.Now().Before(deadline); {
		tag, err := c.pool.Exec(ctx, c.q.deleteExpiredRuns, firstIDAt(newest), completed, failed, c.maintenance.RetentionBatchSize)
		if err != nil {
			return deleted, fmt.Errorf("workflow: delete runs past their retention: %w", err)
		}
		deleted += int(tag.RowsAffected())
		if tag.RowsAffected() < int64(c.maintenance.RetentionBatchSize) {
			break
		}
	}
	if deleted > 0 {
		c.logger.InfoContext(ctx, "tributary: Deleted runs past their retention", slog.Int("runs", deleted))
	}
	return deleted, nil
}

// cutoff is now minus retention, or nil when retention is negative (keep
// forever).
func cutoff(now time.Time, retention time.Duration) *time.Time {
	if retention < 0 {
		return nil
	}
	t := now.Add(-retention)
	return &t
}
