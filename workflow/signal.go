package workflow

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/tributary-go/tributary/internal/engine"
)

// Signal sends a named signal with a JSON-encodable payload to a run. The
// signal is stored: a run that waits for it later (WaitSignal with the same
// name) receives it, and a run parked in WaitSignal is woken at once through
// River, not at its next poll. Signals of one name are delivered in the
// order sent, each to one WaitSignal.
//
// A signal the run is not waiting for is stored all the same, since a
// signal may legitimately arrive before the run reaches its WaitSignal; it
// is received only if the workflow waits for its name later. Use
// SendSignal to learn whether the run was waiting for it.
//
// Returns ErrNotFound for an unknown run and ErrRunFinished for a run that
// has finished (the signal is not stored).
func (c *Client) Signal(ctx context.Context, runID uuid.UUID, name string, payload any) error {
	_, err := c.SendSignal(ctx, runID, name, payload)
	return err
}

// SignalTx is like Signal, within tx; the caller commits or rolls back. The
// run is woken only when tx commits.
func (c *Client) SignalTx(ctx context.Context, tx pgx.Tx, runID uuid.UUID, name string, payload any) error {
	_, err := c.SendSignalTx(ctx, tx, runID, name, payload)
	return err
}

// SignalResult is what SendSignal found when it stored a signal: whether
// the run was waiting for it. It describes the moment the signal was
// stored; a run that is running or sleeping may wait for the signal a
// moment later, and then receives it.
type SignalResult struct {
	// Status is the run's status when the signal was stored: pending,
	// running, sleeping or waiting (finished runs take no signal).
	Status Status

	// Waiting says the run is parked in a WaitSignal for this signal's
	// name: the signal wakes it, and the wait receives the oldest pending
	// signal of the name (this one unless others were pending before it).
	Waiting bool

	// WaitingFor is the name of the signal the run is parked waiting for,
	// or "" when it is not parked in a WaitSignal (it has not started, is
	// running, sleeping or waiting for a child run). When it is another
	// name than the one sent, the signal is kept until a WaitSignal for
	// its name takes it, which may be never.
	WaitingFor string

	// Pending is how many signals of this name the run has stored and not
	// yet received, this one included.
	Pending int
}

// SendSignal is like Signal, and says whether the run was waiting for the
// signal (see SignalResult). The signal is stored either way. It costs the
// same one transaction as Signal.
//
// Returns ErrNotFound for an unknown run and ErrRunFinished for a run that
// has finished (the signal is not stored).
func (c *Client) SendSignal(ctx context.Context, runID uuid.UUID, name string, payload any) (*SignalResult, error) {
	var res *SignalResult
	err := pgx.BeginFunc(ctx, c.pool, func(tx pgx.Tx) error {
		var err error
		res, err = c.SendSignalTx(ctx, tx, runID, name, payload)
		return err
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// SendSignalTx is like SendSignal, within tx; the caller commits or rolls
// back. The run is woken only when tx commits, and the result describes the
// run as tx saw it.
func (c *Client) SendSignalTx(ctx context.Context, tx pgx.Tx, runID uuid.UUID, name string, payload any) (*SignalResult, error) {
	if len(c.mw.signal) == 0 {
		return c.sendSignalTx(ctx, tx, runID, name, payload)
	}
	var res *SignalResult
	err := c.mw.wrapSignal(ctx, &SignalInfo{RunID: runID, Name: name}, func(ctx context.Context) error {
		var err error
		res, err = c.sendSignalTx(ctx, tx, runID, name, payload)
		return err
	})
	return res, err
}

func (c *Client) sendSignalTx(ctx context.Context, tx pgx.Tx, runID uuid.UUID, name string, payload any) (*SignalResult, error) {
	if name == "" || len(name) > maxStepNameLength {
		return nil, &ValidationError{Field: "signal name", Problem: fmt.Sprintf("must be 1 to %d bytes, got %d", maxStepNameLength, len(name))}
	}
	encoded, err := json.Marshal(payload)
	if err != nil {
		return nil, &ValidationError{Field: "signal payload", Problem: fmt.Sprintf("cannot be encoded as JSON: %v", err)}
	}
	if len(encoded) > c.maxInputBytes {
		return nil, &ValidationError{Field: "signal payload", Problem: fmt.Sprintf("is %d bytes encoded, the limit is %d (Config.MaxInputBytes)", len(encoded), c.maxInputBytes)}
	}
	// Lock the run row first (see wakeRunTx): a WaitSignal parking
	// concurrently then either sees this signal or is woken by it.
	run, err := c.db.TouchRunTx(ctx, tx, runID, c.sqlNow())
	if errors.Is(err, engine.ErrNotFound) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("workflow: signal run %s: %w", runID, err)
	}
	if Status(run.Status).Finished() {
		return nil, fmt.Errorf("%w: run %s is %s; signal %q not stored", ErrRunFinished, runID, run.Status, name)
	}
	res := &SignalResult{Status: Status(run.Status)}
	if run.JobState == "running" {
		res.Status = StatusRunning // as reads show it (see engine's runReadColumns)
	}
	sent, err := c.db.InsertSignalTx(ctx, tx, &engine.InsertSignalParams{RunID: runID, Name: name, Payload: encoded, Waiting: run.Status == string(StatusWaiting), Now: c.sqlNow()})
	if err != nil {
		return nil, fmt.Errorf("workflow: store signal %q for run %s: %w", name, runID, err)
	}
	res.Pending, res.WaitingFor = sent.Pending, sent.WaitingFor
	res.Waiting = res.WaitingFor == name
	// The row is locked since TouchRunTx above, so its status is still
	// the one read there.
	if err := c.wakeLockedTx(ctx, tx, run); err != nil {
		return nil, err
	}
	return res, nil
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
//
// The wait is a step of the run (named opts.Step): a replay matches it to
// the run's history by order and name like any step.
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
	resultType := typeName[T]()
	seq, err := w.enter(step, StepKindSignal, "signal wait")
	if err != nil {
		return zero, err
	}
	defer w.leave()

	m := w.memo(step)
	if m != nil && m.Kind != StepKindSignal {
		return zero, w.diverge(step, m, "signal wait")
	}
	if m != nil && m.Status == StepStatusCompleted {
		w.replayed(step, StepKindSignal)
		return decodeWaitResult[T](w, step, m)
	}

	var wakeAt *time.Time
	if m != nil {
		wakeAt = m.WakeAt
	} else if opts.Timeout > 0 {
		t := w.c.now().Add(opts.Timeout)
		wakeAt = &t
	}

	var done *memo
	err = w.boundary(step, StepKindSignal, func(context.Context) error {
		_, err := w.parkTx(&parkRequest{name: step, seq: seq, signal: name, kind: StepKindSignal, stepStatus: StepStatusWaiting, runStatus: StatusWaiting, wakeAt: wakeAt, resultType: resultType},
			func(ctx context.Context, tx pgx.Tx) (bool, error) {
				payload, err := w.c.db.ConsumeSignalTx(ctx, tx, w.info.ID, name, step, w.c.sqlNow())
				switch {
				case err == nil:
					done = &memo{Name: step, Kind: StepKindSignal, Status: StepStatusCompleted, ResultType: resultType, Output: payload, Seq: &seq}
				case !errors.Is(err, engine.ErrNotFound):
					return false, fmt.Errorf("receive signal %q: %w", name, err)
				case wakeAt != nil && !w.c.now().Before(*wakeAt):
					timeout := &RunError{Kind: "timeout", Message: ErrSignalTimeout.Error(), Step: step, Attempt: w.info.Attempt, At: w.c.now().UTC()}
					done = &memo{Name: step, Kind: StepKindSignal, Status: StepStatusCompleted, ResultType: resultType, Output: []byte("null"), Error: timeout, Seq: &seq}
				default:
					return false, nil
				}
				return true, w.c.finishWaitTx(ctx, tx, w.info.ID, done, m == nil, name)
			})
		return err
	})
	if err != nil {
		return zero, err
	}
	w.setMemo(done)
	return decodeWaitResult[T](w, step, done)
}

// finishWaitTx stores the outcome of a signal or child wait. insert says
// the wait has no record yet; signal is the signal a signal wait waited for.
func (c *Client) finishWaitTx(ctx context.Context, tx pgx.Tx, runID uuid.UUID, done *memo, insert bool, signal string) error {
	if insert {
		seq := -1
		if done.Seq != nil {
			seq = *done.Seq
		}
		err := c.db.InsertParkedStep(ctx, tx, &engine.ParkedStepParams{
			RunID: runID, Name: done.Name, Kind: string(done.Kind), Status: string(StepStatusWaiting),
			ChildRunID: done.ChildRunID, ResultType: done.ResultType, Seq: seq, Signal: signal,
			Now: c.sqlNow(),
		})
		if err != nil {
			return fmt.Errorf("record %s %q: %w", done.Kind, done.Name, err)
		}
	}
	err := c.db.FinishWait(ctx, tx, &engine.FinishWaitParams{RunID: runID, Name: done.Name, Output: done.Output, Error: encodeRunError(done.Error), Now: c.sqlNow()})
	if err != nil {
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
