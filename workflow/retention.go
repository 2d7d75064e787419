package workflow

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/tributary-go/tributary/internal/engine"
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

// Why plain deletes in batches, and not time-partitioned tables whose old
// partitions are dropped (as Oban Pro and pg-boss do): a run's retention
// starts when it finishes, not when it is created, and runs finish in any
// order (a run may sleep for months); a schedule keeps its last N runs
// whatever their age, and a finished child is kept while its parent waits
// for it. A partition holds runs by creation time, so it could be dropped
// only once every run in it is deletable, which the longest-lived run of
// the partition delays, and the exceptions above would have to move rows
// out first. Partitioning would also put the partition key in every
// primary and unique key (a run's id, SLOT_IS_UNIQUE's (schedule, slot)),
// and its foreign keys from steps and signals. Batched deletes by the
// primary key (UUIDv7 ids: the oldest runs first) keep each statement's
// locks to milliseconds, and `tributary bench retention` measures what
// they cost the workflows running meanwhile (see the README).

// retentionYield is how long the retention pauses after a full batch, as a
// multiple of the batch's duration: with 4, it takes at most a fifth of
// the time of one connection, so that deleting a backlog (a million runs
// after retention was first turned on, say) costs the workflows running
// meanwhile little (see `tributary bench retention`: 1.02× with and
// without). A pass then deletes about 6,000 runs a second on a 2-core
// machine, and a pass of retentionPassLimit every 10 minutes keeps up with
// about 600 runs finishing a second; a busier deployment shortens
// Config.Maintenance.RetentionInterval.
const retentionYield = 4

// retentionPassLimit bounds one pass of DeleteExpiredRuns; the next pass
// goes on.
const retentionPassLimit = time.Minute

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
	deleted := 0
	for deadline := time.Now().Add(retentionPassLimit); time.Now().Before(deadline); {
		began := time.Now()
		n, err := c.db.DeleteExpiredRuns(ctx, c.pool, &engine.DeleteExpiredRunsParams{
			BeforeID: firstIDAt(newest), CompletedBefore: completed, FailedBefore: failed, Limit: c.maintenance.RetentionBatchSize,
		})
		if err != nil {
			return deleted, fmt.Errorf("workflow: delete runs past their retention: %w", err)
		}
		deleted += n
		if n < c.maintenance.RetentionBatchSize {
			break
		}
		// Yield to the workload: a batch's share of the database is its
		// duration over the duration plus this pause.
		select {
		case <-time.After(retentionYield * time.Since(began)):
		case <-ctx.Done():
			return deleted, ctx.Err()
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
