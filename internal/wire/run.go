package wire

import (
	"context"
	"encoding/json"
	"time"

	"github.com/google/uuid"

	"github.com/tributary-go/tributary/workflow"
)

// Run is a run: workflow.Run on the wire.
type Run struct {
	ID             uuid.UUID       `json:"id"`
	Type           string          `json:"type"`
	Status         workflow.Status `json:"status"`
	IdempotencyKey string          `json:"idempotency_key"`
	Tenant         string          `json:"tenant"`
	DebounceKey    string          `json:"debounce_key"`
	Input          json.RawMessage `json:"input"`
	Output         json.RawMessage `json:"output"`
	Error          *RunError       `json:"error"`
	Attempt        int             `json:"attempt"`
	MaxAttempts    int             `json:"max_attempts"`
	NextAttemptAt  *time.Time      `json:"next_attempt_at"`
	// Retry is workflow.Run.Retry: {} for River's backoff, null for a
	// finished run or one whose job carries no policy (its type's applies).
	Retry             *Retry          `json:"retry"`
	Queue             string          `json:"queue"`
	Priority          int             `json:"priority"`
	JobID             *int64          `json:"job_id"`
	ScheduleID        *uuid.UUID      `json:"schedule_id"`
	FireAt            *time.Time      `json:"fire_at"`
	ParentID          *uuid.UUID      `json:"parent_id"`
	ParentStep        string          `json:"parent_step"`
	ForkedFrom        *uuid.UUID      `json:"forked_from"`
	ForkedFromStep    string          `json:"forked_from_step"`
	Metadata          json.RawMessage `json:"metadata"`
	Tags              []string        `json:"tags"`
	SkipReason        string          `json:"skip_reason"`
	Held              string          `json:"held"`
	HeldReason        string          `json:"held_reason"` // why a held run waits (HeldReason), "" when it does not
	CancelRequestedAt *time.Time      `json:"cancel_requested_at"`
	CreatedAt         time.Time       `json:"created_at"`
	UpdatedAt         time.Time       `json:"updated_at"`
	StartedAt         *time.Time      `json:"started_at"`
	FinishedAt        *time.Time      `json:"finished_at"`
	// Steps are in the answers about one run, not in listings.
	Steps *[]Step `json:"steps,omitempty"`
	// Existing is in the answer of a start only: whether the start started
	// nothing, its idempotency key having matched a run or the start
	// having joined a debounce window's run (workflow.Handle.Existing).
	Existing *bool `json:"existing,omitempty"`
}

// Step is a step record: workflow.StepRun on the wire.
type Step struct {
	Name       string              `json:"name"`
	Kind       workflow.StepKind   `json:"kind"`
	Status     workflow.StepStatus `json:"status"`
	ResultType string              `json:"result_type"`
	Output     json.RawMessage     `json:"output"`
	Error      *RunError           `json:"error"`
	Attempts   int                 `json:"attempts"`
	WakeAt     *time.Time          `json:"wake_at"`
	ChildRunID *uuid.UUID          `json:"child_run_id"`
	StartedAt  time.Time           `json:"started_at"`
	FinishedAt *time.Time          `json:"finished_at"`
}

// RunError is a run's or a step's error: workflow.RunError on the wire,
// with every field present.
type RunError struct {
	Kind    string    `json:"kind"`
	Message string    `json:"message"`
	Step    string    `json:"step"`
	Attempt int       `json:"attempt"`
	At      time.Time `json:"at"`
	Stack   string    `json:"stack"`
}

// RunList is a listing of runs; NextAfter, set when the page is full, is
// the after (--after) of the next page.
type RunList struct {
	Runs      []*Run     `json:"runs"`
	NextAfter *uuid.UUID `json:"next_after"`
}

// NewRun is run on the wire, with its steps when withSteps; its
// HeldReason is left for the caller (RunAnswer fills it).
func NewRun(run *workflow.Run, withSteps bool) *Run {
	out := &Run{
		ID: run.ID, Type: run.Type, Status: run.Status, IdempotencyKey: run.IdempotencyKey, Tenant: run.Tenant,
		DebounceKey: run.DebounceKey, Input: JSONOrNull(run.Input), Output: JSONOrNull(run.Output), Error: NewRunError(run.Error),
		Attempt: run.Attempt, MaxAttempts: run.MaxAttempts, NextAttemptAt: utcPtr(run.NextAttemptAt), Retry: newRetryKeepingZero(run.Retry), Queue: run.Queue, Priority: run.Priority,
		ScheduleID: run.ScheduleID, FireAt: utcPtr(run.FireAt), ParentID: run.ParentID, ParentStep: run.ParentStep,
		ForkedFrom: run.ForkedFrom, ForkedFromStep: run.ForkedFromStep,
		Metadata: run.Metadata, Tags: run.Tags, SkipReason: run.SkipReason, Held: run.Held,
		CancelRequestedAt: utcPtr(run.CancelRequestedAt), CreatedAt: run.CreatedAt.UTC(), UpdatedAt: run.UpdatedAt.UTC(),
		StartedAt: utcPtr(run.StartedAt), FinishedAt: utcPtr(run.FinishedAt),
	}
	if run.JobID != 0 {
		out.JobID = &run.JobID
	}
	if len(out.Metadata) == 0 || string(out.Metadata) == "null" {
		out.Metadata = json.RawMessage("{}")
	}
	if out.Tags == nil {
		out.Tags = []string{}
	}
	if withSteps {
		steps := NewSteps(run.Steps)
		out.Steps = &steps
	}
	return out
}

// NewSteps is a run's steps on the wire, [] for none.
func NewSteps(steps []workflow.StepRun) []Step {
	out := make([]Step, 0, len(steps))
	for _, s := range steps {
		out = append(out, Step{
			Name: s.Name, Kind: s.Kind, Status: s.Status, ResultType: s.ResultType, Output: JSONOrNull(s.Output),
			Error: NewRunError(s.Error), Attempts: s.Attempts, WakeAt: utcPtr(s.WakeAt), ChildRunID: s.ChildRunID,
			StartedAt: s.StartedAt.UTC(), FinishedAt: utcPtr(s.FinishedAt),
		})
	}
	return out
}

// NewRunError is e on the wire; nil for none.
func NewRunError(e *workflow.RunError) *RunError {
	if e == nil {
		return nil
	}
	return &RunError{Kind: e.Kind, Message: e.Message, Step: e.Step, Attempt: e.Attempt, At: e.At.UTC(), Stack: e.Stack}
}

// RunAnswer is the answer about one run: the run with its steps and, held,
// why it waits.
func RunAnswer(ctx context.Context, wf *workflow.Client, run *workflow.Run) (*Run, error) {
	reasons, err := HeldReasons(ctx, wf, []*workflow.Run{run})
	if err != nil {
		return nil, err
	}
	out := NewRun(run, true)
	out.HeldReason = reasons[run.ID]
	return out, nil
}

// RunPage is a page of a run listing asked with limit: the runs without
// their steps, each held one with why it waits.
func RunPage(ctx context.Context, wf *workflow.Client, runs []*workflow.Run, limit int) (*RunList, error) {
	reasons, err := HeldReasons(ctx, wf, runs)
	if err != nil {
		return nil, err
	}
	out := &RunList{Runs: make([]*Run, 0, len(runs))}
	for _, run := range runs {
		r := NewRun(run, false)
		r.HeldReason = reasons[run.ID]
		out.Runs = append(out.Runs, r)
	}
	if len(runs) > 0 && len(runs) == limit {
		out.NextAfter = &runs[len(runs)-1].ID
	}
	return out, nil
}

// ReadTenant is how tenant of typ stands; one Tenants does not list (no
// runs working or waiting, no limit or rate of its own) has nothing
// running or waiting and no limit or rate known.
func ReadTenant(ctx context.Context, wf *workflow.Client, typ, tenant string) (*workflow.Tenant, error) {
	tenants, err := wf.Tenants(ctx, &workflow.TenantParams{Type: typ, Tenant: tenant, Limit: 1})
	if err != nil {
		return nil, err
	}
	if len(tenants) == 0 {
		return &workflow.Tenant{Type: typ, Tenant: tenant}, nil
	}
	return tenants[0], nil
}

// HeldReasons says why each held run of runs waits (HeldReason), by run
// id, reading each tenant of a held run once.
func HeldReasons(ctx context.Context, wf *workflow.Client, runs []*workflow.Run) (map[[16]byte]string, error) {
	type pair struct{ typ, tenant, reason string }
	why := map[pair]string{}
	out := map[[16]byte]string{}
	for _, run := range runs {
		if !IsHeld(run) {
			continue
		}
		p := pair{run.Type, run.Tenant, run.Held}
		reason, ok := why[p]
		if !ok {
			t, err := ReadTenant(ctx, wf, run.Type, run.Tenant)
			if err != nil {
				return nil, err
			}
			reason = HeldReason(run, t)
			why[p] = reason
		}
		out[run.ID] = reason
	}
	return out, nil
}

// HeldReason is why run, held, of tenant t waits: "acme has 5 of 5
// running" (workflow.Tenant.Why) for its limit, "acme is at its rate, 100
// per 1m0s; next token in 2.3s" (workflow.Tenant.RateWhy) for its rate.
func HeldReason(run *workflow.Run, t *workflow.Tenant) string {
	if run.Held == workflow.HeldTenantRate {
		if t.RateSource == "" {
			return t.Tenant + " is at its rate"
		}
		return t.RateWhy()
	}
	if t.LimitSource == "" {
		return t.Tenant + " has every slot taken"
	}
	return t.Why()
}

// IsHeld reports whether run is held back (workflow.Run.Held) and still
// waits: a run cancelled while held keeps its mark but waits for nothing.
func IsHeld(run *workflow.Run) bool {
	return run.Held != "" && run.Status == workflow.StatusPending
}

// RetryText is how an unfinished run's failed attempts are retried, in
// words, as the dashboard and the CLI show it: its policy (Run.Retry,
// RetryPolicy.String), or that its job carries none; "" for a finished
// run.
func RetryText(run *workflow.Run) string {
	switch {
	case run.FinishedAt != nil:
		return ""
	case run.Retry != nil:
		return run.Retry.String()
	}
	return "no retry policy of its own: its type's on the working clients (DefineOpts.Retry), else River's backoff"
}
