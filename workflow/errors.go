package workflow

import (
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
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

	// ErrRunNotFinished is returned by Fork for a run that is still pending,
	// running, sleeping or waiting: cancel it first (or wait for it to end).
	ErrRunNotFinished = errors.New("workflow: run not finished")

	// ErrStepNotRecorded is matched by *StepNotRecordedError.
	ErrStepNotRecorded = errors.New("workflow: step not recorded")

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

// StepNotRecordedError is returned by Fork when the run has no record of
// the step to fork from: the run never reached it, or the name is not the
// one the code gives the step.
type StepNotRecordedError struct {
	// RunID is the run asked to fork.
	RunID uuid.UUID
	// Step is the step asked for.
	Step string
	// Recorded are the names of the steps the run did record, in the order
	// the run reached them: the steps a fork can be made from.
	Recorded []string
}

func (e *StepNotRecordedError) Error() string {
	if len(e.Recorded) == 0 {
		return fmt.Sprintf("workflow: run %s has no record of step %q: it recorded no step; start a new run instead", e.RunID, e.Step)
	}
	return fmt.Sprintf("workflow: run %s has no record of step %q; it recorded %q: fork from one of them", e.RunID, e.Step, e.Recorded)
}

// Is makes errors.Is(err, ErrStepNotRecorded) true.
func (e *StepNotRecordedError) Is(target error) bool { return target == ErrStepNotRecorded }

// DivergenceError is returned when new workflow code replays an old run and
// does not fit its recorded history. Replay walks the history in order, so
// each of these is a divergence:
//
//   - a step whose record has another kind or result type (a step where a
//     sleep was recorded, a step now returning another type);
//   - a step renamed, or a new step inserted before recorded ones, or
//     recorded steps reordered: the code asks for a step while the next
//     recorded one has another name (Expected);
//   - a Version call that finds a version its code does not support, or a
//     version record at another point than the code asks for it.
//
// Steps added after the recorded ones are not a divergence: they run as new
// steps. The run fails at once (it is not retried): returning a wrong value,
// or running a side effect a second time under a new name, would be worse.
// To change a workflow with runs in flight, guard the change with Version.
// A run that diverged keeps its history as it was: once code that guards
// the change is deployed, Client.Retry resumes it; or cancel it and start a
// new run.
type DivergenceError struct {
	// Step is the step the code asked for when the replay diverged.
	Step string
	// Expected is the name of the recorded step the replay reached instead,
	// when the code asked for another name; "" when the record of Step
	// itself does not fit.
	Expected string
	// Recorded is what the history has, e.g. "step returning main.Invoice".
	Recorded string
	// Replayed is what the code asked for, e.g. "sleep".
	Replayed string
	// Position is the record's position in the run's history, from 1; 0
	// when the record has none (written before migration 007).
	Position int

	hint string // what to do, when not the default advice
}

func (e *DivergenceError) Error() string {
	at := ""
	if e.Position > 0 {
		at = fmt.Sprintf(" (position %d of the run's history)", e.Position)
	}
	var what string
	if e.Expected == "" || e.Expected == e.Step {
		what = fmt.Sprintf("replay diverged at step %q%s: history has %s, code now asks for %s", e.Step, at, e.Recorded, e.Replayed)
	} else {
		what = fmt.Sprintf("replay diverged%s: history has step %q (%s) next, code now asks for step %q (%s) instead; "+
			"steps renamed, inserted before recorded ones or reordered do not fit a run in flight", at, e.Expected, e.Recorded, e.Step, e.Replayed)
	}
	hint := e.hint
	if hint == "" {
		hint = "guard the change with workflow.Version so that runs recorded before it keep the old code path " +
			"(then retry this run: its history is intact), or cancel the run and start a new one"
	}
	return "workflow: " + what + "; " + hint
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
