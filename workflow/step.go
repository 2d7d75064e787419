package workflow

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tributary-go/tributary/internal/engine"
)

// Step runs fn once per run and memoizes its result: a replayed attempt (after
// a failure, a crash, a sleep or a wait) returns the stored result without
// calling fn. Guarantees:
//
//   - The result is durable in step_runs before the workflow moves past the
//     step (MEMO_BEFORE_PROGRESS): before the next step boundary (Step,
//     StepTx, Sleep, SleepUntil, WaitSignal or RunChild) does anything, and
//     at the latest in the same transaction as the run's completion, so no
//     run is ever seen past a step whose result could be lost. Step itself
//     returns before the memo commits: the memo rides with the next step
//     boundary's wait or with the completion, which saves the last step of
//     every run a commit wait of its own. The code between steps runs again
//     on every replay anyway, so it cannot tell the difference. When the
//     workflow reaches neither within 50 ms, the memo is stored on its own.
//   - fn runs at least once and, once it has returned successfully and its
//     memo is stored, never again for this run. A crash after fn's side
//     effect but before its memo commits runs fn again: make fn idempotent,
//     or use StepTx for database writes. That window includes the time from
//     Step's return to the memo's commit described above.
//   - When fn fails, the attempt fails: later steps are not run and the run
//     is retried with River's backoff (or fails at once for a NonRetryable
//     error, or after RetryAfter's delay). Completed steps are not run again.
//
// name identifies the step within the run: it must be unique in the run and
// stable across deploys. A replay matches steps to the run's recorded
// history by order and name: a step renamed, inserted before recorded ones
// or moved under a run in flight is a *DivergenceError, as is replaying a
// memo into a different T (guard such changes with Version). T must be
// JSON-encodable. Call Step from the workflow function, not from inside
// another step's function or from another goroutine: a step reached while
// another is in progress fails the run.
func Step[T any](ctx Context, name string, fn func(ctx context.Context) (T, error)) (T, error) {
	var zero T
	w, resultType := ctx.state(), typeName[T]()
	seq, err := w.enter(name, StepKindStep, "step returning "+resultType)
	if err != nil {
		return zero, err
	}
	defer w.leave()
	if out, done, err := replayStep[T](w, name, resultType); done || err != nil {
		return out, err
	}

	if mock, ok, err := mocked[func(context.Context) (T, error)](w, name, resultType); err != nil {
		return zero, w.fail(name, err)
	} else if ok {
		fn = mock
	}
	startedAt := w.c.now().UTC()
	var out T
	if len(w.c.mw.step) == 0 {
		out, err = callStep(w.Context, fn)
	} else {
		out, err = callStepWrapped(w, name, fn)
	}
	if err != nil {
		return zero, w.stepFailed(name, seq, resultType, startedAt, err)
	}
	encoded, err := json.Marshal(out)
	if err != nil {
		return zero, w.fail(name, NonRetryable(fmt.Errorf("workflow: step %q result (%s) cannot be encoded as JSON: %w", name, resultType, err)))
	}
	m := &memo{Name: name, Kind: StepKindStep, Status: StepStatusCompleted, ResultType: resultType, Output: encoded, Seq: &seq}
	w.deferMemo(m, startedAt, w.c.now().UTC(), w.memo(name) == nil)
	w.setMemo(m)
	return out, nil
}

// StepTx is like Step for database work: fn runs inside a transaction that
// also writes the step's memo, and both commit together. The step's writes
// happen exactly once: a crash before the commit leaves neither, and a
// replay after it returns the memo without calling fn. fn must not commit or
// roll back tx.
//
// If two attempts of the same run race (a job rescued while its first worker
// still runs), the second to commit rolls back its writes and returns the
// first one's result.
func StepTx[T any](ctx Context, name string, fn func(ctx context.Context, tx pgx.Tx) (T, error)) (T, error) {
	var zero T
	w, resultType := ctx.state(), typeName[T]()
	seq, err := w.enter(name, StepKindStep, "step returning "+resultType)
	if err != nil {
		return zero, err
	}
	defer w.leave()
	if out, done, err := replayStep[T](w, name, resultType); done || err != nil {
		return out, err
	}

	if mock, ok, err := mocked[func(context.Context) (T, error)](w, name, resultType); err != nil {
		return zero, w.fail(name, err)
	} else if ok {
		fn = func(ctx context.Context, _ pgx.Tx) (T, error) { return mock(ctx) }
	}
	startedAt := w.c.now().UTC()
	var (
		out     T
		encoded []byte
		lost    bool // another attempt stored the memo first
	)
	run := func(ctx context.Context) error {
		return pgx.BeginFunc(ctx, w.c.pool, func(tx pgx.Tx) error {
			var err error
			out, err = callStep(ctx, func(ctx context.Context) (T, error) { return fn(ctx, tx) })
			if err != nil {
				return err
			}
			if encoded, err = json.Marshal(out); err != nil {
				return NonRetryable(fmt.Errorf("workflow: step %q result (%s) cannot be encoded as JSON: %w", name, resultType, err))
			}
			stored, err := w.c.db.UpsertMemo(ctx, tx, &engine.Memo{
				RunID: w.info.ID, Name: name, Kind: string(StepKindStep), Status: string(StepStatusCompleted), ResultType: resultType,
				Output: encoded, StartedAt: startedAt, FinishedAt: w.c.now().UTC(), Seq: &seq,
			})
			if err != nil {
				return fmt.Errorf("workflow: store result of step %q: %w", name, err)
			}
			if !stored {
				lost = true
				return errLostRace
			}
			return nil
		})
	}
	err = w.boundary(name, StepKindStep, run)
	if lost {
		return reloadStep[T](w, name, seq, resultType)
	}
	if err != nil {
		return zero, w.stepFailed(name, seq, resultType, startedAt, err)
	}
	w.setMemo(&memo{Name: name, Kind: StepKindStep, Status: StepStatusCompleted, ResultType: resultType, Output: encoded, Seq: &seq})
	return out, nil
}

var errLostRace = errors.New("workflow: another attempt stored this step first")

// replayStep returns a completed step's stored result. done is false when
// the step has no completed memo and must run.
func replayStep[T any](w *wfContext, name, resultType string) (out T, done bool, err error) {
	m := w.memo(name)
	if m == nil {
		return out, false, nil
	}
	if m.Kind != StepKindStep {
		return out, true, w.diverge(name, m, "step returning "+resultType)
	}
	if m.Status != StepStatusCompleted {
		return out, false, nil
	}
	if m.ResultType != resultType {
		return out, true, w.diverge(name, m, "step returning "+resultType)
	}
	if err := json.Unmarshal(m.Output, &out); err != nil {
		return out, true, w.diverge(name, m, fmt.Sprintf("step returning %s (stored value does not decode: %v)", resultType, err))
	}
	w.replayed(name, StepKindStep)
	return out, true, nil
}

// replayed reports a boundary replayed from its memo to HookStepReplayed.
func (w *wfContext) replayed(name string, kind StepKind) {
	if len(w.c.mw.replayed) > 0 {
		w.c.mw.stepReplayed(w.Context, &StepInfo{Run: &w.info, Name: name, Kind: kind})
	}
}

// boundary runs inner, a step boundary's work, under the step middleware:
// with w's context when there is none, else with the middleware's.
func (w *wfContext) boundary(name string, kind StepKind, inner func(ctx context.Context) error) error {
	if len(w.c.mw.step) == 0 {
		return inner(w.Context)
	}
	info := &StepInfo{Run: &w.info, Name: name, Kind: kind}
	return w.c.mw.wrapStep(w.Context, info, func(ctx context.Context) error {
		err := inner(ctx)
		info.Parked = errors.Is(err, errSuspended)
		return err
	})
}

// callStepWrapped is callStep under the step middleware.
func callStepWrapped[T any](w *wfContext, name string, fn func(ctx context.Context) (T, error)) (T, error) {
	var out T
	err := w.boundary(name, StepKindStep, func(ctx context.Context) error {
		var err error
		out, err = callStep(ctx, fn)
		return err
	})
	return out, err
}

// reloadStep reads a memo another attempt stored and returns it.
func reloadStep[T any](w *wfContext, name string, seq int, resultType string) (T, error) {
	var zero T
	row, err := w.c.db.StepByName(w, w.c.pool, w.info.ID, name)
	if errors.Is(err, engine.ErrNotFound) {
		err = pgx.ErrNoRows // the error's words stay as they were: "no rows in result set"
	}
	var step *StepRun
	if err == nil {
		step, err = stepOf(row)
	}
	if err != nil {
		return zero, w.fail(name, fmt.Errorf("workflow: read step %q stored by a concurrent attempt: %w", name, err))
	}
	w.setMemo(&memo{Name: step.Name, Kind: step.Kind, Status: step.Status, ResultType: step.ResultType, Output: step.Output, Seq: &seq})
	out, _, err := replayStep[T](w, name, resultType)
	return out, err
}

// callStep calls fn, turning a panic into an error so that one bad step
// fails its attempt instead of the worker.
func callStep[T any](ctx context.Context, fn func(ctx context.Context) (T, error)) (out T, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = newPanicError(r)
		}
	}()
	return fn(ctx)
}

// panicError is a recovered panic, with the stack where it happened.
type panicError struct {
	value any
	stack string
}

// maxPanicStack bounds the stack kept of a panic.
const maxPanicStack = 8 << 10

// newPanicError records a panic's value and, from inside the deferred
// recover, the stack of the goroutine that panicked.
func newPanicError(value any) *panicError {
	stack := debug.Stack()
	if len(stack) > maxPanicStack {
		stack = append(stack[:maxPanicStack], "\n…"...)
	}
	return &panicError{value: value, stack: string(stack)}
}

func (e *panicError) Error() string { return fmt.Sprintf("panic: %v", e.value) }

// panicStack is the stack of the panic err comes from, or "".
func panicStack(err error) string {
	var panicked *panicError
	if errors.As(err, &panicked) {
		return panicked.stack
	}
	return ""
}

// stepFailed records a failed step (its error and attempt count) and fails
// the attempt.
func (w *wfContext) stepFailed(name string, seq int, resultType string, startedAt time.Time, cause error) error {
	stored := &RunError{Kind: errorKind(cause), Message: cause.Error(), Step: name, Attempt: w.info.Attempt, At: w.c.now().UTC(), Stack: panicStack(cause)}
	err := w.c.db.RecordStepFailed(context.WithoutCancel(w), w.c.pool, &engine.StepFailedParams{
		RunID: w.info.ID, Name: name, ResultType: resultType, Error: encodeRunError(stored), StartedAt: startedAt, Seq: seq,
		Now: w.c.sqlNow(),
	})
	if err != nil {
		w.logger.ErrorContext(w, "tributary: Failed to record step failure", "step", name, "err", err)
	}
	return w.fail(name, cause)
}

func errorKind(err error) string {
	var (
		nonRetryable *nonRetryableError
		panicked     *panicError
	)
	switch {
	case errors.Is(err, ErrDivergence):
		return ErrorKindDivergence
	case errors.As(err, &nonRetryable):
		return ErrorKindNonRetryable
	case errors.As(err, &panicked):
		return ErrorKindPanic
	}
	return ErrorKindError
}
