package workflow

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

	"github.com/tributary-go/tributary/internal/engine"
)

// GetRun reads a run with its step records. Returns ErrNotFound when there is
// no such run.
func (c *Client) GetRun(ctx context.Context, id uuid.UUID) (*Run, error) {
	run, err := runOf(c.db.RunByID(ctx, c.pool, id))
	if err != nil {
		return nil, err
	}
	if err := c.markHeld(ctx, run); err != nil {
		return nil, err
	}
	if run.Steps, err = c.Steps(ctx, id); err != nil {
		return nil, err
	}
	if run.Status.Finished() {
		// A finished run's parked sleep or wait will not wake: say so, and
		// show no wake time.
		for i := range run.Steps {
			if st := &run.Steps[i]; st.Status == StepStatusSleeping || st.Status == StepStatusWaiting {
				st.Status, st.WakeAt = StepStatusInterrupted, nil
			}
		}
	}
	return run, nil
}

// Steps reads a run's step records in the order they started.
func (c *Client) Steps(ctx context.Context, runID uuid.UUID) ([]StepRun, error) {
	rows, err := c.db.StepsOfRun(ctx, c.pool, runID)
	if err != nil {
		return nil, fmt.Errorf("workflow: read steps of run %s: %w", runID, err)
	}
	steps := make([]StepRun, len(rows))
	for i, row := range rows {
		step, err := stepOf(row)
		if err != nil {
			return nil, err
		}
		steps[i] = *step
	}
	return steps, nil
}

// ListParams filter and page ListRuns. The zero value lists the newest runs.
type ListParams struct {
	// Type keeps runs of this workflow type.
	Type string
	// Status keeps runs in this status.
	Status Status
	// ScheduleID keeps runs started by this schedule.
	ScheduleID *uuid.UUID
	// IdempotencyKey keeps the run started with this idempotency key: one
	// per workflow type, so one run with Type set and at most one per type
	// without it.
	IdempotencyKey string
	// Tenant keeps the runs of this tenant (StartOpts.Tenant), through an
	// index of the runs that have one.
	Tenant string
	// Metadata keeps runs whose metadata holds every key of this object
	// with an equal value (JSON containment, metadata @> Metadata): a
	// string matches a string, 42 a number.
	Metadata map[string]any
	// CreatedAfter keeps runs created at or after this time; CreatedBefore,
	// runs created before it. The time is the one in the run's id (a
	// UUIDv7 made when the run was created, by the clock of the process
	// that started it), at millisecond precision, so that the primary key
	// serves the range.
	CreatedAfter  time.Time
	CreatedBefore time.Time
	// ForkedFrom keeps the forks of this run (Client.Fork), through an
	// index of the runs that are forks.
	ForkedFrom *uuid.UUID
	// After continues a listing after this run id (the last one of the
	// previous page); runs are listed newest first.
	After *uuid.UUID
	// Limit is the page size. Defaults to 100; at most 1000.
	Limit int
}

// ListRuns lists runs newest first, without their steps, up to 10 s past
// the present by their ids (engine.RunIDSlack): a prepared slot's run, dated at its
// slot, is listed once its slot is decided, and a run started on a clock
// more than 10 s ahead once the listing's clock reaches it. Its cost follows
// the runs it reads, not the table's, when an index serves a filter:
// a schedule's runs (ScheduleID), an idempotency key, a tenant, a run's forks (ForkedFrom), metadata (a GIN
// index; the planner may instead walk the newest runs when the value is
// common, which finds a page quickly) and a creation time range (the
// primary key). The type and status filters read the newest runs until a
// page is full. A listing with IdempotencyKey, Tenant, Metadata, CreatedAfter,
// CreatedBefore or ForkedFrom is planned for its values each time, never with a
// generic plan.
func (c *Client) ListRuns(ctx context.Context, params *ListParams) ([]*Run, error) {
	if params == nil {
		params = &ListParams{}
	}
	limit := orDefault(params.Limit, 100)
	if limit < 1 || limit > 1000 {
		return nil, &ValidationError{Field: "ListParams.Limit", Problem: fmt.Sprintf("is %d; use 1 to 1000", limit)}
	}
	p, err := listRunsParams(params, limit, c.listCeiling())
	if err != nil {
		return nil, err
	}
	rows, err := c.db.ListRuns(ctx, c.pool, p)
	if err != nil {
		return nil, fmt.Errorf("workflow: list runs: %w", err)
	}
	runs, err := runsOf(rows, nil)
	if err != nil {
		return nil, err
	}
	if err := c.markHeld(ctx, runs...); err != nil {
		return nil, err
	}
	return runs, nil
}

// listRunsParams are the engine's parameters of the listing p with limit:
// its metadata encoded as JSON, its creation times as the first run ids of
// their milliseconds, and runs with ids below ceiling only (listCeiling).
func listRunsParams(p *ListParams, limit int, ceiling uuid.UUID) (*engine.ListRunsParams, error) {
	lp := &engine.ListRunsParams{
		Type: p.Type, Status: string(p.Status), ScheduleID: p.ScheduleID, After: p.After, Limit: limit,
		IdempotencyKey: p.IdempotencyKey, Tenant: p.Tenant, ForkedFrom: p.ForkedFrom,
	}
	if lp.After == nil || bytes.Compare(ceiling[:], lp.After[:]) < 0 {
		lp.After = &ceiling
	}
	if len(p.Metadata) > 0 {
		doc, err := json.Marshal(p.Metadata)
		if err != nil {
			return nil, &ValidationError{Field: "ListParams.Metadata", Problem: fmt.Sprintf("cannot be encoded as JSON: %v", err)}
		}
		lp.Metadata = doc
	}
	if !p.CreatedAfter.IsZero() {
		id := firstIDAt(p.CreatedAfter)
		lp.CreatedFromID = &id
	}
	if !p.CreatedBefore.IsZero() {
		id := firstIDAt(p.CreatedBefore)
		lp.CreatedBeforeID = &id
	}
	return lp, nil
}

// listCeilingAt is the time a listing of runs reads runs created before
// (engine.RunIDSlack): RunIDSlack after the present, by the later of the
// wall clock, which made the ids of runs started by Start, and the
// client's configured clock, which dates a slot's run. A listing starts
// below it instead of walking past each schedule's prepared next slot:
// newest first by id, those come before every other run, and a page read
// them all (310 ms a page over 100,000 daily schedules, measured).
func (c *Client) listCeilingAt() time.Time {
	now := time.Now()
	if t := c.now(); t.After(now) {
		now = t
	}
	return now.Add(engine.RunIDSlack)
}

// listCeiling is the first run id of listCeilingAt's millisecond.
func (c *Client) listCeiling() uuid.UUID { return firstIDAt(c.listCeilingAt()) }

// firstIDAt is the smallest UUIDv7 of t's millisecond (of 1970 for an
// earlier t): a run created in that millisecond or later has an id at
// least this, and one created earlier a smaller one.
func firstIDAt(t time.Time) uuid.UUID {
	var id uuid.UUID
	ms := max(t.UnixMilli(), 0)
	for i := range 6 {
		id[5-i] = byte(ms >> (8 * i))
	}
	id[6] = 0x70 // version 7
	id[8] = 0x80 // RFC 4122 variant
	return id
}

// Cancel cancels a run. A run that is pending, sleeping or waiting is
// cancelled at once (its River job too). A running run is cancelled at its
// next step boundary: River cancels the attempt's context, so the step in
// progress sees ctx.Done(), no later step starts, and the run ends cancelled.
// Completed steps stay recorded. Returns ErrRunFinished for a finished run.
func (c *Client) Cancel(ctx context.Context, id uuid.UUID) error {
	return pgx.BeginFunc(ctx, c.pool, func(tx pgx.Tx) error { return c.CancelTx(ctx, tx, id) })
}

// CancelTx is like Cancel, within tx; the caller commits or rolls back.
func (c *Client) CancelTx(ctx context.Context, tx pgx.Tx, id uuid.UUID) error {
	touched, err := c.db.TouchRunTx(ctx, tx, id, c.sqlNow())
	if errors.Is(err, engine.ErrNotFound) {
		return ErrNotFound
	}
	if err != nil {
		return fmt.Errorf("workflow: cancel run %s: %w", id, err)
	}
	status, jobID := touched.Status, touched.JobID
	if Status(status).Finished() {
		return fmt.Errorf("%w: run %s is %s", ErrRunFinished, id, status)
	}
	if Status(status) == StatusRunning || touched.JobState == "running" {
		if err := c.db.RequestCancelTx(ctx, tx, id, c.sqlNow()); err != nil {
			return fmt.Errorf("workflow: request cancellation of run %s: %w", id, err)
		}
	} else {
		stored := &RunError{Kind: ErrorKindCancelled, Message: "run cancelled while " + status, At: c.now().UTC()}
		finished, ok, err := c.db.CancelRun(ctx, tx, id, encodeRunError(stored), c.sqlNow())
		if err == nil && !ok {
			// Not reached: the run's row is locked and unfinished.
			err = pgx.ErrNoRows
		}
		if err != nil {
			return fmt.Errorf("workflow: cancel run %s: %w", id, err)
		}
		if err := c.afterFinishTx(ctx, tx, id, finished.ParentID); err != nil {
			return err
		}
		// Reported in the caller's transaction: see HookRunFinished.
		c.mw.runFinished(ctx, id, finished.Type, StatusCancelled)
	}
	if jobID != 0 {
		// A job that is not running is cancelled now; a running one gets a
		// cancellation notice that cancels its attempt's context.
		if _, err := c.river.JobCancelTx(ctx, tx, jobID); err != nil && !errors.Is(err, river.ErrNotFound) {
			return fmt.Errorf("workflow: cancel River job %d of run %s: %w", jobID, id, err)
		}
	}
	return nil
}

// Retry makes a failed or cancelled run run again. The replay returns the
// memoized results of its completed steps and continues from the step that
// failed. The run gets a new River job with the run's MaxAttempts; its
// attempt numbers continue from the last one. Returns ErrRunNotRetryable for
// a run in another status.
func (c *Client) Retry(ctx context.Context, id uuid.UUID) error {
	return pgx.BeginFunc(ctx, c.pool, func(tx pgx.Tx) error { return c.RetryTx(ctx, tx, id) })
}

// RetryTx is like Retry, within tx; the caller commits or rolls back.
func (c *Client) RetryTx(ctx context.Context, tx pgx.Tx, id uuid.UUID) error {
	run, err := runOf(c.db.RunByIDForUpdateTx(ctx, tx, id))
	if err != nil {
		return err
	}
	if run.Status != StatusFailed && run.Status != StatusCancelled {
		return fmt.Errorf("%w: run %s is %s", ErrRunNotRetryable, id, run.Status)
	}
	return c.requeueTx(ctx, tx, run, run.Attempt, run.MaxAttempts)
}

// requeueTx gives run a new River job, within tx, whose attempts continue
// from attemptBase and number at most maxAttempts, and makes the run
// pending on it. A new job, not JobRetry of the old one: River may still
// hold the old attempt's outcome to apply "if running" (see handOffTx).
func (c *Client) requeueTx(ctx context.Context, tx pgx.Tx, run *Run, attemptBase, maxAttempts int) error {
	args := runArgs{kind: kindOf(run.Type), RunID: run.ID, ScheduleID: run.ScheduleID, FireAt: run.FireAt,
		AttemptBase: attemptBase, Tenant: run.Tenant}
	if old, err := c.river.JobGetTx(ctx, tx, run.JobID); err == nil {
		var oldArgs runArgs
		if json.Unmarshal(old.EncodedArgs, &oldArgs) == nil {
			args.TimeoutMS, args.Retry = oldArgs.TimeoutMS, oldArgs.Retry
		}
	}
	res, err := c.river.InsertTx(ctx, tx, args, &river.InsertOpts{MaxAttempts: maxAttempts, Priority: run.Priority, Queue: run.Queue, Tags: run.Tags})
	if err != nil {
		return fmt.Errorf("workflow: insert a River job for run %s: %w", run.ID, err)
	}
	if err := c.db.ResetForRetryTx(ctx, tx, run.ID, res.Job.ID, c.sqlNow()); err != nil {
		return fmt.Errorf("workflow: make run %s pending on job %d: %w", run.ID, res.Job.ID, err)
	}
	return nil
}
