package workflow

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/tributary-go/tributary/internal/engine"
	"github.com/tributary-go/tributary/internal/wfruntime"
)

// Default retention of finished runs (Config.CompletedRunRetention and
// Config.FailedRunRetention), River's job cleaner's: a run's River job is
// gone after a day anyway, so a completed run is kept as long as its job,
// and a failed or cancelled one a week, long enough to investigate and
// retry it. A schedule that needs a longer ledger keeps its last runs
// whatever their age (schedule.Params.KeepRuns); a longer retention for
// every run is a Config value away.
const (
	DefaultCompletedRunRetention = 24 * time.Hour
	DefaultFailedRunRetention    = 7 * 24 * time.Hour
)

// DeleteExpiredRuns deletes the runs that finished longer ago than their
// retention (Config.CompletedRunRetention for completed and skipped runs,
// Config.FailedRunRetention for failed and cancelled ones), with their
// steps and signals, in batches, for at most a minute. Unfinished runs are
// never deleted, however old, nor a finished child run whose parent still
// waits for its outcome, nor one of the latest runs its schedule keeps
// (schedule.Params.KeepRuns). It returns how many runs it deleted. A
// working client runs it on the leader every
// Config.Maintenance.RetentionInterval (jobs.KindRunRetention), deleting
// Config.Maintenance.RetentionBatchSize runs per statement.
//
// A deleted run of a schedule takes its slot's record with it: a backfill
// over that slot later runs it again, as it would a slot never fired.
func (c *Client) DeleteExpiredRuns(ctx context.Context) (int, error) {
	now := c.now()
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
	// Run ids are UUIDv7s of the machine's real time, which an injected
	// clock need not follow: under one, the ids' bound is the later of the
	// clock's cutoff and real time.
	if c.dbClock == nil && newest.Before(time.Now()) {
		newest = time.Now()
	}
	deleted, err := wfruntime.DeleteExpiredRuns(ctx, c.db, c.pool, &engine.DeleteExpiredRunsParams{
		BeforeID: firstIDAt(newest), CompletedBefore: completed, FailedBefore: failed, Limit: c.maintenance.RetentionBatchSize,
	})
	if err != nil {
		return deleted, fmt.Errorf("workflow: delete runs past their retention: %w", err)
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
