package workflow

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/riverqueue/river/rivertype"

	"github.com/tributary-go/tributary/internal/wfruntime"
)

// Context is what a workflow function receives: a context.Context for the
// current attempt (cancelled when the run is cancelled or the attempt times
// out) that also carries the run's replay state. Pass it to Step, StepTx,
// Sleep, WaitSignal, RunChild and Version, one call at a time: replay matches
// them to the run's history in the order they are reached (see Version).
type Context interface {
	context.Context

	// Run describes the run and the current attempt.
	Run() RunInfo

	// Logger is the client's logger with the run's id and type attached.
	Logger() *slog.Logger

	state() *wfContext
}

// RunInfo describes a run from inside its workflow function.
type RunInfo struct {
	// ID is the run's id.
	ID uuid.UUID
	// Type is the workflow type's name.
	Type string
	// Attempt is the current attempt, starting at 1. Sleeping and waiting do
	// not count as attempts: the attempt after a wake-up has the same number
	// as the one that parked.
	Attempt int
	// MaxAttempts is how many attempts the run gets.
	MaxAttempts int
	// JobID is the River job of the run.
	JobID int64
	// ScheduleID is the schedule that started the run, if one did.
	ScheduleID *uuid.UUID
	// FireAt is the schedule slot the run was started for, if any.
	FireAt *time.Time
	// ParentID is the parent run of a child run.
	ParentID *uuid.UUID
	// Metadata is StartOpts.Metadata as stored.
	Metadata json.RawMessage
	// GrantSubject is the subject of the execution grant a schedule started
	// the run under, if any.
	GrantSubject string
	// Tenant is the run's tenant (StartOpts.Tenant), if it has one.
	Tenant string
}

// wfContext is the state of one attempt of one run.
type wfContext struct {
	context.Context

	args   runArgs
	c      *Client
	info   RunInfo
	job    *rivertype.JobRow
	logger *slog.Logger

	mu         sync.Mutex
	memos      map[string]*memo
	seen       map[string]struct{}
	replay     replayState
	active     string         // the step boundary in progress (see enter), or ""
	versions   map[string]int // what Version returned in this attempt, by change
	failErr    error          // the first step failure; no step runs after it
	failStep   string         // the step that failed
	diverged   *DivergenceError
	parkedTill *time.Time // set when a sleep or wait parked the attempt

	// historyOnly marks a replay of a recorded history (replayHistory):
	// the first boundary the history does not record as done ends it.
	historyOnly bool

	outcome AttemptOutcome // how finish ended the attempt, for AttemptMiddleware

	// unsaved holds the memos of steps that have returned but are not
	// stored yet (see Step). They are stored at the next step boundary, by
	// saveTimer memoSaveDelay after the step returned, or with the run's
	// completion, whichever comes first. saving serializes storing them, so
	// that a step boundary passes only once every memo unsaved before it is
	// committed, even while the timer is storing them.
	unsaved   []wfruntime.MemoWrite
	saveTimer *time.Timer
	saving    sync.Mutex
}

// memoSaveDelay bounds how long a step's memo may wait for the workflow's
// next step boundary or its completion before it is stored on its own.
const memoSaveDelay = 50 * time.Millisecond

func (w *wfContext) Run() RunInfo         { return w.info }
func (w *wfContext) Logger() *slog.Logger { return w.logger }
func (w *wfContext) state() *wfContext    { return w }
func (w *wfContext) memo(name string) *memo {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.memos[name]
}

// enter is the step boundary: every step kind passes it first. It validates
// the name, rejects a name used twice in one run and a boundary reached
// while another is in progress, stops the workflow after a failed step or a
// park, checks for cancellation, and places the boundary in the run's
// history (see match), returning the position its record takes. Then it
// stores the memos of the steps that returned before it, so that nothing
// past the boundary happens before they are committed
// (MEMO_BEFORE_PROGRESS).
//
// asked describes the boundary for a *DivergenceError, such as "sleep" or
// "step returning int". When enter returns no error, the boundary is in
// progress until the caller calls leave.
func (w *wfContext) enter(name string, kind StepKind, asked string) (seq int, err error) {
	seq, _, err = w.check(name, kind, asked)
	if err != nil {
		return 0, err
	}
	if err := w.saveMemos(); err != nil {
		w.leave()
		return 0, err
	}
	return seq, nil
}

// leave ends the boundary enter or check started.
func (w *wfContext) leave() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.active = ""
}

// check is enter's validation and placement. Version calls it alone: a
// version record needs no earlier memo committed before it.
func (w *wfContext) check(name string, kind StepKind, asked string) (int, placement, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	switch {
	case w.diverged != nil:
		return 0, 0, w.diverged
	case w.failErr != nil:
		return 0, 0, fmt.Errorf("workflow: step %q not run because step %q failed in this attempt: %w", name, w.failStep, w.failErr)
	case w.parkedTill != nil:
		return 0, 0, errSuspended
	}
	if err := w.validateLocked(name, kind); err != nil {
		return 0, 0, err
	}
	if err := w.Err(); err != nil {
		return 0, 0, fmt.Errorf("workflow: stopped before step %q: %w", name, context.Cause(w))
	}
	seq, place, err := w.matchLocked(name, kind, asked)
	if err != nil {
		return 0, 0, err
	}
	if w.historyOnly && (place == placeNew || place == placeRecorded && w.memos[name].Status != StepStatusCompleted) {
		return 0, 0, errHistoryEnd
	}
	if place != placeAhead {
		w.seen[name] = struct{}{}
	}
	w.active = name
	return seq, place, nil
}

// validateLocked checks a boundary's name, and that no other boundary is in
// progress.
func (w *wfContext) validateLocked(name string, kind StepKind) error {
	if name == "" {
		return w.failLocked(name, NonRetryable(&ValidationError{Field: "step name", Problem: fmt.Sprintf("a %s has an empty name; give every step a short name that is unique in the workflow", kind)}))
	}
	if len(name) > maxStepNameLength {
		return w.failLocked(name, NonRetryable(&ValidationError{Field: "step name", Problem: fmt.Sprintf("%q is %d bytes, the limit is %d", name[:32]+"…", len(name), maxStepNameLength)}))
	}
	if _, dup := w.seen[name]; dup {
		return w.failLocked(name, NonRetryable(&ValidationError{Field: "step name", Problem: fmt.Sprintf("%q is used twice in one run; step names must be unique within a run (add an index for steps in a loop, e.g. \"charge-3\")", name)}))
	}
	if w.active != "" {
		return w.failLocked(name, NonRetryable(&ValidationError{Field: "step order", Problem: fmt.Sprintf(
			"%s %q was reached while step %q was still in progress; call steps one at a time from the workflow function, "+
				"not from another goroutine or from inside a step's function: replay matches steps by their order", kind, name, w.active)}))
	}
	return nil
}

// deferMemo records m, the memo of a step started at startedAt and
// finished at at, to be stored at the next step boundary, within
// memoSaveDelay, or with the run's completion (see Step). fresh says the
// attempt found no record of the step when it started.
func (w *wfContext) deferMemo(m *memo, startedAt, at time.Time, fresh bool) {
	req := wfruntime.MemoWrite{Row: m.row(w.info.ID, startedAt, at), Fresh: fresh}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.unsaved = append(w.unsaved, req)
	if len(w.unsaved) > 1 {
		return // the timer is running for the first one
	}
	if w.saveTimer == nil {
		w.saveTimer = time.AfterFunc(memoSaveDelay, func() { _ = w.saveMemos() })
	} else {
		w.saveTimer.Reset(memoSaveDelay)
	}
}

// saveMemos stores the unsaved memos and returns once they are committed.
// A memo that cannot be stored fails the attempt and stays unsaved, so that
// the run's completion cannot go without it.
func (w *wfContext) saveMemos() error {
	w.saving.Lock()
	defer w.saving.Unlock()
	reqs := w.takeUnsaved()
	for i, req := range reqs {
		if _, err := w.c.batch.memos.Do(context.WithoutCancel(w), req); err != nil {
			w.mu.Lock()
			w.unsaved = append(reqs[i:], w.unsaved...)
			w.mu.Unlock()
			return w.fail(req.Row.Name, fmt.Errorf("workflow: store result of step %q: %w", req.Row.Name, err))
		}
	}
	return nil
}

// memosToComplete returns the unsaved memos for the run's completion to
// store, once a save the timer started has ended.
func (w *wfContext) memosToComplete() []wfruntime.MemoWrite {
	w.saving.Lock()
	defer w.saving.Unlock()
	return w.takeUnsaved()
}

// takeUnsaved returns the unsaved memos and forgets them: the caller stores
// them, holding saving.
func (w *wfContext) takeUnsaved() []wfruntime.MemoWrite {
	w.mu.Lock()
	defer w.mu.Unlock()
	reqs := w.unsaved
	w.unsaved = nil
	if w.saveTimer != nil {
		w.saveTimer.Stop()
	}
	return reqs
}

func (w *wfContext) failLocked(step string, err error) error {
	if w.failErr == nil {
		w.failErr, w.failStep = err, step
	}
	return err
}

func (w *wfContext) fail(step string, err error) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.failLocked(step, err)
}

// diverge records a replay divergence at a step whose record does not fit
// what the code asks for (another kind or result type); the run fails
// without retry.
func (w *wfContext) diverge(step string, recorded *memo, replayed string) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	position := 0
	if recorded.Seq != nil {
		position = *recorded.Seq + 1
	}
	return w.divergeLocked(&DivergenceError{Step: step, Recorded: describeRecord(recorded), Replayed: replayed, Position: position})
}

// divergeLocked records err as the attempt's divergence, unless one is
// recorded already, and returns the one recorded.
func (w *wfContext) divergeLocked(err *DivergenceError) *DivergenceError {
	if w.diverged == nil {
		w.diverged = err
	}
	return w.diverged
}

func (w *wfContext) setMemo(m *memo) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.memos[m.Name] = m
}

func (w *wfContext) parked(until time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.parkedTill = &until
}

// attemptedAt is when River started this attempt, recorded as the run's
// start time if it has none yet.
func (w *wfContext) attemptedAt() *time.Time {
	if w.job == nil {
		return nil
	}
	return w.job.AttemptedAt
}
