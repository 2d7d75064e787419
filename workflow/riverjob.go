package workflow

// This file holds the engine's few direct touches of River's job state. Each
// runs inside one of the engine's transactions so that a run's row and its
// River job change together (invariant TRANSACTIONAL_EDGES). They go through
// River's own driver executor, the same path river.JobCompleteTx takes: a job
// is only moved out of the running state by the worker that holds it, and
// River's completer, which later tries to record the attempt's outcome "if
// still running", then leaves the job as set here.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/rivertype"
)

// errJobNotRunning means River no longer considers this attempt's job running
// (it was rescued or cancelled meanwhile); the attempt must stop.
var errJobNotRunning = errors.New("workflow: the attempt's River job is no longer running (rescued or cancelled); abandoning this attempt")

func (c *Client) setJobState(ctx context.Context, tx pgx.Tx, params *riverdriver.JobSetStateIfRunningParams) error {
	exec := c.river.Driver().UnwrapExecutor(tx)
	now := time.Now().UTC()
	rows, err := exec.JobSetStateIfRunningMany(ctx, &riverdriver.JobSetStateIfRunningManyParams{
		ID:              []int64{params.ID},
		Attempt:         []*int{params.Attempt},
		ErrData:         [][]byte{params.ErrData},
		FinalizedAt:     []*time.Time{params.FinalizedAt},
		MetadataDoMerge: []bool{params.MetadataDoMerge},
		MetadataUpdates: [][]byte{params.MetadataUpdates},
		Now:             &now,
		ScheduledAt:     []*time.Time{params.ScheduledAt},
		Schema:          c.schema,
		State:           []rivertype.JobState{params.State},
	})
	if err != nil {
		return fmt.Errorf("set River job %d to %s: %w", params.ID, params.State, err)
	}
	if len(rows) == 0 || rows[0].State != params.State {
		return errJobNotRunning
	}
	return nil
}

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
	meta := []byte(`{"tributary_parked": true}`)
	if err := c.setJobState(ctx, tx, riverdriver.JobSetStateCompleted(job.ID, time.Now().UTC(), meta)); err != nil {
		return 0, err
	}
	next := args
	next.kind = kindOf(args.Workflow)
	next.Input, next.Metadata, next.ParentRunID = nil, nil, nil // the next attempt reads the run and its memos
	next.AttemptBase = args.AttemptBase + job.Attempt - 1
	res, err := c.river.InsertTx(ctx, tx, next, &river.InsertOpts{
		MaxAttempts: max(job.MaxAttempts-job.Attempt+1, 1),
		Priority:    job.Priority,
		Queue:       job.Queue,
		ScheduledAt: wakeAt,
		Tags:        job.Tags,
	})
	if err != nil {
		return 0, fmt.Errorf("insert the run's next River job: %w", err)
	}
	return res.Job.ID, nil
}

// discardJobTx ends the attempt's job as discarded (no more retries), with
// the error River UI shows.
func (c *Client) discardJobTx(ctx context.Context, tx pgx.Tx, job *rivertype.JobRow, cause error) error {
	errData, _ := json.Marshal(rivertype.AttemptError{At: time.Now().UTC(), Attempt: job.Attempt, Error: cause.Error()})
	return c.setJobState(ctx, tx, riverdriver.JobSetStateDiscarded(job.ID, time.Now().UTC(), errData, nil))
}

// cancelJobTx ends the attempt's job as cancelled.
func (c *Client) cancelJobTx(ctx context.Context, tx pgx.Tx, job *rivertype.JobRow, cause error) error {
	errData, _ := json.Marshal(rivertype.AttemptError{At: time.Now().UTC(), Attempt: job.Attempt, Error: cause.Error()})
	return c.setJobState(ctx, tx, riverdriver.JobSetStateCancelled(job.ID, time.Now().UTC(), errData, nil))
}

// wakeRunTx makes a parked run's job available now and notifies the queue's
// producers, so the run resumes within milliseconds instead of at the next
// poll. It locks the run row first: a run that parks concurrently either
// commits before (and is woken here) or sees what the caller wrote (and does
// not park). A run that is not parked is left alone.
func (c *Client) wakeRunTx(ctx context.Context, tx pgx.Tx, runID any) error {
	var (
		status string
		jobID  int64
		queue  string
	)
	err := tx.QueryRow(ctx, c.q.touchRun, runID).Scan(&status, &jobID, &queue, new(string))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("lock run to wake it: %w", err)
	}
	if (Status(status) != StatusWaiting && Status(status) != StatusSleeping) || jobID == 0 {
		return nil
	}
	if _, err := c.river.JobRetryTx(ctx, tx, jobID); err != nil && !errors.Is(err, river.ErrNotFound) {
		return fmt.Errorf("wake River job %d: %w", jobID, err)
	}
	return c.notifyQueueTx(ctx, tx, queue)
}

// notifyQueueTx sends River's insert notification for queue, the same one
// River sends when a job is inserted, so idle producers fetch at once.
func (c *Client) notifyQueueTx(ctx context.Context, tx pgx.Tx, queue string) error {
	payload, _ := json.Marshal(map[string]string{"queue": queue})
	return c.river.Driver().UnwrapExecutor(tx).NotifyMany(ctx, &riverdriver.NotifyManyParams{
		Payload: []string{string(payload)},
		Schema:  c.schema,
		Topic:   "river_insert",
	})
}
