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

// riverSchedulerInterval is River's job scheduler interval: a snooze shorter
// than this makes the job available at once (with a future scheduled_at),
// exactly as River's executor does, so short sleeps are not stretched to the
// scheduler's period.
const riverSchedulerInterval = 5 * time.Second

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

// snoozeJobTx parks the attempt's job until wakeAt without using up an
// attempt, like returning river.JobSnooze, but inside tx.
func (c *Client) snoozeJobTx(ctx context.Context, tx pgx.Tx, job *rivertype.JobRow, wakeAt time.Time) error {
	var current struct {
		Snoozes int64 `json:"snoozes"`
	}
	_ = json.Unmarshal(job.Metadata, &current) // an unreadable count restarts at 1, as in River
	meta, _ := json.Marshal(map[string]int64{"snoozes": current.Snoozes + 1})
	var params *riverdriver.JobSetStateIfRunningParams
	if time.Until(wakeAt) <= riverSchedulerInterval {
		params = riverdriver.JobSetStateSnoozedAvailable(job.ID, wakeAt, job.Attempt-1, meta)
	} else {
		params = riverdriver.JobSetStateSnoozed(job.ID, wakeAt, job.Attempt-1, meta)
	}
	return c.setJobState(ctx, tx, params)
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
	err := tx.QueryRow(ctx, c.q.touchRun, runID).Scan(&status, &jobID, &queue)
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
