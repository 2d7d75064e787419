package workflow

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/tributary-go/tributary/internal/engine"
)

// RunChild starts a run of def as a child of the current run and waits for
// its result, durably: the child is a run of its own (its parent_run_id links
// it), started once per step name, and the parent is parked without a worker
// slot until the child finishes, when it is woken at once. A replay returns
// the memoized outcome. A failed or cancelled child returns its *RunError,
// which the parent may handle like any step error. The child's start is
// recorded as a step of the parent: a replay matches it to the parent's
// history by order and name like any step.
func RunChild[In, Out any](ctx Context, name string, def *Definition[In, Out], input In, opts *StartOpts) (Out, error) {
	var zero Out
	w := ctx.state()
	resultType := typeName[Out]()
	seq, err := w.enter(name, StepKindChild, "child run returning "+resultType)
	if err != nil {
		return zero, err
	}
	defer w.leave()
	if def == nil || def.err != nil {
		err := error(&ValidationError{Field: "child definition", Problem: "is nil; pass a definition made with Define"})
		if def != nil {
			err = def.err
		}
		return zero, w.fail(name, NonRetryable(err))
	}
	m := w.memo(name)
	if m != nil && (m.Kind != StepKindChild || m.ResultType != resultType) {
		return zero, w.diverge(name, m, "child run returning "+resultType)
	}
	if m != nil && m.Status == StepStatusCompleted {
		w.replayed(name, StepKindChild)
		return decodeWaitResult[Out](w, name, m)
	}

	var encoded []byte
	if m == nil {
		var err error
		if encoded, err = json.Marshal(input); err != nil {
			return zero, w.fail(name, NonRetryable(&ValidationError{Field: "child input", Problem: err.Error()}))
		}
	}

	var (
		done    *memo
		childID *uuid.UUID
	)
	if m != nil {
		childID = m.ChildRunID
	}
	req := &parkRequest{name: name, seq: seq, kind: StepKindChild, stepStatus: StepStatusWaiting, runStatus: StatusWaiting, resultType: resultType}
	startCtx := w.Context // the child start's context: the step middleware's the first time
	park := func() error {
		_, err := w.parkTx(req, func(ctx context.Context, tx pgx.Tx) (bool, error) {
			c := w.c
			if childID == nil {
				parent := w.info.ID
				started, err := c.startTx(context.WithoutCancel(startCtx), tx, &startParams{typeName: def.name, defaults: def.opts, input: encoded, opts: opts, parentID: &parent, parentStep: name,
					parentTenant: w.info.Tenant})
				if err != nil {
					return false, fmt.Errorf("start child run: %w", err)
				}
				childID = &started.ID
				req.childRunID = childID
				// The park below inserts the memo with this child id; the
				// child cannot have finished yet, its job is not committed.
				return false, nil
			}
			outcome, err := c.db.RunOutcomeByID(ctx, tx, *childID)
			if errors.Is(err, engine.ErrNotFound) {
				err = pgx.ErrNoRows // the error's words stay as they were: "no rows in result set"
			}
			if err != nil {
				return false, fmt.Errorf("read child run %s: %w", *childID, err)
			}
			status, output := outcome.Status, outcome.Output
			if !Status(status).Finished() {
				return false, nil
			}
			childErr, err := decodeRunError(outcome.Error)
			if err != nil {
				return false, err
			}
			if childErr == nil && Status(status) != StatusCompleted {
				childErr = &RunError{Kind: status, Message: "child run " + status, Attempt: w.info.Attempt}
			}
			if output == nil {
				output = []byte("null")
			}
			done = &memo{Name: name, Kind: StepKindChild, Status: StepStatusCompleted, ResultType: resultType, Output: output, Error: childErr, ChildRunID: childID, Seq: &seq}
			return true, c.finishWaitTx(ctx, tx, w.info.ID, done, false, "")
		})
		return err
	}
	if childID == nil { // the child's start: under the step middleware
		err = w.boundary(name, StepKindChild, func(ctx context.Context) error {
			startCtx = ctx
			return park()
		})
	} else {
		err = park()
	}
	if err != nil {
		return zero, err
	}
	w.setMemo(done)
	return decodeWaitResult[Out](w, name, done)
}
