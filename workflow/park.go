package workflow

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/tributary-go/tributary/internal/engine"
)

// foreverish is how long a wait without a timeout parks its job: a wake-up
// (signal, child result, cancel) makes it available long before.
const foreverish = 100 * 365 * 24 * time.Hour

// parkRequest describes a park: the step record to keep and the run status to
// show while the run holds no worker slot.
type parkRequest struct {
	name       string
	seq        int    // the record's position in the run's history
	signal     string // the signal a signal wait waits for
	kind       StepKind
	stepStatus StepStatus
	runStatus  Status
	wakeAt     *time.Time // nil: no timeout
	childRunID *uuid.UUID
	resultType string
}

// parkTx ends the attempt without using it up: in one transaction it writes
// the step record, sets the run's status, completes the attempt's River job
// and inserts the run's next job, scheduled at the wake time (handOffTx).
// Because the next job exists from the same transaction on, a wake-up
// committed after it (a signal, a child finishing) always finds a job it can
// make available.
//
// before runs first in the same transaction, after the run row is locked
// (it may still fill in req); if it reports resolved, the step finished
// without parking (a signal or child result was already there) and the
// transaction commits only its writes.
func (w *wfContext) parkTx(req *parkRequest, before func(ctx context.Context, tx pgx.Tx) (resolved bool, err error)) (resolved bool, err error) {
	c := w.c
	ctx := context.WithoutCancel(w)
	wakeAt := w.c.now().Add(foreverish)
	if req.wakeAt != nil {
		wakeAt = *req.wakeAt
	}
	var jobID int64
	err = pgx.BeginFunc(ctx, c.pool, func(tx pgx.Tx) error {
		status, cancelRequested, err := c.db.LockRunTx(ctx, tx, w.info.ID)
		if err != nil {
			return fmt.Errorf("lock run: %w", err)
		}
		if cancelRequested || Status(status).Finished() {
			return ErrCancelled
		}
		if before != nil {
			if resolved, err = before(ctx, tx); err != nil || resolved {
				return err
			}
		}
		err = c.db.InsertParkedStep(ctx, tx, &engine.ParkedStepParams{
			RunID: w.info.ID, Name: req.name, Kind: string(req.kind), Status: string(req.stepStatus),
			WakeAt: req.wakeAt, ChildRunID: req.childRunID, ResultType: req.resultType, Seq: req.seq, Signal: req.signal,
			Now: c.sqlNow(),
		})
		if err != nil {
			return fmt.Errorf("record %s %q: %w", req.kind, req.name, err)
		}
		if jobID, err = c.handOffTx(ctx, tx, w.job, w.args, wakeAt); err != nil {
			return err
		}
		err = c.db.ParkRunTx(ctx, tx, &engine.ParkRunParams{ID: w.info.ID, Status: string(req.runStatus), JobID: jobID, Attempt: w.info.Attempt, StartedAt: w.attemptedAt(), Now: w.c.sqlNow()})
		if err != nil {
			return fmt.Errorf("set run %s: %w", req.runStatus, err)
		}
		return nil
	})
	switch {
	case errors.Is(err, ErrCancelled):
		return false, w.fail(req.name, fmt.Errorf("workflow: run cancelled before %s %q", req.kind, req.name))
	case err != nil:
		return false, w.fail(req.name, fmt.Errorf("workflow: park run at %s %q: %w", req.kind, req.name, err))
	case resolved:
		return true, nil
	}
	w.parked(wakeAt)
	w.c.waker.Schedule(jobID, w.job.Queue, wakeAt)
	return false, errSuspended
}
