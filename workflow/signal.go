package workflow

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// Signal sends a named signal with a JSON-encodable payload to a run. The
// signal is stored: a run that waits for it later (WaitSignal with the same
// name) receives it, and a run parked in WaitSignal is woken at once through
// River, not at its next poll. Signals of one name are delivered in the
// order sent, each to one WaitSignal.
//
// Returns ErrNotFound for an unknown run and ErrRunFinished for a run that
// has finished (the signal is not stored).
func (c *Client) Signal(ctx context.Context, runID uuid.UUID, name string, payload any) error {
	return pgx.BeginFunc(ctx, c.pool, func(tx pgx.Tx) error {
		return c.SignalTx(ctx, tx, runID, name, payload)
	})
}

// SignalTx is like Signal, within tx; the caller commits or rolls back. The
// run is woken only when tx commits.
func (c *Client) SignalTx(ctx context.Context, tx pgx.Tx, runID uuid.UUID, name string, payload any) error {
	if name == "" || len(name) > maxStepNameLength {
		return &ValidationError{Field: "signal name", Problem: fmt.Sprintf("must be 1 to %d bytes, got %d", maxStepNameLength, len(name))}
	}
	encoded, err := json.Marshal(payload)
	if err != nil {
		return &ValidationError{Field: "signal payload", Problem: fmt.Sprintf("cannot be encoded as JSON: %v", err)}
	}
	if len(encoded) > c.maxInputBytes {
		return &ValidationError{Field: "signal payload", Problem: fmt.Sprintf("is %d bytes encoded, the limit is %d (Config.MaxInputBytes)", len(encoded), c.maxInputBytes)}
	}
	// Lock the run row first (see wakeRunTx): a WaitSignal parking
	// concurrently then either sees this signal or is woken by it.
	var (
		status string
		jobID  int64
		queue  string
	)
	err = tx.QueryRow(ctx, c.q.touchRun, runID).Scan(&status, &jobID, &queue, new(string))
	if errors.Is(err, pgx.ErrNoRows) {
		return ErrNotFound
	}
	if err != nil {
		return fmt.Errorf("workflow: signal run %s: %w", runID, err)
	}
	if Status(status).Finished() {
		return fmt.Errorf("%w: run %s is %s; signal %q not stored", ErrRunFinished, runID, status, name)
	}
	if _, err := tx.Exec(ctx, c.q.insertSignal, runID, name, encoded); err != nil {
		return fmt.Errorf("workflow: store signal %q for run %s: %w", name, runID, err)
	}
	return c.wakeRunTx(ctx, tx, runID)
}

// WaitOpts are options for WaitSignal. A nil *WaitOpts waits without timeout.
type WaitOpts struct {
	// Step names the wait's step record, so that one signal name can be
	// waited for more than once in a run.
	//
	// Defaults to "signal:" + the signal name.
	Step string

	// Timeout bounds the wait; after it WaitSignal returns ErrSignalTimeout.
	// The deadline is fixed the first time the wait is reached.
	//
	// Defaults to 0: wait until the signal arrives or the run is cancelled.
	Timeout time.Duration
}

// WaitSignal waits for the signal name and returns its payload decoded into
// T. While it waits the run is parked: the attempt ends, no worker slot is
// held, and Signal wakes it at once. A signal sent before the wait is kept and
// returned immediately. The received payload (or the timeout) is memoized
// like a step's result.
//
// When the attempt parks, WaitSignal returns an error the workflow function
// must return; the function runs again, replayed, when the signal arrives.
func WaitSignal[T any](ctx Context, name string, opts *WaitOpts) (T, error) {
	var zero T
	if opts == nil {
		opts = &WaitOpts{}
	}
	step := opts.Step
	if step == "" {
		step = "signal:" + name
	}
	w := ctx.state()
	if err := w.enter(step, StepKindSignal); err != nil {
		return zero, err
	}
	resultType := typeName[T]()

	m := w.memo(step)
	if m != nil && m.Kind != StepKindSignal {
		return zero, w.diverge(step, m, "signal wait")
	}
	if m != nil && m.Status == StepStatusCompleted {
		return decodeWaitResult[T](w, step, m)
	}

	var wakeAt *time.Time
	if m != nil {
		wakeAt = m.WakeAt
	} else if opts.Timeout > 0 {
		t := time.Now().Add(opts.Timeout)
		wakeAt = &t
	}

	var done *memo
	_, err := w.parkTx(&parkRequest{name: step, kind: StepKindSignal, stepStatus: StepStatusWaiting, runStatus: StatusWaiting, wakeAt: wakeAt, resultType: resultType},
		func(ctx context.Context, tx pgx.Tx) (bool, error) {
			var payload []byte
			err := tx.QueryRow(ctx, w.c.q.consumeSignal, w.info.ID, name, step).Scan(&payload)
			switch {
			case err == nil:
				done = &memo{Name: step, Kind: StepKindSignal, Status: StepStatusCompleted, ResultType: resultType, Output: payload}
			case !errors.Is(err, pgx.ErrNoRows):
				return false, fmt.Errorf("receive signal %q: %w", name, err)
			case wakeAt != nil && !time.Now().Before(*wakeAt):
				timeout := &RunError{Kind: "timeout", Message: ErrSignalTimeout.Error(), Step: step, Attempt: w.info.Attempt, At: time.Now().UTC()}
				done = &memo{Name: step, Kind: StepKindSignal, Status: StepStatusCompleted, ResultType: resultType, Output: []byte("null"), Error: timeout}
			default:
				return false, nil
			}
			return true, w.c.finishWaitTx(ctx, tx, w.info.ID, done, m == nil)
		})
	if err != nil {
		return zero, err
	}
	w.setMemo(done)
	return decodeWaitResult[T](w, step, done)
}

// finishWaitTx stores the outcome of a signal or child wait.
func (c *Client) finishWaitTx(ctx context.Context, tx pgx.Tx, runID uuid.UUID, done *memo, insert bool) error {
	if insert {
		if _, err := tx.Exec(ctx, c.q.parkMemo, runID, done.Name, string(done.Kind), string(StepStatusWaiting), nil, done.ChildRunID, done.ResultType); err != nil {
			return fmt.Errorf("record %s %q: %w", done.Kind, done.Name, err)
		}
	}
	if _, err := tx.Exec(ctx, c.q.finishWaitMemo, runID, done.Name, []byte(done.Output), encodeRunError(done.Error)); err != nil {
		return fmt.Errorf("complete %s %q: %w", done.Kind, done.Name, err)
	}
	return nil
}

func decodeWaitResult[T any](w *wfContext, step string, m *memo) (T, error) {
	var out T
	if m.Error != nil {
		if m.Error.Kind == "timeout" {
			return out, fmt.Errorf("%w (step %q)", ErrSignalTimeout, step)
		}
		return out, m.Error
	}
	if len(m.Output) > 0 && string(m.Output) != "null" {
		if err := json.Unmarshal(m.Output, &out); err != nil {
			return out, w.fail(step, NonRetryable(fmt.Errorf("workflow: %s %q payload does not decode into %s: %w", m.Kind, step, typeName[T](), err)))
		}
	}
	return out, nil
}
