package engine

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"

	"github.com/tributary-go/tributary/internal/runmeta"
)

// Workflows is a workflow client as package schedule, the other façade,
// uses it: what starting a slot's run needs beyond SQL (the client's River
// client, its registered types and limits, its middleware, its waker).
// Package workflow implements it, unexported, and sets WorkflowsOf; none
// of it is part of Tributary's API: users reach schedules through
// schedule.New.
type Workflows interface {
	// Bind adds b to the client's River client. It fails once the
	// client has started.
	Bind(b *Binding) error

	// Now is the client's time (workflow.Config.Clock).
	Now() time.Time

	// SQLNow is the now parameter of the engine's statements: nil, for
	// the database's now(), unless workflow.Config.Clock is set; then
	// the clock's time.
	SQLNow() *time.Time

	// StartScheduledTx starts the run of one schedule slot in tx, for an
	// operator's explicit start: a run the engine refuses is an error, and
	// nothing is written.
	StartScheduledTx(ctx context.Context, tx pgx.Tx, s *ScheduledStart) (*Started, error)

	// StartScheduledManyTx starts (or records as skipped) the runs of
	// schedule slots in tx, one result per start, in order.
	StartScheduledManyTx(ctx context.Context, tx pgx.Tx, starts []*ScheduledStart) ([]Started, error)

	// WakeAtTx makes a scheduled River job available at w.At, timed by
	// the working clients once tx commits.
	WakeAtTx(ctx context.Context, tx pgx.Tx, w *Wake) error

	// CancelScheduleRunsTx cancels the unfinished runs of a schedule and
	// returns how many.
	CancelScheduleRunsTx(ctx context.Context, tx pgx.Tx, s *ScheduleRuns) (int, error)

	// InputChecker is workflow.Client.InputChecker reading the live
	// workers' limits on db: a call that holds a transaction checks
	// inputs on it, not on a second connection of the pool (N such calls
	// at once on a pool of N would wait for each other forever).
	InputChecker(ctx context.Context, db DBTX) (func(typ string, input []byte) error, error)

	// TypeServed is workflow.Client.TypeServed reading the worker
	// registry on db.
	TypeServed(ctx context.Context, db DBTX, typ string) (bool, error)

	// MockStep puts fn, a func(context.Context) (T, error) for the step's
	// T, in place of the function of step of workflow type typ, for the
	// runs this client works (package tributarytest); a nil fn removes it.
	MockStep(typ, step string, fn any)

	// ReplayHistory replays run, a *workflow.Run with its steps, against
	// the client's code for its type, touching no database (package
	// tributarytest's Replay): nil when the code fits the history, the
	// *workflow.DivergenceError a deploy would hit when it does not.
	ReplayHistory(ctx context.Context, run any) error

	// BindingPool is the pool of the binding named name (Binding.Conns)
	// while the client is started, else the client's pool.
	BindingPool(name string) *pgxpool.Pool

	// Until is how long until the database's clock reaches at, as this
	// process reads it (0 or less: it has); 0 under an injected
	// workflow.Config.Clock, where the test's clock decides.
	Until(at time.Time) time.Duration
}

// WorkflowsOf returns the Workflows of wf, a *workflow.Client. Package
// workflow sets it when it is initialized.
var WorkflowsOf func(wf any) Workflows

// Binding is what package schedule adds to a workflow client's River
// client when it binds to it: workers, and, on a working client, a queue
// and periodic jobs.
type Binding struct {
	// Name names the binding in errors, e.g. "schedule".
	Name string

	// Register adds the binding's River workers to the client's bundle.
	// It is called on working clients only.
	Register func(*river.Workers) error

	// Queue, when set, is added to a working client with QueueWorkers
	// workers unless its River configuration has it already, and the
	// client arms the timers of the jobs waiting in it (see the workflow
	// engine's waker).
	Queue        string
	QueueWorkers int

	// PeriodicJobs are added to a working client that takes part in
	// leader elections.
	PeriodicJobs []*river.PeriodicJob

	// Conns, when above 0, gives the binding on a working client a pool of
	// its own of at most Conns connections, with the settings of the
	// client's pool, opened as they are first needed after Start and closed
	// by Stop (Workflows.BindingPool).
	Conns int
}

// ScheduledStart starts (or records as skipped) the run of a schedule slot.
type ScheduledStart struct {
	FireAt      time.Time
	Input       []byte
	MaxAttempts int
	// Metadata is stored with the run (Tributary's part of it: package
	// runmeta).
	Metadata runmeta.Meta
	Priority int
	Queue    string
	// Retry is the schedule's retry policy, a workflow.RetryPolicy's JSON
	// (schedules.retry); nil for none.
	Retry      []byte
	ScheduleID uuid.UUID
	// Skip, when set, records the slot as a skipped run with this reason and
	// inserts no job.
	Skip string
	// StartAt, when set, delays the run's job until then (a queued run is
	// held far in the future until its predecessor finishes).
	StartAt time.Time
	Timeout time.Duration
	// Trigger is what starts the run, for the engine's metrics: "" for a
	// slot that fired, TriggerBackfill or TriggerAPI.
	Trigger string
	Type    string
	// Tenant is the run's tenant; "" for none.
	Tenant string
}

// Triggers of ScheduledStart, the values of workflow.Trigger.
const (
	TriggerAPI      = "api"
	TriggerBackfill = "backfill"
)

// Started is what StartScheduledTx did.
type Started struct {
	// Existing is true when the slot already had its run: nothing was
	// inserted.
	Existing bool
	JobID    int64
	RunID    uuid.UUID
	// Skip is the reason the slot's run was recorded as skipped: the
	// ScheduledStart's own, or, for a start the engine cannot make (input
	// over the limit, a bad run policy), a reason beginning with
	// SkipCannotStart. "" for a run that was started.
	Skip string
}

// SkipCannotStart begins the skip reason of a slot whose run the engine
// refused to start; the rest of the reason says why.
const SkipCannotStart = "cannot start: "

// ScheduleQueue is the River queue of the schedule machinery's jobs. A
// started working client arms the timers of the jobs waiting in it (see
// the workflow engine's waker).
const ScheduleQueue = "tributary_schedule"

// Wake asks a client to make a scheduled River job available at At.
type Wake struct {
	At    time.Time
	JobID int64
	Queue string
}

// ScheduleRuns names a schedule's runs.
type ScheduleRuns struct {
	ScheduleID uuid.UUID
}
