// Package wfhook holds the types through which package schedule reaches
// into the workflow engine: the workflow methods that take them are
// exported, but only Tributary's own packages can build their arguments.
package wfhook

import (
	"time"

	"github.com/google/uuid"
)

// ScheduledStart starts (or records as skipped) the run of a schedule slot.
type ScheduledStart struct {
	FireAt      time.Time
	Input       []byte
	MaxAttempts int
	// Metadata is stored with the run (StartOpts.Metadata).
	Metadata   map[string]any
	Priority   int
	Queue      string
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

// TraceMetadataKey is the run metadata key under which the OpenTelemetry
// middleware (package tributaryotel) and the schedule client store the W3C
// trace context (traceparent, tracestate) of what started a run, so that
// the run's attempts link back to it. Defined once, here.
const TraceMetadataKey = "otel"
