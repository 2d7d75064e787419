package workflow

import (
	"errors"
	"fmt"
	"time"
)

var (
	// ErrNotFound is returned when a run does not exist (or no longer does).
	ErrNotFound = errors.New("workflow: run not found")

	// ErrRunFinished is returned by Cancel and Signal when the run has already
	// completed, failed or been cancelled, so the request can have no effect.
	ErrRunFinished = errors.New("workflow: run already finished")

	// ErrRunNotRetryable is returned by Retry for a run that is neither failed
	// nor cancelled.
	ErrRunNotRetryable = errors.New("workflow: only a failed or cancelled run can be retried")

	// ErrSignalTimeout is returned by WaitSignal when no signal arrived before
	// its timeout. The timeout is memoized like any step: a replay returns it
	// again.
	ErrSignalTimeout = errors.New("workflow: timed out waiting for signal")

	// ErrCancelled is the kind of a run that was cancelled. Result returns a
	// *RunError that matches it with errors.Is.
	ErrCancelled = errors.New("workflow: run cancelled")

	// ErrDivergence is the kind of a run whose replay did not match its memos.
	// A *DivergenceError (and a *RunError read back from the database) match
	// it with errors.Is.
	ErrDivergence = errors.New("workflow: replay diverged from recorded history")

	// ErrUnknownType is matched by *UnknownTypeError.
	ErrUnknownType = errors.New("workflow: unknown workflow type")

	// ErrInvalid is matched by every *ValidationError.
	ErrInvalid = errors.New("workflow: invalid argument")

	// errSuspended is returned by steps after the attempt parked (a sleep or a
	// wait that ended the attempt); the workflow function should return it.
	// The engine finishes the attempt correctly whatever the function returns.
	errSuspended = errors.New("workflow: attempt suspended until a wake-up; return this error from the workflow function")
)

// ValidationError reports bad input to a call: a name, an option or an input
// value. Nothing was written to the database when it is returned.
type ValidationError struct {
	// Field names what was wrong, such as "name", "input" or "opts.Priority".
	Field string
	// Problem says what was wrong with it and what to do instead.
	Problem string
}

func (e *ValidationError) Error() string {
	return fmt.Sprintf("workflow: invalid %s: %s", e.Field, e.Problem)
}

// Is makes errors.Is(err, ErrInvalid) true.
func (e *ValidationError) Is(target error) bool { return target == ErrInvalid }

// UnknownTypeError is returned when a run is started by type name and no
// workflow of that name is registered on the client.
type UnknownTypeError struct {
	Type  string
	Known []string
}

func (e *UnknownTypeError) Error() string {
	return fmt.Sprintf("workflow: unknown workflow type %q (registered: %v); register it in Config.Workflows before starting runs of it", e.Type, e.Known)
}

// Is makes errors.Is(err, ErrUnknownType) true.
func (e *UnknownTypeError) Is(target error) bool { return target == ErrUnknownType }

// DivergenceError is returned when new workflow code replays an old run and
// reaches a memo that does not fit: a step where a sleep was recorded, or a
// step whose recorded result has another type. The run fails at once (it is
// not retried): returning a wrong value would be worse.
type DivergenceError struct {
	Step     string
	Recorded string // what the memo says, e.g. "step returning main.Invoice"
	Replayed string // what the code asked for, e.g. "sleep"
}

func (e *DivergenceError) Error() string {
	return fmt.Sprintf("workflow: replay diverged at step %q: history has %s, code now asks for %s; deploy code compatible with in-flight runs or start a new run",
		e.Step, e.Recorded, e.Replayed)
}

// Is makes errors.Is(err, ErrDivergence) true.
func (e *DivergenceError) Is(target error) bool { return target == ErrDivergence }

// RunError is the error of a failed or cancelled run, as stored in the
// database and read back: it keeps its kind and message across processes.
type RunError struct {
	// Kind classifies the failure: "error" (a step or the workflow returned an
	// error and attempts ran out), "non_retryable", "divergence", "panic",
	// "cancelled" or "timeout".
	Kind string `json:"kind"`
	// Message is the error's text.
	Message string `json:"message"`
	// Step is the step that failed, when a step did.
	Step string `json:"step,omitempty"`
	// Attempt is the attempt that failed.
	Attempt int `json:"attempt"`
	// At is when the failure was recorded.
	At time.Time `json:"at"`
	// Stack is, for a panic, the stack of the goroutine where it happened
	// (functions with their file:line), at most 8 KiB of it; "" otherwise.
	Stack string `json:"stack,omitempty"`
}

// Error kinds stored in RunError.Kind.
const (
	ErrorKindCancelled    = "cancelled"
	ErrorKindDivergence   = "divergence"
	ErrorKindError        = "error"
	ErrorKindNonRetryable = "non_retryable"
	ErrorKindPanic        = "panic"
)

func (e *RunError) Error() string {
	if e.Step != "" {
		return fmt.Sprintf("workflow run failed (%s) at step %q on attempt %d: %s", e.Kind, e.Step, e.Attempt, e.Message)
	}
	return fmt.Sprintf("workflow run failed (%s) on attempt %d: %s", e.Kind, e.Attempt, e.Message)
}

// Is matches ErrCancelled and ErrDivergence by kind.
func (e *RunError) Is(target error) bool {
	switch target {
	case ErrCancelled:
		return e.Kind == ErrorKindCancelled
	case ErrDivergence:
		return e.Kind == ErrorKindDivergence
	}
	return false
}

// NonRetryable marks err so that the run fails at once instead of being
// retried. Return it from a step or from the workflow function.
func NonRetryable(err error) error {
	if err == nil {
		return nil
	}
	return &nonRetryableError{err: err}
}

type nonRetryableError struct{ err error }

func (e *nonRetryableError) Error() string { return e.err.Error() }
func (e *nonRetryableError) Unwrap() error { return e.err }

// RetryAfter marks err so that the next attempt starts after d instead of
// after River's backoff. The attempt still ends; its completed steps are not
// run again. Use it for rate limits and "try again in N seconds" answers.
func RetryAfter(err error, d time.Duration) error {
	if err == nil {
		return nil
	}
	return &retryAfterError{err: err, after: max(d, 0)}
}

type retryAfterError struct {
	err   error
	after time.Duration
}

func (e *retryAfterError) Error() string { return fmt.Sprintf("%s (retry after %s)", e.err, e.after) }
func (e *retryAfterError) Unwrap() error { return e.err }
