package workflow

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/tributary-go/tributary/internal/engine"
	"github.com/tributary-go/tributary/internal/runmeta"
	"github.com/tributary-go/tributary/internal/wfruntime"
)

// worker is the River worker of one workflow type: each River job it works is
// one attempt of one run.
type worker struct {
	river.WorkerDefaults[runArgs]

	c   *Client
	reg *registration
}

func addWorker(workers *river.Workers, c *Client, reg *registration) error {
	w := &worker{c: c, reg: reg}
	// River registers a worker under the Kind of its args' zero value; a
	// workflow's kind depends on its name, so pass args carrying it.
	return addWorkerArgsSafely(workers, runArgs{kind: reg.kind}, w)
}

func addWorkerArgsSafely(workers *river.Workers, args runArgs, w river.Worker[runArgs]) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%v", r)
		}
	}()
	river.AddWorkerArgs(workers, args, w)
	return nil
}

// Timeout applies the run's timeout (StartOpts or DefineOpts) to the attempt.
func (w *worker) Timeout(job *river.Job[runArgs]) time.Duration {
	switch {
	case job.Args.TimeoutMS < 0:
		return -1
	case job.Args.TimeoutMS > 0:
		return time.Duration(job.Args.TimeoutMS) * time.Millisecond
	}
	return 0
}

// Work runs one attempt: load the run and its memos in one query, replay the
// workflow function, and finish the attempt in one transaction with the job.
// Starting an attempt writes nothing: while River works the job, reads of
// the run show it running (see runReadColumns).
func (w *worker) Work(ctx context.Context, job *river.Job[runArgs]) error {
	c := w.c
	runID := job.Args.RunID
	attempt := job.Args.AttemptBase + job.Attempt
	if len(job.Errors) > 0 {
		c.foreign.Notice(ctx, c.logger, job.JobRow)
	}
	st, err := w.begin(ctx, job)
	if err != nil {
		return fmt.Errorf("workflow: begin attempt %d of run %s: %w", attempt, runID, err)
	}
	if st == nil {
		return w.inactiveRun(ctx, job)
	}
	if w.reg.opts.TenantLimit > 0 && job.Args.Tenant != "" {
		// The fetch let this attempt in under its tenant's limit; its end
		// may let in the next (tenant_limit.go).
		defer c.driver.TenantAttemptEnded(job.Queue)
	}

	wctx := &wfContext{
		Context: ctx,
		c:       c,
		info: RunInfo{
			ID: runID, Type: st.typ, Attempt: attempt, MaxAttempts: job.Args.AttemptBase + job.MaxAttempts, JobID: job.ID,
			ScheduleID: st.scheduleID, FireAt: st.fireAt, ParentID: st.parentID, Metadata: st.metadata, Tenant: job.Args.Tenant,
		},
		args:   job.Args,
		job:    job.JobRow,
		logger: c.logger.With(slog.String("run_id", runID.String()), slog.String("workflow", st.typ)),
		memos:  make(map[string]*memo, len(st.memos)),
		seen:   make(map[string]struct{}, len(st.memos)),
	}
	if bytes.Contains(st.metadata, []byte(runmeta.KeyGrantSubject)) {
		wctx.info.GrantSubject = runmeta.Decode(st.metadata).GrantSubject
	}
	for _, m := range st.memos {
		wctx.memos[m.Name] = m
	}

	if len(c.mw.attempt) == 0 {
		output, fnErr := w.call(wctx, st.input)
		return w.finish(ctx, wctx, job, output, fnErr)
	}
	info := &AttemptInfo{Run: wctx.info, StartedAt: c.now()}
	if at := wctx.attemptedAt(); at != nil {
		info.StartedAt = *at
	}
	info.WakeAt = sleptUntil(st.memos, info.StartedAt)
	info.ReadyAt = job.ScheduledAt
	return c.mw.wrapAttempt(ctx, info, func(ctx context.Context) error {
		wctx.Context = ctx
		output, fnErr := w.call(wctx, st.input)
		err := w.finish(ctx, wctx, job, output, fnErr)
		info.Outcome = wctx.outcome
		return err
	})
}

// sleptUntil is the wake time of the sleep memos hold parked, if startedAt
// is at or after it: the attempt is the one the sleep's timer started.
func sleptUntil(memos []*memo, startedAt time.Time) *time.Time {
	for _, m := range memos {
		if m.Kind == StepKindSleep && m.Status == StepStatusSleeping && m.WakeAt != nil && !startedAt.Before(*m.WakeAt) {
			return m.WakeAt
		}
	}
	return nil
}

// begin returns what the attempt starts from, or nil for a run that is not
// runnable. The very first attempt of a run whose job carries its input
// (runArgs.inlineStart) starts from the job alone: nothing can have been
// memoized yet, because this job has never been worked before (River
// appends to attempted_by on every fetch, snoozes included) and no earlier
// job of the run exists (a parked or retried run's next job carries no
// input). A run cancelled while its job was being fetched then runs one
// attempt; its completion does not overwrite the cancellation
// (wfruntime.Completer.Flush). Every other attempt reads the run and all its memos in
// one query, shared with other attempts starting at the same moment.
func (w *worker) begin(ctx context.Context, job *river.Job[runArgs]) (*attemptState, error) {
	a := job.Args
	if a.AttemptBase == 0 && job.Attempt == 1 && len(job.AttemptedBy) == 1 && len(job.Errors) == 0 {
		if in, ok := a.inlined(); ok {
			return &attemptState{typ: w.reg.name, input: in.Input, scheduleID: a.ScheduleID, fireAt: a.FireAt, parentID: in.ParentRunID, metadata: in.Metadata}, nil
		}
	}
	return w.c.loadAttempt(ctx, a.RunID)
}

func (w *worker) call(wctx *wfContext, input []byte) (out json.RawMessage, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = newPanicError(r)
		}
	}()
	return w.reg.run(wctx, input)
}

// finish ends the attempt according to what happened in it. The order
// matters: a park wins over everything (the job is already parked), then a
// divergence, a remote cancellation, a step failure, and finally the
// function's own result.
func (w *worker) finish(ctx context.Context, wctx *wfContext, job *river.Job[runArgs], output json.RawMessage, fnErr error) error {
	wctx.mu.Lock()
	parkedTill, diverged, stepErr, failStep := wctx.parkedTill, wctx.diverged, wctx.failErr, wctx.failStep
	wctx.mu.Unlock()

	// Finishing must not be cut short by the attempt's own cancellation.
	fctx := context.WithoutCancel(ctx)
	cancelled := errors.Is(context.Cause(ctx), rivertype.ErrJobCancelledRemotely)

	switch {
	case parkedTill != nil:
		// The park transaction completed this job and scheduled the run's
		// next one; River's own "complete if running" finds nothing to do.
		// The park passed a step boundary first, so no memo is unsaved.
		wctx.outcome = AttemptParked
		return nil
	case diverged == nil && stepErr == nil && fnErr == nil && !cancelled:
		wctx.outcome = AttemptCompleted
		return w.completeRun(fctx, wctx, job, output) // with the unsaved memos
	}
	// Every other ending keeps the memos of the steps the attempt completed,
	// so that the next attempt (or an operator's retry) does not run them
	// again. A memo that cannot be stored now is lost: its step runs again.
	if err := wctx.saveMemos(); err != nil {
		wctx.logger.ErrorContext(fctx, "tributary: Failed to store step results before ending the attempt", slog.String("err", err.Error()))
	}

	switch {
	case diverged != nil:
		return w.failRun(fctx, wctx, job, diverged, diverged.Step)
	case cancelled:
		return w.cancelRun(fctx, wctx, job)
	case stepErr != nil:
		fnErr = stepErr
	}

	var (
		nonRetryable *nonRetryableError
		retryAfter   *retryAfterError
	)
	switch {
	case errors.As(fnErr, &nonRetryable), errors.Is(fnErr, ErrInvalid), errors.Is(fnErr, ErrDivergence):
		return w.failRun(fctx, wctx, job, fnErr, failStep)
	case errors.As(fnErr, &retryAfter): // a snooze does not use up an attempt
		w.recordAttemptError(fctx, wctx, fnErr, failStep)
		wctx.outcome = AttemptRetry
		return river.JobSnooze(retryAfter.after)
	case job.Attempt >= job.MaxAttempts:
		return w.failRun(fctx, wctx, job, fnErr, failStep)
	}
	w.recordAttemptError(fctx, wctx, fnErr, failStep)
	wctx.outcome = AttemptRetry
	return fnErr
}

// completeRun completes the run and its River job in one transaction,
// shared with other runs completing at the same moment, and stores the
// memos of the steps that returned since the last step boundary in it. It does not wait
// for that transaction: the attempt ends, and its River slot is free for the
// next job, while the completion is queued (see wfruntime.Completer for why that keeps
// the run and its job atomic). It waits only when too many completions are
// pending already.
func (w *worker) completeRun(ctx context.Context, wctx *wfContext, job *river.Job[runArgs], output json.RawMessage) error {
	req := wfruntime.Completion{
		JobID: job.ID, RunID: job.Args.RunID, Type: w.reg.name, Attempt: wctx.info.Attempt, HasParent: wctx.info.ParentID != nil,
		Memos: wfruntime.MemoRows(wctx.memosToComplete()), Output: output, StartedAt: wctx.attemptedAt(), Job: job.JobRow,
	}
	if w.c.pending.Add(req) {
		w.c.batch.completes.Send(req)
		return nil
	}
	_, err := w.c.batch.completes.Do(ctx, req)
	if errors.Is(err, engine.ErrJobNotRunning) {
		wctx.outcome = AttemptAbandoned
		return nil // River already moved the job (rescued or cancelled); nothing to complete
	}
	if err != nil {
		wctx.outcome = AttemptAbandoned
		return fmt.Errorf("workflow: complete run %s: %w", wctx.info.ID, err)
	}
	return nil
}

// failRun marks the run failed and discards its job, in one transaction.
func (w *worker) failRun(ctx context.Context, wctx *wfContext, job *river.Job[runArgs], cause error, step string) error {
	c := w.c
	stored := &RunError{Kind: errorKind(cause), Message: cause.Error(), Step: step, Attempt: wctx.info.Attempt, At: w.c.now().UTC(), Stack: panicStack(cause)}
	finished := false
	err := pgx.BeginFunc(ctx, c.pool, func(tx pgx.Tx) error {
		attempt := wctx.info.Attempt
		ended, ok, err := c.db.FailRun(ctx, tx, &engine.FailRunParams{ID: wctx.info.ID, Error: encodeRunError(stored), Attempt: &attempt, StartedAt: wctx.attemptedAt(), Now: c.sqlNow()})
		if err != nil {
			return fmt.Errorf("mark run failed: %w", err)
		}
		if !ok {
			return nil
		}
		if err := w.afterFinishTx(ctx, tx, wctx.info.ID, ended.ParentID); err != nil {
			return err
		}
		finished = true
		return c.jobs.DiscardTx(ctx, tx, job.JobRow, cause)
	})
	if err != nil {
		wctx.outcome = AttemptAbandoned
		wctx.logger.ErrorContext(ctx, "tributary: Failed to record run failure", slog.String("err", err.Error()))
		return fmt.Errorf("workflow: fail run %s: %w (cause: %w)", wctx.info.ID, err, cause)
	}
	wctx.outcome = AttemptFailed
	if finished {
		c.mw.runFinished(ctx, wctx.info.ID, w.reg.name, StatusFailed)
	}
	wctx.logger.WarnContext(ctx, "tributary: Run failed", slog.String("kind", stored.Kind), slog.String("step", step), slog.String("err", cause.Error()))
	return river.JobCancel(cause) // no-op for River's state (already discarded); stops retries if the tx raced
}

// cancelRun records a cancellation requested through Client.Cancel or River
// UI while the attempt was running.
func (w *worker) cancelRun(ctx context.Context, wctx *wfContext, job *river.Job[runArgs]) error {
	c := w.c
	stored := &RunError{Kind: ErrorKindCancelled, Message: "run cancelled while running", Attempt: wctx.info.Attempt, At: w.c.now().UTC()}
	finished := false
	err := pgx.BeginFunc(ctx, c.pool, func(tx pgx.Tx) error {
		ended, ok, err := c.db.CancelRun(ctx, tx, wctx.info.ID, encodeRunError(stored), c.sqlNow())
		if err != nil || !ok {
			return err
		}
		finished = true
		return w.afterFinishTx(ctx, tx, wctx.info.ID, ended.ParentID)
	})
	if err != nil {
		wctx.outcome = AttemptAbandoned
		return fmt.Errorf("workflow: record cancellation of run %s: %w", wctx.info.ID, err)
	}
	wctx.outcome = AttemptCancelled
	if finished {
		c.mw.runFinished(ctx, wctx.info.ID, w.reg.name, StatusCancelled)
	}
	return river.JobCancel(ErrCancelled)
}

// afterFinishTx announces a finished run: it wakes a waiting parent and
// notifies Result waiters when the transaction commits.
func (w *worker) afterFinishTx(ctx context.Context, tx pgx.Tx, runID uuid.UUID, parentID *uuid.UUID) error {
	return w.c.afterFinishTx(ctx, tx, runID, parentID)
}

func (c *Client) afterFinishTx(ctx context.Context, tx pgx.Tx, runID uuid.UUID, parentID *uuid.UUID) error {
	if parentID != nil {
		if err := c.wakeRunTx(ctx, tx, *parentID); err != nil {
			return fmt.Errorf("wake parent run %s: %w", *parentID, err)
		}
	}
	if err := c.db.NotifyRunDoneTx(ctx, tx, runID); err != nil {
		return fmt.Errorf("notify run finished: %w", err)
	}
	return nil
}

func (w *worker) recordAttemptError(ctx context.Context, wctx *wfContext, cause error, step string) {
	stored := &RunError{Kind: errorKind(cause), Message: cause.Error(), Step: step, Attempt: wctx.info.Attempt, At: w.c.now().UTC(), Stack: panicStack(cause)}
	err := w.c.db.RecordAttemptError(ctx, w.c.pool, &engine.RecordAttemptErrorParams{ID: wctx.info.ID, Error: encodeRunError(stored), Attempt: wctx.info.Attempt, StartedAt: wctx.attemptedAt(), Now: w.c.sqlNow()})
	if err != nil {
		wctx.logger.ErrorContext(ctx, "tributary: Failed to record attempt error", slog.String("err", err.Error()))
	}
	wctx.logger.InfoContext(ctx, "tributary: Attempt failed; River will retry", slog.Int("attempt", wctx.info.Attempt), slog.String("step", step), slog.String("err", cause.Error()))
}

// inactiveRun handles a job whose run is not runnable: finished, cancelled
// while the job waited, or deleted.
func (w *worker) inactiveRun(ctx context.Context, job *river.Job[runArgs]) error {
	c := w.c
	runID := job.Args.RunID
	state, err := c.db.RunStateByID(ctx, c.pool, runID)
	if errors.Is(err, engine.ErrNotFound) {
		return river.JobCancel(fmt.Errorf("run %s no longer exists", runID))
	}
	if err != nil {
		return fmt.Errorf("workflow: read run %s: %w", runID, err)
	}
	status, cancelRequested, runJobID := state.Status, state.CancelRequested, state.JobID
	if Status(status) == StatusCompleted {
		return nil
	}
	if !Status(status).Finished() && cancelRequested {
		wctx := &wfContext{Context: ctx, c: c, info: RunInfo{ID: runID, Attempt: job.Args.AttemptBase + job.Attempt}, logger: c.logger}
		return w.cancelRun(context.WithoutCancel(ctx), wctx, job)
	}
	if (Status(status) == StatusFailed || Status(status) == StatusCancelled) && runJobID == job.ID {
		// The run's last job, which ended with the run, is running again:
		// an operator pressed Retry in River UI. Retry the run, as
		// `tributary workflow retry` does, on a job of its own.
		if err := c.Retry(ctx, runID); err != nil && !errors.Is(err, ErrRunNotRetryable) {
			return fmt.Errorf("workflow: retry run %s, whose job was retried in River UI: %w", runID, err)
		}
		c.logger.InfoContext(ctx, "tributary: A finished run's River job was retried (River UI); the run is retried",
			slog.String("run_id", runID.String()), slog.String("was", status), slog.Int64("job_id", job.ID))
		return nil
	}
	return river.JobCancel(fmt.Errorf("run %s is %s", runID, status))
}
