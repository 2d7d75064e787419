package workflow

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/riverqueue/river"
)

// Default retention of finished runs (Config.CompletedRunRetention and
// Config.FailedRunRetention). River's job cleaner keeps jobs a day; a run
// is the history an operator reads (a schedule's ledger, a failure to
// investigate), so it is kept longer.
const (
	DefaultCompletedRunRetention = 14 * 24 * time.Hour
	DefaultFailedRunRetention    = 30 * 24 * time.Hour
)

// RetentionInterval is how often the leader deletes finished runs past
// their retention.
const RetentionInterval = 10 * time.Minute

const (
	// retentionBatch is how many runs one DELETE removes (with their steps
	// and signals): small enough that a batch holds its locks briefly.
	retentionBatch = 5_000

	// retentionPassLimit bounds one pass; the next pass goes on.
	retentionPassLimit = time.Minute
)

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
// working client runs it on the leader every RetentionInterval.
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
		tag, err := c.pool.Exec(ctx, c.q.deleteExpiredRuns, firstIDAt(newest), completed, failed, retentionBatch)
		if err != nil {
			return deleted, fmt.Errorf("workflow: delete runs past their retention: %w", err)
		}
		deleted += int(tag.RowsAffected())
		if tag.RowsAffected() < retentionBatch {
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

// retentionArgs is the periodic job that runs DeleteExpiredRuns.
type retentionArgs struct{}

func (retentionArgs) Kind() string { return "tributary:run_retention" }

func (retentionArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{UniqueOpts: river.UniqueOpts{ByPeriod: RetentionInterval}}
}

type retentionWorker struct {
	river.WorkerDefaults[retentionArgs]
	c *Client
}

func (w *retentionWorker) Work(ctx context.Context, _ *river.Job[retentionArgs]) error {
	_, err := w.c.DeleteExpiredRuns(ctx)
	return err
}

func addRetentionJob(config *river.Config, c *Client) error {
	if err := river.AddWorkerSafely(config.Workers, &retentionWorker{c: c}); err != nil {
		return err
	}
	config.PeriodicJobs = append(slices.Clip(config.PeriodicJobs), river.NewPeriodicJob(
		river.PeriodicInterval(RetentionInterval),
		func() (river.JobArgs, *river.InsertOpts) { return retentionArgs{}, nil },
		&river.PeriodicJobOpts{ID: "tributary:run_retention", RunOnStart: true},
	))
	return nil
}
