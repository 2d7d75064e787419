package workflow

// This file holds the run-level moves of River jobs: parking a run on a new
// job, ending an attempt's job, waking a parked run. The job state changes
// themselves are internal/engine's (Jobs), the one package that touches
// River's internals.

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/tributary-go/tributary/internal/engine"
)

// handOffTx parks a run: inside tx it completes the attempt's River job and
// inserts the run's next job, scheduled at wakeAt. It returns the new job's
// id, which a wake-up (JobRetryTx) makes available early.
//
// Why a new job and not a snooze of the same one: River's completer applies
// an attempt's outcome later, asynchronously, to the job "if it is still
// running". Had the park only snoozed the job, a wake-up arriving before
// that could let the job be fetched again, and the stale snooze would then
// hit the new attempt. The finished job of a park is never running again,
// so the stale update finds nothing to do (ONE_JOB_PER_ATTEMPT).
//
// The next job continues the run's attempt count: a park is not a failed
// attempt, so it gets the attempts this job had left.
func (c *Client) handOffTx(ctx context.Context, tx pgx.Tx, job *rivertype.JobRow, args runArgs, wakeAt time.Time) (int64, error) {
	return c.nextJobTx(ctx, tx, job, args, []byte(`{"tributary_parked": true}`), &river.InsertOpts{ScheduledAt: wakeAt})
}

// nextJobTx completes the attempt's job with metadata and inserts the run's
// next job, with opts' ScheduledAt.
func (c *Client) nextJobTx(ctx context.Context, tx pgx.Tx, job *rivertype.JobRow, args runArgs, metadata []byte, opts *river.InsertOpts) (int64, error) {
	if err := c.jobs.CompleteTx(ctx, tx, job.ID, metadata); err != nil {
		return 0, err
	}
	next := args
	next.kind = job.Kind
	next.Start, next.Input, next.Metadata, next.ParentRunID = "", nil, nil, nil // the next attempt reads the run and its memos
	next.AttemptBase = args.AttemptBase + job.Attempt - 1
	opts.MaxAttempts = max(job.MaxAttempts-job.Attempt+1, 1)
	opts.Priority, opts.Queue, opts.Tags = job.Priority, job.Queue, job.Tags
	res, err := c.river.InsertTx(ctx, tx, next, opts)
	if err != nil {
		return 0, fmt.Errorf("insert the run's next River job: %w", err)
	}
	return res.Job.ID, nil
}

// wakeRunTx makes a parked run's job available now and notifies the queue's
// producers, so the run resumes within milliseconds instead of at the next
// poll. It locks the run row first: a run that parks concurrently either
// commits before (and is woken here) or sees what the caller wrote (and does
// not park). A run that is not parked is left alone.
func (c *Client) wakeRunTx(ctx context.Context, tx pgx.Tx, runID uuid.UUID) error {
	run, err := c.db.TouchRunTx(ctx, tx, runID, c.sqlNow())
	if errors.Is(err, engine.ErrNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("lock run to wake it: %w", err)
	}
	return c.wakeLockedTx(ctx, tx, run)
}

// wakeLockedTx is wakeRunTx for a run the caller locked already, with
// engine's TouchRunTx in tx (as a signal does), so that the row is not
// locked and bumped twice.
func (c *Client) wakeLockedTx(ctx context.Context, tx pgx.Tx, run *engine.Touched) error {
	if (Status(run.Status) != StatusWaiting && Status(run.Status) != StatusSleeping) || run.JobID == 0 {
		return nil
	}
	return c.makeAvailableTx(ctx, tx, run.JobID, run.Queue)
}

// makeAvailableTx is the one way Tributary wakes a River job that waits in
// the scheduled state, whichever of the occasions in ARCHITECTURE.md's "How
// a job is woken" calls for it (an exact timer, another client's
// announcement, a signal or a child's finish): River's public JobRetryTx
// makes it available now, and River's insert notification for its queue
// makes idle producers fetch it at once instead of at their next poll. A
// job that is gone (deleted meanwhile) is no error. Nothing here writes
// river_job itself.
func (c *Client) makeAvailableTx(ctx context.Context, tx pgx.Tx, jobID int64, queue string) error {
	if _, err := c.river.JobRetryTx(ctx, tx, jobID); err != nil && !errors.Is(err, river.ErrNotFound) {
		return fmt.Errorf("make River job %d available: %w", jobID, err)
	}
	return c.jobs.NotifyQueueTx(ctx, tx, queue)
}
