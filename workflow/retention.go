package workflow

import (
	"context"
	"fmt"
	"log/slog"
	"time"
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

// deleteExpiredRunsSQL deletes a batch of runs finished before their
// retention: $1 is the first run id of the completed runs' cutoff (run ids
// are UUIDv7, so the primary key reads the oldest runs first), $2 and $3 the
// cutoffs of completed (and skipped) and of failed (and cancelled) runs, a
// NULL cutoff keeping those forever, $4 the batch size.
//
// A finished child run whose parent has not taken its outcome yet (the
// parent's child step is still waiting: the parent is parked, or failed or
// was cancelled while waiting and may be retried) is kept: the parent reads
// the child's row when it resumes. The check is an index lookup on the
// parent's steps, for child runs only.
//
// The batch's rows are locked SKIP LOCKED: two passes at once (a new
// leader's while the old one's ends, an operator's call) take different
// rows instead of deadlocking on the same ones.
//
// So is a run among the latest keep_runs runs (by slot) of its schedule
// (schedule.Params.KeepRuns): for the runs of a schedule that keeps some,
// an index scan of its last keep_runs slots. Schedules are package
// schedule's; their table is created with the runs' by the same
// migrations, so it is always there.
const deleteExpiredRunsSQL = `
DELETE FROM {s}workflow_runs
WHERE id IN (
	SELECT r.id FROM {s}workflow_runs r
	WHERE r.id < $1
		AND ((r.status IN ('completed', 'skipped') AND r.finished_at < $2)
			OR (r.status IN ('failed', 'cancelled') AND r.finished_at < $3))
		AND NOT EXISTS (
			SELECT 1 FROM {s}step_runs s
			WHERE r.parent_run_id IS NOT NULL AND s.run_id = r.parent_run_id
				AND s.child_run_id = r.id AND s.status <> 'completed')
		AND NOT EXISTS (
			SELECT 1 FROM {s}schedules sc
			WHERE r.schedule_id IS NOT NULL AND sc.id = r.schedule_id AND sc.keep_runs > 0
				AND r.fire_at >= coalesce((
					SELECT x.fire_at FROM {s}workflow_runs x
					WHERE x.schedule_id = sc.id
					ORDER BY x.fire_at DESC OFFSET sc.keep_runs - 1 LIMIT 1), '-infinity'))
	ORDER BY r.id
	LIMIT $4
	FOR UPDATE OF r SKIP LOCKED
)`

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
	deleted := 0
	for deadline := time.Now().Add(retentionPassLimit); time.Now().Before(deadline); {
		began := time.Now()
		tag, err := c.pool.Exec(ctx, c.q.deleteExpiredRuns, firstIDAt(newest), completed, failed, c.maintenance.RetentionBatchSize)
		if err != nil {
			return deleted, fmt.Errorf("workflow: delete runs past their retention: %w", err)
		}
		deleted += int(tag.RowsAffected())
		if tag.RowsAffected() < int64(c.maintenance.RetentionBatchSize) {
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
