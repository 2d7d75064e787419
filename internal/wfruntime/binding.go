package wfruntime

import (
	"time"

	"github.com/google/uuid"
	"github.com/riverqueue/river"

	"github.com/tributary-go/tributary/internal/runmeta"
)

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
	// by Stop (Runtime.BindingPool).
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
	// Prepare inserts the slot's run ahead of its time, as a prepared slot
	// (engine/slot_prepared.go): its job pending, scheduled at FireAt,
	// made available only when the firing pass decides the slot at its
	// time. Skip and StartAt must be unset. A slot that has its run (or
	// its prepared run) already is left alone.
	Prepare bool
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
	// Promoted is true when the slot had a prepared run whose decision
	// matched it, and its job was made available: the run started, and
	// nothing was inserted.
	Promoted bool
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
