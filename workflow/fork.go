package workflow

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

	"github.com/tributary-go/tributary/internal/engine"
	"github.com/tributary-go/tributary/internal/runmeta"
)

// Fork starts a new run from a finished run's step fromStep: the new run
// replays the steps the original recorded before fromStep from copies of
// their memos, and runs fromStep and everything after it with the code
// deployed now (after a bug fix, say). It returns the new run, pending.
// The original is left as it is.
//
// Steps are named by the names the code gives them, unique within a run
// (Step, StepTx, Sleep, WaitSignal, RunChild, Version all record one), so
// fromStep names one record. "Before fromStep" is the run's history order,
// the order the workflow reached its steps (GetRun's Steps). The records
// copied are those before fromStep that completed; a failed one is not
// copied (it did not complete). Copied records keep what they recorded:
//
//   - A step's function is not called again: its result is returned.
//   - A StepTx before fromStep is not executed again either: its memo is
//     copied, its database writes are not redone (they were committed
//     once, by the original run).
//   - A finished sleep, a received signal and a finished child run return
//     what they returned in the original; the child run is not started
//     again. A Version record keeps the version it chose.
//
// The new run has the original's workflow type, input, tenant, queue,
// priority, MaxAttempts, tags, and metadata without the keys reserved for
// schedules' runs (grant_subject, grant_id, schedule_*: a fork is an
// operator's start, not a schedule's, and runs under no grant). Its retry
// policy and timeout are the original's job's (the type's defaults when
// River has since deleted that job). It has no idempotency key, schedule
// slot, parent or debounce key: those belong to the original. Its attempts
// count from 1. Run.ForkedFrom and Run.ForkedFromStep record the origin,
// and ListParams.ForkedFrom lists a run's forks.
//
// Fork refuses a run that is not finished, with ErrRunNotFinished: two
// runs doing the same work at once is rarely meant; cancel the run first.
// It returns ErrNotFound for no such run, a *ValidationError for an empty
// fromStep, and a *StepNotRecordedError (listing the steps the run did
// record) for a step the run has no record of. On every error nothing is
// written.
func (c *Client) Fork(ctx context.Context, runID uuid.UUID, fromStep string) (*Run, error) {
	var run *Run
	err := pgx.BeginFunc(ctx, c.pool, func(tx pgx.Tx) error {
		var err error
		run, err = c.ForkTx(ctx, tx, runID, fromStep)
		return err
	})
	return run, err
}

// ForkTx is like Fork, within tx; the caller commits or rolls back.
func (c *Client) ForkTx(ctx context.Context, tx pgx.Tx, runID uuid.UUID, fromStep string) (*Run, error) {
	if fromStep == "" {
		return nil, &ValidationError{Field: "fromStep", Problem: "is empty; name the step to fork from, as GetRun's Steps show it"}
	}
	origin, err := runOf(c.db.RunByIDForUpdateTx(ctx, tx, runID))
	if err != nil {
		return nil, err
	}
	if !origin.Status.Finished() {
		return nil, fmt.Errorf("%w: run %s is %s; cancel it first, then fork it", ErrRunNotFinished, runID, origin.Status)
	}
	steps, err := c.db.StepsOfRun(ctx, tx, runID)
	if err != nil {
		return nil, fmt.Errorf("workflow: read steps of run %s: %w", runID, err)
	}
	copied, ok := stepsBefore(steps, fromStep)
	if !ok {
		recorded := make([]string, len(steps))
		for i, s := range steps {
			recorded[i] = s.Name
		}
		return nil, &StepNotRecordedError{RunID: runID, Step: fromStep, Recorded: recorded}
	}

	p, err := c.forkParams(ctx, tx, origin)
	if err != nil {
		return nil, err
	}
	started, err := c.startTx(ctx, tx, p)
	if err != nil {
		return nil, err
	}
	if err := c.db.ForkRunTx(ctx, tx, &engine.Fork{Run: started.ID, Origin: runID, Step: fromStep, Copy: copied}); err != nil {
		return nil, fmt.Errorf("workflow: fork run %s at step %q: %w", runID, fromStep, err)
	}
	fork := started.Run
	fork.ForkedFrom, fork.ForkedFromStep = &runID, fromStep
	return fork, nil
}

// stepsBefore returns the names of the completed records of steps (a run's,
// in history order) before the record named step, and whether there is one.
func stepsBefore(steps []*engine.Step, step string) ([]string, bool) {
	var names []string
	for _, s := range steps {
		if s.Name == step {
			return names, true
		}
		if StepStatus(s.Status) == StepStatusCompleted {
			names = append(names, s.Name)
		}
	}
	return nil, false
}

// forkParams are the start parameters of a fork of origin (see Fork for
// what is copied).
func (c *Client) forkParams(ctx context.Context, tx pgx.Tx, origin *Run) (*startParams, error) {
	reg, ok := c.types[origin.Type]
	defaults := DefineOpts{MaxAttempts: defaultMaxAttempts, Priority: 1, Queue: river.QueueDefault}
	if ok {
		defaults = reg.opts
	}
	opts := &StartOpts{
		MaxAttempts: origin.MaxAttempts, Priority: origin.Priority, Queue: origin.Queue,
		Tags: origin.Tags, Tenant: origin.Tenant,
	}
	if len(origin.Metadata) > 0 {
		if err := json.Unmarshal(origin.Metadata, &opts.Metadata); err != nil {
			return nil, fmt.Errorf("workflow: read metadata of run %s: %w", origin.ID, err)
		}
		for key := range opts.Metadata {
			if runmeta.Reserved(key) {
				delete(opts.Metadata, key)
			}
		}
	}
	if origin.JobID != 0 {
		job, err := c.river.JobGetTx(ctx, tx, origin.JobID)
		if err != nil && !errors.Is(err, river.ErrNotFound) {
			return nil, fmt.Errorf("workflow: read River job %d of run %s: %w", origin.JobID, origin.ID, err)
		}
		var args runArgs
		if job != nil && json.Unmarshal(job.EncodedArgs, &args) == nil {
			opts.Retry = args.Retry
			switch {
			case args.TimeoutMS < 0:
				opts.Timeout = -1
			case args.TimeoutMS > 0:
				opts.Timeout = time.Duration(args.TimeoutMS) * time.Millisecond
			}
		}
	}
	return &startParams{typeName: origin.Type, defaults: defaults, input: origin.Input, opts: opts, fork: true}, nil
}
