package workflow

import (
	"context"
	"maps"
	"time"

	"github.com/google/uuid"
)

// Middleware is a plugin that observes the engine: it wraps an operation in
// progress (starting a run, an attempt, a step, a signal) or receives an
// event that happens outside any call frame (runs started in a batch, a run
// finished, a step replayed). List it in Config.Middleware.
//
// This interface is purposely empty but for its sentinel: a middleware
// embeds MiddlewareDefaults and implements one or more of the specific
// interfaces, which the client looks for when it is built:
//
//   - StartMiddleware, around starting a run (Start, StartTx, StartByName,
//     RunChild's child);
//   - AttemptMiddleware, around each attempt of a run;
//   - StepMiddleware, around each step boundary that does work: a step whose
//     function runs, a sleep, a signal wait, a child start;
//   - SignalMiddleware, around sending a signal;
//   - HookRunsStarted, HookRunFinished and HookStepReplayed, events.
//
// It is modelled on River's middleware and hooks (rivertype.Middleware,
// rivertype.Hook). Package tributaryotel is the middleware that turns these
// into OpenTelemetry spans and metrics.
//
// Middleware is called on the engine's hot paths: keep it cheap, never
// block, and never panic (a panic in middleware is a panic in the attempt).
// With none installed, the engine calls nothing and allocates nothing for
// it.
type Middleware interface {
	// IsMiddleware is a sentinel that says the type is middleware on
	// purpose. Embed MiddlewareDefaults to get it.
	IsMiddleware() bool
}

// MiddlewareDefaults should be embedded in every middleware: it implements
// the Middleware sentinel, and keeps a middleware compiling when the
// interfaces grow.
type MiddlewareDefaults struct{}

// IsMiddleware implements Middleware.
func (MiddlewareDefaults) IsMiddleware() bool { return true }

// StartMiddleware wraps starting a run by the API (Start, StartTx,
// StartByName, StartByNameTx) or by a parent (RunChild). doInner validates
// and writes the run, within the caller's transaction; it returns the
// error the start returns. The context passed to doInner is the one the
// start's writes use. Runs started by schedules are started in batches,
// without it (see HookRunsStarted).
type StartMiddleware interface {
	Middleware
	StartRun(ctx context.Context, start *StartInfo, doInner func(ctx context.Context) error) error
}

// StartInfo describes a run being started, to StartMiddleware.
type StartInfo struct {
	// Type is the workflow type.
	Type string
	// Trigger is what starts the run: TriggerAPI or TriggerChild.
	Trigger Trigger
	// ParentID is the parent run of a child run.
	ParentID *uuid.UUID

	// RunID is the run's id once doInner has returned without error: the
	// new run's, or, when Existing, the run an idempotency key matched.
	RunID uuid.UUID
	// Existing is set when doInner returns: an idempotency key matched a
	// run started earlier, and nothing was started.
	Existing bool

	// added is what SetMetadata added, stored with the run next to
	// StartOpts.Metadata.
	added map[string]any
}

// SetMetadata adds key to the metadata stored with the run (see
// RunInfo.Metadata), replacing a key of the same name in
// StartOpts.Metadata; the caller's map is not modified. Call it before
// doInner. A started run that an idempotency key matched keeps its own
// metadata.
func (s *StartInfo) SetMetadata(key string, value any) {
	if s.added == nil {
		s.added = map[string]any{}
	}
	s.added[key] = value
}

// Trigger is what started a run, for metrics (HookRunsStarted).
type Trigger string

// Triggers.
const (
	// TriggerAPI: Start, StartTx, StartByName or StartByNameTx, or a
	// schedule's Trigger (an operator or program starting a scheduled
	// workflow by hand).
	TriggerAPI Trigger = "api"
	// TriggerSchedule: a schedule slot that fired.
	TriggerSchedule Trigger = "schedule"
	// TriggerChild: RunChild.
	TriggerChild Trigger = "child"
	// TriggerBackfill: a schedule's Backfill, or the missed slots a Resume
	// runs.
	TriggerBackfill Trigger = "backfill"
)

// AttemptMiddleware wraps each attempt of a run: doInner replays the
// workflow function and finishes the attempt (completes, parks, retries,
// fails or cancels the run). ctx is the context River gives the worker
// (carrying River's own work span when rivercontrib/otelriver is
// installed); the context passed to doInner becomes the workflow
// function's and its steps' context. doInner returns what the worker
// returns to River.
type AttemptMiddleware interface {
	Middleware
	WorkAttempt(ctx context.Context, attempt *AttemptInfo, doInner func(ctx context.Context) error) error
}

// AttemptInfo describes an attempt, to AttemptMiddleware.
type AttemptInfo struct {
	// Run is the run, as the workflow function sees it (Context.Run).
	Run RunInfo
	// StartedAt is when River started the attempt.
	StartedAt time.Time
	// WakeAt is, for an attempt that resumes a run parked in a sleep, the
	// wake time the sleep was parked until, when the attempt began at or
	// after it (the timer ran out, rather than a cancellation waking the
	// run early): StartedAt minus WakeAt is the timer's lateness. Nil
	// otherwise.
	WakeAt *time.Time
	// ReadyAt is when the attempt's River job was due: its scheduled_at,
	// the time it could first be fetched. StartedAt minus ReadyAt is how
	// long the attempt waited for a worker, its tenant's turn, its
	// tenant's rate or its tenant's limit (a held run's job keeps its
	// place, and its time).
	ReadyAt time.Time

	// Outcome is how the attempt ended; set when doInner returns.
	Outcome AttemptOutcome
}

// AttemptOutcome is how an attempt ended.
type AttemptOutcome string

// Attempt outcomes.
const (
	// AttemptCompleted: the run completed (its completion may still be
	// committing; see Config.AsyncCompletion).
	AttemptCompleted AttemptOutcome = "completed"
	// AttemptParked: the run sleeps or waits (a sleep, a signal wait, a
	// child), in a new River job.
	AttemptParked AttemptOutcome = "parked"
	// AttemptRetry: the attempt failed and River retries the run.
	AttemptRetry AttemptOutcome = "retry"
	// AttemptFailed: the run failed for good.
	AttemptFailed AttemptOutcome = "failed"
	// AttemptCancelled: the run was cancelled while it ran.
	AttemptCancelled AttemptOutcome = "cancelled"
	// AttemptAbandoned: the attempt ended without changing the run: its
	// run was not runnable (finished or cancelled while its job waited),
	// or recording the outcome failed and River retries the job.
	AttemptAbandoned AttemptOutcome = "abandoned"
)

// StepMiddleware wraps each step boundary that does work in an attempt:
// a step (Step, StepTx) whose function runs, a sleep reached (it parks, or
// ends at once), a signal wait (it parks or receives), and a child run's
// start (RunChild, the first time it is reached). A step replayed from its
// memo does no work and is not wrapped (see HookStepReplayed). ctx is the
// attempt's context; for a step, the context doInner is given becomes the
// step function's. doInner returns the step's error: the function's, or
// the engine's. A boundary that parks the run returns an error the
// workflow function passes on, which is no failure: StepInfo.Parked says
// so.
type StepMiddleware interface {
	Middleware
	ExecuteStep(ctx context.Context, step *StepInfo, doInner func(ctx context.Context) error) error
}

// StepInfo describes a step, to StepMiddleware and HookStepReplayed.
type StepInfo struct {
	// Run is the run, as the workflow function sees it. Do not modify it.
	Run *RunInfo
	// Name is the step's name.
	Name string
	// Kind is StepKindStep, StepKindSleep, StepKindSignal or StepKindChild.
	Kind StepKind

	// Parked is set when doInner returns: the boundary parked the run (it
	// sleeps or waits in a new River job), and the error doInner returned
	// is not a failure.
	Parked bool
}

// SignalMiddleware wraps sending a signal (Signal, SignalTx, SendSignal,
// SendSignalTx): doInner stores it, within the caller's transaction.
type SignalMiddleware interface {
	Middleware
	SendSignal(ctx context.Context, signal *SignalInfo, doInner func(ctx context.Context) error) error
}

// SignalInfo describes a signal being sent, to SignalMiddleware.
type SignalInfo struct {
	// RunID is the run the signal is for.
	RunID uuid.UUID
	// Name is the signal's name.
	Name string
}

// HookRunsStarted receives the runs started, by workflow type and
// trigger. A run is counted when its start is written, in its
// transaction: a transaction that rolls back afterwards has counted it
// anyway (River's own insert metrics count the same way). A schedule's
// slots are counted by batch; a slot recorded as skipped starts no run and
// is not counted, nor is a start an idempotency key matched.
type HookRunsStarted interface {
	Middleware
	RunsStarted(ctx context.Context, event *RunsStartedEvent)
}

// RunsStartedEvent is Count runs of Type started by Trigger.
type RunsStartedEvent struct {
	Type    string
	Trigger Trigger
	Count   int
}

// HookRunFinished receives each run that finished: exactly once per
// finish, after the transaction that finished it committed, except for a
// run cancelled with CancelTx (or a schedule's overlap replace), which is
// reported when the cancellation is written, in the caller's transaction.
// A run retried after it failed finishes again and is reported again. A
// schedule slot recorded as skipped is no run that finished: it is counted
// by the schedule's slot metrics. Runs deleted by retention are not
// reported.
type HookRunFinished interface {
	Middleware
	RunFinished(ctx context.Context, event *RunFinishedEvent)
}

// RunFinishedEvent describes a run that finished.
type RunFinishedEvent struct {
	// RunID is the run's id.
	RunID uuid.UUID
	// Type is the workflow type.
	Type string
	// Outcome is StatusCompleted, StatusFailed or StatusCancelled.
	Outcome Status
	// Duration is from the run's creation (its start: the time in its id)
	// to its finish, sleeps, waits, retries and time queued included.
	Duration time.Duration
}

// HookStepReplayed receives each step boundary an attempt replayed from
// its memo instead of doing its work: a completed step (Step, StepTx),
// sleep, signal wait or child run reached again (StepInfo.Kind says
// which). A wait that receives its signal or child result on the attempt
// after it parked is no replay and is not reported here (StepMiddleware
// wraps the signal's receipt; a child's result is read as part of the
// attempt). ctx is the attempt's context.
type HookStepReplayed interface {
	Middleware
	StepReplayed(ctx context.Context, step *StepInfo)
}

// middlewares are Config.Middleware, by the interfaces they implement, in
// the order listed: the first wraps the others.
type middlewares struct {
	start    []StartMiddleware
	attempt  []AttemptMiddleware
	step     []StepMiddleware
	signal   []SignalMiddleware
	started  []HookRunsStarted
	finished []HookRunFinished
	replayed []HookStepReplayed
}

func newMiddlewares(list []Middleware) (*middlewares, error) {
	m := &middlewares{}
	for _, mw := range list {
		if mw == nil {
			return nil, &ValidationError{Field: "Config.Middleware", Problem: "contains nil; list only middleware values"}
		}
		known := false
		if v, ok := mw.(StartMiddleware); ok {
			m.start, known = append(m.start, v), true
		}
		if v, ok := mw.(AttemptMiddleware); ok {
			m.attempt, known = append(m.attempt, v), true
		}
		if v, ok := mw.(StepMiddleware); ok {
			m.step, known = append(m.step, v), true
		}
		if v, ok := mw.(SignalMiddleware); ok {
			m.signal, known = append(m.signal, v), true
		}
		if v, ok := mw.(HookRunsStarted); ok {
			m.started, known = append(m.started, v), true
		}
		if v, ok := mw.(HookRunFinished); ok {
			m.finished, known = append(m.finished, v), true
		}
		if v, ok := mw.(HookStepReplayed); ok {
			m.replayed, known = append(m.replayed, v), true
		}
		if !known {
			return nil, &ValidationError{Field: "Config.Middleware", Problem: "contains a value that implements none of the middleware or hook interfaces (StartMiddleware, AttemptMiddleware, StepMiddleware, SignalMiddleware, HookRunsStarted, HookRunFinished, HookStepReplayed)"}
		}
	}
	return m, nil
}

// wrapStart runs inner under the start middleware.
func (m *middlewares) wrapStart(ctx context.Context, info *StartInfo, inner func(context.Context) error) error {
	return chain(ctx, len(m.start), func(i int, ctx context.Context, next func(context.Context) error) error {
		return m.start[i].StartRun(ctx, info, next)
	}, inner)
}

func (m *middlewares) wrapAttempt(ctx context.Context, info *AttemptInfo, inner func(context.Context) error) error {
	return chain(ctx, len(m.attempt), func(i int, ctx context.Context, next func(context.Context) error) error {
		return m.attempt[i].WorkAttempt(ctx, info, next)
	}, inner)
}

func (m *middlewares) wrapStep(ctx context.Context, info *StepInfo, inner func(context.Context) error) error {
	return chain(ctx, len(m.step), func(i int, ctx context.Context, next func(context.Context) error) error {
		return m.step[i].ExecuteStep(ctx, info, next)
	}, inner)
}

func (m *middlewares) wrapSignal(ctx context.Context, info *SignalInfo, inner func(context.Context) error) error {
	return chain(ctx, len(m.signal), func(i int, ctx context.Context, next func(context.Context) error) error {
		return m.signal[i].SendSignal(ctx, info, next)
	}, inner)
}

// chain calls inner wrapped in n middleware, call(0) outermost.
func chain(ctx context.Context, n int, call func(i int, ctx context.Context, next func(context.Context) error) error, inner func(context.Context) error) error {
	if n == 0 {
		return inner(ctx)
	}
	var at func(i int) func(context.Context) error
	at = func(i int) func(context.Context) error {
		if i == n {
			return inner
		}
		return func(ctx context.Context) error { return call(i, ctx, at(i+1)) }
	}
	return at(0)(ctx)
}

// runsStarted reports n runs of typ started by trigger.
func (m *middlewares) runsStarted(ctx context.Context, typ string, trigger Trigger, n int) {
	if len(m.started) == 0 || n == 0 {
		return
	}
	ev := &RunsStartedEvent{Type: typ, Trigger: trigger, Count: n}
	for _, h := range m.started {
		h.RunsStarted(ctx, ev)
	}
}

// runFinished reports run id of typ finished with outcome now.
func (m *middlewares) runFinished(ctx context.Context, id uuid.UUID, typ string, outcome Status) {
	if len(m.finished) == 0 {
		return
	}
	ev := &RunFinishedEvent{RunID: id, Type: typ, Outcome: outcome, Duration: max(time.Since(runCreatedAt(id)), 0)}
	for _, h := range m.finished {
		h.RunFinished(ctx, ev)
	}
}

func (m *middlewares) stepReplayed(ctx context.Context, info *StepInfo) {
	for _, h := range m.replayed {
		h.StepReplayed(ctx, info)
	}
}

// runCreatedAt is the time in a run's id (a UUIDv7: milliseconds since
// the Unix epoch in its first 48 bits).
func runCreatedAt(id uuid.UUID) time.Time {
	var ms int64
	for i := range 6 {
		ms = ms<<8 | int64(id[i])
	}
	return time.UnixMilli(ms)
}

// withAdded returns metadata with added's keys, as a new map; metadata
// itself is not modified.
func withAdded(metadata, added map[string]any) map[string]any {
	if len(added) == 0 {
		return metadata
	}
	out := make(map[string]any, len(metadata)+len(added))
	maps.Copy(out, metadata)
	maps.Copy(out, added)
	return out
}
